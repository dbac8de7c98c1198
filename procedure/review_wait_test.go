package procedure

import (
	"testing"
	"time"

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

func TestReviewWaitGivesUpAtTheDeadline(t *testing.T) {
	h := newStepContext(t, stepOpts{GitHub: true, Reviews: oneRound, ReviewDelay: time.Hour})
	pushed := h.openPR()
	h.engine().ReviewWait = time.Millisecond
	out, err := h.run("wait_for_review")
	if err != nil {
		t.Fatal(err)
	}
	deadline := h.stored().ReviewDeadline
	if want := "no review of " + pushed[:12] + " arrived before "; len(out.Note) <= len(want) || out.Note[:len(want)] != want {
		t.Errorf("note %q, want it to start %q", out.Note, want)
	}
	if deadline == "" {
		t.Error("no deadline stored")
	}
}

func TestReviewWaitResumedAfterItsDeadline(t *testing.T) {
	// A run that stopped while waiting: the stored deadline has passed.
	past := "2020-01-02T03:04:05Z"
	h := newStepContext(t, stepOpts{GitHub: true, Reviews: oneRound, ReviewDelay: time.Hour,
		State: map[string]any{"review_deadline": past}})
	pushed := h.openPR()
	out, err := h.run("wait_for_review")
	if err != nil {
		t.Fatal(err)
	}
	if want := "no review of " + pushed[:12] + " arrived before " + past; out.Note != want {
		t.Errorf("note %q, want %q", out.Note, want)
	}
	if got := h.stored().ReviewDeadline; got != past {
		t.Errorf("the stored deadline changed to %q", got)
	}
}

func TestReviewWaitCountsOnlyOthersReviewsOfThePushedCommit(t *testing.T) {
	past := "2020-01-02T03:04:05Z"
	t.Run("a review of an older commit", func(t *testing.T) {
		h := newStepContext(t, stepOpts{GitHub: true, Reviews: oneRound, State: map[string]any{"review_deadline": past}})
		h.openPR()
		// wo pushed another commit since the reviewed one.
		newer := gitIn(t, h.Repo, "rev-parse", fixBase)
		h.setState(func(s *stateT) { s.PushedSHA = newer })
		out, err := h.run("wait_for_review")
		if err != nil {
			t.Fatal(err)
		}
		if want := "no review of " + newer[:12] + " arrived before " + past; out.Note != want {
			t.Errorf("note %q, want %q", out.Note, want)
		}
	})
	t.Run("a review by wo's own login", func(t *testing.T) {
		h := newStepContext(t, stepOpts{GitHub: true, Reviews: oneRound, ReviewerLogin: "wo-bot", State: map[string]any{"review_deadline": past}})
		pushed := h.openPR()
		out, err := h.run("wait_for_review")
		if err != nil {
			t.Fatal(err)
		}
		if want := "no review of " + pushed[:12] + " arrived before " + past; out.Note != want {
			t.Errorf("note %q, want %q", out.Note, want)
		}
	})
}

func TestReviewWaitNeedsAPullRequest(t *testing.T) {
	h := newStepContext(t, stepOpts{GitHub: true})
	_, err := h.run("wait_for_review")
	errContains(t, err, "task "+fixKey+" has no pull request yet: the create_pr step comes first")
}

func TestReviewWaitPlan(t *testing.T) {
	h := newStepContext(t, stepOpts{})
	h.engine().PollInterval = 30 * time.Second
	if got, want := h.plan("wait_for_review"), "wait up to 10m0s for a review of the pushed commit, polling every 30s"; got != want {
		t.Errorf("plan %q, want %q", got, want)
	}
	h.engine().ReviewWait = 90 * time.Second
	if got, want := h.plan("wait_for_review"), "wait up to 1m30s for a review of the pushed commit, polling every 30s"; got != want {
		t.Errorf("plan with --review-wait %q, want %q", got, want)
	}
	h = newStepContext(t, stepOpts{Procedure: bareSteps("wait_for_review")})
	if got, want := h.plan("wait_for_review"), "wait up to 10m0s for a review of the pushed commit, polling every 1ms"; got != want {
		t.Errorf("plan without duration_minutes %q, want %q", got, want)
	}
}
