package gitops

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
)

// FetchBranch brings a branch from a remote into its remote-tracking
// branch (refs/remotes/REMOTE/BRANCH) and returns its tip there. A branch
// the remote does not have is an error that says so.
func (r *Repo) FetchBranch(ctx context.Context, o RemoteOptions) (plumbing.Hash, error) {
	c, err := r.connect(o)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	ctx, done := c.bound(ctx)
	defer done()
	remote := c.remote.Config().Name
	tracking := plumbing.NewRemoteReferenceName(remote, o.Branch)
	spec := config.RefSpec(fmt.Sprintf("+%s:%s", plumbing.NewBranchReferenceName(o.Branch), tracking))
	defer r.lockRefs()()
	err = r.repo.FetchContext(ctx, &git.FetchOptions{RemoteName: remote, RefSpecs: []config.RefSpec{spec}, Auth: c.auth, Tags: git.NoTags, ProxyOptions: c.proxy(ctx)})
	if err != nil && !errors.Is(err, git.NoErrAlreadyUpToDate) {
		return plumbing.ZeroHash, c.fail(ctx, "fetching branch "+o.Branch, err)
	}
	ref, err := r.repo.Storer.Reference(tracking)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("the remote %s has no branch %s", c.shown, o.Branch)
	}
	return ref.Hash(), nil
}
