package gitops

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os/user"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/plumbing/transport/http"
	"github.com/go-git/go-git/v5/plumbing/transport/ssh"
)

// PushOptions say where and how to push a branch.
type PushOptions struct {
	Remote string // remote name; origin when empty
	Branch string
	// Lease, when set, allows replacing the remote branch only if it is still
	// at this commit (the last one wo pushed): a rewrite, never a blind force.
	Lease plumbing.Hash
	// Token authenticates HTTPS remotes (as x-access-token); never logged.
	Token    string
	Progress io.Writer
}

// PushResult says what the push did.
type PushResult struct {
	Hash      plumbing.Hash // what the remote branch points to now
	UpToDate  bool          // the remote had it already
	RemoteURL string        // without credentials
}

// NonFastForwardError says the remote branch has commits the local one lacks.
type NonFastForwardError struct {
	Branch, Remote string
}

func (e *NonFastForwardError) Error() string {
	return fmt.Sprintf("remote %s has commits on %s that this branch does not: wo will not overwrite them; pull them into the worktree, or delete the remote branch", e.Remote, e.Branch)
}

// Push sends the local branch to the remote branch of the same name.
func (r *Repo) Push(ctx context.Context, opts PushOptions) (PushResult, error) {
	defer r.lockRefs()()
	if opts.Remote == "" {
		opts.Remote = "origin"
	}
	remote, err := r.repo.Remote(opts.Remote)
	if err != nil {
		return PushResult{}, fmt.Errorf("%s has no remote %q: add it with git remote add, or set context.remote", r.Path, opts.Remote)
	}
	rawURL := remote.Config().URLs[0]
	shown := redactURL(rawURL)
	local, exists, err := r.branchHash(opts.Branch)
	if err != nil {
		return PushResult{}, err
	}
	if !exists {
		return PushResult{}, fmt.Errorf("pushing %s: no local branch %s", opts.Branch, opts.Branch)
	}
	auth, err := authFor(rawURL, opts.Token)
	if err != nil {
		return PushResult{}, err
	}
	ref := plumbing.NewBranchReferenceName(opts.Branch)
	po := &git.PushOptions{
		RemoteName: opts.Remote,
		RefSpecs:   []config.RefSpec{config.RefSpec(ref.String() + ":" + ref.String())},
		Auth:       auth,
	}
	if opts.Progress != nil {
		po.Progress = opts.Progress
	}
	if !opts.Lease.IsZero() {
		po.ForceWithLease = &git.ForceWithLease{RefName: ref, Hash: opts.Lease}
		po.RefSpecs = []config.RefSpec{config.RefSpec("+" + ref.String() + ":" + ref.String())}
	}
	err = remote.PushContext(ctx, po)
	switch {
	case errors.Is(err, git.NoErrAlreadyUpToDate):
		return PushResult{Hash: local, UpToDate: true, RemoteURL: shown}, nil
	case err != nil && strings.Contains(err.Error(), "non-fast-forward"):
		return PushResult{}, &NonFastForwardError{Branch: opts.Branch, Remote: shown}
	case err != nil:
		return PushResult{}, fmt.Errorf("pushing %s to %s: %s", opts.Branch, shown, scrub(err.Error(), opts.Token))
	}
	return PushResult{Hash: local, RemoteURL: shown}, nil
}

// HasRemote reports an error unless the remote (origin when empty) exists.
func (r *Repo) HasRemote(name string) error {
	if name == "" {
		name = "origin"
	}
	if _, err := r.repo.Remote(name); err != nil {
		return fmt.Errorf("%s has no remote %q: add it with git remote add %s URL, or set context.remote", r.Path, name, name)
	}
	return nil
}

// authFor picks the authentication a remote URL needs: the token for HTTPS,
// the SSH agent for SSH, nothing for local paths.
func authFor(rawURL, token string) (transport.AuthMethod, error) {
	ep, err := transport.NewEndpoint(rawURL)
	if err != nil {
		return nil, fmt.Errorf("remote URL %s: %v", redactURL(rawURL), err)
	}
	switch ep.Protocol {
	case "http", "https":
		if token == "" {
			return nil, nil
		}
		return &http.BasicAuth{Username: "x-access-token", Password: token}, nil
	case "ssh":
		name := ep.User
		if name == "" {
			if u, err := user.Current(); err == nil {
				name = u.Username
			}
		}
		auth, err := ssh.NewSSHAgentAuth(name)
		if err != nil {
			return nil, fmt.Errorf("pushing over SSH to %s needs an SSH agent (SSH_AUTH_SOCK): %v", redactURL(rawURL), err)
		}
		return auth, nil
	default:
		return nil, nil
	}
}

// redactURL hides any password in a URL.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	if _, has := u.User.Password(); has {
		u.User = url.UserPassword(u.User.Username(), "REDACTED")
	}
	return u.String()
}

// scrub removes a secret from a message.
func scrub(msg, secret string) string {
	if secret == "" {
		return msg
	}
	return strings.ReplaceAll(msg, secret, "REDACTED")
}
