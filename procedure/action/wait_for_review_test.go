package action

import (
	"strings"
	"testing"
	"time"

	"github.com/wo-runner/wo/internal/gittest"
	"github.com/wo-runner/wo/procedure/internal/fixture"
	"github.com/wo-runner/wo/workorder"

	"github.com/wo-runner/wo/integration/ghstandin"
)

var oneRound = [][]ghstandin.Comment{{{Path: "foundation/new.go", Line: 3, Body: "Export a comment on N."}}}

func TestReviewWaitEndsWhenTheReviewArrives(t *testing.T) {
	h := newStepContext(t, stepOpts{GitHub: true, Reviews: oneRound})
	h.openPR()
	out, err := h.run("wait_for_review")
	if err != nil {
		t.Fatal(err)
	}
	if want := "review by coderabbitai[bot] arrived (CHANGES_REQUESTED)"; out.Note != want {
		t.Errorf("note %q, want %q", out.Note, want)
	}
	// The deadline was stored before waiting, so that a resumed run waits
	// only what is left; the finished step clears it.
	if h.stored().ReviewDeadline == "" {
		t.Error("no review_deadline was checkpointed")
	}
	if st := h.recorded(out); st.ReviewDeadline != "" {
		t.Errorf("review_deadline %q left after the review arrived", st.ReviewDeadline)
	}
}

// waitsForReview asserts that a wait ended without the review: the run
// waits (exit 3) saying which commit it waits for and how to go on, the
// phase says so, and the deadline is cleared so that the next run waits a
// whole wait again.
func waitsForReview(t *testing.T, h *stepHarness, out Outcome, err error, reason string) {
	t.Helper()
	w := waiting(t, err)
	if !strings.Contains(w.Reason, reason) || !strings.HasSuffix(w.Reason, "or run wo run "+fixture.Key+" to wait again") {
		t.Errorf("reason %q, want it to say %q and how to go on", w.Reason, reason)
	}
	st := h.recorded(out)
	if st.Phase != workorder.PhaseWaitingForReview || st.ReviewDeadline != "" || st.ReviewWaitingSince == "" {
		t.Errorf("phase %q, deadline %q, waiting since %q", st.Phase, st.ReviewDeadline, st.ReviewWaitingSince)
	}
	if st.ReviewComments != nil {
		t.Errorf("a wait without a review recorded comments: %v", st.ReviewComments)
	}
}

func TestReviewWaitStopsAtTheDeadlineWithoutTheReview(t *testing.T) {
	h := newStepContext(t, stepOpts{GitHub: true, Reviews: oneRound, ReviewDelay: time.Hour})
	pushed := h.openPR()
	h.settings().ReviewWait = time.Millisecond
	out, err := h.run("wait_for_review")
	if h.stored().ReviewDeadline == "" {
		t.Error("no deadline was stored before waiting")
	}
	waitsForReview(t, h, out, err, "no review of "+pushed[:12]+" arrived by ")
}

func TestReviewWaitResumedAfterItsDeadline(t *testing.T) {
	// A run that stopped while waiting: the stored deadline has passed.
	past := "2020-01-02T03:04:05Z"
	h := newStepContext(t, stepOpts{GitHub: true, Reviews: oneRound, ReviewDelay: time.Hour,
		State: map[string]any{"review_deadline": past}})
	pushed := h.openPR()
	out, err := h.run("wait_for_review")
	waitsForReview(t, h, out, err, "no review of "+pushed[:12]+" arrived by "+past+" on pull request #1")
}

func TestReviewWaitCountsOnlyOthersReviewsOfThePushedCommit(t *testing.T) {
	past := "2020-01-02T03:04:05Z"
	t.Run("a review of an older commit", func(t *testing.T) {
		h := newStepContext(t, stepOpts{GitHub: true, Reviews: oneRound, State: map[string]any{"review_deadline": past}})
		h.openPR()
		// wo pushed another commit since the reviewed one.
		newer := gittest.Run(t, h.Repo, "rev-parse", fixture.Base)
		h.setState(func(s *stateT) { s.PushedSHA = newer })
		out, err := h.run("wait_for_review")
		waitsForReview(t, h, out, err, "no review of "+newer[:12]+" arrived by "+past)
	})
	t.Run("a review by wo's own login", func(t *testing.T) {
		h := newStepContext(t, stepOpts{GitHub: true, Reviews: oneRound, ReviewerLogin: "wo-bot", State: map[string]any{"review_deadline": past}})
		pushed := h.openPR()
		out, err := h.run("wait_for_review")
		waitsForReview(t, h, out, err, "no review of "+pushed[:12]+" arrived by "+past)
	})
	t.Run("a review by wo's own login in other case", func(t *testing.T) {
		h := newStepContext(t, stepOpts{GitHub: true, Reviews: oneRound, ReviewerLogin: "WO-Bot", State: map[string]any{"review_deadline": past}})
		pushed := h.openPR()
		out, err := h.run("wait_for_review")
		waitsForReview(t, h, out, err, "no review of "+pushed[:12]+" arrived by "+past)
	})
}

func TestReviewWaitNeedsAPullRequest(t *testing.T) {
	h := newStepContext(t, stepOpts{GitHub: true})
	_, err := h.run("wait_for_review")
	fixture.ErrContains(t, err, "task "+fixture.Key+" has no pull request yet: the create_pr step comes first")
}

func TestReviewWaitPlan(t *testing.T) {
	h := newStepContext(t, stepOpts{})
	h.settings().PollInterval = 30 * time.Second
	if got, want := h.plan("wait_for_review"), "wait up to 10m0s for a review of the pushed commit, polling every 30s"; got != want {
		t.Errorf("plan %q, want %q", got, want)
	}
	h.settings().ReviewWait = 90 * time.Second
	if got, want := h.plan("wait_for_review"), "wait up to 1m30s for a review of the pushed commit, polling every 30s"; got != want {
		t.Errorf("plan with --review-wait %q, want %q", got, want)
	}
	h = newStepContext(t, stepOpts{Procedure: fixture.BareSteps("wait_for_review")})
	if got, want := h.plan("wait_for_review"), "wait up to 10m0s for a review of the pushed commit, polling every 1ms"; got != want {
		t.Errorf("plan without duration_minutes %q, want %q", got, want)
	}
}

// A wait reports how far it is: seconds waited of the whole wait.
func TestReviewWaitReportsItsProgress(t *testing.T) {
	h := newStepContext(t, stepOpts{GitHub: true, Reviews: oneRound, ReviewDelay: 200 * time.Millisecond})
	h.openPR()
	h.settings().ReviewWait = 2 * time.Minute
	if _, err := h.run("wait_for_review"); err != nil {
		t.Fatal(err)
	}
	if len(h.r.progress) == 0 {
		t.Fatal("a wait of 200 ms reported no progress")
	}
	for _, p := range h.r.progress {
		if p[1] != 120 || p[0] < 0 || p[0] > 1 {
			t.Fatalf("progress %v, want 0 or 1 of 120 seconds", h.r.progress)
		}
	}
}

// While it waits, the step says for whom, since when, until when, and
// when it looks next; the reviewer named or, with none named and none
// seen yet, anyone whose review counts.
func TestReviewWaitSaysWhatItWaitsFor(t *testing.T) {
	for name, c := range map[string]struct {
		reviewers []string
		who       string
	}{
		"a reviewer named": {[]string{"coderabbitai[bot]"}, "coderabbitai[bot] to review "},
		"none named":       {nil, "a review of "},
	} {
		t.Run(name, func(t *testing.T) {
			h := newStepContext(t, stepOpts{GitHub: true, Reviews: oneRound, ReviewDelay: 200 * time.Millisecond})
			pushed := h.openPR()
			h.settings().ReviewWait = 2 * time.Minute
			h.settings().PollInterval = 20 * time.Millisecond
			h.settings().Reviewers = c.reviewers
			before := time.Now()
			if _, err := h.run("wait_for_review"); err != nil {
				t.Fatal(err)
			}
			waits := h.r.waitsSeen()
			if len(waits) == 0 {
				t.Fatal("a wait of 200 ms said nothing of what it waits for")
			}
			want := c.who + pushed[:12] + " on pull request #1"
			for _, w := range waits {
				if w.For != want || w.Until.Sub(w.Since) != 2*time.Minute || w.Since.Before(before.Add(-time.Second)) {
					t.Errorf("wait %+v: want %q, 2 minutes from the start", w, want)
				}
				if d := w.NextLook.Sub(w.Since); d < 0 || d > 2*time.Minute {
					t.Errorf("wait %+v: the next look is not within the wait", w)
				}
				if w.Last != "" {
					t.Errorf("a review wait has a last line: %+v", w)
				}
			}
			if last := waits[len(waits)-1]; last.NextLook.Before(waits[0].NextLook) {
				t.Errorf("the next look went back: %+v then %+v", waits[0], last)
			}
		})
	}
}

// The status line names the reviewers not done with the head, with where
// each stands once it said something.
func TestWaitingFor(t *testing.T) {
	l := look{head: "1a2b3c4d5e6f7a8b9c0d", stands: []workorder.ReviewerStand{
		{Login: "coderabbitai[bot]", Kind: "in_progress"}, {Login: "alice", Kind: "reviewed"},
		{Login: "copilot-pull-request-reviewer[bot]", Kind: "waiting"}, {Login: "bob", Kind: "rate_limited"}}}
	want := "coderabbitai[bot] (in progress), copilot-pull-request-reviewer[bot], bob (rate limited) to review 1a2b3c4d5e6f on pull request #7"
	if got := waitingFor(l, 7); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	if got, want := waitingFor(look{head: l.head}, 7), "a review of 1a2b3c4d5e6f on pull request #7"; got != want {
		t.Errorf("with no reviewer awaited: %q, want %q", got, want)
	}
}
