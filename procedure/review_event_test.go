package procedure

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/wo-runner/wo/procedure/action"
	"github.com/wo-runner/wo/workorder"
)

// With --review-wait 0 the review wait looks once and stops: a review
// event resumes the run (procedure/ghevent).
func TestNoReviewWaitStopsAtOnce(t *testing.T) {
	h := newStepContext(t, stepOpts{GitHub: true, ReviewDelay: time.Hour}) // the reviewer is slow
	h.upTo("wait_for_review")
	h.engine().NoReviewWait = true
	out, err := h.run("wait_for_review")
	var waiting *action.WaitingError
	if !errors.As(err, &waiting) || !strings.Contains(err.Error(), "a review event resumes it") {
		t.Fatalf("no review yet with --review-wait 0: %v", err)
	}
	if st := h.recorded(out); st.Phase != workorder.PhaseWaitingForReview || st.ReviewWaitingSince == "" {
		t.Errorf("recorded phase %q since %q", st.Phase, st.ReviewWaitingSince)
	}
	if got := h.plan("wait_for_review"); !strings.Contains(got, "look once") {
		t.Errorf("plan %q", got)
	}
}
