package integration

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wo-runner/wo/internal/gittest"
)

// goModuleFixture builds a Go module whose base branch has only go.mod and
// whose main branch adds n packages: package i imports package (i-1)/2, a
// tree of dependencies; plus a bare remote with the base branch.
func goModuleFixture(t *testing.T, n int) *fixture {
	t.Helper()
	f := emptyFixture(t)
	writeFile(t, filepath.Join(f.repo, "go.mod"), "module example.com/big\n\ngo 1.22\n")
	gittest.Run(t, f.repo, "add", "-A")
	gittest.Run(t, f.repo, "commit", "-q", "-m", "base")
	gittest.Run(t, f.repo, "branch", "base")
	for i := 0; i < n; i++ {
		dir := filepath.Join(f.repo, "pkg", fmt.Sprintf("p%02d", i))
		imp := ""
		if i > 0 {
			imp = fmt.Sprintf("\nimport _ \"example.com/big/pkg/p%02d\"\n", (i-1)/2)
		}
		writeFile(t, filepath.Join(dir, "a.go"), fmt.Sprintf("package p%02d\n%s\n// A is part %d.\nconst A = %d\n", i, imp, i, i))
		writeFile(t, filepath.Join(dir, "a_test.go"), fmt.Sprintf("package p%02d\n\nimport \"testing\"\n\nfunc TestA(t *testing.T) {}\n", i))
	}
	gittest.Run(t, f.repo, "add", "-A")
	gittest.Run(t, f.repo, "commit", "-q", "-m", "the big change")
	gittest.Run(t, f.root, "init", "-q", "--bare", f.origin)
	gittest.Run(t, f.repo, "remote", "add", "origin", f.origin)
	gittest.Run(t, f.repo, "push", "-q", "origin", "base")
	return f
}

// StatusRowJSON is the part of wo status --json the tests read.
type StatusRowJSON struct {
	Key    string `json:"key"`
	Status string `json:"status"`
}

func TestIndependentEpicWaitsForMergesAndSkipsAfterFailure(t *testing.T) {
	t.Parallel()
	f := goModuleFixture(t, 6)
	r := f.wo(nil, "split", "--repo", f.repo, "--base", "base", "--source", "main",
		"--worktree-root", f.wtRoot, "--max-lines", "12", "--epic-key", "task_ind")
	if r.code != 0 {
		t.Fatalf("split: %s", r.stderr)
	}
	// No GitHub repository: the procedure ends after the push. Dependents
	// wait for their blockers to be merged.
	r = f.wo(nil, "run", "--epic", "task_ind", "--parallel", "2")
	if r.code != 3 {
		t.Fatalf("exit %d, want 3 (waiting for merges)\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "done") || !strings.Contains(r.stdout, "skipped") || !strings.Contains(r.stdout, "waiting") {
		t.Errorf("outcomes:\n%s", r.stdout)
	}
	// A failure in wave 1 skips its dependents and leaves their documents alone.
	g := goModuleFixture(t, 6)
	g.wo(nil, "split", "--repo", g.repo, "--base", "base", "--source", "main", "--worktree-root", g.wtRoot, "--max-lines", "12", "--epic-key", "task_fail")
	// Someone else's files where the first PR's worktree goes.
	wo, _ := g.doc("task_fail_pr01")["work_order"].(map[string]any)
	inputs, _ := wo["inputs"].(map[string]any)
	name, _ := inputs["worktree_name"].(string)
	if name == "" {
		t.Fatalf("task_fail_pr01 names no worktree: %v", wo)
	}
	writeFile(t, filepath.Join(g.wtRoot, name, "someone-elses.txt"), "x")
	before := g.wo(nil, "export", "--parent", "task_fail").stdout
	// The task alone and inside the epic fare the same: its inputs are
	// wrong and nothing was changed (exit 2).
	alone := g.wo(nil, "run", "task_fail_pr01")
	r = g.wo(nil, "run", "--epic", "task_fail")
	if alone.code != 2 || r.code != alone.code || !strings.Contains(r.stderr, "holds other files") {
		t.Fatalf("exit %d alone and %d in the epic, want 2 (invalid input) for both, with the cause\n%s\n%s", alone.code, r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "blocker task_fail_pr01 is invalid") {
		t.Errorf("dependents not skipped with the reason:\n%s", r.stdout)
	}
	after := g.wo(nil, "export", "--parent", "task_fail").stdout
	var b, a []map[string]any
	json.Unmarshal([]byte(before), &b)
	json.Unmarshal([]byte(after), &a)
	for i := range b {
		if b[i]["_key"] == "task_fail_pr01" {
			continue
		}
		if b[i]["_key"] == "task_fail" {
			if fmt.Sprint(b[i]) != fmt.Sprint(a[i]) {
				t.Errorf("the epic itself was changed")
			}
			continue
		}
		// A skipped task gains the skip and its reason, and nothing else.
		skip, _ := stateOf(a[i])["skipped"].(map[string]any)
		if reason, _ := skip["reason"].(string); !strings.HasPrefix(reason, "blocker task_fail_pr0") {
			t.Errorf("skipped task %v does not say why: %v", a[i]["_key"], skip)
		}
		delete(stateOf(a[i]), "skipped")
		delete(a[i], "updated_at")
		delete(b[i], "updated_at")
		delete(a[i], "_rev")
		delete(b[i], "_rev")
		if fmt.Sprint(b[i]) != fmt.Sprint(a[i]) {
			t.Errorf("skipped task %v was changed beyond the skip:\n%v\n%v", b[i]["_key"], b[i], a[i])
		}
	}
}
