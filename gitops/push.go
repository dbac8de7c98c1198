package gitops

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os/user"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/plumbing/transport/http"
	"github.com/go-git/go-git/v5/plumbing/transport/ssh"

	"github.com/wo-runner/wo/internal/gitname"
	"github.com/wo-runner/wo/redact"
)

// PushOptions say where and how to push a branch.
type PushOptions struct {
	Remote string // remote name; origin when empty
	Branch string
	// Lease, when set, allows replacing the remote branch only if it is still
	// at this commit (the last one wo pushed): a rewrite, never a blind force.
	Lease plumbing.Hash
	// Leased makes Lease exact: the remote branch must be at Lease, or
	// absent when Lease is zero, and may be replaced from there. It is
	// the push gate's lease on the tip it checked the push from: a remote
	// that moved since is not pushed to.
	Leased bool
	// Expect, when set, is the commit the local branch must still be at:
	// what was checked before the push. A branch moved since is not pushed.
	Expect plumbing.Hash
	// ExpectURL, when set, is the remote's URL (without credentials) where
	// wo pushed the branch before: a remote that points elsewhere now (an
	// agent edited the shared .git/config) is not pushed to, with the
	// token or without.
	ExpectURL string
	// Token authenticates HTTPS remotes (as x-access-token); never logged.
	// It is sent only to the GitHub that GitHubAPI names (see
	// CredentialsFor); any other remote gets no credentials.
	Token string
	// GitHubAPI is the GitHub API base URL the token belongs to
	// (https://api.github.com/ when empty).
	GitHubAPI string
	// Timeout bounds the whole push (DefaultNetworkTimeout when zero), so a
	// remote that accepts the connection and never answers cannot hang wo.
	Timeout time.Duration
	// Stall bounds how long a push over the network (HTTP(S), SSH) may
	// move no byte (DefaultStall when zero): a stalled remote ends the push
	// well before Timeout with a *StalledError, a slow but moving one does
	// not.
	Stall    time.Duration
	Progress io.Writer
}

// DefaultNetworkTimeout bounds a git network operation when none is given
// (--git-timeout, WO_GIT_TIMEOUT).
const DefaultNetworkTimeout = 5 * time.Minute

// PushResult says what the push did.
type PushResult struct {
	Hash      plumbing.Hash // what the remote branch points to now
	UpToDate  bool          // the remote had it already
	RemoteURL string        // without credentials
	// Withheld says why the token was not sent to this remote, when there
	// was a token and the remote is not the GitHub it belongs to.
	Withheld string
}

// RemoteMovedError says a remote points elsewhere than where wo pushed the
// branch before.
type RemoteMovedError struct {
	Remote, Branch, Now, Before string
}

func (e *RemoteMovedError) Error() string {
	return fmt.Sprintf("remote %s now points at %s, not at %s where wo pushed %s before: nothing was pushed; check the repository's git config (git remote -v) and set the URL back", e.Remote, e.Now, e.Before, e.Branch)
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
	if opts.ExpectURL != "" && shown != opts.ExpectURL {
		return PushResult{}, &RemoteMovedError{Remote: opts.Remote, Branch: opts.Branch, Now: shown, Before: opts.ExpectURL}
	}
	local, err := r.branchToPush(opts.Branch, opts.Expect)
	if err != nil {
		return PushResult{}, err
	}
	token, withheld := CredentialsFor(rawURL, opts.GitHubAPI, opts.Token)
	auth, err := authFor(rawURL, token)
	if err != nil {
		return PushResult{}, err
	}
	secrets := redact.New().Token(opts.Token)
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = DefaultNetworkTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var lease *plumbing.Hash
	if !opts.Lease.IsZero() || opts.Leased {
		lease = &opts.Lease
	}
	stall := opts.Stall
	if stall <= 0 {
		stall = DefaultStall
	}
	err = r.sendBranch(ctx, remote.Config(), rawURL, auth, opts.Branch, local, lease, opts.Progress, stall)
	var forged *ForgedObjectError
	switch {
	case errors.As(err, &forged):
		return PushResult{}, fmt.Errorf("pushing %s to %s: nothing was pushed: %w", opts.Branch, shown, forged)
	case errors.Is(err, ErrStalled):
		return PushResult{}, &StalledError{Doing: fmt.Sprintf("pushing %s to %s", opts.Branch, shown), Limit: stall}
	case errors.Is(err, errUpToDate):
		return PushResult{Hash: local, UpToDate: true, RemoteURL: shown, Withheld: withheld}, nil
	case errors.Is(err, errNotFastForward) || err != nil && strings.Contains(err.Error(), "non-fast-forward"):
		return PushResult{}, &NonFastForwardError{Branch: opts.Branch, Remote: shown}
	case err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		return PushResult{}, fmt.Errorf("pushing %s to %s: the remote did not finish within %s; check that it answers, or raise --git-timeout (WO_GIT_TIMEOUT)", opts.Branch, shown, timeout)
	case err != nil && withheld != "":
		return PushResult{}, fmt.Errorf("pushing %s to %s: %s (%s)", opts.Branch, shown, secrets.String(err.Error()), withheld)
	case err != nil:
		return PushResult{}, fmt.Errorf("pushing %s to %s: %s", opts.Branch, shown, secrets.String(err.Error()))
	}
	return PushResult{Hash: local, RemoteURL: shown, Withheld: withheld}, nil
}

// branchToPush is where the local branch is: it must exist, and be at
// expect when that is given (where it was when it was checked).
func (r *Repo) branchToPush(branch string, expect plumbing.Hash) (plumbing.Hash, error) {
	local, exists, err := r.branchHash(branch)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if !exists {
		return plumbing.ZeroHash, fmt.Errorf("pushing %s: no local branch %s", branch, branch)
	}
	if !expect.IsZero() && local != expect {
		return plumbing.ZeroHash, fmt.Errorf("pushing %s: the branch is at %s, not at %s as it was when checked; nothing was pushed", branch, gitname.Short(local.String()), gitname.Short(expect.String()))
	}
	return local, nil
}

// CredentialsFor returns the token to send to a remote, and why none is
// sent when there is a token but the remote may not have it. The token
// belongs to one GitHub: it goes to git remotes on that GitHub's web host
// (api.github.com → github.com; GitHub Enterprise https://HOST/api/v3/ →
// HOST) over https, or over plain http when that host is loopback (the
// GitHub stand-in of the tests). A remote elsewhere, or a downgrade to
// plain http, could read the token and replay it.
func CredentialsFor(rawURL, githubAPI, token string) (string, string) {
	if token == "" {
		return "", ""
	}
	ep, err := transport.NewEndpoint(rawURL)
	if err != nil || (ep.Protocol != "http" && ep.Protocol != "https") {
		return "", "" // local paths and SSH never carry the token
	}
	web, scheme, err := WebHost(githubAPI)
	if err != nil {
		return "", fmt.Sprintf("no credentials were sent: %v", err)
	}
	host := hostPort(ep.Host, ep.Port, ep.Protocol)
	switch {
	case !strings.EqualFold(host, web):
		return "", fmt.Sprintf("no credentials were sent to %s: the GitHub token is sent only to %s (the host of --github-api / GITHUB_API_URL)", host, web)
	case ep.Protocol != "https" && !(ep.Protocol == scheme && isLoopback(ep.Host)):
		return "", fmt.Sprintf("no credentials were sent to %s over plain http: use an https:// remote URL", host)
	}
	return token, ""
}

// WebHost derives the GitHub web host (host[:port]) and its scheme from the
// API base URL: https://api.github.com/ gives github.com, a GitHub
// Enterprise https://HOST/api/v3/ gives HOST.
func WebHost(githubAPI string) (host, scheme string, err error) {
	if githubAPI == "" {
		githubAPI = "https://api.github.com/"
	}
	u, err := url.Parse(githubAPI)
	if err != nil || u.Hostname() == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return "", "", fmt.Errorf("GitHub API URL %q is not an http(s) URL", githubAPI)
	}
	name := strings.ToLower(u.Hostname())
	name = strings.TrimPrefix(name, "api.")
	port := 0
	if p := u.Port(); p != "" {
		port, _ = strconv.Atoi(p)
	}
	return hostPort(name, port, u.Scheme), u.Scheme, nil
}

// hostPort writes host and port as a URL does, without the scheme's
// default port.
func hostPort(host string, port int, scheme string) string {
	host = strings.ToLower(host)
	if port == 0 || (scheme == "https" && port == 443) || (scheme == "http" && port == 80) {
		return host
	}
	return net.JoinHostPort(host, strconv.Itoa(port))
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
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
