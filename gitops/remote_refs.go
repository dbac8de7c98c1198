package gitops

import (
	"context"
	"errors"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/transport"
)

// RemoteView is what a remote advertises, as a push sees it first (git
// ls-remote): where the branch is, and the commits its references point
// at, which it has with all their history.
type RemoteView struct {
	URL    string        // without credentials
	Tip    plumbing.Hash // the branch's commit; zero when Exists is false
	Exists bool
	Tips   []plumbing.Hash // every commit a reference of the remote points at
}

// ReadRemote asks the remote for its references (a remote whose URL is
// not o.ExpectURL, when set, is not asked: a *RemoteMovedError). Nothing in this
// repository (the remote-tracking branches, the task's record) is taken
// for what the remote has: both can be written by whoever shares .git.
func (r *Repo) ReadRemote(ctx context.Context, o RemoteOptions) (RemoteView, error) {
	c, err := r.connect(o)
	if err != nil {
		return RemoteView{}, err
	}
	if o.ExpectURL != "" && c.shown != o.ExpectURL {
		return RemoteView{}, &RemoteMovedError{Remote: c.remote.Config().Name, Branch: o.Branch, Now: c.shown, Before: o.ExpectURL}
	}
	view := RemoteView{URL: c.shown}
	ctx, done := c.bound(ctx)
	defer done()
	refs, err := c.remote.ListContext(ctx, &git.ListOptions{Auth: c.auth, ProxyOptions: c.proxy(ctx)})
	if errors.Is(err, transport.ErrEmptyRemoteRepository) {
		return view, nil
	}
	if err != nil {
		return RemoteView{}, c.fail(ctx, "reading branch "+o.Branch, err)
	}
	name := plumbing.NewBranchReferenceName(o.Branch)
	for _, ref := range refs {
		if ref.Type() != plumbing.HashReference {
			continue
		}
		view.Tips = append(view.Tips, ref.Hash())
		if ref.Name() == name {
			view.Tip, view.Exists = ref.Hash(), true
		}
	}
	return view, nil
}

// LineBase is the commit where tip's history joins what the remote has
// (the commits its references point at, and their history): the commits
// after it are the ones a push of tip sends. They must be a line of
// commits of one parent each (a NotALineError otherwise), so that each
// one can be checked against its parent. It is tip itself when the remote
// has tip already.
func (r *Repo) LineBase(tip plumbing.Hash, remoteTips []plumbing.Hash) (plumbing.Hash, error) {
	v := r.verified()
	set, err := commitsToSend(v, tip, remoteTips)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	// Walk the line down from tip while the remote lacks the commit: each
	// has one parent, and the walk ends at a commit the remote has.
	h := tip
	for c, ok := set.send[h]; ok; c, ok = set.send[h] {
		switch len(c.ParentHashes) {
		case 0:
			return plumbing.ZeroHash, &NotALineError{Tip: tip, At: h, Root: true, Reason: "is a root commit: nothing the remote has is under it"}
		case 1:
		default:
			return plumbing.ZeroHash, &NotALineError{Tip: tip, At: h, Reason: "is a merge: what is pushed must be commits of one parent each"}
		}
		h = c.ParentHashes[0]
	}
	return h, nil
}
