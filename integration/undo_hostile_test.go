package integration

import (
	"path/filepath"
	"strings"
	"testing"
)

// craftedUndoTask imports a work order whose state says a run made things
// it never made: the state is part of the document, and a document may
// say anything.
func craftedUndoTask(f *fixture, key string, state map[string]any) {
	f.t.Helper()
	doc := f.seedTask(key)
	doc["status"] = "in_progress"
	doc["work_order"].(map[string]any)["inputs"].(map[string]any)["branch_name"] = "review/" + key
	doc["work_order"].(map[string]any)["inputs"].(map[string]any)["worktree_name"] = key
	st := map[string]any{"version": 1, "current_step": 7, "completed_steps": []any{1, 2, 3, 4, 5, 6}}
	for k, v := range state {
		st[k] = v
	}
	doc["work_order"].(map[string]any)["state"] = st
	f.importTask(doc)
}

// A state that names the base branch, at its own tip, as the branch wo
// pushed and switched to must not make wo undo delete the base branch,
// on the remote or here.
func TestUndoDeletesTheBaseBranchNamedInAState(t *testing.T) {
	f, _, env := undoFixture(t, "task_undo")
	base := git(t, f.repo, "rev-parse", "code-review-base")
	craftedUndoTask(f, "task_evil", map[string]any{"branch": "code-review-base", "pushed_sha": base, "base_sha": base, "commit_sha": base})
	r := f.wo(env, "undo", "task_evil")
	t.Logf("undo: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
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
	f, gh, env := undoFixture(t, "task_undo")
	pr := runToTheEnd(t, f, env, "task_undo")
	craftedUndoTask(f, "task_evil", map[string]any{"pr_number": pr})
	r := f.wo(env, "undo", "task_evil")
	t.Logf("undo: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
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
	f, _, env := undoFixture(t, "task_undo")
	runToTheEnd(t, f, env, "task_undo")
	pushed := git(t, f.origin, "rev-parse", "refs/heads/"+undoBranch)
	craftedUndoTask(f, "task_evil", map[string]any{"branch": undoBranch, "pushed_sha": pushed, "commit_sha": pushed})
	r := f.wo(env, "undo", "task_evil")
	t.Logf("undo: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
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
	f, _, env := undoFixture(t, "task_undo")
	if r := f.wo(append(env, "WO_FAULT=check_review:after_writeback"), "run", "task_undo"); !r.killed {
		t.Fatalf("the run was not killed: exit %d\n%s", r.code, r.stderr)
	}
	path, _ := stateOf(f.doc("task_undo"))["worktree_path"].(string)
	if path == "" {
		t.Fatal("task_undo records no worktree")
	}
	craftedUndoTask(f, "task_evil", map[string]any{"branch": undoBranch, "worktree_path": path, "worktree_name": filepath.Base(path)})
	r := f.wo(env, "undo", "task_evil")
	t.Logf("undo: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	if list := git(t, f.repo, "worktree", "list", "--porcelain"); !strings.Contains(list, path) {
		t.Errorf("wo undo of task_evil removed task_undo's worktree %s:\n%s", path, list)
	}
}

// A state that names another task's pull request and that task's branch
// (so the pull request's head matches) must not make wo undo close it or
// delete wo's comments on it: the branch is not provably this task's.
func TestUndoClosesAnotherTasksPRAndBranchNamedInAState(t *testing.T) {
	f, gh, env := undoFixture(t, "task_undo")
	pr := runToTheEnd(t, f, env, "task_undo")
	gh.CommentAs("acme/hermes", pr, "wo-bot", "delivered\n\n<!-- wo:task_evil:step:9 -->")
	pushed := git(t, f.origin, "rev-parse", "refs/heads/"+undoBranch)
	craftedUndoTask(f, "task_evil", map[string]any{"pr_number": pr, "branch": undoBranch})

	r := f.wo(env, "undo", "task_evil", "--comments", "--json")
	if r.code != 0 {
		t.Fatalf("undo: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if p := prOn(gh, pr); p["state"] != "open" || len(gh.IssueComments("acme/hermes", pr)) != 1 {
		t.Errorf("wo undo of task_evil touched #%d, which task_undo opened: %v, comments %v", pr, p["state"], gh.IssueComments("acme/hermes", pr))
	}
	if got := git(t, f.origin, "rev-parse", "refs/heads/"+undoBranch); got != pushed {
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
