package integration

import (
	"bytes"
	"compress/zlib"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/wo-runner/wo/integration/ghstandin"
	"github.com/wo-runner/wo/internal/gittest"
	"github.com/wo-runner/wo/store"
)

// stackPart is one PR of a stacked epic, as its work order records it.
type stackPart struct {
	key, branch string
	files       []string
	pr          int
}

// restackFixture is a stacked epic of review PRs, all opened and reviewed,
// over a Go module whose every tip builds.
type restackFixture struct {
	t     *testing.T
	f     *fixture
	gh    *ghstandin.Server
	env   []string
	parts []stackPart
}

func newRestackFixture(t *testing.T) *restackFixture {
	t.Helper()
	f := goModuleFixture(t, 16)
	gh, env := approvingGitHub(t, "acme/big", f.origin)
	if r := f.wo(env, "split", "--repo", f.repo, "--base", "base", "--source", "main", "--mode", "stacked",
		"--github-repo", "acme/big", "--worktree-root", f.wtRoot, "--max-lines", "40", "--epic-key", "task_big"); r.code != 0 {
		t.Fatalf("split: exit %d\n%s", r.code, r.stderr)
	}
	if r := f.wo(env, "run", "--epic", "task_big"); r.code != 0 {
		t.Fatalf("run --epic: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	x := &restackFixture{t: t, f: f, gh: gh, env: env}
	for i := 1; ; i++ {
		key := fmt.Sprintf("task_big_pr%02d", i)
		r := f.wo(nil, "show", key, "--json")
		if r.code != 0 {
			break
		}
		doc := f.doc(key)
		wo := doc["work_order"].(map[string]any)
		inputs := wo["inputs"].(map[string]any)
		p := stackPart{key: key, branch: inputs["branch_name"].(string)}
		for _, m := range inputs["file_manifest"].([]any) {
			p.files = append(p.files, m.(string))
		}
		sort.Strings(p.files)
		n, _ := stateOf(doc)["pr_number"].(float64)
		p.pr = int(n)
		x.parts = append(x.parts, p)
	}
	if len(x.parts) < 5 {
		t.Fatalf("%d PRs: a stack of at least five is needed", len(x.parts))
	}
	return x
}

// heads are the remote's branch tips, by branch.
func (x *restackFixture) heads() map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(gittest.Run(x.t, x.f.origin, "for-each-ref", "--format=%(refname:short) %(objectname)", "refs/heads/"), "\n") {
		if name, sha, ok := strings.Cut(line, " "); ok {
			out[name] = sha
		}
	}
	return out
}

// sync runs wo sync on the epic and reads what it did to each PR.
func (x *restackFixture) sync(want int, args ...string) map[string]string {
	x.t.Helper()
	r := x.f.wo(x.env, append([]string{"sync", "task_big", "--json"}, args...)...)
	if r.code != want {
		x.t.Fatalf("wo sync %v: exit %d, want %d\n%s\n%s", args, r.code, want, r.stdout, r.stderr)
	}
	var env struct {
		Data []struct {
			Key     string
			Restack *struct{ Outcome string }
		}
		Error *struct{ Details json.RawMessage }
	}
	out := map[string]string{}
	if err := json.Unmarshal([]byte(r.stdout), &env); err != nil {
		x.t.Fatalf("wo sync --json: %v\n%s", err, r.stdout)
	}
	for _, d := range env.Data {
		if d.Restack != nil {
			out[d.Key] = d.Restack.Outcome
		}
	}
	return out
}

// check asserts what must hold after every sync: each open PR targets the
// branch of the open PR under it (the base when none is), its branch's
// diff against that base is exactly its part's files, no PR was closed,
// and, with build, every open tip builds.
func (x *restackFixture) check(when string, merged map[int]bool, build bool) {
	t := x.t
	t.Helper()
	prs := map[int]map[string]any{}
	for _, p := range x.gh.PullRequests("acme/big") {
		prs[int(p["number"].(int))] = p
	}
	below := "base"
	var tips []string
	for i, p := range x.parts {
		pr := prs[p.pr]
		if merged[i+1] {
			if pr["merged"] != true {
				t.Errorf("%s: part %d (#%d) is not merged", when, i+1, p.pr)
			}
			continue
		}
		if pr["state"] != "open" {
			t.Errorf("%s: part %d (#%d) is %v, want open", when, i+1, p.pr, pr["state"])
			continue
		}
		if got := pr["base"].(map[string]any)["ref"]; got != below {
			t.Errorf("%s: part %d (#%d) targets %v, want %s", when, i+1, p.pr, got, below)
		}
		// What GitHub shows of a PR: the branch's change since it left
		// its base.
		diff := strings.Fields(gittest.Run(t, x.f.origin, "diff", "--name-only", "refs/heads/"+below+"...refs/heads/"+p.branch))
		sort.Strings(diff)
		if strings.Join(diff, " ") != strings.Join(p.files, " ") {
			t.Errorf("%s: part %d's diff against %s is %v, want its files %v", when, i+1, below, diff, p.files)
		}
		below = p.branch
		tips = append(tips, p.branch)
		x.checkStackTable(when, i, pr, merged)
	}
	if !build {
		return
	}
	clone := filepath.Join(t.TempDir(), "clone")
	gittest.Run(t, filepath.Dir(clone), "clone", "-q", x.f.origin, clone)
	for _, b := range tips {
		gittest.Run(t, clone, "checkout", "-q", "origin/"+b)
		cmd := exec.Command("go", "build", "./...")
		cmd.Dir = clone
		cmd.Env = append(os.Environ(), "GOTOOLCHAIN=local", "GOPROXY=off", "GOFLAGS=-mod=mod")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s: the tip of %s does not build: %v\n%s", when, b, err, out)
		}
	}
}

// checkStackTable checks the stack table in an open PR's description, as
// wo sync left it: a row per part in order, each naming its PR (the
// reader's own, marked, as "this pull request") and its state, merged or
// open.
func (x *restackFixture) checkStackTable(when string, at int, pr map[string]any, merged map[int]bool) {
	t := x.t
	t.Helper()
	body, _ := pr["body"].(string)
	rows := stackRow.FindAllStringSubmatch(body, -1)
	if strings.Count(body, stackBegin) != 1 || strings.Count(body, stackEnd) != 1 || len(rows) != len(x.parts) {
		t.Errorf("%s: part %d (#%d) has no stack table of %d rows:\n%s", when, at+1, x.parts[at].pr, len(x.parts), body)
		return
	}
	for j, row := range rows {
		mark, part, cell, state := row[1], row[2], row[4], row[7]
		wantMark, wantCell, wantState := "", fmt.Sprintf("#%d", x.parts[j].pr), "open"
		if j == at {
			wantMark, wantCell = "→", "**this pull request**"
		}
		if merged[j+1] {
			wantState = "merged"
		}
		if mark != wantMark || part != fmt.Sprint(j+1) || cell != wantCell || state != wantState {
			t.Errorf("%s: the stack table of part %d says of part %d: %s; want part %d, %s%s, %s", when, at+1, j+1, row[0], j+1, wantMark, wantCell, wantState)
		}
	}
}

// recordPush stands in for wo's review loop pushing a fix to a part: the
// commit goes to the remote and the work order records it as its push.
func (x *restackFixture) recordPush(part int, file, line string) string {
	t := x.t
	t.Helper()
	p := x.parts[part-1]
	wt := filepath.Join(x.f.root, "fix-"+p.branch[strings.LastIndex(p.branch, "/")+1:])
	gittest.Run(t, x.f.repo, "fetch", "-q", "origin", "+refs/heads/"+p.branch+":refs/remotes/origin/"+p.branch)
	gittest.Run(t, x.f.repo, "worktree", "add", "-q", "--detach", wt, "origin/"+p.branch)
	old, err := os.ReadFile(filepath.Join(wt, file))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(wt, file), string(old)+line)
	gittest.Run(t, wt, "commit", "-q", "-am", "Fix review comments (by hand)")
	sha := gittest.Run(t, wt, "rev-parse", "HEAD")
	gittest.Run(t, wt, "push", "-q", "origin", "HEAD:refs/heads/"+p.branch)
	gittest.Run(t, x.f.repo, "worktree", "remove", "--force", wt)
	ctx := context.Background()
	s, err := store.OpenSQLite(ctx, x.f.store)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	doc, err := s.Get(ctx, p.key)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Update(ctx, p.key, doc["_rev"].(string), map[string]any{"work_order": map[string]any{"state": map[string]any{
		"pushed_sha": sha, "commit_sha": sha}}}); err != nil {
		t.Fatal(err)
	}
	return sha
}

// TestAStackSurvivesItsMerges: a stack of review PRs through its life. The
// bottom PR is squash-merged (its branch deleted, as GitHub's setting does),
// the next gets a merge commit (its branch kept), someone pushes to the
// base, a fix lands in a lower PR. After each wo sync every open PR targets
// the right base, its diff against it is exactly its part, no PR is
// closed, nothing unchanged is pushed, and every tip builds.
func TestAStackSurvivesItsMerges(t *testing.T) {
	t.Parallel()
	x := newRestackFixture(t)
	n := len(x.parts)
	x.check("after the epic run", nil, false)

	// The bottom PR is squash-merged; GitHub deletes its branch and
	// retargets the PR above to the base.
	if _, err := x.gh.MergeAs("acme/big", x.parts[0].pr, ghstandin.MergeSquash, true); err != nil {
		t.Fatal(err)
	}
	got := x.sync(0)
	if got[x.parts[0].key] != "merged" || got[x.parts[1].key] != "restacked" || got[x.parts[n-1].key] != "restacked" {
		t.Errorf("after the squash merge: %v", got)
	}
	if doc := x.f.doc(x.parts[0].key); doc["status"] != "closed" {
		t.Errorf("the merged part's task is %v, want closed", doc["status"])
	}
	x.check("after the squash merge", map[int]bool{1: true}, true)

	// The next is merged with a merge commit; its branch stays, so its
	// PR above still targets it until wo retargets it.
	if _, err := x.gh.MergeAs("acme/big", x.parts[1].pr, ghstandin.MergeCommit, false); err != nil {
		t.Fatal(err)
	}
	x.sync(0)
	x.check("after the merge commit", map[int]bool{1: true, 2: true}, false)

	// Someone pushes an unrelated commit to the base: nothing is rebuilt,
	// nothing pushed.
	before := x.heads()
	gittest.Run(t, x.f.repo, "fetch", "-q", "origin", "+refs/heads/base:refs/remotes/origin/base")
	wt := filepath.Join(x.f.root, "base-push")
	gittest.Run(t, x.f.repo, "worktree", "add", "-q", "--detach", wt, "origin/base")
	writeFile(t, filepath.Join(wt, "NOTES.md"), "unrelated\n")
	gittest.Run(t, wt, "add", "NOTES.md")
	gittest.Run(t, wt, "commit", "-q", "-m", "an unrelated change to the base")
	gittest.Run(t, wt, "push", "-q", "origin", "HEAD:refs/heads/base")
	got = x.sync(0)
	after := x.heads()
	for _, p := range x.parts[2:] {
		if after[p.branch] != before[p.branch] || got[p.key] != "unchanged" {
			t.Errorf("a push to the base moved %s (%s → %s, %s)", p.branch, before[p.branch], after[p.branch], got[p.key])
		}
	}

	// A fix lands in the lowest open PR: every PR above it is rebuilt on
	// it; the fixed one is not pushed again.
	low := x.parts[2]
	x.recordPush(3, low.files[0], "// fixed by a review\n")
	before = x.heads()
	got = x.sync(0)
	after = x.heads()
	if after[low.branch] != before[low.branch] || got[low.key] != "unchanged" {
		t.Errorf("the fixed PR was pushed again: %v", got)
	}
	for _, p := range x.parts[3:] {
		if after[p.branch] == before[p.branch] || got[p.key] != "restacked" {
			t.Errorf("%s was not rebuilt on the fix: %s", p.branch, got[p.key])
		}
	}
	x.check("after a fix in a lower PR", map[int]bool{1: true, 2: true}, false)
	// The fix is in the tips above it.
	if body := gittest.Run(t, x.f.origin, "show", "refs/heads/"+x.parts[n-1].branch+":"+low.files[0]); !strings.Contains(body, "fixed by a review") {
		t.Errorf("the top of the stack lacks the lower fix:\n%s", body)
	}
	// A restacked PR goes back to its review wait, and its next run
	// finishes its review.
	if r := x.f.wo(x.env, "run", "--epic", "task_big"); r.code != 0 {
		t.Errorf("the epic run after the restacks: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	x.check("at the end", map[int]bool{1: true, 2: true}, true)
	// Asked to, wo rebuilds the stack onto a base that moved.
	gittest.Run(t, wt, "fetch", "-q", "origin")
	gittest.Run(t, wt, "checkout", "-q", "--detach", "origin/base")
	writeFile(t, filepath.Join(wt, "NOTES.md"), "unrelated, again\n")
	gittest.Run(t, wt, "commit", "-q", "-am", "another unrelated change to the base")
	gittest.Run(t, wt, "push", "-q", "origin", "HEAD:refs/heads/base")
	if got := x.sync(0, "--onto-base"); got[x.parts[2].key] != "restacked" || got[x.parts[n-1].key] != "restacked" {
		t.Errorf("--onto-base: %v", got)
	}
	if base, low := gittest.Run(t, x.f.origin, "rev-parse", "refs/heads/base"), gittest.Run(t, x.f.origin, "rev-parse", "refs/heads/"+x.parts[2].branch+"^"); base != low {
		t.Errorf("the bottom PR is built on %s, the base is at %s", low, base)
	}
	// wo status says what the last sync did to each PR of the stack.
	st := x.f.wo(nil, "status", "task_big", "--wide")
	if !strings.Contains(st.stdout, "stack: "+x.parts[n-1].key+" restacked at ") {
		t.Errorf("wo status does not say the top PR was restacked:\n%s", st.stdout)
	}
}

// TestARestackConflictStopsThatBranchAndThoseAbove: a person's commit on
// a middle branch changed a file the PR under it then changes too. That
// branch and those above stop with the file named; the ones under it go
// on; once the person rebased the branch, wo sync --continue finishes.
func TestARestackConflictStopsThatBranchAndThoseAbove(t *testing.T) {
	t.Parallel()
	x := newRestackFixture(t)
	n := len(x.parts)
	mid, under := x.parts[3], x.parts[2] // parts 4 and 3
	shared := under.files[0]
	x.recordPush(4, shared, "// a person's note on part 3, made on part 4\n")
	x.recordPush(3, shared, "// part 3's own fix\n")
	before := x.heads()
	r := x.f.wo(x.env, "sync", "task_big")
	if r.code != 3 || !strings.Contains(r.stdout+r.stderr, shared) || !strings.Contains(r.stdout+r.stderr, "wo sync --continue") {
		t.Fatalf("a conflicting restack: exit %d, want 3 naming %s and how to go on\n%s%s", r.code, shared, r.stdout, r.stderr)
	}
	after := x.heads()
	for _, p := range x.parts[3:] {
		if after[p.branch] != before[p.branch] {
			t.Errorf("%s was pushed although the restack stopped under it", p.branch)
		}
	}
	if doc := x.f.doc(mid.key); doc["status"] != "blocked" || !strings.Contains(fmt.Sprint(doc["block_reason"]), shared) {
		t.Errorf("part 4: status %v, reason %v", doc["status"], doc["block_reason"])
	}
	if st := x.f.wo(nil, "status", "task_big", "--wide"); !strings.Contains(st.stdout, "stack: "+mid.key+" blocked by a conflict in "+shared) {
		t.Errorf("wo status does not name the conflict:\n%s", st.stdout)
	}
	// The person rebuilds part 4 on part 3's fix, keeping both notes.
	gittest.Run(t, x.f.repo, "fetch", "-q", "origin")
	wt := filepath.Join(x.f.root, "settle")
	gittest.Run(t, x.f.repo, "worktree", "add", "-q", "--detach", wt, "origin/"+under.branch)
	gittest.Run(t, wt, "checkout", "origin/"+mid.branch, "--", ".")
	writeFile(t, filepath.Join(wt, shared), gittest.Run(t, wt, "show", "origin/"+under.branch+":"+shared)+"\n// a person's note on part 3, made on part 4\n")
	gittest.Run(t, wt, "add", "-A")
	gittest.Run(t, wt, "commit", "-q", "-m", "Part 4 on part 3's fix")
	gittest.Run(t, wt, "push", "-q", "-f", "origin", "HEAD:refs/heads/"+mid.branch)
	got := x.sync(0, "--continue")
	if got[mid.key] != "restacked" || got[x.parts[n-1].key] != "restacked" {
		t.Errorf("after --continue: %v", got)
	}
	if d := gittest.Run(t, x.f.origin, "diff", "--name-only", "refs/heads/"+mid.branch+"...refs/heads/"+x.parts[4].branch); strings.Contains(d, shared) {
		t.Errorf("part 5 carries part 3's file after the restack:\n%s", d)
	}
}

// TestARestackKilledAtEachPointFinishesOnRerun: wo sync killed inside a
// restack (after recording what it will push, after the push, after
// recording it) reruns to the same end as a sync that was not killed.
func TestARestackKilledAtEachPointFinishesOnRerun(t *testing.T) {
	t.Parallel()
	for _, point := range []string{"restack:after_intent", "restack:after_push", "restack:after_record"} {
		t.Run(point, func(t *testing.T) {
			t.Parallel()
			x := newRestackFixture(t)
			if _, err := x.gh.MergeAs("acme/big", x.parts[0].pr, ghstandin.MergeSquash, true); err != nil {
				t.Fatal(err)
			}
			if r := x.f.wo(append(x.env, "WO_FAULT="+point), "sync", "task_big"); !r.killed {
				t.Fatalf("not killed at %s: exit %d\n%s%s", point, r.code, r.stdout, r.stderr)
			}
			x.sync(0)
			x.check("after the rerun", map[int]bool{1: true}, true)
			for _, p := range x.parts[1:] {
				st := stateOf(x.f.doc(p.key))
				if head := gittest.Run(t, x.f.origin, "rev-parse", "refs/heads/"+p.branch); st["pushed_sha"] != head {
					t.Errorf("%s: the state records %v, the remote is at %s", p.key, st["pushed_sha"], head)
				}
			}
		})
	}
}

// TestARestackNeverRebuildsAForgedHead: after the bottom PR's squash
// merge, the loose object of the next PR's head (its commit, under
// .git/objects, which an agent can write) holds another commit, whose
// tree adds a workflow. go-git would read it back as the head and wo sync
// would rebuild and push it; wo refuses, naming the object, and the
// remote has nothing of it.
func TestARestackNeverRebuildsAForgedHead(t *testing.T) {
	t.Parallel()
	x := newRestackFixture(t)
	if _, err := x.gh.MergeAs("acme/big", x.parts[0].pr, ghstandin.MergeSquash, true); err != nil {
		t.Fatal(err)
	}
	target := x.parts[1]
	before := x.heads()
	head := before[target.branch]
	blob := forgeHead(t, x.f.repo, head, ".github/workflows/x.yml", "on: push\njobs: {}\n")
	r := x.f.wo(x.env, "sync", "task_big")
	if r.code == 0 || !strings.Contains(r.stderr, "the commit object "+head+" in ") || !strings.Contains(r.stderr, "does not hash to its name") {
		t.Fatalf("wo sync: exit %d, want a refusal naming %s\n%s\n%s", r.code, head, r.stdout, r.stderr)
	}
	after := x.heads()
	for _, p := range x.parts[1:] {
		if after[p.branch] != before[p.branch] {
			t.Errorf("%s moved on the remote: %s → %s", p.branch, before[p.branch], after[p.branch])
		}
	}
	if err := exec.Command("git", "-C", x.f.origin, "cat-file", "-e", blob).Run(); err == nil {
		t.Error("the forged tree's workflow reached the remote")
	}
}

// forgeHead overwrites the loose object file of commit head in the
// repository at dir with another commit of the same type: head's own text
// with a tree that adds path. It returns the added blob.
func forgeHead(t *testing.T, dir, head, path, content string) string {
	t.Helper()
	run := func(env []string, stdin string, args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Stdin = dir, strings.NewReader(stdin)
		cmd.Env = append(append(os.Environ(), gittest.Env...), env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	blob := run(nil, content, "hash-object", "-w", "--stdin")
	index := []string{"GIT_INDEX_FILE=" + filepath.Join(t.TempDir(), "index")}
	run(index, "", "read-tree", head)
	run(index, "", "update-index", "--add", "--cacheinfo", "100644,"+blob+","+path)
	tree := run(index, "", "write-tree")
	text := run(nil, "", "cat-file", "commit", head) + "\n"
	forged := strings.Replace(text, "tree "+run(nil, "", "rev-parse", head+"^{tree}"), "tree "+tree, 1)
	file := filepath.Join(dir, ".git", "objects", head[:2], head[2:])
	if _, err := os.Stat(file); err != nil {
		t.Fatalf("the head %s is not a loose object: %v", head, err)
	}
	var b bytes.Buffer
	z := zlib.NewWriter(&b)
	fmt.Fprintf(z, "commit %d\x00%s", len(forged), forged)
	z.Close()
	os.Chmod(file, 0o644)
	if err := os.WriteFile(file, b.Bytes(), 0o444); err != nil {
		t.Fatal(err)
	}
	return blob
}
