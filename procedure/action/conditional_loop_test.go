package action

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wo-runner/wo/internal/gittest"
	"github.com/wo-runner/wo/procedure/internal/fixture"
	"github.com/wo-runner/wo/workorder"
)

// loopReady is a harness whose branch is committed and pushed, with the
// comments of a check waiting to be fixed.
func loopReady(t *testing.T, opts stepOpts) *stepHarness {
	t.Helper()
	h := newStepContext(t, opts)
	h.upTo("create_pr")
	h.setState(func(s *stateT) { s.ReviewComments, s.ReviewSeen = fixture.OpenComments(), fixture.SeenAtCheck })
	return h
}

func waiting(t *testing.T, err error) *WaitingError {
	t.Helper()
	var w *WaitingError
	if !errors.As(err, &w) {
		t.Fatalf("err %v, want the run to wait", err)
	}
	return w
}

func TestLoopConditionalLeavesTheLoopWithoutComments(t *testing.T) {
	h := newStepContext(t, stepOpts{})
	h.setState(func(s *stateT) { s.ReviewComments = []workorder.ReviewComment{} })
	out, err := h.run("conditional_loop")
	if err != nil {
		t.Fatal(err)
	}
	if out.JumpTo != 0 || out.Note != "no review comments to address: leaving the loop" {
		t.Errorf("jump %d note %q", out.JumpTo, out.Note)
	}
}

func TestLoopConditionalWaitsForAPersonsFix(t *testing.T) {
	h := loopReady(t, stepOpts{})
	pushed := gittest.Run(t, h.Remote, "rev-parse", fixture.Branch)

	// No agent: the person is asked, and the task blocks with the reason.
	out, err := h.run("conditional_loop")
	w := waiting(t, err)
	wantReason := "2 review comment(s) to address in " + h.Worktree + ", then run wo run " + fixture.Key +
		": Export a comment on N. (foundation/new.go:3); Please add a test."
	if w.Reason != wantReason || out.BlockReason != wantReason || out.Status != workorder.StatusBlocked {
		t.Errorf("reason %q status %q, want %q", w.Reason, out.Status, wantReason)
	}
	if st := h.recorded(out); st.Phase != workorder.PhaseNeedsFix || !st.FixRequested {
		t.Errorf("phase %q fix_requested %v", st.Phase, st.FixRequested)
	}
	h.keep(out)

	// Run again before anything changed: still waiting, nothing pushed.
	out, err = h.run("conditional_loop")
	w = waiting(t, err)
	if want := "the worktree " + h.Worktree + " has no changes yet for the 2 review comment(s): change the files, then run wo run " + fixture.Key; w.Reason != want {
		t.Errorf("reason %q, want %q", w.Reason, want)
	}
	if got := gittest.Run(t, h.Remote, "rev-parse", fixture.Branch); got != pushed {
		t.Errorf("something was pushed: %s", got)
	}

	// The person edits a file: wo commits, pushes and goes back.
	fixture.WriteFile(t, filepath.Join(h.Worktree, "foundation/new.go"), "package foundation\n\n// N is exported.\nconst N = 0\n")
	out, err = h.run("conditional_loop")
	if err != nil {
		t.Fatal(err)
	}
	head := gittest.Run(t, h.Worktree, "rev-parse", "HEAD")
	if got := gittest.Run(t, h.Worktree, "log", "-1", "--format=%s|%P", "HEAD"); got != "Fix review comments (iteration 1)|"+pushed {
		t.Errorf("the fix commit: %s", got)
	}
	if got := gittest.Run(t, h.Remote, "rev-parse", fixture.Branch); got != head {
		t.Errorf("the remote is at %s, want the fix %s", got, head)
	}
	if out.JumpTo != 7 {
		t.Errorf("jump to %d, want loop_to 7", out.JumpTo)
	}
	st := h.recorded(out)
	if st.CommitSHA != head || st.PushedSHA != head {
		t.Errorf("commit_sha %q pushed_sha %q, want %s", st.CommitSHA, st.PushedSHA, head)
	}
	if st.ReviewIterations != 1 || st.LoopIterations["9"] != 1 {
		t.Errorf("review_iterations %d loop_iterations %v", st.ReviewIterations, st.LoopIterations)
	}
	if st.ReviewComments == nil || len(st.ReviewComments) != 0 || st.FixRequested || st.Phase != workorder.PhaseRunning {
		t.Errorf("after the fix: comments %v fix_requested %v phase %q", st.ReviewComments, st.FixRequested, st.Phase)
	}
	if st.ReviewWatermark != fixture.SeenAtCheck {
		t.Errorf("watermark %+v, want the comments seen at the check %+v", st.ReviewWatermark, fixture.SeenAtCheck)
	}
	if want := "fixed 2 review comment(s) in " + head[:12] + " (iteration 1); back to step 7"; out.Note != want {
		t.Errorf("note %q, want %q", out.Note, want)
	}
}

func TestLoopConditionalTakesAFixThePersonCommitted(t *testing.T) {
	h := loopReady(t, stepOpts{Context: map[string]any{"fix_paths": []any{"pkg/*_test.go"}}}) // a new test beside the manifest's file
	h.setState(func(s *stateT) { s.FixRequested = true })
	fixture.WriteFile(t, filepath.Join(h.Worktree, "pkg/a_test.go"), "package pkg\n")
	gittest.Run(t, h.Worktree, "add", "pkg/a_test.go")
	gittest.Run(t, h.Worktree, "commit", "-q", "-m", "Add a test")
	theirs := gittest.Run(t, h.Worktree, "rev-parse", "HEAD")
	out, err := h.run("conditional_loop")
	if err != nil {
		t.Fatal(err)
	}
	if got := gittest.Run(t, h.Remote, "rev-parse", fixture.Branch); got != theirs {
		t.Errorf("the remote is at %s, want the person's commit %s", got, theirs)
	}
	if got := gittest.Run(t, h.Worktree, "log", "-1", "--format=%s"); got != "Add a test" {
		t.Errorf("wo added a commit of its own: %s", got)
	}
	if st := h.recorded(out); st.CommitSHA != theirs || st.ReviewIterations != 1 {
		t.Errorf("commit_sha %q review_iterations %d", st.CommitSHA, st.ReviewIterations)
	}
}

func TestLoopConditionalRunsTheAgent(t *testing.T) {
	// The agent reads the prompt on stdin and fixes the file it names.
	h := loopReady(t, stepOpts{Agent: `prompt=$(cat)
echo "$prompt" | grep -q 'Export a comment on N.' || exit 9
echo "$prompt" | grep -q 'What the work order says to do: Read comments, fix issues, commit, push' || exit 8
[ "$WO_TASK_KEY" = task_cr_01 ] || exit 7
[ "$(pwd)" = "$WO_WORKTREE" ] || exit 6
grep -q 'foundation/new.go:3' "$WO_PROMPT_FILE" || exit 5
printf 'package foundation\n\n// N is exported.\nconst N = 0\n' > foundation/new.go
`})
	out, err := h.run("conditional_loop")
	if err != nil {
		t.Fatal(err)
	}
	if got := fixture.ReadFile(t, filepath.Join(h.Worktree, "foundation/new.go")); !strings.Contains(got, "// N is exported.") {
		t.Fatalf("the agent's fix is not there: %q", got)
	}
	head := gittest.Run(t, h.Worktree, "rev-parse", "HEAD")
	if got := gittest.Run(t, h.Remote, "rev-parse", fixture.Branch); got != head {
		t.Errorf("the remote is at %s, want %s", got, head)
	}
	if got := gittest.Run(t, h.Worktree, "show", "--format=%s", "--name-only", "HEAD"); got != "Fix review comments (iteration 1)\n\nfoundation/new.go" {
		t.Errorf("the fix commit:\n%s", got)
	}
	if out.JumpTo != 7 || h.recorded(out).ReviewIterations != 1 {
		t.Errorf("jump %d iterations %d", out.JumpTo, h.recorded(out).ReviewIterations)
	}
	logs := h.logged("agent_finished")
	found := false
	for _, l := range logs {
		found = found || fmt.Sprint(l.Details["exit_code"]) == "0"
	}
	if !found {
		t.Errorf("no agent_finished entry with exit code 0 in the activity log: %+v", logs)
	}
}

func TestLoopConditionalAgentFailure(t *testing.T) {
	h := loopReady(t, stepOpts{Agent: "echo 'model overloaded' >&2; exit 3\n"})
	pushed := gittest.Run(t, h.Remote, "rev-parse", fixture.Branch)
	_, err := h.run("conditional_loop")
	fixture.ErrContains(t, err, "agent command "+h.settings().Agent+" exited with status 3: model overloaded")
	if got := gittest.Run(t, h.Remote, "rev-parse", fixture.Branch); got != pushed {
		t.Errorf("something was pushed after the agent failed: %s", got)
	}
}

func TestLoopConditionalStopsAtItsBound(t *testing.T) {
	h := loopReady(t, stepOpts{})
	h.setState(func(s *stateT) { s.LoopIterations = map[string]int{"9": 5} })
	out, err := h.run("conditional_loop")
	w := waiting(t, err)
	want := "the review loop reached its bound of 5 iteration(s) with 2 comment(s) still open; fix them by hand, then wo reset " + fixture.Key + " --to-step 8 and wo run " + fixture.Key
	if w.Reason != want || out.Status != workorder.StatusBlocked {
		t.Errorf("reason %q status %q, want %q", w.Reason, out.Status, want)
	}
	if st := h.recorded(out); st.Phase != workorder.PhaseNeedsFix {
		t.Errorf("phase %q", st.Phase)
	}

	// max_iterations on the step wins over the engine's default.
	h = loopReady(t, stepOpts{Procedure: append(fixture.Steps()[:8], map[string]any{"step": 9, "action": "conditional_loop",
		"condition": "review_comments_exist", "loop_to": 7, "max_iterations": 1})})
	h.setState(func(s *stateT) { s.LoopIterations = map[string]int{"9": 1} })
	_, err = h.run("conditional_loop")
	fixture.ErrContains(t, waiting(t, err), "reached its bound of 1 iteration(s)")
}

func TestLoopConditionalErrors(t *testing.T) {
	t.Run("the worktree is gone", func(t *testing.T) {
		// Made again at the branch, and the person asked for the fix.
		h := loopReady(t, stepOpts{})
		gittest.Run(t, h.Repo, "worktree", "remove", h.Worktree)
		_, err := h.run("conditional_loop")
		fixture.ErrContains(t, waiting(t, err), "to address in "+h.Worktree)
		if b := gittest.Run(t, h.Worktree, "rev-parse", "--abbrev-ref", "HEAD"); b != fixture.Branch {
			t.Errorf("the worktree made again is on %q", b)
		}
	})
	t.Run("the worktree is gone and its branch moved", func(t *testing.T) {
		h := loopReady(t, stepOpts{})
		gittest.Run(t, h.Repo, "worktree", "remove", h.Worktree)
		gittest.Run(t, h.Repo, "branch", "-f", fixture.Branch, fixture.Base)
		_, err := h.run("conditional_loop")
		fixture.ErrContains(t, err, "worktree "+h.Worktree+" is gone and could not be made again at the branch (branch "+fixture.Branch+" is not at the pushed commit")
		fixture.ErrContains(t, err, "wo reset "+fixture.Key+" --to-step 0 to start over")
	})
	t.Run("an unknown condition", func(t *testing.T) {
		h := loopReady(t, stepOpts{})
		// Validation refuses it when the document loads; the action too.
		h.r.task.WorkOrder.Procedure[8].Params["condition"] = "tests_fail"
		_, err := h.run("conditional_loop")
		fixture.ErrContains(t, err, `unknown condition "tests_fail"`)
	})
}

func TestLoopConditionalPlan(t *testing.T) {
	h := newStepContext(t, stepOpts{})
	if got, want := h.plan("conditional_loop"), "if review_comments_exist: wait for a person to fix them, commit, push and go back to step 7 (at most 5 times)"; got != want {
		t.Errorf("plan %q, want %q", got, want)
	}
	h.settings().Agent = "/usr/local/bin/fixer --model x"
	if got, want := h.plan("conditional_loop"), "if review_comments_exist: run the agent: /usr/local/bin/fixer --model x < prompt, commit, push and go back to step 7 (at most 5 times)"; got != want {
		t.Errorf("plan %q, want %q", got, want)
	}
	// A named agent's plan is its whole call, as wo would run it.
	h.settings().Agent = "codex -m gpt-5"
	if got, want := h.plan("conditional_loop"), "if review_comments_exist: run the agent: codex exec --json --sandbox workspace-write --skip-git-repo-check -m gpt-5 - < prompt, commit, push and go back to step 7 (at most 5 times)"; got != want {
		t.Errorf("plan %q, want %q", got, want)
	}
	h.settings().Agent = "aider"
	if got := h.plan("conditional_loop"); !strings.Contains(got, "aider --message-file PROMPT_FILE --yes-always --no-auto-commits") {
		t.Errorf("plan %q: aider's prompt goes in by file", got)
	}
	h.settings().Agent = "/usr/local/bin/fixer --model x"
	// The step's own bound is what the dry run promises, lower or higher.
	for _, n := range []int{2, 9} {
		h.r.task.WorkOrder.Procedure[8].Params["max_iterations"] = n
		if got, want := h.plan("conditional_loop"), fmt.Sprintf("(at most %d times)", n); !strings.HasSuffix(got, want) {
			t.Errorf("max_iterations %d: plan %q", n, got)
		}
	}
}

func TestSummarizeCommentsShowsFiveAndCounts(t *testing.T) {
	var cs []workorder.ReviewComment
	for i := 0; i < 7; i++ {
		cs = append(cs, workorder.ReviewComment{Path: "a.go", Line: i + 1, Body: "fix " + strings.Repeat("z", 100*(i%2))})
	}
	got := summarizeComments(cs)
	if !strings.HasSuffix(got, "; and 2 more") || strings.Count(got, "a.go:") != 5 {
		t.Errorf("summary %q", got)
	}
	if !strings.Contains(got, "fix "+strings.Repeat("z", 73)+"... (a.go:2)") {
		t.Errorf("a long body is not cut to 80 characters: %q", got)
	}
	// A body of 80 characters is kept whole; one without a path says none.
	exact := strings.Repeat("y", 80)
	if got := summarizeComments([]workorder.ReviewComment{{Body: exact}, {Path: "b.go", Body: "x"}}); got != exact+"; x (b.go)" {
		t.Errorf("summary %q", got)
	}
}
