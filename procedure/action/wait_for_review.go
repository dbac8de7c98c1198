package action

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/wo-runner/wo/internal/gitname"
	"github.com/wo-runner/wo/reviewer"
	"github.com/wo-runner/wo/termtext"
	"github.com/wo-runner/wo/workorder"
)

// waitParams are a wait_for_review step's own fields.
type waitParams struct {
	// DurationMinutes is how long to wait; else the reviewer's usual time.
	DurationMinutes float64 `json:"duration_minutes"`
}

// WaitForReview waits until the awaited reviewers are done with the pushed
// commit, or the step's time is up. Done means what each reviewer's
// profile says: a review of the head, a status that says the review
// completed, or a summary that says so. A reviewer that withholds its
// review (skipped, paused, rate limited, aborted) is asked for it, once
// for each time it says so. The deadline is kept in state, so a resumed
// run waits only what is left.
type WaitForReview struct{}

func newWaitForReview() Action { return WaitForReview{} }

// maxLimitWaitInProcess is the longest wo waits in the run itself for a
// rate-limited reviewer to take requests again; past it the run stops
// (exit 3) saying when to run again, so that no runner sits idle for an
// hour.
const maxLimitWaitInProcess = 10 * time.Minute

// Run polls the PR's reviews, conversation and the head's statuses; an
// unchanged poll is three or four free 304s.
func (WaitForReview) Run(ctx context.Context, sc *StepContext) (Outcome, error) {
	client, n, me, err := prContext(ctx, sc)
	if err != nil {
		return Outcome{}, err
	}
	var deadline time.Time
	if !sc.Settings().NoReviewWait {
		if deadline, err = reviewDeadline(ctx, sc); err != nil {
			return Outcome{}, err
		}
	}
	pushed := sc.State().PushedSHA
	var asked []string
	for {
		l, err := reviewLook(ctx, sc, client, n, me)
		asked = append(asked, l.asked...)
		var tooMany *TooManyAsksError
		if errors.As(err, &tooMany) {
			return stopWaiting(sc, n, l, tooMany.Error())
		}
		if err != nil {
			return Outcome{}, err
		}
		if l.done {
			return reviewArrived(sc, l, asked), nil
		}
		if who := l.with(reviewer.Unavailable); len(who) > 0 {
			return reviewerUnavailable(sc, l, who, pushed, n)
		}
		now := sc.Now()
		if until, said := l.limitedUntil(now); !until.IsZero() {
			if stop, out, err := waitOutLimit(ctx, sc, l, until, said, now, deadline, pushed); stop {
				return out, err
			}
			continue
		}
		left := time.Until(deadline)
		if sc.Settings().NoReviewWait || left <= 0 {
			// Going on would check a review that is not there and call the
			// pull request clean: the task waits for the review instead.
			return notYet(sc, n, l, deadline)
		}
		if err := pollPause(ctx, sc, l, n, now, deadline, left); err != nil {
			return Outcome{}, err
		}
	}
}

// reviewArrived ends the wait: the review is there (and what wo asked for
// on the way is said).
func reviewArrived(sc *StepContext, l look, asked []string) Outcome {
	note := l.arrived
	if len(asked) > 0 {
		note += "; asked: " + strings.Join(asked, ", ")
	}
	st := sc.State()
	st.ReviewDeadline, st.ReviewWaitingSince, st.ReviewNotBefore = "", "", ""
	st.Reviewers = l.stands
	return Outcome{Note: note, State: &st}
}

// reviewerUnavailable blocks the task: the reviewers who cannot review
// (who) say so, and a person must step in.
func reviewerUnavailable(sc *StepContext, l look, who []string, pushed string, n int) (Outcome, error) {
	r := l.readings[who[0]]
	reason := fmt.Sprintf("%s cannot review %s (it says: %s); ask a person to review pull request #%d, or name another reviewer, then run wo run %s",
		strings.Join(who, ", "), gitname.Short(pushed), termtext.Line(r.Said), n, sc.Key())
	st := sc.State()
	st.Phase, st.Reviewers, st.ReviewDeadline = workorder.PhaseWaitingForReview, l.stands, ""
	return Outcome{Status: workorder.StatusBlocked, BlockReason: reason, State: &st}, &WaitingError{Key: sc.Key(), Reason: reason}
}

// waitOutLimit waits until a rate-limited reviewer takes requests again,
// when that is within the wait and soon enough for this process; else it
// stops (stop) with the task waiting until then.
func waitOutLimit(ctx context.Context, sc *StepContext, l look, until time.Time, said string, now, deadline time.Time, pushed string) (stop bool, out Outcome, err error) {
	if sc.Settings().NoReviewWait || until.After(deadline) || until.Sub(now) > maxLimitWaitInProcess {
		reason := fmt.Sprintf("the reviewer is rate limited until %s (%s); wo asks again for the review of %s after that: run wo run %s then",
			until.UTC().Format(time.RFC3339), said, gitname.Short(pushed), sc.Key())
		st := sc.State()
		st.Phase, st.ReviewNotBefore, st.Reviewers, st.ReviewDeadline = workorder.PhaseWaitingForReview, workorder.Timestamp(until), l.stands, ""
		return true, Outcome{State: &st}, &WaitingError{Key: sc.Key(), Reason: reason}
	}
	st := sc.State()
	st.ReviewNotBefore, st.Reviewers = workorder.Timestamp(until), l.stands
	if err := sc.Checkpoint(ctx, st); err != nil {
		return true, Outcome{}, err
	}
	sc.Say(fmt.Sprintf("rate limited until %s (%s): waiting", until.UTC().Format(time.RFC3339), said))
	next := until.Add(limitGrace)
	sc.Waiting(Wait{For: "the reviewer's rate limit to end (" + said + ")", Since: now, Until: next, NextLook: next})
	if err := SleepCtx(ctx, until.Sub(now)+limitGrace); err != nil {
		return true, Outcome{}, err
	}
	return false, Outcome{}, nil
}

// pollPause shows the wait's progress and sleeps until the next look, at
// most what is left of the wait.
func pollPause(ctx context.Context, sc *StepContext, l look, n int, now, deadline time.Time, left time.Duration) error {
	total := reviewWaitFor(sc)
	sc.Progress(int((total - left).Seconds()), int(total.Seconds()))
	pause := min(sc.Settings().PollInterval, left)
	// The wait began a whole wait before its deadline, in an earlier
	// run too when this one resumed it.
	since := deadline.Add(-total)
	if since.After(now) {
		since = now
	}
	sc.Waiting(Wait{For: waitingFor(l, n), Since: since, Until: deadline, NextLook: now.Add(pause)})
	return SleepCtx(ctx, pause)
}

// waitingFor says what the wait waits for, for the status line: the
// awaited reviewers not done with the head, each with where it stands
// when it said something ("in progress", "skipped"), and the pull request.
func waitingFor(l look, n int) string {
	var who []string
	for _, s := range l.stands {
		switch reviewer.Kind(s.Kind) {
		case reviewer.Reviewed:
		case reviewer.Waiting:
			who = append(who, s.Login)
		default:
			who = append(who, fmt.Sprintf("%s (%s)", s.Login, strings.ReplaceAll(s.Kind, "_", " ")))
		}
	}
	if len(who) == 0 {
		// No reviewer named and none seen: a writer's review ends the wait.
		return fmt.Sprintf("a review of %s on pull request #%d", gitname.Short(l.head), n)
	}
	return fmt.Sprintf("%s to review %s on pull request #%d", strings.Join(who, ", "), gitname.Short(l.head), n)
}

// limitGrace is how long after a rate limit's end wo asks: the bot's
// clock and wo's may differ by a little.
const limitGrace = 5 * time.Second

// SleepCtx waits d, or until ctx ends (its error).
func SleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// notYet stops the run until the review arrives (exit 3): the phase says
// so, the time it began waiting is kept, and the deadline is cleared so
// that the next run waits a whole wait again. It says whether a reviewer
// is still at work, or nobody said anything: never "clean".
func notYet(sc *StepContext, n int, l look, deadline time.Time) (Outcome, error) {
	since := sc.State().ReviewWaitingSince
	if since == "" {
		since = workorder.Timestamp(sc.Now())
	}
	head := gitname.Short(l.head)
	named := by(awaitedReviewers(sc))
	var why string
	switch busy := l.with(reviewer.InProgress); {
	case len(busy) > 0:
		why = fmt.Sprintf("review in progress: %s is still reviewing %s", strings.Join(busy, ", "), head)
	case sc.Settings().NoReviewWait:
		why = fmt.Sprintf("no review of %s%s yet", head, named)
	default:
		why = fmt.Sprintf("no review of %s%s arrived by %s", head, named, deadline.UTC().Format(time.RFC3339))
	}
	silent := l.with(reviewer.Waiting)
	switch {
	case len(l.audience.Awaited) == 0 && !sc.Settings().NoReviewWait:
		why += " on pull request #" + fmt.Sprint(n) + "; no reviewer said anything about it"
	case len(silent) > 0 && !sc.Settings().NoReviewWait:
		why += fmt.Sprintf(" on pull request #%d; %s said nothing about it (no review, status or summary of that commit)", n, strings.Join(silent, ", "))
	default:
		why += fmt.Sprintf(" on pull request #%d", n)
	}
	if asked := l.with(reviewer.Skipped); len(asked) > 0 {
		why += fmt.Sprintf(" (%s was asked and has not started)", strings.Join(asked, ", "))
	}
	reason := fmt.Sprintf("%s; a review event resumes it (wo run --github-event), or run wo run %s to wait again", why, sc.Key())
	st := sc.State()
	st.Phase, st.ReviewWaitingSince, st.ReviewDeadline, st.Reviewers = workorder.PhaseWaitingForReview, since, "", l.stands
	return Outcome{State: &st}, &WaitingError{Key: sc.Key(), Reason: reason}
}

// stopWaiting stops the run with a reviewer that keeps withholding its
// review: the task is blocked for a person to look.
func stopWaiting(sc *StepContext, n int, l look, why string) (Outcome, error) {
	reason := fmt.Sprintf("%s (pull request #%d)", why, n)
	st := sc.State()
	st.Phase, st.Reviewers, st.ReviewDeadline = workorder.PhaseWaitingForReview, l.stands, ""
	return Outcome{Status: workorder.StatusBlocked, BlockReason: reason, State: &st}, &WaitingError{Key: sc.Key(), Reason: reason}
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
	d := sc.Now().Add(reviewWaitFor(sc))
	st := sc.State()
	st.ReviewDeadline = workorder.Timestamp(d)
	if err := sc.Checkpoint(ctx, st); err != nil {
		return d, err
	}
	sc.Fault("after_checkpoint")
	return d, nil
}

// waitFor is --review-wait, else the step's duration_minutes, else the
// longest wait of the named reviewers' profiles (CodeRabbit's is 25
// minutes), else 10 minutes.
func reviewWaitFor(sc *StepContext) time.Duration {
	minutes := paramsOf[waitParams](sc.Step).DurationMinutes
	switch {
	case sc.Settings().ReviewWait > 0:
		return sc.Settings().ReviewWait
	case minutes > 0:
		return time.Duration(minutes * float64(time.Minute))
	}
	wait := time.Duration(0)
	for _, name := range awaitedReviewers(sc) {
		wait = max(wait, reviewer.For(name).Wait())
	}
	if wait == 0 {
		wait = reviewer.DefaultWait
	}
	return wait
}

// Plan says how long it would wait.
func (WaitForReview) Plan(sc *StepContext) string {
	named := awaitedReviewers(sc)
	var askable []string
	for _, name := range named {
		if p := reviewer.For(name); p.Ask(reviewer.Skipped) != nil || p.Ask(reviewer.Waiting) != nil {
			askable = append(askable, p.Login())
		}
	}
	asks := ""
	if len(askable) > 0 {
		asks = "; " + strings.Join(askable, ", ") + " is asked for the review when it withholds it"
	}
	if sc.Settings().NoReviewWait {
		return "look once for a review of the pushed commit" + by(named) + "; without one, stop (exit 3) until a review event resumes the run" + asks
	}
	return fmt.Sprintf("wait up to %s for a review of the pushed commit%s, polling every %s%s", reviewWaitFor(sc), by(named), sc.Settings().PollInterval, asks)
}
