package undo

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/wo-runner/wo/gitops"
	"github.com/wo-runner/wo/integration/ghstandin"
	"github.com/wo-runner/wo/internal/gittest"
	"github.com/wo-runner/wo/procedure"
	"github.com/wo-runner/wo/procedure/action"
	"github.com/wo-runner/wo/procedure/internal/fixture"
	"github.com/wo-runner/wo/store"
	"github.com/wo-runner/wo/workorder"
)

func TestUndoTakesBackWhatTheRunMade(t *testing.T) {
	h := undoHarness(t)
	e := h.engine()

	// The plan first: it changes nothing.
	plan, err := Task(h.ctx, e, Options{Key: fixture.Key, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, step := range []string{"pull_request", "remote_branch", "worktree", "local_branch"} {
		if got := stepsOf(plan)[step]; !strings.HasPrefix(got, Would) {
			t.Errorf("the plan for %s: %q, want %q", step, got, Would)
		}
	}
	if p := h.GH.PullRequests(fixture.Repo)[0]; p["state"] != "open" || !hasBranch(t, h.Remote, fixture.Branch) {
		t.Fatalf("the dry run changed something: PR %v", p["state"])
	}

	res, err := Task(h.ctx, e, Options{Key: fixture.Key, Reason: "the split was wrong"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Complete || res.Status != workorder.StatusOpen {
		t.Errorf("undo: complete %v, status %s; steps %v", res.Complete, res.Status, stepsOf(res))
	}
	for _, step := range []string{"pull_request", "remote_branch", "worktree", "local_branch"} {
		if got := stepsOf(res)[step]; !strings.HasPrefix(got, Done) {
			t.Errorf("%s: %q, want it undone", step, got)
		}
	}
	p := h.GH.PullRequests(fixture.Repo)[0]
	comments := h.GH.IssueComments(fixture.Repo, 1)
	if p["state"] != "closed" || len(comments) != 1 || !strings.Contains(comments[0].Body, "the split was wrong") {
		t.Errorf("the PR is %v with comments %+v; want it closed with one comment giving the reason", p["state"], comments)
	}
	if hasBranch(t, h.Remote, fixture.Branch) || hasBranch(t, h.Repo, fixture.Branch) {
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
	before, _ := h.store.Get(h.ctx, fixture.Key)
	requests := len(h.GH.Requests())
	again, err := Task(h.ctx, e, Options{Key: fixture.Key})
	if err != nil {
		t.Fatal(err)
	}
	after, _ := h.store.Get(h.ctx, fixture.Key)
	if !again.NothingToUndo || after["_rev"] != before["_rev"] || len(h.GH.Requests()) != requests {
		t.Errorf("a second undo: nothing to undo %v, wrote %v, %d GitHub request(s)", again.NothingToUndo,
			after["_rev"] != before["_rev"], len(h.GH.Requests())-requests)
	}
}

func TestUndoLeavesWhatSomeoneElseChanged(t *testing.T) {
	h := undoHarness(t)
	// Someone pushes on top of wo's branch.
	theirs := fixture.SomeonePushes(t, h.Root, h.Remote, fixture.Branch, fixture.Branch)

	res := h.mustUndo(Options{Key: fixture.Key})
	got := stepsOf(res)["remote_branch"]
	if !strings.HasPrefix(got, Left) || !strings.Contains(got, theirs[:12]) || !strings.Contains(got, "that wo pushed: someone else pushed since") {
		t.Errorf("remote branch: %q, want it left, naming their commit %s", got, theirs[:12])
	}
	if res.Complete {
		t.Error("an undo that left something says it is complete")
	}
	if tip := gittest.Run(t, h.Remote, "rev-parse", "refs/heads/"+fixture.Branch); tip != theirs {
		t.Errorf("the remote branch is at %s, want their %s", tip, theirs)
	}
}

func TestUndoNeverTouchesAMergedPullRequest(t *testing.T) {
	h := undoHarness(t)
	h.GH.Merge(fixture.Repo, 1)
	before := h.stored()
	requests := len(h.GH.Requests())
	res := h.mustUndo(Options{Key: fixture.Key, Comments: true})
	if got := stepsOf(res)["pull_request"]; !strings.HasPrefix(got, Left) || !strings.Contains(got, "cannot take a merge back") {
		t.Errorf("pull request: %q", got)
	}
	for _, r := range h.GH.Requests()[requests:] {
		if r.Method != "GET" {
			t.Errorf("undo sent %s %s after the merge", r.Method, r.Path)
		}
	}
	if !hasBranch(t, h.Remote, fixture.Branch) {
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
	base := gittest.Run(t, h.Repo, "rev-parse", fixture.Base)
	h.setState(func(s *stateT) { s.Branch, s.PushedSHA = fixture.Base, base })
	res := h.mustUndo(Options{Key: fixture.Key})
	for _, step := range []string{"remote_branch", "local_branch"} {
		if got := stepsOf(res)[step]; !strings.HasPrefix(got, Left) {
			t.Errorf("%s: %q, want the base branch left", step, got)
		}
	}
	if !hasBranch(t, h.Remote, fixture.Base) || !hasBranch(t, h.Repo, fixture.Base) {
		t.Fatal("undo deleted the base branch")
	}
}

// A run that stopped after GitHub opened its PR and before recording it:
// undo finds the PR from the task's branch into its base, opened by wo,
// and closes it, saying how it knew.
func TestUndoFindsAPullRequestTheRunDidNotRecord(t *testing.T) {
	h := undoHarness(t)
	h.setState(func(s *stateT) { s.PRNumber, s.PRURL = 0, nil })
	res := h.mustUndo(Options{Key: fixture.Key})
	got := stepsOf(res)["pull_request"]
	if !strings.HasPrefix(got, Done) || !strings.Contains(got, "wo had not recorded it") {
		t.Errorf("pull request: %q, want it closed, saying wo had not recorded it", got)
	}
	if p := h.GH.PullRequests(fixture.Repo)[0]; p["state"] != "closed" {
		t.Errorf("the unrecorded PR is %v", p["state"])
	}
}

// What another task names, or someone else opened, is not this task's
// to take back, whatever this task's state says.
func TestUndoLeavesWhatIsNotProvablyThisTasks(t *testing.T) {
	t.Run("a branch another task names", func(t *testing.T) {
		h := undoHarness(t)
		other := map[string]any{"_key": "task_other", "title": "Another task", "status": "open",
			"work_order": map[string]any{"objective": "x", "inputs": map[string]any{"branch_name": fixture.Branch}, "procedure": []any{}}}
		if err := h.store.Create(h.ctx, other); err != nil {
			t.Fatal(err)
		}
		res := h.mustUndo(Options{Key: fixture.Key, Comments: true})
		for _, step := range []string{"comments", "pull_request", "remote_branch", "worktree", "local_branch"} {
			if got := stepsOf(res)[step]; !strings.HasPrefix(got, Left) || !strings.Contains(got, "task_other") {
				t.Errorf("%s: %q, want it left, naming task_other", step, got)
			}
		}
		if !hasBranch(t, h.Remote, fixture.Branch) || !hasBranch(t, h.Repo, fixture.Branch) {
			t.Error("a branch another task names was deleted")
		}
		if p := h.GH.PullRequests(fixture.Repo)[0]; p["state"] != "open" || len(h.GH.IssueComments(fixture.Repo, 1)) != 0 {
			t.Errorf("the pull request from a branch another task names was touched: %v", p["state"])
		}
	})
	t.Run("an unrecorded PR from a branch another task names", func(t *testing.T) {
		h := undoHarness(t)
		h.setState(func(s *stateT) { s.PRNumber, s.PRURL = 0, nil })
		other := map[string]any{"_key": "task_other", "title": "Another task", "status": "open",
			"work_order": map[string]any{"objective": "x", "inputs": map[string]any{"branch_name": fixture.Branch}, "procedure": []any{}}}
		if err := h.store.Create(h.ctx, other); err != nil {
			t.Fatal(err)
		}
		res := h.mustUndo(Options{Key: fixture.Key})
		if got := stepsOf(res)["pull_request"]; !strings.HasPrefix(got, Left) || !strings.Contains(got, "task_other") || strings.Contains(got, "wo had not recorded it") {
			t.Errorf("pull request: %q, want it left, not claimed as wo's", got)
		}
	})
	t.Run("a PR someone else opened", func(t *testing.T) {
		h := undoHarness(t)
		n := h.GH.OpenPRAs(fixture.Repo, fixture.Branch, fixture.Base, "alice", "Alice's PR")
		h.setState(func(s *stateT) { s.PRNumber = n })
		res := h.mustUndo(Options{Key: fixture.Key, Comments: true})
		for _, step := range []string{"pull_request", "comments"} {
			if got := stepsOf(res)[step]; !strings.HasPrefix(got, Left) || !strings.Contains(got, "alice") {
				t.Errorf("%s: %q, want it left, naming alice", step, got)
			}
		}
		for _, p := range h.GH.PullRequests(fixture.Repo) {
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
		Task(h.ctx, e, Options{Key: fixture.Key, Reason: "once"})
	}()
	e.Fault = nil
	// The panic left the lease held by this engine; the same runner
	// takes it again.
	res, err := Task(h.ctx, e, Options{Key: fixture.Key, Reason: "once"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Complete || h.GH.PullRequests(fixture.Repo)[0]["state"] != "closed" {
		t.Errorf("the rerun did not finish: %v", stepsOf(res))
	}
	if c := h.GH.IssueComments(fixture.Repo, 1); len(c) != 1 {
		t.Errorf("%d closing comments, want 1: %+v", len(c), c)
	}
}

// An undo that ended leaving a merged pull request (and so the state) is
// over: a second one writes nothing, asks GitHub nothing, and says what
// the first left.
func TestUndoOfAMergedTaskTwiceIsANoOp(t *testing.T) {
	h := undoHarness(t)
	h.GH.Merge(fixture.Repo, 1)
	first, err := Task(h.ctx, h.engine(), Options{Key: fixture.Key})
	if err != nil || first.Complete || first.AsRecorded {
		t.Fatalf("first undo: %v, complete %v, as recorded %v", err, first.Complete, first.AsRecorded)
	}
	rev, requests := h.revOf(), len(h.GH.Requests())
	again := h.mustUndo(Options{Key: fixture.Key})
	if h.revOf() != rev || len(h.GH.Requests()) != requests {
		t.Errorf("the second undo wrote (%v) or asked GitHub (%d requests)", h.revOf() != rev, len(h.GH.Requests())-requests)
	}
	if !again.AsRecorded || again.Complete || !strings.HasPrefix(stepsOf(again)["state"], Left) || len(again.Steps) != len(first.Steps) {
		t.Errorf("the second undo: as recorded %v, complete %v, steps %v; want the first's %v", again.AsRecorded, again.Complete, stepsOf(again), stepsOf(first))
	}
}

// A task whose state records nothing is not touched, whatever its status:
// undo is not a way to reopen a task someone closed.
func TestUndoLeavesAnUntouchedClosedTask(t *testing.T) {
	h := newHarness(t, stepOpts{})
	ed, release := h.held()
	for _, to := range []workorder.Status{workorder.StatusInReview, workorder.StatusClosed} {
		if err := ed.MoveStatus(h.ctx, to); err != nil {
			t.Fatal(err)
		}
	}
	release()
	rev := h.revOf()
	res := h.mustUndo(Options{Key: fixture.Key})
	if !res.NothingToUndo || !res.Complete || res.Status != workorder.StatusClosed || h.revOf() != rev {
		t.Errorf("undo of an untouched closed task: nothing to undo %v, complete %v, status %s, wrote %v", res.NothingToUndo, res.Complete, res.Status, h.revOf() != rev)
	}
}

// An undo that an error stops is not complete, and says at which step it
// stopped; the next one goes on from there.
func TestUndoStoppedByGitHubIsNotComplete(t *testing.T) {
	h := undoHarness(t)
	h.GH.Inject5xx(5)
	res, err := Task(h.ctx, h.engine(), Options{Key: fixture.Key})
	if err == nil || !procedure.IsTransient(err) {
		t.Fatalf("undo while GitHub answers 502: %v, want a transient error", err)
	}
	if res == nil || res.Complete || res.Stopped != "pull_request" {
		t.Fatalf("undo stopped by GitHub: %+v, want not complete, stopped at pull_request", res)
	}
	again, err := Task(h.ctx, h.engine(), Options{Key: fixture.Key})
	if err != nil || !again.Complete || again.Stopped != "" {
		t.Errorf("the rerun: %v, %+v", err, again)
	}
}

// The legacy reader (action.LegacyFacts) reads a prose-only log: only this
// task's finished steps, and each note as the action that wrote it worded
// it then.
func TestLegacyProvenanceReadsTheNotesOfTheTasksOwnSteps(t *testing.T) {
	const a, b, c, d, e = "aaaaaaaaaaaa", "bbbbbbbbbbbb", "cccccccccccc", "dddddddddddd", "eeeeeeeeeeee"
	step := func(key, action, note string) store.LogEntry {
		return store.LogEntry{Action: "step_completed", TaskKey: key, Details: map[string]any{"action": action, "note": note}}
	}
	entries := []store.LogEntry{
		step(fixture.Key, "create_worktree", "worktree /wt/pr 01 created from code-review-base ("+a+")"),
		step(fixture.Key, "create_worktree", "worktree /wt/other created from the existing branch feature/x ("+b+")"),
		step(fixture.Key, "create_branch", "on branch review/01 at "+a),
		step(fixture.Key, "create_branch", "on branch feature/x at "+b),
		step(fixture.Key, "commit", "committed "+c+": Add the foundation"),
		step(fixture.Key, "commit", "nothing to commit: the branch is at "+e),
		// A rerun (after wo reset) finding the branch an earlier run made.
		step(fixture.Key, "create_worktree", "worktree /wt/again created from the existing branch review/01 ("+c+")"),
		// Found, not created: no worktree of wo's, but the branch in it
		// is someone's.
		step(fixture.Key, "create_worktree", "found worktree /wt/theirs already there, at the existing branch feature/y ("+d+"): wo did not create it"),
		step(fixture.Key, "push", "pushed review/02 to https://github.com/acme/x.git ("+c+"); 1 file withheld"),
		step(fixture.Key, "push", "review/01 already at "+e+" on /origin"),
		step(fixture.Key, "conditional_loop", "fixed 2 review comment(s) in "+d+" (iteration 1); back to step 7"),
		step(fixture.Key, "create_pr", "opened pull request #3: https://github.example/acme/x/pull/3"),
		step(fixture.Key, "create_pr", "pull request #4 is open: https://github.example/acme/x/pull/4"),
		step(fixture.Key, "create_pr", "found the open pull request #5: https://github.example/acme/x/pull/5"),
		// Not this task's, not a finished step, or a note of another action.
		step("task_other", "commit", "committed "+e+": theirs"),
		{Action: "step_failed", TaskKey: fixture.Key, Details: map[string]any{"action": "commit", "note": "committed " + e + ": x"}},
		step(fixture.Key, "checkout_files", "committed "+e+": not a commit step"),
	}
	p := ProvenanceOf(fixture.Key, entries)
	if got := strings.Join(p.Commits, ","); got != c+","+d {
		t.Errorf("commits %s, want %s,%s", got, c, d)
	}
	// The review loop's pass is complete once its fix is pushed.
	if got := strings.Join(p.Pushed, ","); got != c+","+d {
		t.Errorf("pushed %s, want %s,%s", got, c, d)
	}
	if len(p.Branches) != 3 || p.Branches["review/01"] != a || p.Branches["feature/x"] != b || p.Branches["review/02"] != "" || !p.Branch("review/02") || p.Branch("review/03") {
		t.Errorf("branches %v", p.Branches)
	}
	if len(p.Adopted) != 2 || p.Adopted["feature/x"] != b || p.Adopted["feature/y"] != d {
		t.Errorf("adopted %v", p.Adopted)
	}
	if strings.Join(p.Worktrees, ",") != "/wt/pr 01,/wt/other,/wt/again" {
		t.Errorf("worktrees %q", p.Worktrees)
	}
	if fmt.Sprint(p.PRs) != "[3 4 5]" {
		t.Errorf("pull requests %v", p.PRs)
	}
	hash := func(prefix string) plumbing.Hash { return plumbing.NewHash(prefix + "0123456789abcdef0123456789ab") }
	for _, c := range []struct {
		what string
		got  bool
		want bool
	}{
		{"a commit wo made", p.Made(hash(c)), true},
		{"a fix commit", p.Made(hash(d)), true},
		{"a commit wo found", p.Made(hash(e)), false},
		{"a pushed commit", p.PushedIt(hash(c)), true},
		{"a fix the loop pushed", p.PushedIt(hash(d)), true},
		{"a commit wo found, not pushed", p.PushedIt(hash(e)), false},
		{"where wo started its branch", p.Started("review/01", hash(a)), true},
		{"another commit on its branch", p.Started("review/01", hash(b)), false},
		{"a branch wo found existing", p.Started("feature/x", hash(b)), false},
		{"a branch only pushed", p.Started("review/02", hash(c)), false},
	} {
		if c.got != c.want {
			t.Errorf("%s: %v, want %v", c.what, c.got, c.want)
		}
	}
}

// What the state names but this task's log does not prove stays: a run
// whose steps wrote no log entries (the state could have been written by
// anyone) leaves its branches and pull request; the worktree carries the
// mark create_worktree wrote, so it goes.
func TestUndoTakesOnlyWhatTheLogProves(t *testing.T) {
	h := newHarness(t, stepOpts{GitHub: true})
	h.upTo("wait_for_review") // state written, nothing logged
	res := h.mustUndo(Options{Key: fixture.Key})
	for _, step := range []string{"pull_request", "remote_branch", "local_branch"} {
		if got := stepsOf(res)[step]; !strings.HasPrefix(got, Left) || !strings.Contains(got, "never switched to or pushed by this task's runs") {
			t.Errorf("%s: %q, want it left for want of proof", step, got)
		}
	}
	if got := stepsOf(res)["worktree"]; !strings.HasPrefix(got, Done) {
		t.Errorf("worktree: %q, want it removed: its admin files name the task", got)
	}
	if !hasBranch(t, h.Remote, fixture.Branch) || !hasBranch(t, h.Repo, fixture.Branch) || h.GH.PullRequests(fixture.Repo)[0]["state"] != "open" {
		t.Error("undo took back what it cannot prove it made")
	}
}

// A worktree is wo's when its admin files name this task, or, for one made
// before wo wrote that mark, when this task's log records creating it.
func TestUndoProvesTheWorktreeItRemoves(t *testing.T) {
	marker := func(h *harness) string {
		return filepath.Join(h.Repo, ".git", "worktrees", fixture.Worktree, gitops.OwnerFile)
	}
	t.Run("named for another task", func(t *testing.T) {
		h := undoHarness(t)
		fixture.WriteFile(t, marker(h), "task_other\n")
		res := h.mustUndo(Options{Key: fixture.Key})
		if got := stepsOf(res)["worktree"]; !strings.HasPrefix(got, Left) || !strings.Contains(got, "task task_other created it") {
			t.Errorf("worktree: %q", got)
		}
		if _, err := os.Stat(h.Worktree); err != nil {
			t.Errorf("the worktree another task made is gone: %v", err)
		}
	})
	t.Run("no mark, creation logged", func(t *testing.T) {
		h := undoHarness(t)
		os.Remove(marker(h))
		res := h.mustUndo(Options{Key: fixture.Key})
		if got := stepsOf(res)["worktree"]; !strings.HasPrefix(got, Done) {
			t.Errorf("worktree: %q, want it removed on the log's word", got)
		}
	})
	t.Run("no mark, creation not logged", func(t *testing.T) {
		h := newHarness(t, stepOpts{GitHub: true})
		out, err := h.run("create_worktree")
		if err != nil {
			t.Fatal(err)
		}
		h.keep(out) // state only: as a document could say it
		h.completeSteps(h.step("create_worktree").Step+1, h.step("wait_for_review").Step-1)
		os.Remove(marker(h))
		res := h.mustUndo(Options{Key: fixture.Key})
		if got := stepsOf(res)["worktree"]; !strings.HasPrefix(got, Left) || !strings.Contains(got, "carry no mark of wo's") {
			t.Errorf("worktree: %q, want it left", got)
		}
		if _, err := os.Stat(h.Worktree); err != nil {
			t.Errorf("an unproven worktree is gone: %v", err)
		}
	})
}

// A worktree path that wo could not have made (outside worktree_root) is
// left with the reason, and the undo finishes; a repository that does not
// open is an error, not something left.
func TestUndoOfAWorktreeWoCouldNotHaveMade(t *testing.T) {
	h := undoHarness(t)
	outside := filepath.Join(h.Root, "elsewhere")
	h.setState(func(s *stateT) { s.WorktreePath = &outside })
	res := h.mustUndo(Options{Key: fixture.Key})
	if got := stepsOf(res)["worktree"]; !strings.HasPrefix(got, Left) || !strings.Contains(got, "is not inside work_order.context.worktree_root") {
		t.Errorf("worktree: %q", got)
	}
	// The branch is checked out in the real worktree, which undo did not
	// look at: it stays, and so does the state, until a person removes it.
	if got := stepsOf(res)["local_branch"]; res.Complete || !res.Pending || !strings.Contains(got, "is checked out at "+h.Worktree) || !hasBranch(t, h.Repo, fixture.Branch) {
		t.Errorf("complete %v, pending %v, local branch %q; the branch checked out in the real worktree must stay", res.Complete, res.Pending, got)
	}

	h = newHarness(t, stepOpts{Procedure: fixture.BareSteps("create_worktree")})
	h.completeUpTo("none")
	if _, err := Task(h.ctx, h.engine(), Options{Key: fixture.Key, RepoPath: filepath.Join(h.Root, "nowhere")}); err == nil || !strings.Contains(err.Error(), "nowhere") {
		t.Errorf("undo with a repository that does not open: %v", err)
	}
	if _, err := os.Stat(h.Worktree); err != nil {
		t.Errorf("the worktree: %v", err)
	}
}

// What a person can deal with (changes not committed in the worktree, the
// branch checked out elsewhere) is left, and the state with it: once they
// have, the next undo finishes instead of finding nothing to undo.
func TestUndoLeftForAPersonFinishesWhenRunAgain(t *testing.T) {
	t.Run("changes not committed", func(t *testing.T) {
		h := undoHarness(t)
		fixture.WriteFile(t, filepath.Join(h.Worktree, "scratch.txt"), "wip\n")
		plan := h.mustUndo(Options{Key: fixture.Key, DryRun: true})
		if got := stepsOf(plan)["local_branch"]; !strings.HasPrefix(got, Left) || !plan.Pending {
			t.Errorf("the plan: local branch %q, pending %v; the worktree that stays keeps it checked out", got, plan.Pending)
		}
		res := h.mustUndo(Options{Key: fixture.Key})
		if got := stepsOf(res)["worktree"]; !strings.HasPrefix(got, Left) || !strings.Contains(got, "scratch.txt") || !strings.Contains(got, "run wo undo "+fixture.Key+" again") {
			t.Errorf("worktree: %q", got)
		}
		if got := stepsOf(res)["state"]; res.Complete || !res.Pending || !strings.HasPrefix(got, Left) || res.Status != workorder.StatusInProgress {
			t.Errorf("complete %v, pending %v, status %s, state %q: the state must be kept", res.Complete, res.Pending, res.Status, got)
		}
		if st := h.stored(); st.Undo == nil || st.PRNumber != 1 || st.Branch != fixture.Branch {
			t.Errorf("the state was not kept: %+v", st)
		}
		// Nothing changed: the rerun leaves the same, and logs nothing new.
		logs, _ := h.store.Logs(h.ctx, fixture.Key)
		if again, err := Task(h.ctx, h.engine(), Options{Key: fixture.Key}); err != nil || !again.Pending {
			t.Fatalf("the rerun before the fix: %v, %+v", err, again)
		}
		if now, _ := h.store.Logs(h.ctx, fixture.Key); len(now) != len(logs) {
			t.Errorf("a rerun that found the same logged %d entries", len(now)-len(logs))
		}
		os.Remove(filepath.Join(h.Worktree, "scratch.txt"))
		done, err := Task(h.ctx, h.engine(), Options{Key: fixture.Key})
		if err != nil || !done.Complete || done.Pending || done.Status != workorder.StatusOpen {
			t.Fatalf("the rerun after the fix: %v, %v", err, stepsOf(done))
		}
		if hasBranch(t, h.Repo, fixture.Branch) || h.stored().Undo != nil {
			t.Error("the rerun did not finish")
		}
		// What changed is logged: the worktree, left before, is undone now.
		entries, _ := h.store.Logs(h.ctx, fixture.Key)
		if !slices.ContainsFunc(entries, func(e store.LogEntry) bool {
			return e.Action == "undo_step" && e.Details["step"] == "worktree" && e.Details["outcome"] == Done
		}) {
			t.Error("the log has no entry for the worktree taken back on the rerun")
		}
		if c := h.GH.IssueComments(fixture.Repo, 1); len(c) != 1 {
			t.Errorf("%d closing comments, want 1", len(c))
		}
	})
	t.Run("the branch checked out elsewhere", func(t *testing.T) {
		h := undoHarness(t)
		res, err := Task(h.ctx, h.engine(), Options{Key: fixture.Key, DryRun: true})
		if err != nil || res.Pending || !strings.HasPrefix(stepsOf(res)["local_branch"], Would) {
			t.Fatalf("the plan with nothing in the way: %v, pending %v, %v", err, res.Pending, stepsOf(res))
		}
		// A person removes wo's worktree and checks the branch out in the
		// main checkout.
		gittest.Run(t, h.Repo, "worktree", "remove", h.Worktree)
		gittest.Run(t, h.Repo, "checkout", "-q", fixture.Branch)
		res, err = Task(h.ctx, h.engine(), Options{Key: fixture.Key})
		if err != nil {
			t.Fatal(err)
		}
		if got := stepsOf(res)["local_branch"]; !strings.HasPrefix(got, Left) || !strings.Contains(got, "is checked out at "+h.Repo) || !res.Pending {
			t.Errorf("local branch: %q, pending %v", got, res.Pending)
		}
		gittest.Run(t, h.Repo, "checkout", "-q", "main")
		done, err := Task(h.ctx, h.engine(), Options{Key: fixture.Key})
		if err != nil || !done.Complete || hasBranch(t, h.Repo, fixture.Branch) {
			t.Errorf("the rerun after the fix: %v, %v", err, stepsOf(done))
		}
	})
}

// A branch that another task builds on (its base_branch) stays while a run
// of that task is not undone: deleting it would close that task's pull
// request on GitHub for good. Once that task is undone (or never ran), the
// branch goes.
func TestUndoKeepsTheBaseOfAStackedTask(t *testing.T) {
	stacked := func(h *harness, state map[string]any) {
		h.t.Helper()
		doc := map[string]any{"_key": "task_above", "title": "The PR above", "status": "in_review",
			"work_order": map[string]any{"objective": "x", "context": map[string]any{"base_branch": fixture.Branch},
				"inputs": map[string]any{"branch_name": "review/02-above"}, "procedure": []any{}, "state": state}}
		if err := h.store.Create(h.ctx, doc); err != nil {
			h.t.Fatal(err)
		}
	}
	t.Run("a run of it not undone", func(t *testing.T) {
		h := undoHarness(t)
		stacked(h, map[string]any{"version": 1, "current_step": 6, "completed_steps": []any{1, 2, 3, 4, 5, 6}, "pr_number": 2})
		res := h.mustUndo(Options{Key: fixture.Key})
		for _, step := range []string{"remote_branch", "local_branch"} {
			if got := stepsOf(res)[step]; !strings.HasPrefix(got, Left) || !strings.Contains(got, "is the base of task task_above") || !strings.Contains(got, "run wo undo task_above first, then wo undo "+fixture.Key+" again") {
				t.Errorf("%s: %q", step, got)
			}
		}
		if !res.Pending || !hasBranch(t, h.Remote, fixture.Branch) || !hasBranch(t, h.Repo, fixture.Branch) {
			t.Errorf("pending %v; the base of task_above must stay", res.Pending)
		}
		// In an epic, the message says to undo the stack from the top.
		doc, _ := h.store.Get(h.ctx, fixture.Key)
		if _, err := h.store.Update(h.ctx, fixture.Key, doc["_rev"].(string), map[string]any{"parent_key": "task_epic"}); err != nil {
			t.Fatal(err)
		}
		again, err := Task(h.ctx, h.engine(), Options{Key: fixture.Key})
		if got := stepsOf(again)["remote_branch"]; err != nil || !strings.Contains(got, "undo the stack from the top with wo undo --epic task_epic, or run wo undo task_above first") {
			t.Errorf("remote branch in an epic: %v, %q", err, got)
		}
	})
	t.Run("never run", func(t *testing.T) {
		h := undoHarness(t)
		stacked(h, map[string]any{"version": 1, "current_step": 0, "completed_steps": []any{}})
		res, err := Task(h.ctx, h.engine(), Options{Key: fixture.Key})
		if err != nil || !res.Complete || hasBranch(t, h.Remote, fixture.Branch) || hasBranch(t, h.Repo, fixture.Branch) {
			t.Errorf("with the task above untouched: %v, %v", err, stepsOf(res))
		}
	})
}

// lyingProxy stands in front of the harness's stand-in and answers the
// requests lie picks with the pull request's state turned to closed; a
// PATCH it picks is read instead, never sent.
func lyingProxy(t *testing.T, h *harness, lie func(*http.Request) bool) {
	t.Helper()
	srv := ghstandin.PRStateLiar(h.GH.URL, lie)
	t.Cleanup(srv.Close)
	h.engine().GitHubAPI = srv.URL + "/"
}

// Undo believes a pull request closed only when GitHub's answers agree:
// one that reads as closed but is listed open, or a close that leaves it
// open, stops the undo for a retry; one that someone really closed is
// gone, even with another open pull request from the same branch.
func TestUndoChecksThatThePullRequestIsClosed(t *testing.T) {
	pull1 := func(method string) func(*http.Request) bool {
		return func(r *http.Request) bool { return r.Method == method && strings.HasSuffix(r.URL.Path, "/pulls/1") }
	}
	for _, c := range []struct {
		name string
		lie  func(*http.Request) bool
		want string
	}{
		{"reads as closed", pull1(http.MethodGet), "GitHub answers that pull request #1 is closed, but lists it open from " + fixture.Branch + " into " + fixture.Base},
		{"a close that does not close", pull1(http.MethodPatch), "wo closed pull request #1, but GitHub still shows it open"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := undoHarness(t)
			lyingProxy(t, h, c.lie)
			res, err := Task(h.ctx, h.engine(), Options{Key: fixture.Key})
			if err == nil || !procedure.IsTransient(err) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("undo: %v, want a retry later saying %q", err, c.want)
			}
			if res.Complete || h.GH.PullRequests(fixture.Repo)[0]["state"] != "open" {
				t.Errorf("complete %v, PR %v", res.Complete, h.GH.PullRequests(fixture.Repo)[0]["state"])
			}
		})
	}
	t.Run("closed by someone", func(t *testing.T) {
		h := undoHarness(t)
		req, _ := http.NewRequest(http.MethodPatch, h.GH.URL+"repos/"+fixture.Repo+"/pulls/1", strings.NewReader(`{"state":"closed"}`))
		req.Header.Set("Authorization", "Bearer "+fixture.Token)
		if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("closing #1: %v %v", resp, err)
		}
		h.GH.OpenPRAs(fixture.Repo, fixture.Branch, fixture.Base, "alice", "Alice's PR from the same branch")
		res, err := Task(h.ctx, h.engine(), Options{Key: fixture.Key})
		if err != nil || !strings.HasPrefix(stepsOf(res)["pull_request"], Gone) {
			t.Errorf("undo: %v, pull request %q, want gone", err, stepsOf(res)["pull_request"])
		}
	})
}

// undo --epic fares as wo run --epic: a child that another runner holds is
// running elsewhere (exit 3, not 4), what it builds on is kept, the rest is
// undone; with nobody holding anything, the epic's undo is complete.
func TestUndoEpicWithAChildHeldElsewhere(t *testing.T) {
	h := newHarness(t, stepOpts{})
	child := func(key string, blockedBy []any, lease map[string]any) {
		st := map[string]any{"version": 1, "current_step": 1, "completed_steps": []any{1}, "notes": []any{"ran"}}
		if lease != nil {
			st["lease"] = lease
		}
		doc := map[string]any{"_key": key, "title": key, "status": "in_progress", "parent_key": "task_epic",
			"work_order": map[string]any{"version": "1.0", "objective": "Undo this child of the epic", "procedure": fixture.BareSteps("update_task"), "state": st,
				"dependencies": map[string]any{"blocked_by": blockedBy, "blocks": []any{}}}}
		if err := h.store.Create(h.ctx, doc); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.store.Create(h.ctx, map[string]any{"_key": "task_epic", "title": "epic", "status": "open", "type": "epic"}); err != nil {
		t.Fatal(err)
	}
	held := map[string]any{"holder": "ci@another-host:42", "expires_at": h.eng.Now().Add(time.Hour).UTC().Format(time.RFC3339)}
	child("task_a", []any{}, nil)
	child("task_b", []any{"task_a"}, held)
	child("task_c", []any{}, nil)

	res, err := Epic(h.ctx, h.engine(), "task_epic", Options{})
	if c := procedure.Classify(err); c.Outcome != procedure.OutcomeElsewhere || c.Code != "EPIC_RUNNING_ELSEWHERE" || res.Complete {
		t.Fatalf("undo --epic with a held child: %v (%+v), complete %v", err, c, res.Complete)
	}
	got := map[string]procedure.RunOutcome{}
	for _, tk := range res.Tasks {
		got[tk.Key] = tk.Outcome
	}
	if got["task_b"] != procedure.OutcomeElsewhere || got["task_a"] != procedure.OutcomeSkipped || got["task_c"] != procedure.OutcomeDone {
		t.Errorf("children: %v", got)
	}

	doc, _ := h.store.Get(h.ctx, "task_b")
	if _, err := h.store.Update(h.ctx, "task_b", doc["_rev"].(string), map[string]any{"work_order": map[string]any{"state": map[string]any{"lease": nil}}}); err != nil {
		t.Fatal(err)
	}
	res, err = Epic(h.ctx, h.engine(), "task_epic", Options{})
	if err != nil || !res.Complete {
		t.Errorf("undo --epic with nothing held: %v, complete %v, %+v", err, res.Complete, res.Tasks)
	}
}

// A task that an undo has partly taken back does not run: resuming would
// work on a closed pull request and deleted branches. wo reset to step 0
// gives the undo up and lets it run again; an undo that finished leaving
// a merged pull request does not stop a run.
func TestARunRefusesATaskPartlyUndone(t *testing.T) {
	h := undoHarness(t)
	fixture.WriteFile(t, filepath.Join(h.Worktree, "scratch.txt"), "wip\n")
	if res, err := Task(h.ctx, h.engine(), Options{Key: fixture.Key}); err != nil || !res.Pending {
		t.Fatalf("undo: %v, %+v", err, res)
	}
	_, err := h.engine().Run(h.ctx, procedure.RunOptions{Key: fixture.Key})
	if c := procedure.Classify(err); c.Code != "UNDO_UNFINISHED" || c.Outcome != procedure.OutcomeWaiting || !strings.Contains(err.Error(), "finish the undo with wo undo "+fixture.Key) {
		t.Fatalf("run of a task partly undone: %v (%+v)", err, c)
	}
	if _, err := h.engine().Reset(h.ctx, fixture.Key, 0); err != nil {
		t.Fatal(err)
	}
	if st := h.stored(); st.Undo != nil {
		t.Errorf("reset to step 0 kept the undo's record: %+v", st.Undo)
	}
	if _, err := h.engine().Run(h.ctx, procedure.RunOptions{Key: fixture.Key, UntilStep: 1}); err != nil {
		t.Errorf("run after reset: %v", err)
	}

	m := undoHarness(t)
	m.GH.Merge(fixture.Repo, 1)
	if _, err := Task(m.ctx, m.engine(), Options{Key: fixture.Key}); err != nil {
		t.Fatal(err)
	}
	if st := m.stored(); st.Undo == nil || (st.Undo != nil && !procedure.UndoFinished(st)) {
		t.Errorf("the undo of a merged task: record %+v, unfinished %v; want it finished", st.Undo, (st.Undo != nil && !procedure.UndoFinished(st)))
	}
}

// A run stopped after it pushed and before it logged the push: the commit
// on the remote is one it logged making, so the branch goes; a commit
// someone pushed on top of it is not, so the branch stays. A branch wo
// switched to and never committed on is where create_branch started it,
// which proves the local branch, never the remote one.
func TestUndoOfAPushNotLogged(t *testing.T) {
	pushedNotLogged := func(t *testing.T) *harness {
		h := newHarness(t, stepOpts{GitHub: true})
		h.completeUpTo("push")
		if _, err := h.run("push"); err != nil { // pushed, nothing recorded
			t.Fatal(err)
		}
		return h
	}
	t.Run("wo's commit", func(t *testing.T) {
		h := pushedNotLogged(t)
		res := h.mustUndo(Options{Key: fixture.Key})
		if got := stepsOf(res)["remote_branch"]; !strings.HasPrefix(got, Done) || !strings.Contains(got, "a commit wo made; wo had not recorded pushing it") {
			t.Errorf("remote branch: %q", got)
		}
		if hasBranch(t, h.Remote, fixture.Branch) || !res.Complete {
			t.Errorf("the branch wo pushed is still there, or the undo is not complete: %v", stepsOf(res))
		}
	})
	t.Run("someone's on top", func(t *testing.T) {
		h := pushedNotLogged(t)
		fixture.SomeonePushes(t, h.Root, h.Remote, fixture.Branch, fixture.Branch)
		res := h.mustUndo(Options{Key: fixture.Key})
		if got := stepsOf(res)["remote_branch"]; !strings.HasPrefix(got, Left) || !strings.Contains(got, "which wo did not record making, and wo recorded no push to it") {
			t.Errorf("remote branch: %q", got)
		}
		if !hasBranch(t, h.Remote, fixture.Branch) {
			t.Error("their branch was deleted")
		}
	})
	t.Run("a branch never committed on", func(t *testing.T) {
		h := newHarness(t, stepOpts{GitHub: true})
		h.completeUpTo("checkout_files")
		// Someone pushes the base to the branch's name on the remote.
		gittest.Run(t, h.Repo, "push", "-q", "origin", fixture.Branch)
		res := h.mustUndo(Options{Key: fixture.Key})
		if got := stepsOf(res)["local_branch"]; !strings.HasPrefix(got, Done) {
			t.Errorf("local branch: %q, want it deleted: it is where create_branch started it", got)
		}
		if got := stepsOf(res)["remote_branch"]; !strings.HasPrefix(got, Left) || !hasBranch(t, h.Remote, fixture.Branch) {
			t.Errorf("remote branch: %q, want it left: wo never pushed it", got)
		}
	})
}

// What an undo keeps of a state: the notes (the history a person wrote
// or read), the approval, and a phase that says nothing about the run
// taken back (none, or ready); a run's phase goes with the run.
func TestClearedKeepsTheHistoryAndForgetsTheRun(t *testing.T) {
	approval := &workorder.Approval{}
	for phase, kept := range map[workorder.Phase]workorder.Phase{
		"": "", workorder.PhaseReady: workorder.PhaseReady,
		workorder.PhaseRunning: "", workorder.PhaseWaitingForReview: "", workorder.PhaseNeedsFix: "",
	} {
		st := workorder.NewState()
		st.Version, st.Notes, st.Approval, st.Phase = 1, []string{"a note"}, approval, phase
		st.CurrentStep, st.PushedSHA, st.PRNumber = 6, "abc", 3
		got := cleared(st)
		if got.Phase != kept || got.Version != 1 || len(got.Notes) != 1 || got.Approval != approval ||
			got.CurrentStep != 0 || got.PushedSHA != "" || got.PRNumber != 0 {
			t.Errorf("phase %q: cleared to %+v", phase, got)
		}
	}
}

// The state is document text: a fix push it names is no proof that wo
// made the commit. The review loop must not log someone else's commit as
// a fix wo made, and undo must then keep the remote branch that holds it.
func TestUndoKeepsACommitTheStateSaysTheFixPassPushed(t *testing.T) {
	h := undoHarness(t)
	theirs := fixture.SomeonePushes(t, h.Root, h.Remote, fixture.Branch, fixture.Branch)
	h.setState(func(s *stateT) {
		s.PushedSHA = theirs
		s.FixPushed = &workorder.FixPush{From: s.CommitSHA, To: theirs}
		s.ReviewComments = []workorder.ReviewComment{{ID: 1, Author: "x", Body: "fix"}}
	})
	out, err := h.run("conditional_loop")
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasPrefix(out.Note, "fixed ") {
		t.Errorf("the loop claims a commit it did not make: %q", out.Note)
	}
	loop := h.step("conditional_loop").Step
	h.completeSteps(loop, loop)
	res := h.mustUndo(Options{Key: fixture.Key})
	if got := stepsOf(res)["remote_branch"]; !strings.HasPrefix(got, Left) {
		t.Errorf("remote_branch: %s; want it left", got)
	}
	if got := strings.TrimSpace(gittest.Run(t, h.Remote, "rev-parse", "refs/heads/"+fixture.Branch)); got != strings.TrimSpace(theirs) {
		t.Errorf("the remote branch is at %q, want their commit %s", got, theirs)
	}
}

// A branch create_worktree found existing is someone's: wo committed on
// top of it, but deleting it (here or on the remote) would take their
// commits too. Undo keeps it, and says how to take back only wo's part.
func TestUndoKeepsABranchWoAdopted(t *testing.T) {
	h := newHarness(t, stepOpts{GitHub: true})
	other := filepath.Join(h.Root, "person")
	gittest.Run(t, h.Root, "clone", "-q", "--branch", fixture.Base, h.Repo, other)
	fixture.WriteFile(t, filepath.Join(other, "mine.txt"), "mine\n")
	gittest.Run(t, other, "add", "-A")
	gittest.Run(t, other, "-c", "user.name=Alice", "-c", "user.email=alice@example.com", "commit", "-q", "-m", "person's work")
	mine := strings.TrimSpace(gittest.Run(t, other, "rev-parse", "HEAD"))
	gittest.Run(t, h.Repo, "fetch", "-q", other, "HEAD:refs/heads/"+fixture.Branch)
	gittest.Run(t, h.Repo, "push", "-q", "origin", fixture.Branch)
	h.completeUpTo("wait_for_review")
	res := h.mustUndo(Options{Key: fixture.Key})
	steps := stepsOf(res)
	for _, s := range []string{"local_branch", "remote_branch"} {
		if !strings.HasPrefix(steps[s], Left) || !strings.Contains(steps[s], "was there before this task's runs") || !strings.Contains(steps[s], mine[:12]) {
			t.Errorf("%s: %s; want it left, saying where wo found it", s, steps[s])
		}
	}
	if res.Complete {
		t.Error("undo says it is complete, leaving the person's branch")
	}
	for _, dir := range []string{h.Repo, h.Remote} {
		if refs := gittest.Run(t, dir, "for-each-ref", "--contains", mine, "--format=%(refname)"); strings.TrimSpace(refs) == "" {
			t.Errorf("%s: the person's commit %s is on no branch any more", dir, mine[:12])
		}
	}
}

// A worktree a person made with git worktree add, where the document
// says, is found by create_worktree, not created: the log must not say
// wo created it, so undo keeps it, and the person's branch in it.
func TestUndoKeepsAWorktreeCreateWorktreeFound(t *testing.T) {
	// The person's commit is a path the task allows (fix_paths): the push
	// gate lets nothing else out with the first push.
	h := newHarness(t, stepOpts{GitHub: true, Context: map[string]any{"fix_paths": []any{"notes.txt"}}})
	gittest.Run(t, h.Repo, "worktree", "add", "-q", "-b", fixture.Branch, h.Worktree, fixture.Base)
	fixture.WriteFile(t, filepath.Join(h.Worktree, "notes.txt"), "mine\n")
	gittest.Run(t, h.Worktree, "add", "-A")
	gittest.Run(t, h.Worktree, "-c", "user.name=Alice", "-c", "user.email=alice@example.com", "commit", "-q", "-m", "mine")
	h.completeUpTo("wait_for_review")
	entries, err := h.store.Logs(h.ctx, fixture.Key)
	if err != nil {
		t.Fatal(err)
	}
	if p := ProvenanceOf(fixture.Key, entries); len(p.Worktrees) != 0 || p.Adopted[fixture.Branch] == "" {
		t.Errorf("the log says wo created worktrees %q, adopted %v", p.Worktrees, p.Adopted)
	}
	res := h.mustUndo(Options{Key: fixture.Key})
	if got := stepsOf(res)["worktree"]; !strings.HasPrefix(got, Left) || !strings.Contains(got, "cannot prove it created it") {
		t.Errorf("worktree: %s; want it left", got)
	}
	if _, err := os.Stat(filepath.Join(h.Worktree, "notes.txt")); err != nil {
		t.Errorf("the person's worktree is gone: %v", err)
	}
	if !hasBranch(t, h.Repo, fixture.Branch) {
		t.Error("the person's branch is gone")
	}
}

// The state's pull request number is document text, and the login wo
// runs as may be a person's own token: a pull request from the task's
// branch that no run of this task opened, into another base, stays open,
// and so does the branch it comes from.
func TestUndoLeavesAPullRequestNotInTheLog(t *testing.T) {
	h := undoHarness(t)
	n := h.GH.OpenPRAs(fixture.Repo, fixture.Branch, "release", "wo-bot", "the person's")
	h.setState(func(s *stateT) { s.PRNumber = n })
	res := h.mustUndo(Options{Key: fixture.Key})
	steps := stepsOf(res)
	if got := steps["pull_request"]; !strings.HasPrefix(got, Left) || !strings.Contains(got, "records only #1") {
		t.Errorf("pull_request: %s; want it left, naming what the log records", got)
	}
	if got := steps["remote_branch"]; !strings.HasPrefix(got, Left) {
		t.Errorf("remote_branch: %s; want it kept under the open pull request", got)
	}
	for _, p := range h.GH.PullRequests(fixture.Repo) {
		if p["number"] == n && p["state"] != "open" {
			t.Errorf("pull request #%d that no run opened is %v", n, p["state"])
		}
	}
	if !hasBranch(t, h.Remote, fixture.Branch) {
		t.Error("the branch of the open pull request was deleted")
	}
}

// A fix a person committed in the worktree is pushed, but the review
// loop's facts (undo's proof of what wo made) must not claim it as wo's.
func TestUndoProvenanceLeavesOutAFixThePersonCommitted(t *testing.T) {
	h := loopReady(t, stepOpts{Context: map[string]any{"fix_paths": []any{"pkg/*_test.go"}}}) // a new test beside the manifest's file
	h.setState(func(s *stateT) { s.FixRequested = true })
	fixture.WriteFile(t, filepath.Join(h.Worktree, "pkg/a_test.go"), "package pkg\n")
	gittest.Run(t, h.Worktree, "add", "pkg/a_test.go")
	gittest.Run(t, h.Worktree, "commit", "-q", "-m", "Add a test")
	out, err := h.run("conditional_loop")
	if err != nil {
		t.Fatal(err)
	}
	entry := store.LogEntry{Action: "step_completed", TaskKey: fixture.Key, Details: map[string]any{"action": "conditional_loop", "note": out.Note, action.FactsKey: out.Facts}}
	if p := ProvenanceOf(fixture.Key, []store.LogEntry{entry}); len(p.Commits) != 0 || len(p.Pushed) != 0 {
		t.Errorf("facts %+v claim the person's commit %v as wo's", out.Facts, p.Commits)
	}
	// Nor does the note, for a reader of prose-only logs.
	delete(entry.Details, action.FactsKey)
	if p := ProvenanceOf(fixture.Key, []store.LogEntry{entry}); len(p.Commits) != 0 {
		t.Errorf("note %q claims the person's commit %v as wo's", out.Note, p.Commits)
	}
}

// Another task that names the same branch keeps it from being undone,
// unless it was closed before it ever ran (it made nothing and will make
// nothing) or works in another repository. One that ran, or may still
// run in this repository, keeps the branch.
func TestAClosedTaskThatNeverRanStandsInNoUndosWay(t *testing.T) {
	for _, c := range []struct {
		name    string
		status  string
		state   map[string]any
		context map[string]any // what the other task's context says instead
		kept    bool
	}{
		{"closed, never ran", "closed", map[string]any{"current_step": 0, "completed_steps": []any{}}, nil, false},
		{"open, may run", "open", map[string]any{"current_step": 0, "completed_steps": []any{}}, nil, true},
		{"closed after a run", "closed", map[string]any{"current_step": 2, "completed_steps": []any{1, 2}, "branch": fixture.Branch}, nil, true},
		{"open, in another repository", "open", map[string]any{"current_step": 0, "completed_steps": []any{}}, map[string]any{"repo_path": "/elsewhere/repo"}, false},
		{"open, in another GitHub repository", "open", map[string]any{"current_step": 0, "completed_steps": []any{}}, map[string]any{"repo": "someone/else"}, false},
		{"open, the same repository by another path", "open", map[string]any{"current_step": 0, "completed_steps": []any{}}, map[string]any{"repo_path": "<repo>/./"}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := undoHarness(t)
			doc, err := h.store.Get(h.ctx, fixture.Key)
			if err != nil {
				t.Fatal(err)
			}
			other := workorder.Clone(doc).(map[string]any)
			other["_key"], other["status"] = "task_twin", c.status
			delete(other, "_rev")
			other["work_order"].(map[string]any)["state"] = c.state
			for k, v := range c.context {
				if v == "<repo>/./" {
					v = h.Repo + "/./"
				}
				other["work_order"].(map[string]any)["context"].(map[string]any)[k] = v
			}
			if err := h.store.Create(h.ctx, other); err != nil {
				t.Fatal(err)
			}
			res := h.mustUndo(Options{Key: fixture.Key, DryRun: true})
			got := stepsOf(res)["remote_branch"]
			if kept := strings.Contains(got, "is named by task task_twin too"); kept != c.kept {
				t.Errorf("remote branch: %q; kept for task_twin: %v, want %v", got, kept, c.kept)
			}
		})
	}
}
