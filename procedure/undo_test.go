package procedure

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wo-runner/wo/workorder"
)

// undoHarness is a run that went as far as opening its pull request: a
// worktree, a branch with a commit, the branch pushed, a PR open.
func undoHarness(t *testing.T) *stepHarness {
	t.Helper()
	h := newStepContext(t, stepOpts{GitHub: true})
	h.upTo("wait_for_review")
	if h.stored().PRNumber != 1 {
		t.Fatalf("the run opened no pull request: %+v", h.stored())
	}
	return h
}

// hasBranch says whether the repository at dir has the branch, asking git.
func hasBranch(t *testing.T, dir, branch string) bool {
	t.Helper()
	_, err := gitTry(dir, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch)
	return err == nil
}

func stepsOf(res *UndoResult) map[string]string {
	out := map[string]string{}
	for _, s := range res.Steps {
		out[s.Step] = s.Outcome + ": " + s.Reason
	}
	return out
}

func TestUndoTakesBackWhatTheRunMade(t *testing.T) {
	h := undoHarness(t)
	e := h.engine()

	// The plan first: it changes nothing.
	plan, err := e.Undo(h.ctx, UndoOptions{Key: fixKey, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, step := range []string{"pull_request", "remote_branch", "worktree", "local_branch"} {
		if got := stepsOf(plan)[step]; !strings.HasPrefix(got, UndoWould) {
			t.Errorf("the plan for %s: %q, want %q", step, got, UndoWould)
		}
	}
	if p := h.GH.PullRequests(fixRepo)[0]; p["state"] != "open" || !hasBranch(t, h.Remote, fixBranch) {
		t.Fatalf("the dry run changed something: PR %v", p["state"])
	}

	res, err := e.Undo(h.ctx, UndoOptions{Key: fixKey, Reason: "the split was wrong"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Complete || res.Status != workorder.StatusOpen {
		t.Errorf("undo: complete %v, status %s; steps %v", res.Complete, res.Status, stepsOf(res))
	}
	for _, step := range []string{"pull_request", "remote_branch", "worktree", "local_branch"} {
		if got := stepsOf(res)[step]; !strings.HasPrefix(got, UndoDone) {
			t.Errorf("%s: %q, want it undone", step, got)
		}
	}
	p := h.GH.PullRequests(fixRepo)[0]
	comments := h.GH.IssueComments(fixRepo, 1)
	if p["state"] != "closed" || len(comments) != 1 || !strings.Contains(comments[0].Body, "the split was wrong") {
		t.Errorf("the PR is %v with comments %+v; want it closed with one comment giving the reason", p["state"], comments)
	}
	if hasBranch(t, h.Remote, fixBranch) || hasBranch(t, h.Repo, fixBranch) {
		t.Error("a branch wo made is still there")
	}
	if _, err := os.Stat(h.Worktree); !os.IsNotExist(err) {
		t.Errorf("the worktree is still there: %v", err)
	}
	st := h.stored()
	if st.PRNumber != 0 || st.PushedSHA != "" || st.Branch != "" || st.CurrentStep != 0 || len(st.CompletedSteps) != 0 {
		t.Errorf("the state was not reset: %+v", st)
	}

	// A second undo finds nothing to do and writes nothing.
	before, _ := h.store.Get(h.ctx, fixKey)
	requests := len(h.GH.Requests())
	again, err := e.Undo(h.ctx, UndoOptions{Key: fixKey})
	if err != nil {
		t.Fatal(err)
	}
	after, _ := h.store.Get(h.ctx, fixKey)
	if !again.NothingToUndo || after["_rev"] != before["_rev"] || len(h.GH.Requests()) != requests {
		t.Errorf("a second undo: nothing to undo %v, wrote %v, %d GitHub request(s)", again.NothingToUndo,
			after["_rev"] != before["_rev"], len(h.GH.Requests())-requests)
	}
}

func TestUndoLeavesWhatSomeoneElseChanged(t *testing.T) {
	h := undoHarness(t)
	// Someone pushes on top of wo's branch.
	other := filepath.Join(h.Root, "other")
	gitIn(t, h.Root, "clone", "-q", "--branch", fixBranch, h.Remote, other)
	writeTestFile(t, filepath.Join(other, "theirs.txt"), "theirs\n")
	gitIn(t, other, "add", "-A")
	gitIn(t, other, "-c", "user.name=Alice", "-c", "user.email=alice@example.com", "commit", "-q", "-m", "theirs")
	gitIn(t, other, "push", "-q", "origin", fixBranch)
	theirs := gitIn(t, other, "rev-parse", "HEAD")

	res, err := h.engine().Undo(h.ctx, UndoOptions{Key: fixKey})
	if err != nil {
		t.Fatal(err)
	}
	got := stepsOf(res)["remote_branch"]
	if !strings.HasPrefix(got, UndoLeft) || !strings.Contains(got, theirs[:12]) {
		t.Errorf("remote branch: %q, want it left, naming their commit %s", got, theirs[:12])
	}
	if res.Complete {
		t.Error("an undo that left something says it is complete")
	}
	if tip := gitIn(t, h.Remote, "rev-parse", "refs/heads/"+fixBranch); tip != theirs {
		t.Errorf("the remote branch is at %s, want their %s", tip, theirs)
	}
}

func TestUndoNeverTouchesAMergedPullRequest(t *testing.T) {
	h := undoHarness(t)
	h.GH.Merge(fixRepo, 1)
	before := h.stored()
	requests := len(h.GH.Requests())
	res, err := h.engine().Undo(h.ctx, UndoOptions{Key: fixKey, Comments: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := stepsOf(res)["pull_request"]; !strings.HasPrefix(got, UndoLeft) || !strings.Contains(got, "cannot take a merge back") {
		t.Errorf("pull request: %q", got)
	}
	for _, r := range h.GH.Requests()[requests:] {
		if r.Method != "GET" {
			t.Errorf("undo sent %s %s after the merge", r.Method, r.Path)
		}
	}
	if !hasBranch(t, h.Remote, fixBranch) {
		t.Error("the merged branch was deleted on the remote")
	}
	if st := h.stored(); st.PRNumber != before.PRNumber || st.PushedSHA != before.PushedSHA {
		t.Errorf("the task of a merged PR lost its record: %+v", st)
	}
}

// The state is document text: one naming the base branch must not make
// undo delete it.
func TestUndoLeavesABaseBranchTheStateNames(t *testing.T) {
	h := undoHarness(t)
	base := gitIn(t, h.Repo, "rev-parse", fixBase)
	h.setState(func(s *stateT) { s.Branch, s.PushedSHA = fixBase, base })
	res, err := h.engine().Undo(h.ctx, UndoOptions{Key: fixKey})
	if err != nil {
		t.Fatal(err)
	}
	for _, step := range []string{"remote_branch", "local_branch"} {
		if got := stepsOf(res)[step]; !strings.HasPrefix(got, UndoLeft) {
			t.Errorf("%s: %q, want the base branch left", step, got)
		}
	}
	if !hasBranch(t, h.Remote, fixBase) || !hasBranch(t, h.Repo, fixBase) {
		t.Fatal("undo deleted the base branch")
	}
}

// A run that stopped after GitHub opened its PR and before recording it:
// undo finds the PR from the task's branch into its base, opened by wo,
// and closes it, saying how it knew.
func TestUndoFindsAPullRequestTheRunDidNotRecord(t *testing.T) {
	h := undoHarness(t)
	h.setState(func(s *stateT) { s.PRNumber, s.PRURL = 0, nil })
	res, err := h.engine().Undo(h.ctx, UndoOptions{Key: fixKey})
	if err != nil {
		t.Fatal(err)
	}
	got := stepsOf(res)["pull_request"]
	if !strings.HasPrefix(got, UndoDone) || !strings.Contains(got, "wo had not recorded it") {
		t.Errorf("pull request: %q, want it closed, saying wo had not recorded it", got)
	}
	if p := h.GH.PullRequests(fixRepo)[0]; p["state"] != "closed" {
		t.Errorf("the unrecorded PR is %v", p["state"])
	}
}

// What another task names, or someone else opened, is not this task's
// to take back, whatever this task's state says.
func TestUndoLeavesWhatIsNotProvablyThisTasks(t *testing.T) {
	t.Run("a branch another task names", func(t *testing.T) {
		h := undoHarness(t)
		other := map[string]any{"_key": "task_other", "title": "Another task", "status": "open",
			"work_order": map[string]any{"objective": "x", "inputs": map[string]any{"branch_name": fixBranch}, "procedure": []any{}}}
		if err := h.store.Create(h.ctx, other); err != nil {
			t.Fatal(err)
		}
		res, err := h.engine().Undo(h.ctx, UndoOptions{Key: fixKey, Comments: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, step := range []string{"comments", "pull_request", "remote_branch", "worktree", "local_branch"} {
			if got := stepsOf(res)[step]; !strings.HasPrefix(got, UndoLeft) || !strings.Contains(got, "task_other") {
				t.Errorf("%s: %q, want it left, naming task_other", step, got)
			}
		}
		if !hasBranch(t, h.Remote, fixBranch) || !hasBranch(t, h.Repo, fixBranch) {
			t.Error("a branch another task names was deleted")
		}
		if p := h.GH.PullRequests(fixRepo)[0]; p["state"] != "open" || len(h.GH.IssueComments(fixRepo, 1)) != 0 {
			t.Errorf("the pull request from a branch another task names was touched: %v", p["state"])
		}
	})
	t.Run("a PR someone else opened", func(t *testing.T) {
		h := undoHarness(t)
		n := h.GH.OpenPRAs(fixRepo, fixBranch, fixBase, "alice", "Alice's PR")
		h.setState(func(s *stateT) { s.PRNumber = n })
		res, err := h.engine().Undo(h.ctx, UndoOptions{Key: fixKey, Comments: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, step := range []string{"pull_request", "comments"} {
			if got := stepsOf(res)[step]; !strings.HasPrefix(got, UndoLeft) || !strings.Contains(got, "alice") {
				t.Errorf("%s: %q, want it left, naming alice", step, got)
			}
		}
		for _, p := range h.GH.PullRequests(fixRepo) {
			if p["number"] == n && p["state"] != "open" {
				t.Errorf("alice's PR #%d is %v", n, p["state"])
			}
		}
	})
}

// Undo killed after closing the PR goes on from there when run again: the
// closing comment is posted once, and what was done is not done again.
func TestUndoGoesOnWhereItStopped(t *testing.T) {
	h := undoHarness(t)
	e := h.engine()
	stop := "undo:pull_request:after_comment"
	e.Fault = func(point string) {
		if point == stop {
			panic(point)
		}
	}
	func() {
		defer func() {
			if r := recover(); r != stop {
				t.Fatalf("undo did not stop at %s: %v", stop, r)
			}
		}()
		e.Undo(h.ctx, UndoOptions{Key: fixKey, Reason: "once"})
	}()
	e.Fault = nil
	// The panic left the lease held by this engine; the same runner
	// takes it again.
	res, err := e.Undo(h.ctx, UndoOptions{Key: fixKey, Reason: "once"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Complete || h.GH.PullRequests(fixRepo)[0]["state"] != "closed" {
		t.Errorf("the rerun did not finish: %v", stepsOf(res))
	}
	if c := h.GH.IssueComments(fixRepo, 1); len(c) != 1 {
		t.Errorf("%d closing comments, want 1: %+v", len(c), c)
	}
}

// revOf is the task's revision in the store: every write changes it.
func (h *stepHarness) revOf() string {
	h.t.Helper()
	doc, err := h.store.Get(h.ctx, fixKey)
	if err != nil {
		h.t.Fatal(err)
	}
	return doc["_rev"].(string)
}

// An undo that ended leaving a merged pull request (and so the state) is
// over: a second one writes nothing, asks GitHub nothing, and says what
// the first left.
func TestUndoOfAMergedTaskTwiceIsANoOp(t *testing.T) {
	h := undoHarness(t)
	h.GH.Merge(fixRepo, 1)
	first, err := h.engine().Undo(h.ctx, UndoOptions{Key: fixKey})
	if err != nil || first.Complete || first.AsRecorded {
		t.Fatalf("first undo: %v, complete %v, as recorded %v", err, first.Complete, first.AsRecorded)
	}
	rev, requests := h.revOf(), len(h.GH.Requests())
	again, err := h.engine().Undo(h.ctx, UndoOptions{Key: fixKey})
	if err != nil {
		t.Fatal(err)
	}
	if h.revOf() != rev || len(h.GH.Requests()) != requests {
		t.Errorf("the second undo wrote (%v) or asked GitHub (%d requests)", h.revOf() != rev, len(h.GH.Requests())-requests)
	}
	if !again.AsRecorded || again.Complete || !strings.HasPrefix(stepsOf(again)["state"], UndoLeft) || len(again.Steps) != len(first.Steps) {
		t.Errorf("the second undo: as recorded %v, complete %v, steps %v; want the first's %v", again.AsRecorded, again.Complete, stepsOf(again), stepsOf(first))
	}
}

// A task whose state records nothing is not touched, whatever its status:
// undo is not a way to reopen a task someone closed.
func TestUndoLeavesAnUntouchedClosedTask(t *testing.T) {
	h := newStepContext(t, stepOpts{})
	top := map[string]any{}
	if err := h.r.setStatus(top, workorder.StatusInReview, ""); err != nil {
		t.Fatal(err)
	}
	h.r.save(h.ctx, top)
	top = map[string]any{}
	if err := h.r.setStatus(top, workorder.StatusClosed, ""); err != nil {
		t.Fatal(err)
	}
	h.r.save(h.ctx, top)
	h.r.release(h.ctx)
	rev := h.revOf()
	res, err := h.engine().Undo(h.ctx, UndoOptions{Key: fixKey})
	if err != nil {
		t.Fatal(err)
	}
	if !res.NothingToUndo || !res.Complete || res.Status != workorder.StatusClosed || h.revOf() != rev {
		t.Errorf("undo of an untouched closed task: nothing to undo %v, complete %v, status %s, wrote %v", res.NothingToUndo, res.Complete, res.Status, h.revOf() != rev)
	}
}

// An undo that an error stops is not complete, and says at which step it
// stopped; the next one goes on from there.
func TestUndoStoppedByGitHubIsNotComplete(t *testing.T) {
	h := undoHarness(t)
	h.GH.Inject5xx(5)
	res, err := h.engine().Undo(h.ctx, UndoOptions{Key: fixKey})
	if err == nil || !IsTransient(err) {
		t.Fatalf("undo while GitHub answers 502: %v, want a transient error", err)
	}
	if res == nil || res.Complete || res.Stopped != "pull_request" {
		t.Fatalf("undo stopped by GitHub: %+v, want not complete, stopped at pull_request", res)
	}
	again, err := h.engine().Undo(h.ctx, UndoOptions{Key: fixKey})
	if err != nil || !again.Complete || again.Stopped != "" {
		t.Errorf("the rerun: %v, %+v", err, again)
	}
}
