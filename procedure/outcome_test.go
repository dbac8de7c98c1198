package procedure

import (
	"testing"

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
