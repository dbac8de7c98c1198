package gitops

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/wo-runner/wo/redact"
)

// FetchOptions say which branch to bring from a remote.
type FetchOptions struct {
	Remote    string // origin when empty
	Branch    string
	Token     string // as for a push: sent only to the GitHub it belongs to
	GitHubAPI string
	Timeout   time.Duration // DefaultNetworkTimeout when zero
}

// FetchBranch brings a branch from a remote into its remote-tracking
// branch (refs/remotes/REMOTE/BRANCH) and returns its tip there. A branch
// the remote does not have is an error that says so.
func (r *Repo) FetchBranch(ctx context.Context, o FetchOptions) (plumbing.Hash, error) {
	if o.Remote == "" {
		o.Remote = "origin"
	}
	remote, err := r.repo.Remote(o.Remote)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("%s has no remote %q: add it with git remote add, or set context.remote", r.Path, o.Remote)
	}
	rawURL := remote.Config().URLs[0]
	token, _ := CredentialsFor(rawURL, o.GitHubAPI, o.Token)
	auth, err := authFor(rawURL, token)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = DefaultNetworkTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tracking := plumbing.NewRemoteReferenceName(o.Remote, o.Branch)
	spec := config.RefSpec(fmt.Sprintf("+%s:%s", plumbing.NewBranchReferenceName(o.Branch), tracking))
	defer r.lockRefs()()
	err = r.repo.FetchContext(ctx, &git.FetchOptions{RemoteName: o.Remote, RefSpecs: []config.RefSpec{spec}, Auth: auth, Tags: git.NoTags})
	if err != nil && !errors.Is(err, git.NoErrAlreadyUpToDate) {
		secrets := redact.New().Token(o.Token)
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return plumbing.ZeroHash, fmt.Errorf("fetching %s from %s: the remote did not answer within %s; check that it answers, or raise --git-timeout", o.Branch, redactURL(rawURL), timeout)
		}
		return plumbing.ZeroHash, fmt.Errorf("fetching %s from %s: %s", o.Branch, redactURL(rawURL), secrets.String(err.Error()))
	}
	ref, err := r.repo.Storer.Reference(tracking)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("the remote %s has no branch %s", redactURL(rawURL), o.Branch)
	}
	return ref.Hash(), nil
}
