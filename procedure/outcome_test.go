package procedure

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/wo-runner/wo/gitops"
	"github.com/wo-runner/wo/procedure/action"
)

// A refused fix fails the run (exit 1) with its own code: in CI, exit 3 is
// a pause that a workflow lets pass, and a refusal must not pass.
func TestARefusedFixFailsTheRunWithItsOwnCode(t *testing.T) {
	err := &StepFailedError{Key: "k", Step: 9, Action: "conditional_loop", Err: &action.FixRefusedError{Key: "k"}}
	if got := Classify(err); got != (Classification{OutcomeFailed, "FIX_REFUSED"}) {
		t.Errorf("classified %+v", got)
	}
}

// A failed step says what to run next once: a refused fix (or a failed
// agent) already ends with it, and the step adds no second one; any other
// cause gets the step's.
func TestAFailedStepSaysTheNextStepOnce(t *testing.T) {
	refused := &action.FixRefusedError{Key: "task_k", Worktree: "/w", From: "0123456789abcdef0123456789abcdef01234567",
		Refused: []gitops.Refusal{{Path: ".env", Reason: "ignored by .gitignore"}}}
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"a refused fix", fmt.Errorf("%w (and recording the failure failed too: disk full)", refused), "; then run wo run task_k: it takes the worktree as you leave it"},
		{"a failed agent", &action.AgentFailedError{Key: "task_k", Agent: "claude", ExitCode: 2}, "; nothing was pushed: run wo run task_k to try again"},
		{"another cause", errors.New("disk full"), "failed: disk full; fix the cause and run wo run task_k to retry it"},
	} {
		msg := (&StepFailedError{Key: "task_k", Step: 9, Action: "conditional_loop", Err: c.err}).Error()
		if !strings.Contains(msg, c.want) || strings.Count(msg, "wo run task_k") != 1 {
			t.Errorf("%s: %q\nwant %q in it, and wo run task_k once", c.name, msg, c.want)
		}
	}
}
