package integration

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wo-runner/wo/integration/ghstandin"
	"github.com/wo-runner/wo/internal/gittest"
)

// craftedUndoTask imports a work order whose state says a run made things
// it never made: the state is part of the document, and a document may
// say anything.
func craftedUndoTask(f *fixture, key string, state map[string]any) {
	f.t.Helper()
	craftedWorkOrder(f, key, nil, map[string]any{"branch_name": "review/" + key, "worktree_name": key}, state)
}

// craftedWorkOrder is craftedUndoTask with the context and inputs it is
// given merged over the seed's.
func craftedWorkOrder(f *fixture, key string, context, inputs, state map[string]any) {
	f.t.Helper()
	doc := f.seedTask(key)
	doc["status"] = "in_progress"
	wo := doc["work_order"].(map[string]any)
	for k, v := range context {
		wo["context"].(map[string]any)[k] = v
	}
	for k, v := range inputs {
		wo["inputs"].(map[string]any)[k] = v
	}
	st := map[string]any{"version": 1, "current_step": 7, "completed_steps": []any{1, 2, 3, 4, 5, 6}}
	for k, v := range state {
		st[k] = v
	}
	wo["state"] = st
	f.importTask(doc)
}

// stepsIn are the steps of wo undo --json's data, by name.
func stepsIn(t *testing.T, r woResult) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for _, s := range undoEnvelope(t, r)["steps"].([]any) {
		out[s.(map[string]any)["step"].(string)] = s.(map[string]any)
	}
	return out
}

// assertLeft checks that undo --json ended with exit 0, not complete, and
// left each named step with a reason holding want.
func assertLeft(t *testing.T, r woResult, want string, steps ...string) {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("undo: exit %d, want 0 (what is left does not fail undo)\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if data := undoEnvelope(t, r); data["complete"] != false {
		t.Errorf("undo that left things says complete: %v", data)
	}
	got := stepsIn(t, r)
	for _, name := range steps {
		s := got[name]
		if s == nil || s["outcome"] != "left" || !strings.Contains(fmt.Sprint(s["reason"]), want) {
			t.Errorf("%s: %v, want it left, saying %q", name, s, want)
		}
	}
}

// A state that names the base branch, at its own tip, as the branch wo
// pushed and switched to must not make wo undo delete the base branch,
// on the remote or here.
func TestUndoDeletesTheBaseBranchNamedInAState(t *testing.T) {
	t.Parallel()
	f, _, env := undoFixture(t, "task_undo")
	base := gittest.Run(t, f.repo, "rev-parse", "code-review-base")
	craftedUndoTask(f, "task_evil", map[string]any{"branch": "code-review-base", "pushed_sha": base, "base_sha": base, "commit_sha": base})
	r := f.wo(env, "undo", "task_evil", "--json")
	assertLeft(t, r, "branch code-review-base is not the branch the task names (review/task_evil), so wo keeps it", "remote_branch", "local_branch")
	if !hasRef(t, f.origin, "refs/heads/code-review-base") {
		t.Error("wo undo deleted the base branch code-review-base on the remote")
	}
	if !hasRef(t, f.repo, "refs/heads/code-review-base") {
		t.Error("wo undo deleted the local base branch code-review-base")
	}
}

// A state that names another task's pull request must not make wo undo
// close it: the pull request's head is not this task's branch.
func TestUndoClosesAnotherTasksPRNamedInAState(t *testing.T) {
	t.Parallel()
	f, gh, env := undoFixture(t, "task_undo")
	pr := runToTheEnd(t, f, env, "task_undo")
	craftedUndoTask(f, "task_evil", map[string]any{"pr_number": pr})
	r := f.wo(env, "undo", "task_evil", "--json")
	assertLeft(t, r, "pull request #1 is from branch "+undoBranch+", not this task's branch review/task_evil", "pull_request")
	if p := prOn(gh, pr); p["state"] != "open" {
		t.Errorf("wo undo of task_evil closed #%d, which task_undo opened", pr)
	}
	for _, c := range gh.IssueComments("acme/hermes", pr) {
		if strings.Contains(c.Body, "task_evil") {
			t.Errorf("wo undo of task_evil commented on task_undo's pull request: %q", c.Body)
		}
	}
}

// A state that names another task's branch at the commit that task pushed
// must not make wo undo delete that branch.
func TestUndoDeletesAnotherTasksBranchNamedInAState(t *testing.T) {
	t.Parallel()
	f, _, env := undoFixture(t, "task_undo")
	runToTheEnd(t, f, env, "task_undo")
	pushed := gittest.Run(t, f.origin, "rev-parse", "refs/heads/"+undoBranch)
	craftedUndoTask(f, "task_evil", map[string]any{"branch": undoBranch, "pushed_sha": pushed, "commit_sha": pushed})
	r := f.wo(env, "undo", "task_evil", "--json")
	assertLeft(t, r, "branch "+undoBranch+" is not the branch the task names (review/task_evil)", "pull_request", "remote_branch", "local_branch")
	// task_undo's pull request, found from the branch, is not claimed.
	if got := fmt.Sprint(stepsIn(t, r)["pull_request"]["reason"]); strings.Contains(got, "it is wo's") {
		t.Errorf("the pull request left says it is wo's: %s", got)
	}
	if !hasRef(t, f.origin, "refs/heads/"+undoBranch) {
		t.Errorf("wo undo of task_evil deleted task_undo's branch %s on the remote", undoBranch)
	}
	if !hasRef(t, f.repo, "refs/heads/"+undoBranch) {
		t.Errorf("wo undo of task_evil deleted task_undo's local branch %s", undoBranch)
	}
}

// A state that names another task's worktree (path, name and branch) must
// not make wo undo remove it: that task may still be running in it.
func TestUndoRemovesAnotherTasksWorktreeNamedInAState(t *testing.T) {
	t.Parallel()
	f, gh, env := undoFixture(t, "task_undo")
	if r := f.wo(append(env, "WO_FAULT=check_review:after_writeback"), "run", "task_undo"); !r.killed {
		t.Fatalf("the run was not killed: exit %d\n%s", r.code, r.stderr)
	}
	path, _ := stateOf(f.doc("task_undo"))["worktree_path"].(string)
	if path == "" {
		t.Fatal("task_undo records no worktree")
	}
	// Its inputs name the same branch and worktree too, so only the other
	// task's record tells them apart.
	craftedWorkOrder(f, "task_evil", nil, map[string]any{"branch_name": undoBranch, "worktree_name": filepath.Base(path)},
		map[string]any{"branch": undoBranch, "worktree_path": path, "worktree_name": filepath.Base(path)})
	r := f.wo(env, "undo", "task_evil", "--json")
	assertLeft(t, r, "branch "+undoBranch+" is named by task task_undo too, so wo keeps it", "pull_request", "remote_branch", "worktree", "local_branch")
	if !hasRef(t, f.origin, "refs/heads/"+undoBranch) || prOn(gh, 1)["state"] != "open" {
		t.Error("wo undo of task_evil took back task_undo's remote branch or pull request")
	}
	if list := gittest.Run(t, f.repo, "worktree", "list", "--porcelain"); !strings.Contains(list, path) {
		t.Errorf("wo undo of task_evil removed task_undo's worktree %s:\n%s", path, list)
	}
}

// A state that names another task's pull request and that task's branch
// (so the pull request's head matches) must not make wo undo close it or
// delete wo's comments on it: the branch is not provably this task's.
func TestUndoClosesAnotherTasksPRAndBranchNamedInAState(t *testing.T) {
	t.Parallel()
	f, gh, env := undoFixture(t, "task_undo")
	pr := runToTheEnd(t, f, env, "task_undo")
	gh.CommentAs("acme/hermes", pr, "wo-bot", "delivered\n\n<!-- wo:task_evil:step:9 -->")
	pushed := gittest.Run(t, f.origin, "rev-parse", "refs/heads/"+undoBranch)
	craftedUndoTask(f, "task_evil", map[string]any{"pr_number": pr, "branch": undoBranch})

	r := f.wo(env, "undo", "task_evil", "--comments", "--json")
	if r.code != 0 {
		t.Fatalf("undo: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if p := prOn(gh, pr); p["state"] != "open" || len(gh.IssueComments("acme/hermes", pr)) != 1 {
		t.Errorf("wo undo of task_evil touched #%d, which task_undo opened: %v, comments %v", pr, p["state"], gh.IssueComments("acme/hermes", pr))
	}
	if got := gittest.Run(t, f.origin, "rev-parse", "refs/heads/"+undoBranch); got != pushed {
		t.Errorf("task_undo's remote branch is at %q, want %s", got, pushed)
	}
	data := undoEnvelope(t, r)
	steps := map[string]map[string]any{}
	for _, s := range data["steps"].([]any) {
		steps[s.(map[string]any)["step"].(string)] = s.(map[string]any)
	}
	for _, name := range []string{"comments", "pull_request", "remote_branch"} {
		s := steps[name]
		if s["outcome"] != "left" || !strings.Contains(s["reason"].(string), "branch "+undoBranch) {
			t.Errorf("%s: %v, want it left, naming the branch", name, s)
		}
	}
	if data["complete"] != false {
		t.Errorf("undo data: %v", data)
	}
}

// A state naming a person's branch (named by no task) and its tip as the
// commit wo made and pushed must not make wo undo delete it, on the remote
// or here: the state is document text, and this task's runs never logged
// making that commit or switching to that branch.
func TestUndoDeletesAPersonsBranchNamedInAState(t *testing.T) {
	t.Parallel()
	f, _, env := undoFixture(t, "task_undo")
	clone := filepath.Join(f.root, "alice")
	gittest.Run(t, f.root, "clone", "-q", f.origin, clone)
	gittest.Run(t, clone, "checkout", "-q", "-b", "feature/alice", "origin/"+undoBase)
	writeFile(t, filepath.Join(clone, "alice.txt"), "alice's work\n")
	gittest.Run(t, clone, "add", "-A")
	gittest.Run(t, clone, "commit", "-q", "-m", "alice")
	gittest.Run(t, clone, "push", "-q", "origin", "feature/alice")
	tip := gittest.Run(t, clone, "rev-parse", "HEAD")
	gittest.Run(t, f.repo, "fetch", "-q", "origin", "feature/alice:feature/alice")
	craftedWorkOrder(f, "task_evil", nil, map[string]any{"branch_name": "feature/alice", "worktree_name": "task_evil"},
		map[string]any{"branch": "feature/alice", "pushed_sha": tip, "commit_sha": tip})

	r := f.wo(env, "undo", "task_evil", "--json")
	assertLeft(t, r, "was never switched to or pushed by this task's runs", "remote_branch", "local_branch")
	if got := gittest.Run(t, f.origin, "rev-parse", "refs/heads/feature/alice"); got != tip {
		t.Errorf("alice's branch on the remote is at %q, want %s", got, tip)
	}
	if got := gittest.Run(t, f.repo, "rev-parse", "refs/heads/feature/alice"); got != tip {
		t.Errorf("alice's local branch is at %q, want %s", got, tip)
	}
}

// A document whose worktree_root and worktree_path point at a person's
// own linked worktree must not make wo undo remove it: wo did not create
// it (no mark of wo's in its admin files, nothing in the task's log).
func TestUndoRemovesAPersonsWorktreeNamedInAState(t *testing.T) {
	t.Parallel()
	f, _, env := undoFixture(t, "task_undo")
	wt := filepath.Join(f.root, "alice-wt")
	gittest.Run(t, f.repo, "worktree", "add", "-q", "-b", "feature/alice", wt, undoBase)
	writeFile(t, filepath.Join(wt, "alice.txt"), "alice's work\n")
	gittest.Run(t, wt, "add", "-A")
	gittest.Run(t, wt, "commit", "-q", "-m", "alice")
	tip := gittest.Run(t, wt, "rev-parse", "HEAD")
	craftedWorkOrder(f, "task_evil", map[string]any{"worktree_root": f.root}, map[string]any{"branch_name": "feature/alice", "worktree_name": "alice-wt"},
		map[string]any{"branch": "feature/alice", "commit_sha": tip, "worktree_path": wt, "worktree_name": "alice-wt"})

	r := f.wo(env, "undo", "task_evil", "--json")
	assertLeft(t, r, "carry no mark of wo's", "worktree")
	assertLeft(t, r, "was never switched to or pushed by this task's runs", "local_branch")
	if list := gittest.Run(t, f.repo, "worktree", "list", "--porcelain"); !strings.Contains(list, "worktree "+wt+"\n") {
		t.Errorf("alice's worktree %s was removed:\n%s", wt, list)
	}
	if _, err := os.Stat(filepath.Join(wt, "alice.txt")); err != nil {
		t.Errorf("alice's file: %v", err)
	}
	if got := gittest.Run(t, f.repo, "rev-parse", "refs/heads/feature/alice"); got != tip {
		t.Errorf("alice's branch is at %q, want %s", got, tip)
	}
}

// A state whose worktree_path lies outside worktree_root names no worktree
// wo could have made: undo leaves it, with the reason, and finishes; it
// does not fail on every rerun with its record half written.
func TestUndoOfAWorktreePathOutsideTheRoot(t *testing.T) {
	t.Parallel()
	f, _, env := undoFixture(t, "task_undo")
	outside := filepath.Join(f.root, "elsewhere")
	writeFile(t, filepath.Join(outside, "keep.txt"), "someone's\n")
	craftedUndoTask(f, "task_evil", map[string]any{"worktree_path": outside})

	r := f.wo(env, "undo", "task_evil", "--json")
	assertLeft(t, r, "is not inside work_order.context.worktree_root", "worktree")
	if !strings.Contains(stepsIn(t, r)["worktree"]["target"].(string), outside) {
		t.Errorf("the step does not name the path: %v", stepsIn(t, r)["worktree"])
	}
	if _, err := os.Stat(filepath.Join(outside, "keep.txt")); err != nil {
		t.Errorf("the folder outside the root: %v", err)
	}
	if d := f.doc("task_evil"); d["status"] != "open" || stateOf(d)["undo"] != nil || stateOf(d)["worktree_path"] != nil {
		t.Errorf("after undo: status %v, state %v", d["status"], stateOf(d))
	}
	if r := f.wo(env, "undo", "task_evil"); r.code != 0 || !strings.Contains(r.stdout, "nothing to undo") {
		t.Errorf("the rerun: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// lyingGitHub is a proxy in front of the stand-in that answers the
// requests lie picks with the pull request's state turned to closed; a
// PATCH it picks never reaches the stand-in (it is read instead), as a
// server that answers a close without closing. It returns env with
// GITHUB_API_URL pointing at the proxy.
func lyingGitHub(t *testing.T, gh *ghstandin.Server, env []string, lie func(*http.Request) bool) []string {
	t.Helper()
	srv := ghstandin.PRStateLiar(gh.URL, lie)
	t.Cleanup(srv.Close)
	var out []string
	for _, e := range env {
		if strings.HasPrefix(e, "GITHUB_API_URL=") {
			e = "GITHUB_API_URL=" + srv.URL + "/"
		}
		out = append(out, e)
	}
	return out
}

// A server that says an open pull request is closed, or answers a close
// without closing, must not make undo report the pull request gone and
// the undo complete: undo checks, stops with exit 5, and a later undo
// finishes.
func TestUndoBelievesAServerThatSaysThePRIsClosed(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		lie  func(*http.Request) bool
		want string
	}{
		{"reads as closed", func(r *http.Request) bool {
			return r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/pulls/1")
		},
			"GitHub answers that pull request #1 is closed, but lists it open"},
		{"a close that does not close", func(r *http.Request) bool {
			return r.Method == http.MethodPatch && strings.HasSuffix(r.URL.Path, "/pulls/1")
		}, "wo closed pull request #1, but GitHub still shows it open"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f, gh, env := undoFixture(t, "task_undo")
			pr := runToTheEnd(t, f, env, "task_undo")
			r := f.wo(lyingGitHub(t, gh, env, c.lie), "undo", "task_undo", "--json")
			if r.code != 5 || !strings.Contains(r.stdout, c.want) {
				t.Fatalf("undo: exit %d, want 5 saying %q\n%s\n%s", r.code, c.want, r.stdout, r.stderr)
			}
			if data := undoEnvelope(t, r); data["complete"] != false || data["stopped"] != "pull_request" {
				t.Errorf("undo data: %v", data)
			}
			if prOn(gh, pr)["state"] != "open" || !hasRef(t, f.origin, "refs/heads/"+undoBranch) {
				t.Error("undo went on past a pull request it could not close")
			}
			if r := f.wo(env, "undo", "task_undo"); r.code != 0 {
				t.Fatalf("undo without the lie: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			assertUndone(t, f, gh, "task_undo", pr)
		})
	}
}

// The plan of an epic's undo must be what the undo does: once the top of
// the stack is planned undone, nothing stacks on the branches below, so
// the plan deletes them as the real undo does, not LEFT and pending.
func TestUndoEpicDryRunPlansWhatTheUndoDoes(t *testing.T) {
	t.Parallel()
	f, gh, env := stackedEpic(t)
	r := f.wo(env, "undo", "--epic", "task_stack", "--dry-run", "--json")
	if r.code != 0 {
		t.Fatalf("undo --epic --dry-run: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	plan, _ := epicUndoEnvelope(t, r)
	outcomes := func(d epicUndoData) string {
		var out []string
		for _, tk := range d.Tasks {
			steps, _ := tk.Undo["steps"].([]any)
			for _, s := range steps {
				m := s.(map[string]any)
				out = append(out, fmt.Sprintf("%s %v %v", tk.Key, m["step"], m["outcome"]))
			}
		}
		return strings.Join(out, "\n")
	}
	r = f.wo(env, "undo", "--epic", "task_stack", "--json")
	if r.code != 0 {
		t.Fatalf("undo --epic: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	done, _ := epicUndoEnvelope(t, r)
	if want, got := strings.ReplaceAll(outcomes(done), " undone", " would"), outcomes(plan); got != want {
		t.Errorf("the plan says\n%s\nthe undo did\n%s", got, outcomes(done))
	}
	assertStackUndone(t, f, gh)
}
