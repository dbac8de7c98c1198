package gitops

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/transport"

	"github.com/wo-runner/wo/internal/gitname"
	"github.com/wo-runner/wo/redact"
)

// BranchMovedError says a branch no longer points where wo left it:
// someone else's commits are on it, so wo leaves it alone.
type BranchMovedError struct {
	Branch string
	Where  string // "local" or the remote's URL
	Tip    plumbing.Hash
	Want   []plumbing.Hash
}

func (e *BranchMovedError) Error() string {
	want := make([]string, len(e.Want))
	for i, h := range e.Want {
		want[i] = gitname.Short(h.String())
	}
	if e.Where == "local" {
		return fmt.Sprintf("branch %s is at %s, not a commit wo made (%s): someone committed on it since, so wo keeps it; delete it yourself with git branch -D %s if it is not needed",
			e.Branch, gitname.Short(e.Tip.String()), strings.Join(want, ", "), e.Branch)
	}
	return fmt.Sprintf("branch %s on %s is at %s, not %s that wo pushed: someone else pushed since, so wo keeps it; delete it yourself with git push %s --delete %s if it is not needed",
		e.Branch, e.Where, gitname.Short(e.Tip.String()), strings.Join(want, ", "), e.Where, e.Branch)
}

// CheckedOutError says a branch is checked out in a worktree, which git
// does not let anyone delete.
type CheckedOutError struct{ Branch, Where string }

func (e *CheckedOutError) Error() string {
	return fmt.Sprintf("branch %s is checked out at %s, so wo keeps it: switch that worktree to another branch (or remove it), then run wo undo again", e.Branch, e.Where)
}

// DeleteBranch deletes a local branch, but only while it points at one of
// allowed (commits wo made, or the base it started from, so nothing is
// lost) and no worktree has it checked out. A branch that is gone already
// is not an error: deleted reports whether this call deleted it.
func (r *Repo) DeleteBranch(branch string, allowed []plumbing.Hash) (deleted bool, err error) {
	defer r.lockRefs()()
	tip, exists, err := r.branchHash(branch)
	if err != nil || !exists {
		return false, err
	}
	if !slices.Contains(allowed, tip) {
		return false, &BranchMovedError{Branch: branch, Where: "local", Tip: tip, Want: allowed}
	}
	if where, ok := r.CheckedOutAt(branch); ok {
		return false, &CheckedOutError{Branch: branch, Where: where}
	}
	if err := r.repo.Storer.RemoveReference(plumbing.NewBranchReferenceName(branch)); err != nil {
		return false, fmt.Errorf("deleting branch %s: %w", branch, err)
	}
	// Its configuration (upstream, if any) goes with it, as with git branch -d.
	if err := r.repo.DeleteBranch(branch); err != nil && !errors.Is(err, git.ErrBranchNotFound) {
		return true, fmt.Errorf("branch %s was deleted, but not its configuration: %w", branch, err)
	}
	return true, nil
}

// RemoteOptions say which remote branch to look at, fetch or delete.
type RemoteOptions struct {
	Remote    string // origin when empty
	Branch    string
	Token     string // as in PushOptions: sent only to the GitHub it belongs to
	GitHubAPI string
	Timeout   time.Duration // DefaultNetworkTimeout when zero
	// Stall, as in PushOptions: a remote that moves no byte for it is
	// given up on (DefaultStall when zero).
	Stall time.Duration
	// ExpectURL, as in PushOptions: ReadRemote asks no other remote.
	ExpectURL string
	// BeforeDelete, when set, is called between DeleteRemoteBranch's check
	// of the tip and the push that deletes: a point for tests to push at.
	BeforeDelete func()
}

// remoteConn is a remote ready to talk to.
type remoteConn struct {
	remote  *git.Remote
	shown   string // its URL without credentials
	auth    transport.AuthMethod
	secrets *redact.Secrets
	timeout time.Duration
	stall   time.Duration
	// withheld says why the token was not sent to this remote, if it was
	// not: a failure there says so.
	withheld string
}

func (r *Repo) connect(o RemoteOptions) (*remoteConn, error) {
	if o.Remote == "" {
		o.Remote = "origin"
	}
	remote, err := r.repo.Remote(o.Remote)
	if err != nil {
		return nil, fmt.Errorf("%s has no remote %q: add it with git remote add, or set context.remote", r.Path, o.Remote)
	}
	rawURL := remote.Config().URLs[0]
	token, withheld := CredentialsFor(rawURL, o.GitHubAPI, o.Token)
	auth, err := authFor(rawURL, token)
	if err != nil {
		return nil, err
	}
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = DefaultNetworkTimeout
	}
	return &remoteConn{remote: remote, shown: redactURL(rawURL), auth: auth, secrets: redact.New().Token(o.Token), timeout: timeout, stall: o.Stall, withheld: withheld}, nil
}

// bound bounds ctx for one operation on the remote: the network timeout,
// and the stall watch. The caller calls the function it returns when done.
func (c *remoteConn) bound(ctx context.Context) (context.Context, func()) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	ctx, stop := watchStalls(ctx, c.stall)
	return ctx, func() { stop(); cancel() }
}

// proxy is what the operation's go-git options name as the proxy: the
// stall watch's dialer for SSH.
func (c *remoteConn) proxy(ctx context.Context) transport.ProxyOptions {
	ep, err := transport.NewEndpoint(c.remote.Config().URLs[0])
	if err != nil {
		return transport.ProxyOptions{}
	}
	return proxyOptions(ctx, ep)
}

func (c *remoteConn) fail(ctx context.Context, doing string, err error) error {
	if limit, ok := stalled(ctx); ok {
		return &StalledError{Doing: doing + " on " + c.shown, Limit: limit}
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("%s on %s: the remote did not answer within %s; check that it answers, or raise --git-timeout (WO_GIT_TIMEOUT)", doing, c.shown, c.timeout)
	}
	if c.withheld != "" {
		return fmt.Errorf("%s on %s: %s (%s)", doing, c.shown, c.secrets.String(err.Error()), c.withheld)
	}
	return fmt.Errorf("%s on %s: %s", doing, c.shown, c.secrets.String(err.Error()))
}

// RemoteBranchTip reads where the remote branch points now; exists is
// false when the remote has no such branch.
func (r *Repo) RemoteBranchTip(ctx context.Context, o RemoteOptions) (tip plumbing.Hash, exists bool, err error) {
	c, err := r.connect(o)
	if err != nil {
		return plumbing.ZeroHash, false, err
	}
	ctx, done := c.bound(ctx)
	defer done()
	refs, err := c.remote.ListContext(ctx, &git.ListOptions{Auth: c.auth, ProxyOptions: c.proxy(ctx)})
	if errors.Is(err, transport.ErrEmptyRemoteRepository) {
		return plumbing.ZeroHash, false, nil
	}
	if err != nil {
		return plumbing.ZeroHash, false, c.fail(ctx, "reading branch "+o.Branch, err)
	}
	name := plumbing.NewBranchReferenceName(o.Branch)
	for _, ref := range refs {
		if ref.Name() == name && ref.Type() == plumbing.HashReference {
			return ref.Hash(), true, nil
		}
	}
	return plumbing.ZeroHash, false, nil
}

// DeleteRemoteBranch deletes the remote branch only while it is still at
// expect (the commit wo pushed): the remote checks it as it deletes, so a
// push that lands in between is never lost. A branch at another commit is
// a *BranchMovedError; one that is gone already is not an error, and
// deleted reports whether this call deleted it.
func (r *Repo) DeleteRemoteBranch(ctx context.Context, o RemoteOptions, expect plumbing.Hash) (deleted bool, err error) {
	tip, exists, err := r.RemoteBranchTip(ctx, o)
	if err != nil || !exists {
		return false, err
	}
	c, err := r.connect(o)
	if err != nil {
		return false, err
	}
	if tip != expect {
		return false, &BranchMovedError{Branch: o.Branch, Where: c.shown, Tip: tip, Want: []plumbing.Hash{expect}}
	}
	if o.BeforeDelete != nil {
		o.BeforeDelete()
	}
	ctx, done := c.bound(ctx)
	defer done()
	ref := plumbing.NewBranchReferenceName(o.Branch)
	err = c.remote.PushContext(ctx, &git.PushOptions{
		RemoteName: c.remote.Config().Name,
		RefSpecs:   []config.RefSpec{config.RefSpec(":" + ref.String())},
		// The lease: the remote must still advertise the branch at expect,
		// and the delete command carries expect as the old value, which the
		// remote checks under its ref lock.
		RequireRemoteRefs: []config.RefSpec{config.RefSpec(expect.String() + ":" + ref.String())},
		Auth:              c.auth,
		ProxyOptions:      c.proxy(ctx),
	})
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, git.NoErrAlreadyUpToDate):
		return false, nil
	case strings.Contains(err.Error(), "but is absent"):
		return false, nil
	case strings.Contains(err.Error(), "required to be"):
		now, _, rerr := r.RemoteBranchTip(ctx, o)
		if rerr != nil {
			return false, rerr
		}
		return false, &BranchMovedError{Branch: o.Branch, Where: c.shown, Tip: now, Want: []plumbing.Hash{expect}}
	}
	return false, c.fail(ctx, "deleting branch "+o.Branch, err)
}
