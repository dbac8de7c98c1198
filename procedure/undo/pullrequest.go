package undo

import (
	"context"
	"fmt"
	"slices"

	"github.com/wo-runner/wo/github"
	"github.com/wo-runner/wo/procedure/action"
	"github.com/wo-runner/wo/workorder"
)

// undoMarker marks the comment that closes a pull request, so a rerun
// never posts it twice.
func undoMarker(key string) string { return "<!-- wo:" + key + ":undo -->" }

// undoPullRequest closes wo's pull request with a comment saying why;
// never a merged one, nor one wo cannot prove it opened for this task.
func undoPullRequest(ctx context.Context, u *undo) (*workorder.UndoStep, error) {
	pr, err := u.pullRequest(ctx)
	if err != nil {
		return nil, err
	}
	if pr == nil {
		if o, why := u.notOurs, u.notOursWhy; o != nil {
			return &workorder.UndoStep{Step: "pull_request", Target: fmt.Sprintf("pull request #%d %s", o.Number, o.URL), Outcome: Left,
				Reason: why}, nil
		}
		return nil, nil
	}
	out := &workorder.UndoStep{Step: "pull_request", Target: fmt.Sprintf("pull request #%d %s", pr.Number, pr.URL)}
	foreign, err := u.foreignPR(ctx)
	if err != nil {
		return nil, err
	}
	switch {
	case pr.Merged:
		out.Outcome, out.Reason = Left, fmt.Sprintf("it was merged into %s: wo cannot take a merge back; revert the change with a new pull request (git revert)", pr.Base)
	case foreign != "":
		out.Outcome, out.Reason = Left, foreign
	case pr.State != github.PROpen:
		if err := u.confirmClosed(ctx, pr); err != nil {
			return nil, err
		}
		out.Outcome, out.Reason = Gone, "it is closed already"
	case u.dry:
		out.Outcome, out.Reason = Would, "close it, with a comment saying why"
	default:
		if err := u.closePR(ctx, pr); err != nil {
			return nil, err
		}
		out.Outcome, out.Reason = Done, "closed, with a comment saying why"
	}
	if u.prFound != "" && out.Outcome != Left {
		out.Reason += "; " + u.prFound
	}
	return out, nil
}

// closePR comments why (once, however often a rerun comes here), closes
// the pull request, and reads it again to be sure.
func (u *undo) closePR(ctx context.Context, pr *github.PR) error {
	client, _ := u.sc.GitHub()
	why := u.opts.Reason
	if why == "" {
		why = "the work order was undone"
	}
	body := fmt.Sprintf("wo undo: closing this pull request, which wo opened for task %s. Reason: %s\n\n%s", u.sc.Key(), why, undoMarker(u.sc.Key()))
	if err := client.CommentOnce(ctx, pr.Number, body, undoMarker(u.sc.Key())); err != nil {
		return err
	}
	u.ed.Fault("undo:pull_request:after_comment")
	closed, err := client.ClosePR(ctx, pr.Number)
	if err != nil {
		return err
	}
	// A server may answer a close without closing (or a proxy may
	// lie): read the pull request again and believe that.
	if closed.State == github.PRClosed {
		closed, err = client.GetPR(ctx, pr.Number)
		if err != nil {
			return err
		}
	}
	if closed.State != github.PRClosed {
		return action.Transient(fmt.Errorf("wo closed pull request #%d, but GitHub still shows it %s: close it on GitHub, or run wo undo %s again", pr.Number, closed.State, u.sc.Key()))
	}
	pr.State = github.PRClosed // wo's pull request, as the undo's later parts read it
	return nil
}

// pullRequest reads wo's pull request once: the recorded one, else one a
// run opened but did not record; nil when there is none.
func (u *undo) pullRequest(ctx context.Context) (*github.PR, error) {
	if u.prRead || (u.st.PRNumber == 0 && !u.mayHaveUnrecordedPR()) {
		return u.pr, nil
	}
	client, err := u.sc.GitHub()
	if err != nil {
		return nil, err
	}
	if u.st.PRNumber != 0 {
		u.pr, err = client.GetPR(ctx, u.st.PRNumber)
	} else {
		u.pr, err = u.unrecordedPR(ctx, client)
	}
	if err != nil {
		return nil, err
	}
	u.prRead = true
	return u.pr, nil
}

// mayHaveUnrecordedPR reports whether a run may have opened a pull request
// without recording it: the procedure opens one and the task's branch is
// recorded (the branch is recorded before anything is pushed).
func (u *undo) mayHaveUnrecordedPR() bool {
	return u.st.PRNumber == 0 && u.st.Branch != "" && u.procedureMakes(action.FactPullRequest)
}

// unrecordedPR finds the pull request a run opened but stopped before
// recording (its number is written back after GitHub made it). It
// is wo's only when it is from the task's recorded branch into the task's
// base and wo's own login opened it; one that someone else opened is kept
// in notOurs, and left. A merged one is returned as it is: undo then
// leaves the branch and the state, as for a recorded merged one.
func (u *undo) unrecordedPR(ctx context.Context, client *github.Client) (*github.PR, error) {
	base := u.sc.BaseBranch()
	prs, err := client.PRsFrom(ctx, u.st.Branch, base)
	if err != nil {
		return nil, err
	}
	// An open one is the run's; failing that, a merged one means the
	// work went in, which undo never takes back. Closed ones are done.
	i := slices.IndexFunc(prs, func(p *github.PR) bool { return p.State == github.PROpen })
	if open := onlyOpen(prs); i >= 0 && open == nil {
		// More than one is open: nothing says which one the run opened.
		u.notOurs = prs[i]
		u.notOursWhy = fmt.Sprintf("wo recorded no pull request, and more than one is open from %s into %s, so wo cannot tell which one a run opened: wo keeps them", u.st.Branch, base)
		return nil, nil
	}
	if i < 0 {
		i = slices.IndexFunc(prs, func(p *github.PR) bool { return p.Merged })
	}
	if i < 0 {
		return nil, nil
	}
	pr := prs[i]
	me, err := client.Login(ctx)
	if err != nil {
		return nil, err
	}
	if pr.Head != u.st.Branch || pr.Base != base || pr.Author != me {
		u.notOurs = pr
		u.notOursWhy = fmt.Sprintf("wo recorded no pull request, and this one from %s into %s was opened by %s, not by wo: wo keeps it", pr.Head, pr.Base, pr.Author)
		return nil, nil
	}
	u.prFound = fmt.Sprintf("wo had not recorded it (a run stopped before writing it back), but it is wo's: open from %s into %s, opened by %s", pr.Head, pr.Base, me)
	return pr, nil
}

// merged says wo's pull request was merged.
func (u *undo) merged() bool { return u.pr != nil && u.pr.Merged }

// confirmClosed checks a pull request that reads as closed against the
// list of open pull requests from its branch: an undo that took a PR's
// word for being closed would report it gone, and complete, while it is
// open. Two answers that disagree are a retry later (GitHub's lists can
// lag a change by a moment).
func (u *undo) confirmClosed(ctx context.Context, pr *github.PR) error {
	client, err := u.sc.GitHub()
	if err != nil {
		return err
	}
	open, err := client.FindOpenPR(ctx, pr.Head, pr.Base)
	if err != nil {
		return err
	}
	if open != nil && open.Number == pr.Number {
		return action.Transient(fmt.Errorf("GitHub answers that pull request #%d is closed, but lists it open from %s into %s: wo does not take it as closed; close it on GitHub, or run wo undo %s again later",
			pr.Number, pr.Head, pr.Base, u.key()))
	}
	return nil
}

// onlyOpen is the one open pull request of prs, nil when none or several
// are open.
func onlyOpen(prs []*github.PR) *github.PR {
	var open *github.PR
	for _, p := range prs {
		if p.State == github.PROpen {
			if open != nil {
				return nil
			}
			open = p
		}
	}
	return open
}
