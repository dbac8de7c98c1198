package procedure

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/wo-runner/wo/gitops"
	"github.com/wo-runner/wo/workorder"
)

// LoopConditional goes back to loop_to while its condition holds, running
// fix_action each time: through the agent command when one is configured,
// else by waiting for a person to change the worktree.
type LoopConditional struct{}

func newLoopConditional() Action { return LoopConditional{} }

// Run evaluates the condition and fixes, commits and pushes when it holds.
func (LoopConditional) Run(ctx context.Context, sc *StepContext) (Outcome, error) {
	if sc.Step.Condition != "review_comments_exist" {
		return Outcome{}, fmt.Errorf("unknown condition %q", sc.Step.Condition)
	}
	st := sc.State()
	comments := st.ReviewComments
	if len(comments) == 0 {
		return Outcome{Note: "no review comments to address: leaving the loop"}, nil
	}
	stepKey := strconv.Itoa(sc.Step.Step)
	iterations := st.LoopIterations[stepKey]
	bound := loopBound(sc)
	if iterations >= bound {
		reason := fmt.Sprintf("the review loop reached its bound of %d iteration(s) with %d comment(s) still open; fix them by hand, then wo reset %s --to-step %d and wo run %s",
			bound, len(comments), sc.Key(), sc.Step.Step-1, sc.Key())
		return Outcome{Status: workorder.StatusBlocked, BlockReason: reason, Record: setPhase(workorder.PhaseNeedsFix)},
			&WaitingError{Key: sc.Key(), Reason: reason}
	}
	w, err := sc.Worktree()
	if err != nil {
		return Outcome{}, err
	}
	if !w.Complete() {
		return Outcome{}, fmt.Errorf("worktree %s is gone: the fixes need it; wo reset %s --to-step 0 to start over", w.Path, sc.Key())
	}
	if sc.run.Agent != "" {
		prompt := FixPrompt(sc.run.currentDoc(), sc.Step.FixAction, comments)
		res, err := runAgent(ctx, sc, w.Path, prompt)
		sc.run.log(ctx, "agent_finished", map[string]any{"step": sc.Step.Step, "exit_code": res.ExitCode,
			"duration_ms": res.Duration.Milliseconds(), "stdout": res.Stdout, "stderr": res.Stderr})
		if err != nil {
			return Outcome{}, err
		}
	} else if !st.FixRequested {
		reason := fmt.Sprintf("%d review comment(s) to address in %s, then run wo run %s: %s", len(comments), w.Path, sc.Key(), summarizeComments(comments))
		return Outcome{Status: workorder.StatusBlocked, BlockReason: reason, Record: func(s *workorder.State) {
				s.Phase, s.FixRequested = workorder.PhaseNeedsFix, true
			}},
			&WaitingError{Key: sc.Key(), Reason: reason}
	}
	changed, err := w.StageAll()
	if err != nil {
		return Outcome{}, err
	}
	// A person may have committed the fix already: that counts too.
	head, _, err := w.Head()
	if err != nil {
		return Outcome{}, err
	}
	if !changed && head.String() == st.PushedSHA {
		reason := fmt.Sprintf("the worktree %s has no changes yet for the %d review comment(s): change the files, then run wo run %s", w.Path, len(comments), sc.Key())
		return Outcome{Status: workorder.StatusBlocked, BlockReason: reason, Record: setPhase(workorder.PhaseNeedsFix)},
			&WaitingError{Key: sc.Key(), Reason: reason}
	}
	n := iterations + 1
	repo, err := sc.Repo()
	if err != nil {
		return Outcome{}, err
	}
	author, err := repo.Identity(sc.Getenv)
	if err != nil {
		return Outcome{}, err
	}
	res := gitops.CommitResult{Hash: head}
	if changed {
		if res, err = w.Commit(fmt.Sprintf("Fix review comments (iteration %d)", n), author, sc.run.Now()); err != nil {
			return Outcome{}, err
		}
	}
	push, err := BranchPush{}.Run(ctx, sc)
	if err != nil {
		return Outcome{}, err
	}
	record := func(s *workorder.State) {
		push.Record(s)
		s.CommitSHA = res.Hash.String()
		s.ReviewIterations++
		if s.LoopIterations == nil {
			s.LoopIterations = map[string]int{}
		}
		s.LoopIterations[stepKey] = n
		s.ReviewComments, s.Phase, s.FixRequested = []workorder.ReviewComment{}, workorder.PhaseRunning, false
		// The comments handled are behind the watermark now.
		s.ReviewWatermark = s.ReviewSeen
	}
	return Outcome{
		Note:   fmt.Sprintf("fixed %d review comment(s) in %s (iteration %d); back to step %d", len(comments), res.Hash.String()[:12], n, sc.Step.LoopTo),
		Record: record,
		JumpTo: sc.Step.LoopTo,
	}, nil
}

// Plan says what the loop would do now.
func (LoopConditional) Plan(sc *StepContext) string {
	who := "wait for a person to fix them"
	if sc.run.Agent != "" {
		who = "run the agent " + strings.Fields(sc.run.Agent)[0]
	}
	return fmt.Sprintf("if %s: %s, commit, push and go back to step %d (at most %d times)", sc.Step.Condition, who, sc.Step.LoopTo, loopBound(sc))
}

func summarizeComments(comments []workorder.ReviewComment) string {
	parts := make([]string, 0, len(comments))
	for i, c := range comments {
		if i == 5 {
			parts = append(parts, fmt.Sprintf("and %d more", len(comments)-5))
			break
		}
		where := c.Path
		if c.Line > 0 {
			where = fmt.Sprintf("%s:%d", c.Path, c.Line)
		}
		body := c.Body
		if len(body) > 80 {
			body = body[:77] + "..."
		}
		if where != "" {
			parts = append(parts, fmt.Sprintf("%s (%s)", body, where))
		} else {
			parts = append(parts, body)
		}
	}
	return strings.Join(parts, "; ")
}

// loopBound is the step's max_iterations, else the engine's default.
func loopBound(sc *StepContext) int {
	if sc.Step.MaxIterations > 0 {
		return sc.Step.MaxIterations
	}
	return sc.run.MaxLoopIterations
}
