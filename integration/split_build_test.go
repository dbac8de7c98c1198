package integration

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/wo-runner/wo/internal/gittest"
	"github.com/wo-runner/wo/split/splittest"
)

// TestEveryStackedPRBranchBuilds splits a generated multi-package Go
// module (test-only imports, test data, embedded files, a package big
// enough to be cut) in stacked mode, runs the epic against the GitHub
// stand-in, and then checks out each pushed PR branch and runs the real
// go build ./... and go vet ./... there, as CI on that PR would.
func TestEveryStackedPRBranchBuilds(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("go"); err != nil {
		t.Fatalf("the go command is needed to build the PR branches: %v", err)
	}
	f := emptyFixture(t)
	gittest.Run(t, f.repo, "commit", "-q", "--allow-empty", "-m", "base")
	gittest.Run(t, f.repo, "branch", "base")
	for path, content := range splittest.GoModule() {
		writeFile(t, filepath.Join(f.repo, path), content)
	}
	gittest.Run(t, f.repo, "add", "-A")
	gittest.Run(t, f.repo, "commit", "-q", "-m", "the big change")
	gittest.Run(t, f.root, "init", "-q", "--bare", f.origin)
	gittest.Run(t, f.repo, "remote", "add", "origin", f.origin)
	gittest.Run(t, f.repo, "push", "-q", "origin", "base")

	gh, env := approvingGitHub(t, "acme/gen", f.origin)
	r := f.wo(env, "split", "--repo", f.repo, "--base", "base", "--source", "main", "--mode", "stacked",
		"--github-repo", "acme/gen", "--worktree-root", f.wtRoot, "--max-lines", "200", "--epic-key", "task_gen", "--json")
	if r.code != 0 {
		t.Fatalf("split: exit %d\n%s", r.code, r.stderr)
	}
	var out struct {
		Data struct {
			PRs []struct {
				Number int
				Title  string
				Files  []struct{ Path string }
			} `json:"prs"`
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatal(err)
	}
	prs := out.Data.PRs
	bigPRs := 0
	for _, pr := range prs {
		// A part is titled after its package and its largest files.
		if strings.Contains(pr.Title, "internal/big: ") {
			bigPRs++
		}
	}
	if len(prs) < 3 || bigPRs < 2 {
		t.Fatalf("%d PRs, %d of them parts of internal/big: the oversize package was not cut\n%s", len(prs), bigPRs, r.stdout)
	}
	if r = f.wo(env, "run", "--epic", "task_gen", "--parallel", "2"); r.code != 0 {
		t.Fatalf("run --epic: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}

	// The PRs as GitHub (the stand-in) holds them: one per work order,
	// each based on the branch of the PR before it, the first on base.
	opened := map[string]map[string]any{} // head branch → PR
	for _, p := range gh.PullRequests("acme/gen") {
		head := p["head"].(map[string]any)["ref"].(string)
		if opened[head] != nil {
			t.Errorf("two PRs from %s", head)
		}
		opened[head] = p
	}
	if len(opened) != len(prs) {
		t.Errorf("the stand-in holds %d PRs, the plan has %d", len(opened), len(prs))
	}

	checkout := filepath.Join(f.root, "ci")
	gittest.Run(t, f.root, "clone", "-q", f.origin, checkout)
	var top string
	for _, pr := range prs {
		wo := f.doc(fmt.Sprintf("task_gen_pr%02d", pr.Number))["work_order"].(map[string]any)
		branch := wo["inputs"].(map[string]any)["branch_name"].(string)
		base := wo["context"].(map[string]any)["base_branch"].(string)
		wantBase := "base"
		if top != "" {
			wantBase = top
		}
		if onGitHub := opened[branch]; onGitHub == nil {
			t.Errorf("PR #%d (%s): no PR from %s on the stand-in", pr.Number, pr.Title, branch)
		} else {
			if got := onGitHub["base"].(map[string]any)["ref"].(string); got != wantBase || base != wantBase {
				t.Errorf("PR #%d (%s) from %s targets %s on GitHub (%s in its work order), want %s: a stack is linear", pr.Number, pr.Title, branch, got, base, wantBase)
			}
			if got := onGitHub["title"].(string); got != pr.Title {
				t.Errorf("PR #%d is titled %q on GitHub, %q in the plan", pr.Number, got, pr.Title)
			}
		}
		// The PR's diff against its base is exactly its manifest.
		got := strings.Split(gittest.Run(t, f.origin, "diff", "--name-only", "refs/heads/"+base, "refs/heads/"+branch), "\n")
		var want []string
		for _, file := range pr.Files {
			want = append(want, file.Path)
		}
		sort.Strings(want)
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("PR #%d (%s on %s) changes %v, want %v", pr.Number, branch, base, got, want)
		}
		// CI on the PR's branch builds and vets.
		gittest.Run(t, checkout, "checkout", "-q", "--detach", "origin/"+branch)
		for _, args := range [][]string{{"build", "./..."}, {"vet", "./..."}} {
			cmd := exec.Command("go", args...)
			cmd.Dir = checkout
			cmd.Env = append(os.Environ(), "GOTOOLCHAIN=local", "GOPROXY=off", "GOFLAGS=-mod=mod", "GOWORK=off")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("go %s on PR #%d's branch %s: %v\n%s", strings.Join(args, " "), pr.Number, branch, err, out)
			}
		}
		top = branch
	}
	gittest.Run(t, f.repo, "fetch", "-q", "origin")
	if diff := gittest.Run(t, f.repo, "diff", "--name-only", "refs/remotes/origin/"+top, "main"); diff != "" {
		t.Errorf("the top of the stack (%s) differs from the source tree in:\n%s", top, diff)
	}
}
