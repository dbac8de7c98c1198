package action

import (
	"strings"
	"testing"

	"github.com/wo-runner/wo/integration/ghstandin"
	"github.com/wo-runner/wo/internal/gitname"
	"github.com/wo-runner/wo/workorder"
)

// A reviewer that keeps withholding its review is asked at most
// maxAsksPerHead times for one head: the next time it withholds it, the
// task is blocked for a person, and wo asks nothing more.
func TestAReviewerAskedTooOftenForOneHeadBlocksTheTask(t *testing.T) {
	const copilot = "copilot-pull-request-reviewer[bot]"
	h := newStepContext(t, stepOpts{GitHub: true, Context: map[string]any{"reviewers": []any{copilot}},
		StandIn: func(gh *ghstandin.Server) { gh.Mode = ghstandin.ModeCopilot }})
	head := h.openPR()
	h.setState(func(s *stateT) {
		for _, signal := range []string{"2026-01-01T10:00:00Z", "2026-01-01T11:00:00Z", "2026-01-01T12:00:00Z", "2026-01-01T13:00:00Z"} {
			s.ReviewAsks = append(s.ReviewAsks, workorder.ReviewAsk{Reviewer: copilot, Head: head, Kind: "skipped", Signal: signal, How: "re-request"})
		}
		// Another head's asks do not count against this one.
		s.ReviewAsks = append(s.ReviewAsks, workorder.ReviewAsk{Reviewer: copilot, Head: "0000000000000000000000000000000000000000", Kind: "waiting", How: "re-request"})
	})

	out, err := h.run("wait_for_review")
	w := waiting(t, err)
	if out.Status != workorder.StatusBlocked {
		t.Errorf("status %q; want blocked for a person", out.Status)
	}
	for _, part := range []string{copilot + " was asked 4 times to review " + gitname.Short(head), "pull request #1"} {
		if !strings.Contains(w.Reason, part) || !strings.Contains(out.BlockReason, part) {
			t.Errorf("reason %q (block reason %q) does not say %q", w.Reason, out.BlockReason, part)
		}
	}
	if asked := h.GH.RequestedReviewers(); len(asked) != 0 {
		t.Errorf("asked %q once more; want no fifth request for the head", asked)
	}
	if st := h.recorded(out); st.Phase != workorder.PhaseWaitingForReview || len(st.ReviewAsks) != 5 {
		t.Errorf("phase %q, %d asks recorded; want waiting_for_review and the 5 asks as they were", st.Phase, len(st.ReviewAsks))
	}
}
