package undo

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/wo-runner/wo/github"
	"github.com/wo-runner/wo/gitops"
	"github.com/wo-runner/wo/internal/gitname"
	"github.com/wo-runner/wo/workorder"
)

// undoRemoteBranch deletes the task's branch on its remote while it is
// still at a commit this task's runs logged pushing or making (the remote
// checks that as it deletes); a merged one, one a pull request that is
// not wo's comes from, one another task names or builds on stays.
func undoRemoteBranch(ctx context.Context, u *undo) (*workorder.UndoStep, error) {
	recorded := plumbing.IsHash(u.st.PushedSHA)
	if pushed, err := u.mayHavePushed(ctx, recorded); err != nil || !pushed {
		return nil, err
	}
	remote := cmp.Or(u.sc.Remote(), "origin")
	branch := u.branch()
	out := &workorder.UndoStep{Step: "remote_branch", Target: fmt.Sprintf("branch %s on %s", branch, remote)}
	if why, err := u.remoteBranchStays(ctx, branch); err != nil || why != "" {
		out.Outcome, out.Reason = Left, why
		return out, err
	}
	repo, err := u.sc.Repo()
	if err != nil {
		return nil, err
	}
	opts := gitops.RemoteOptions{Remote: u.sc.Remote(), Branch: branch, Token: github.Token(u.sc.Getenv), GitHubAPI: u.sc.GitHubAPI(), Timeout: u.sc.Settings().GitTimeout, Stall: u.sc.Settings().GitStall,
		BeforeDelete: func() { u.ed.Fault("undo:remote_branch:before_delete") }}
	tip, exists, err := repo.RemoteBranchTip(ctx, opts)
	switch {
	case err != nil:
		return nil, err
	case !exists && !recorded:
		return nil, nil // the push never happened
	case !exists:
		out.Outcome, out.Reason = Gone, "the remote has no such branch"
		return out, nil
	}
	if why, err := u.adoptedBranch(ctx, branch, tip, fmt.Sprintf("git push --force-with-lease=%s:%s %s <start>:%s", branch, tip, remote, branch)); err != nil || why != "" {
		out.Outcome, out.Reason = Left, why
		return out, err
	}
	why, err := u.pushedByWo(ctx, tip)
	if err != nil {
		return nil, err
	}
	if why == "" {
		out.Outcome = Left
		out.Reason, err = u.notPushedByWo(ctx, branch, remote, tip)
		return out, err
	}
	if u.dry {
		out.Outcome, out.Reason = Would, fmt.Sprintf("delete it: it is at %s, %s", gitname.Short(tip.String()), why)
		return out, nil
	}
	return u.deleteRemoteBranch(ctx, out, repo, opts, tip, why)
}

// mayHavePushed reports whether the task's runs may have pushed its
// branch: a push is recorded, or the branch is and a step that pushes it
// is in the procedure; else only a step that pushes fixes (the review
// loop) could have, and only if one started.
func (u *undo) mayHavePushed(ctx context.Context, recorded bool) (bool, error) {
	if !recorded && u.st.Branch == "" {
		return false, nil // wo recorded neither a push nor a branch it would push
	}
	if recorded || u.procedurePushesBranch() {
		return true, nil
	}
	return u.startedPushing(ctx)
}

// remoteBranchStays says why the branch stays on the remote whatever its
// tip, "" when nothing keeps it: it was merged, a pull request that is
// not provably wo's is open from it, it is not provably the task's, or
// another task builds on it.
func (u *undo) remoteBranchStays(ctx context.Context, branch string) (string, error) {
	ours, err := u.pullRequest(ctx)
	if err != nil {
		return "", err
	}
	if u.merged() {
		return fmt.Sprintf("it was merged with pull request #%d, so it is part of the base's history; delete it on GitHub if it is no longer needed", ours.Number), nil
	}
	if o := u.notOurs; o != nil {
		return fmt.Sprintf("pull request #%d, which %s opened, is open from it: deleting it would close their pull request, so wo keeps it", o.Number, o.Author), nil
	}
	if why, err := u.foreignBranch(ctx); err != nil || why != "" {
		return why, err
	}
	if pr := ours; pr != nil && pr.State == github.PROpen && pr.Head == branch {
		if foreign, err := u.foreignPR(ctx); err != nil || foreign != "" {
			return fmt.Sprintf("pull request #%d is open from it, and wo leaves that pull request (%s): deleting the branch would close it, so wo keeps it", pr.Number, foreign), err
		}
	}
	return u.stackedOn(ctx, branch)
}

// deleteRemoteBranch deletes the branch while it is at tip.
func (u *undo) deleteRemoteBranch(ctx context.Context, out *workorder.UndoStep, repo *gitops.Repo, opts gitops.RemoteOptions, tip plumbing.Hash, why string) (*workorder.UndoStep, error) {
	deleted, err := repo.DeleteRemoteBranch(ctx, opts, tip)
	var moved *gitops.BranchMovedError
	if errors.As(err, &moved) {
		out.Outcome, out.Reason = Left, moved.Error()
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	u.ed.Fault("undo:remote_branch:after_delete")
	if deleted {
		out.Outcome, out.Reason = Done, fmt.Sprintf("deleted; it was at %s, %s", gitname.Short(tip.String()), why)
	} else {
		out.Outcome, out.Reason = Gone, "the remote has no such branch"
	}
	return out, nil
}
