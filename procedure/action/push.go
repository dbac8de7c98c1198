package action

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/wo-runner/wo/github"
	"github.com/wo-runner/wo/gitops"
	"github.com/wo-runner/wo/workorder"
)

// Push pushes the work order's branch to its remote.
type Push struct{}

func newPush() Action { return Push{} }

// Run pushes the branch's commit through the push gate; a remote already
// at the commit is a no-op. A remote branch that moved to commits wo did
// not push is never overwritten; a rewrite of wo's own push goes out with
// a lease on the remote's tip. When a loop or a reset comes back to this
// step, whatever moved the branch since (an agent's leftover process, a
// person) is checked as a fix is.
func (Push) Run(ctx context.Context, sc *StepContext) (Outcome, error) {
	branch, err := sc.Branch()
	if err != nil {
		return Outcome{}, err
	}
	repo, err := sc.Repo()
	if err != nil {
		return Outcome{}, err
	}
	// The commit read here is the one checked, and the one pushed.
	to, exists, err := repo.BranchHash(branch)
	if err != nil {
		return Outcome{}, err
	}
	if !exists {
		return Outcome{}, fmt.Errorf("pushing %s: no local branch %s", branch, branch)
	}
	return branchPush(ctx, sc, GateStep, to)
}

// branchPush pushes the work branch at commit to through the push gate,
// and records the push.
func branchPush(ctx context.Context, sc *StepContext, kind GateKind, to plumbing.Hash) (Outcome, error) {
	repo, err := sc.Repo()
	if err != nil {
		return Outcome{}, err
	}
	g, err := stepGate(sc, kind, to)
	if err != nil {
		return Outcome{}, err
	}
	if kind == GateFix {
		g.fix = func(from, to string) error { return checkFix(sc, repo, from, to) }
	}
	res, err := PushThroughGate(ctx, repo, g)
	if err != nil {
		return Outcome{}, err
	}
	branch := g.Branch
	sc.Fault("after_push")
	note, facts := fmt.Sprintf("pushed %s to %s (%s)", branch, res.RemoteURL, res.Hash.String()[:12]), []Fact{{Kind: FactPushed, Branch: branch, SHA: res.Hash.String()}}
	if res.UpToDate {
		note, facts = fmt.Sprintf("%s already at %s on %s", branch, res.Hash.String()[:12], res.RemoteURL), nil
	}
	if res.Withheld != "" {
		note += "; " + res.Withheld
	}
	st := sc.State()
	if st.PushedSHA != res.Hash.String() || st.PushedAt == "" {
		st.PushedAt = workorder.Timestamp(sc.Now())
	}
	st.PushedSHA = res.Hash.String()
	if st.PushedTo == "" {
		st.PushedTo = res.RemoteURL
	}
	return Outcome{Note: note, Facts: facts, State: &st}, nil
}

// Check makes sure the remote exists.
func (Push) Check(ctx context.Context, sc *StepContext) error {
	repo, err := sc.Repo()
	if err != nil {
		return err
	}
	return repo.HasRemote(sc.Remote())
}

// Plan names the remote.
func (Push) Plan(sc *StepContext) string {
	remote := sc.Remote()
	if remote == "" {
		remote = "origin"
	}
	return fmt.Sprintf("push %s to %s", sc.BranchName(), remote)
}

func undoRemoteBranch(ctx context.Context, u Undo, dry bool) (*workorder.UndoStep, error) {
	pushed := u.Found().PushedSHA
	recorded := plumbing.IsHash(pushed)
	if !recorded && u.Found().Branch == "" {
		return nil, nil // wo recorded neither a push nor a branch it would push
	}
	if !recorded && !u.ProcedurePushesBranch() {
		// Only a step that pushes fixes (the review loop) could have
		// pushed: look only if one started.
		pushing, err := u.StartedPushing(ctx)
		if err != nil || !pushing {
			return nil, err
		}
	}
	remote := cmp.Or(u.StepContext().Remote(), "origin")
	branch := u.Branch()
	out := &workorder.UndoStep{Step: "remote_branch", Target: fmt.Sprintf("branch %s on %s", branch, remote)}
	ours, err := u.PullRequest(ctx)
	if err != nil {
		return nil, err
	}
	if u.Merged() {
		out.Outcome, out.Reason = UndoLeft, fmt.Sprintf("it was merged with pull request #%d, so it is part of the base's history; delete it on GitHub if it is no longer needed", ours.Number)
		return out, nil
	}
	if o, _ := u.NotOurs(); o != nil {
		out.Outcome, out.Reason = UndoLeft, fmt.Sprintf("pull request #%d, which %s opened, is open from it: deleting it would close their pull request, so wo keeps it", o.Number, o.Author)
		return out, nil
	}
	if why, err := u.ForeignBranch(ctx); err != nil || why != "" {
		out.Outcome, out.Reason = UndoLeft, why
		return out, err
	}
	if pr := ours; pr != nil && pr.State == github.PROpen && pr.Head == branch {
		if foreign, err := u.ForeignPR(ctx); err != nil || foreign != "" {
			out.Outcome, out.Reason = UndoLeft, fmt.Sprintf("pull request #%d is open from it, and wo leaves that pull request (%s): deleting the branch would close it, so wo keeps it", pr.Number, foreign)
			return out, err
		}
	}
	if why, err := u.StackedOn(ctx, branch); err != nil || why != "" {
		out.Outcome, out.Reason = UndoLeft, why
		return out, err
	}
	repo, err := u.StepContext().Repo()
	if err != nil {
		return nil, err
	}
	opts := gitops.RemoteOptions{Remote: u.StepContext().Remote(), Branch: branch, Token: github.Token(u.StepContext().Getenv), GitHubAPI: u.StepContext().GitHubAPI(), Timeout: u.StepContext().Settings().GitTimeout,
		BeforeDelete: func() { u.Fault("undo:remote_branch:before_delete") }}
	tip, exists, err := repo.RemoteBranchTip(ctx, opts)
	switch {
	case err != nil:
		return nil, err
	case !exists && !recorded:
		return nil, nil // the push never happened
	case !exists:
		out.Outcome, out.Reason = UndoGone, "the remote has no such branch"
		return out, nil
	}
	if why, err := u.AdoptedBranch(ctx, branch, tip, fmt.Sprintf("git push --force-with-lease=%s:%s %s <start>:%s", branch, tip, remote, branch)); err != nil || why != "" {
		out.Outcome, out.Reason = UndoLeft, why
		return out, err
	}
	why, err := u.PushedByWo(ctx, tip)
	if err != nil {
		return nil, err
	}
	if why == "" {
		out.Outcome, out.Reason = UndoLeft, ""
		out.Reason, err = u.NotPushedByWo(ctx, branch, remote, tip)
		return out, err
	}
	if dry {
		out.Outcome, out.Reason = UndoWould, fmt.Sprintf("delete it: it is at %s, %s", gitops.Short(tip.String()), why)
		return out, nil
	}
	deleted, err := repo.DeleteRemoteBranch(ctx, opts, tip)
	var moved *gitops.BranchMovedError
	if errors.As(err, &moved) {
		out.Outcome, out.Reason = UndoLeft, moved.Error()
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	u.Fault("undo:remote_branch:after_delete")
	if deleted {
		out.Outcome, out.Reason = UndoDone, fmt.Sprintf("deleted; it was at %s, %s", gitops.Short(tip.String()), why)
	} else {
		out.Outcome, out.Reason = UndoGone, "the remote has no such branch"
	}
	return out, nil
}

// Undoes: the remote branch, while it is still the commit wo pushed.
func (Push) Undoes() []UndoPart { return []UndoPart{{Name: "remote_branch", Do: undoRemoteBranch}} }
