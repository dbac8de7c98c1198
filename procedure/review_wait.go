package procedure

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/wo-runner/wo/github"
	"github.com/wo-runner/wo/workorder"
)

// ReviewWait waits until a review of the pushed commit arrives, or the
// step's time is up. The deadline is kept in state, so a resumed run waits
// only what is left.
type ReviewWait struct{}

func newReviewWait() Action { return ReviewWait{} }

// Run polls the PR's reviews; an unchanged poll is a free 304.
func (ReviewWait) Run(ctx context.Context, sc *StepContext) (Outcome, error) {
	client, n, me, err := prContext(ctx, sc)
	if err != nil {
		return Outcome{}, err
	}
	if sc.run.NoReviewWait {
		return lookOnce(ctx, sc, client, n, me)
	}
	deadline, err := reviewDeadline(ctx, sc)
	if err != nil {
		return Outcome{}, err
	}
	pushed := sc.State().PushedSHA
	awaited := awaitedReviewers(sc)
	done := func(s *workorder.State) { s.ReviewDeadline, s.ReviewWaitingSince = "", "" }
	for {
		reviews, err := client.Reviews(ctx, n)
		if err != nil {
			return Outcome{}, err
		}
		if note, ok := reviewArrived(reviews, pushed, me, awaited); ok {
			return Outcome{Note: note, Record: done}, nil
		}
		left := time.Until(deadline)
		if left <= 0 {
			// Going on would check a review that is not there and call the
			// pull request clean: the task waits for the review instead.
			return notYet(sc, n, fmt.Sprintf("no review of %s%s arrived by %s", short(pushed), by(awaited), deadline.UTC().Format(time.RFC3339)))
		}
		total := sc.run.waitFor(sc.Step)
		sc.Progress(int((total - left).Seconds()), int(total.Seconds()))
		t := time.NewTimer(min(sc.run.PollInterval, left))
		select {
		case <-ctx.Done():
			t.Stop()
			return Outcome{}, ctx.Err()
		case <-t.C:
		}
	}
}

// lookOnce looks for a review of the pushed commit once: there is one, and
// the step is done; there is none, and the run stops waiting for the event
// that brings it, with nothing holding a runner.
func lookOnce(ctx context.Context, sc *StepContext, client *github.Client, n int, me string) (Outcome, error) {
	pushed := sc.State().PushedSHA
	awaited := awaitedReviewers(sc)
	reviews, err := client.Reviews(ctx, n)
	if err != nil {
		return Outcome{}, err
	}
	if note, ok := reviewArrived(reviews, pushed, me, awaited); ok {
		return Outcome{Note: note, Record: func(s *workorder.State) { s.ReviewDeadline, s.ReviewWaitingSince = "", "" }}, nil
	}
	return notYet(sc, n, fmt.Sprintf("no review of %s%s yet", short(pushed), by(awaited)))
}

// notYet stops the run until the review arrives (exit 3): the phase says
// so, the time it began waiting is kept, and the deadline is cleared so
// that the next run waits a whole wait again.
func notYet(sc *StepContext, n int, why string) (Outcome, error) {
	since := sc.State().ReviewWaitingSince
	if since == "" {
		since = workorder.Timestamp(sc.run.Now())
	}
	reason := fmt.Sprintf("%s on pull request #%d; a review event resumes it (wo run --github-event), or run wo run %s to wait again",
		why, n, sc.Key())
	return Outcome{Record: func(s *workorder.State) {
		s.Phase, s.ReviewWaitingSince, s.ReviewDeadline = workorder.PhaseWaitingForReview, since, ""
	}}, &WaitingError{Key: sc.Key(), Reason: reason}
}

// reviewArrived reports whether the review waited for is there: with no
// reviewer named, any review of the pushed commit not by wo; with names,
// a review of it by each of them, so that a person's approval does not end
// the wait for the bot. Logins match as GitHub's do: in any case, and a
// name without "[bot]" matches the app's bot.
func reviewArrived(reviews []github.Review, pushed, me string, awaited []string) (string, bool) {
	var parts []string
	for _, r := range reviews {
		if len(awaited) == 0 && r.Author != "" && !github.SameLogin(r.Author, me) && (pushed == "" || r.CommitID == pushed) {
			return fmt.Sprintf("review by %s arrived (%s)", r.Author, r.State), true
		}
	}
	if len(awaited) == 0 {
		return "", false
	}
	for _, name := range awaited {
		var latest *github.Review
		for i, r := range reviews {
			if github.IsReviewer(r.Author, name) && (pushed == "" || r.CommitID == pushed) {
				latest = &reviews[i]
			}
		}
		if latest == nil {
			return "", false
		}
		parts = append(parts, fmt.Sprintf("%s (%s)", latest.Author, latest.State))
	}
	return "review by " + strings.Join(parts, ", ") + " arrived", true
}

// by names the awaited reviewers in a message.
func by(awaited []string) string {
	if len(awaited) == 0 {
		return ""
	}
	return " by " + strings.Join(awaited, ", ")
}

// reviewDeadline reads the stored deadline, or sets one now.
func reviewDeadline(ctx context.Context, sc *StepContext) (time.Time, error) {
	if s := sc.State().ReviewDeadline; s != "" {
		if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
			return t, nil
		}
	}
	d := sc.run.Now().Add(sc.run.waitFor(sc.Step))
	if err := sc.Checkpoint(ctx, func(s *workorder.State) { s.ReviewDeadline = workorder.Timestamp(d) }); err != nil {
		return d, err
	}
	sc.Fault("after_checkpoint")
	return d, nil
}

// waitFor is --review-wait, else the step's duration_minutes, else 10 minutes.
func (e *Engine) waitFor(step workorder.Step) time.Duration {
	switch {
	case e.ReviewWait > 0:
		return e.ReviewWait
	case step.DurationMinutes > 0:
		return time.Duration(step.DurationMinutes * float64(time.Minute))
	default:
		return 10 * time.Minute
	}
}

// Plan says how long it would wait.
func (ReviewWait) Plan(sc *StepContext) string {
	if sc.run.NoReviewWait {
		return "look once for a review of the pushed commit" + by(awaitedReviewers(sc)) + "; without one, stop (exit 3) until a review event resumes the run"
	}
	return fmt.Sprintf("wait up to %s for a review of the pushed commit%s, polling every %s", sc.run.waitFor(sc.Step), by(awaitedReviewers(sc)), sc.run.PollInterval)
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
