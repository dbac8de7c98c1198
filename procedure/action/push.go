package action

import (
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

// Run pushes; a remote already at the commit is a no-op. A remote branch
// that moved to commits wo did not push is never overwritten; a rewrite of
// wo's own push goes out with a lease on what wo pushed last.
func (Push) Run(ctx context.Context, sc *StepContext) (Outcome, error) {
	return branchPush(ctx, sc, true, plumbing.ZeroHash)
}

// branchPush pushes the work branch; with lease, a remote branch at what
// wo pushed last may be replaced (a rewrite of wo's own push), else only
// fast-forwarded. A non-zero expect is the commit the branch must still
// be at.
func branchPush(ctx context.Context, sc *StepContext, lease bool, expect plumbing.Hash) (Outcome, error) {
	branch, err := sc.Branch()
	if err != nil {
		return Outcome{}, err
	}
	repo, err := sc.Repo()
	if err != nil {
		return Outcome{}, err
	}
	opts := gitops.PushOptions{Remote: sc.Remote(), Branch: branch, Token: github.Token(sc.Getenv), GitHubAPI: sc.GitHubAPI(), Timeout: sc.Settings().GitTimeout,
		Expect: expect, ExpectURL: sc.State().PushedTo}
	res, err := repo.Push(ctx, opts)
	var nff *gitops.NonFastForwardError
	if errors.As(err, &nff) && lease {
		last := sc.State().PushedSHA
		if !plumbing.IsHash(last) {
			return Outcome{}, err
		}
		opts.Lease = plumbing.NewHash(last)
		res, err = repo.Push(ctx, opts)
	}
	if err != nil {
		return Outcome{}, err
	}
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
