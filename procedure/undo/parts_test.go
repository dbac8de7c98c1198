package undo

import (
	"fmt"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/wo-runner/wo/procedure/action"
	"github.com/wo-runner/wo/procedure/internal/fixture"
	"github.com/wo-runner/wo/store"
	"github.com/wo-runner/wo/workorder"
)

// With --comments, undo deletes what wo posted for this task on its pull
// request (an agent step's delivery, wo's "Addressed in" reply in a review
// thread) and nothing of a person's, even one that quotes wo's markers; a
// dry run only counts them.
func TestUndoCommentsDeletesOnlyWhatWoPostedForTheTask(t *testing.T) {
	h := undoHarness(t)
	delivery := "the agent's report\n\n" + action.DeliveryMarker(fixture.Key) + "7 -->"
	quote := "as wo said:\n\n" + action.DeliveryMarker(fixture.Key) + "7 -->"
	reply := "Addressed in 0123456789ab.\n\n" + action.AddressedMarker(strings.Repeat("0123456789", 4))
	h.GH.CommentAs(fixture.Repo, 1, "wo-bot", delivery)
	h.GH.CommentAs(fixture.Repo, 1, "alice", quote)
	h.GH.CommentAs(fixture.Repo, 1, "wo-bot", "a delivery of another task\n\n"+action.DeliveryMarker("task_other")+"7 -->")
	h.GH.ThreadAs(fixture.Repo, 1, "coderabbitai[bot]", "pkg/a.go", 1, "Rename this.")
	h.GH.ReplyAs(fixture.Repo, 1, 0, "wo-bot", reply)
	h.GH.ReplyAs(fixture.Repo, 1, 0, "alice", "quoting wo: "+reply)

	plan := h.mustUndo(Options{Key: fixture.Key, Comments: true, DryRun: true})
	if got := stepsOf(plan)["comments"]; got != Would+": delete 1 comment(s) and 1 review-thread reply(ies) that wo posted as wo-bot" {
		t.Errorf("the plan: %q", got)
	}
	if n := len(h.GH.IssueComments(fixture.Repo, 1)); n != 3 {
		t.Fatalf("the dry run deleted comments: %d left of 3", n)
	}

	res := h.mustUndo(Options{Key: fixture.Key, Comments: true})
	if got := stepsOf(res)["comments"]; got != Done+": deleted 1 comment(s) and 1 review-thread reply(ies) that wo posted as wo-bot" {
		t.Errorf("comments: %q", got)
	}
	var left []string
	for _, c := range h.GH.IssueComments(fixture.Repo, 1) {
		left = append(left, c.Author+": "+strings.SplitN(c.Body, "\n", 2)[0])
	}
	want := "alice: as wo said:|wo-bot: a delivery of another task|wo-bot: wo undo: closing this pull request, which wo opened for task " + fixture.Key + ". Reason: the work order was undone"
	if got := strings.Join(left, "|"); got != want {
		t.Errorf("comments left:\n%s\nwant\n%s", got, want)
	}
	var thread []string
	for _, c := range h.GH.Threads(fixture.Repo, 1)[0].Comments {
		thread = append(thread, c.Login)
	}
	if got := strings.Join(thread, ","); got != "coderabbitai[bot],alice" {
		t.Errorf("the review thread keeps %s, want the reviewer's comment and alice's reply", got)
	}
	// Nothing is left: a second undo has nothing to do.
	if again := h.mustUndo(Options{Key: fixture.Key, Comments: true}); !again.NothingToUndo {
		t.Errorf("a second undo: %v", stepsOf(again))
	}
}

// Without --comments, wo's comments stay and undo does not look at them.
func TestUndoLeavesCommentsUnlessAsked(t *testing.T) {
	h := undoHarness(t)
	h.GH.CommentAs(fixture.Repo, 1, "wo-bot", "the agent's report\n\n"+action.DeliveryMarker(fixture.Key)+"7 -->")
	res := h.mustUndo(Options{Key: fixture.Key})
	if got, ok := stepsOf(res)["comments"]; ok {
		t.Errorf("comments: %q, want no step without --comments", got)
	}
	if n := len(h.GH.IssueComments(fixture.Repo, 1)); n != 2 {
		t.Errorf("%d comments, want wo's delivery and the closing comment", n)
	}
}

// --close ends the undo with the task closed instead of open, and says
// so in the state's step and the log.
func TestUndoCloseEndsWithTheTaskClosed(t *testing.T) {
	h := undoHarness(t)
	plan := h.mustUndo(Options{Key: fixture.Key, Close: true, DryRun: true})
	if got := stepsOf(plan)["state"]; !strings.HasSuffix(got, "move status in_progress → closed; the activity log keeps the history") {
		t.Errorf("the plan's state step: %q", got)
	}
	res := h.mustUndo(Options{Key: fixture.Key, Close: true})
	if got := stepsOf(res)["state"]; res.Status != workorder.StatusClosed || got != Done+": reset to before step 1; status in_progress → closed" {
		t.Errorf("status %s, state step %q", res.Status, got)
	}
	doc, err := h.store.Get(h.ctx, fixture.Key)
	if err != nil {
		t.Fatal(err)
	}
	if workorder.StatusOf(doc) != workorder.StatusClosed {
		t.Errorf("the stored status is %s", workorder.StatusOf(doc))
	}
	st := h.stored()
	if n := len(st.Notes); n == 0 || st.Notes[n-1] != "undone by tester@host:1: pull_request undone, remote_branch undone, worktree undone, local_branch undone, state undone" {
		t.Errorf("the last note: %q", st.Notes)
	}
}

// An epic's plan counts a child as undone whole, for the children below
// it, only when its plan resets its state: nothing to undo, or a state
// step that is not left.
func TestResetsIsWhatAnEpicsPlanCountsAsUndone(t *testing.T) {
	t.Parallel()
	step := func(name, outcome string) workorder.UndoStep { return workorder.UndoStep{Step: name, Outcome: outcome} }
	for _, c := range []struct {
		name string
		res  *Result
		want bool
	}{
		{"no plan", nil, false},
		{"nothing to undo", &Result{NothingToUndo: true}, true},
		{"the state reset", &Result{Steps: []workorder.UndoStep{step("pull_request", Would), step("state", Would)}}, true},
		{"the state kept", &Result{Steps: []workorder.UndoStep{step("local_branch", Left), step("state", Left)}}, false},
		{"left before the state", &Result{Steps: []workorder.UndoStep{step("local_branch", Left)}}, false},
		{"parts undone, the state kept", &Result{Steps: []workorder.UndoStep{step("pull_request", Done), step("state", Left)}}, false},
	} {
		if got := resets(c.res); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// crashAt runs an undo that the test crashes at the point, as a kill
// there would stop it: nothing after the point runs.
func (h *harness) crashAt(point string, opts Options) {
	h.t.Helper()
	e := h.engine()
	e.Fault = func(p string) {
		if p == point {
			panic(p)
		}
	}
	defer func() { e.Fault = nil }()
	defer func() {
		if r := recover(); r != point {
			h.t.Fatalf("undo did not stop at %s: %v", point, r)
		}
	}()
	Task(h.ctx, e, opts)
}

// An undo of wo's comments killed after the first delete of each kind
// goes on with the rest when run again, and deletes each once.
func TestUndoCommentsGoesOnWhereItStopped(t *testing.T) {
	h := undoHarness(t)
	for i := range 2 {
		h.GH.CommentAs(fixture.Repo, 1, "wo-bot", fmt.Sprintf("report %d\n\n%s%d -->", i, action.DeliveryMarker(fixture.Key), 7+i))
		h.GH.ThreadAs(fixture.Repo, 1, "coderabbitai[bot]", "pkg/a.go", 1+i, "Rename this.")
		h.GH.ReplyAs(fixture.Repo, 1, i, "wo-bot", "Addressed in 0123456789ab.\n\n"+action.AddressedMarker(strings.Repeat("0123456789", 4)))
	}
	replies := func() (n int) {
		for _, th := range h.GH.Threads(fixture.Repo, 1) {
			n += len(th.Comments) - 1
		}
		return n
	}
	opts := Options{Key: fixture.Key, Comments: true}
	h.crashAt("undo:comments:after_first_delete", opts)
	if c, r := len(h.GH.IssueComments(fixture.Repo, 1)), replies(); c != 1 || r != 2 {
		t.Fatalf("stopped after the first delete: %d comments and %d replies left, want 1 and 2", c, r)
	}
	h.crashAt("undo:comments:after_first_reply_delete", opts)
	if c, r := len(h.GH.IssueComments(fixture.Repo, 1)), replies(); c != 0 || r != 1 {
		t.Fatalf("stopped after the first reply's delete: %d comments and %d replies left, want 0 and 1", c, r)
	}
	res := h.mustUndo(opts)
	if got := stepsOf(res)["comments"]; got != Done+": deleted 0 comment(s) and 1 review-thread reply(ies) that wo posted as wo-bot" || replies() != 0 {
		t.Errorf("the rerun: comments %q, %d replies left", got, replies())
	}
	if c := h.GH.IssueComments(fixture.Repo, 1); len(c) != 1 || c[0].Author != "wo-bot" || !strings.HasPrefix(c[0].Body, "wo undo: closing this pull request") {
		t.Errorf("comments at the end: %+v, want only the closing one", c)
	}
}

// An epic's plan goes top down, as its undo does: a child planned to be
// undone whole no longer holds the branch below it, so the plan of the
// child below takes its branches back, where that child's plan alone
// keeps them.
func TestUndoEpicPlanTakesTheStackFromTheTop(t *testing.T) {
	h := undoHarness(t)
	if err := h.store.Create(h.ctx, map[string]any{"_key": "task_epic", "title": "epic", "status": "open", "type": "epic"}); err != nil {
		t.Fatal(err)
	}
	doc, _ := h.store.Get(h.ctx, fixture.Key)
	if _, err := h.store.Update(h.ctx, fixture.Key, doc["_rev"].(string), map[string]any{"parent_key": "task_epic"}); err != nil {
		t.Fatal(err)
	}
	above := map[string]any{"_key": "task_above", "title": "The PR above", "status": "in_progress", "parent_key": "task_epic",
		"work_order": map[string]any{"version": "1.0", "objective": "Build on task_cr_01", "context": map[string]any{"base_branch": fixture.Branch},
			"procedure": fixture.BareSteps("update_task"), "state": map[string]any{"version": 1, "current_step": 1, "completed_steps": []any{1}, "notes": []any{"ran"}},
			"dependencies": map[string]any{"blocked_by": []any{fixture.Key}, "blocks": []any{}}}}
	if err := h.store.Create(h.ctx, above); err != nil {
		t.Fatal(err)
	}
	alone := h.mustUndo(Options{Key: fixture.Key, DryRun: true})
	if got := stepsOf(alone)["local_branch"]; !strings.HasPrefix(got, Left) || !strings.Contains(got, "is the base of task task_above") {
		t.Fatalf("the plan of %s alone: local branch %q, want it kept for task_above", fixture.Key, got)
	}
	rev := h.revOf()
	plan, err := Epic(h.ctx, h.engine(), "task_epic", Options{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, c := range plan.Tasks {
		order = append(order, c.Key)
	}
	if got := strings.Join(order, ","); got != "task_above,"+fixture.Key {
		t.Fatalf("the epic's plan goes %s, want the top first", got)
	}
	below := stepsOf(plan.Tasks[1].Undo)
	for _, step := range []string{"remote_branch", "local_branch"} {
		if got := below[step]; !strings.HasPrefix(got, Would) {
			t.Errorf("%s in the epic's plan: %q, want it taken back once task_above is", step, got)
		}
	}
	if !plan.Complete || h.revOf() != rev {
		t.Errorf("the plan: complete %v, wrote the task %v", plan.Complete, h.revOf() != rev)
	}
}

// A run that made only the worktree recorded no branch, commit or push:
// undo removes the worktree and looks for no branch, here or on the
// remote.
func TestUndoOfARunThatMadeOnlyTheWorktree(t *testing.T) {
	h := newHarness(t, stepOpts{GitHub: true})
	h.completeUpTo("create_branch")
	res := h.mustUndo(Options{Key: fixture.Key})
	steps := stepsOf(res)
	if got := steps["worktree"]; !strings.HasPrefix(got, Done) {
		t.Errorf("worktree: %q, want it removed", got)
	}
	for _, step := range []string{"local_branch", "remote_branch", "pull_request"} {
		if got, ok := steps[step]; ok {
			t.Errorf("%s: %q, want no step: the run recorded no such thing", step, got)
		}
	}
	if !res.Complete || res.Status != workorder.StatusOpen {
		t.Errorf("complete %v, status %s", res.Complete, res.Status)
	}
}

// A rerun that finds at its own start the branch an earlier run of the
// task switched to did not find someone's branch: it is not adopted.
func TestARerunFindingItsOwnBranchAdoptsNothing(t *testing.T) {
	t.Parallel()
	const at = "aaaaaaaaaaaa0000000000000000000000000000"
	step := func(name string, f action.Fact) store.LogEntry {
		return store.LogEntry{Action: "step_completed", TaskKey: fixture.Key, Details: map[string]any{"action": name, action.FactsKey: []action.Fact{f}}}
	}
	p := ProvenanceOf(fixture.Key, []store.LogEntry{
		step("create_branch", action.Fact{Kind: action.FactBranch, Branch: "review/03", SHA: at}),
		step("create_worktree", action.Fact{Kind: action.FactAdopted, Branch: "review/03", SHA: at}),
	})
	if len(p.Adopted) != 0 || !p.Started("review/03", plumbing.NewHash(at)) {
		t.Errorf("adopted %v, started %v: the branch is the task's own", p.Adopted, p.Started("review/03", plumbing.NewHash(at)))
	}
}

// A run that stopped before recording its pull request, where more than
// one is open from the task's branch into its base: nothing says which
// one the run opened, so undo keeps them all, and the branch under them.
func TestUndoKeepsUnrecordedPullRequestsWhenSeveralAreOpen(t *testing.T) {
	h := undoHarness(t)
	h.setState(func(s *stateT) { s.PRNumber, s.PRURL = 0, nil })
	n := h.GH.OpenPRAs(fixture.Repo, fixture.Branch, fixture.Base, "alice", "Alice's PR from the same branch")
	res := h.mustUndo(Options{Key: fixture.Key})
	if got := stepsOf(res)["pull_request"]; !strings.HasPrefix(got, Left) || !strings.Contains(got, "more than one is open from "+fixture.Branch+" into "+fixture.Base) {
		t.Errorf("pull request: %q", got)
	}
	for _, p := range h.GH.PullRequests(fixture.Repo) {
		if p["state"] != "open" {
			t.Errorf("pull request #%v (of #1 and #%d) is %v", p["number"], n, p["state"])
		}
	}
	if !hasBranch(t, h.Remote, fixture.Branch) {
		t.Error("the branch under the open pull requests was deleted")
	}
}

// A pull request the state names that no run of this task logged opening,
// on a log that records none, stays, and the reason says the log records
// none.
func TestUndoLeavesAPullRequestOnALogThatRecordsNone(t *testing.T) {
	h := newHarness(t, stepOpts{GitHub: true})
	h.completeUpTo("create_pr")
	n := h.GH.OpenPRAs(fixture.Repo, fixture.Branch, "release", "wo-bot", "the person's")
	h.setState(func(s *stateT) { s.PRNumber = n })
	res := h.mustUndo(Options{Key: fixture.Key})
	if got := stepsOf(res)["pull_request"]; !strings.HasPrefix(got, Left) || !strings.Contains(got, fmt.Sprintf("this task's activity log records no pull request, not #%d", n)) {
		t.Errorf("pull request: %q", got)
	}
}
