package gitops

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/capability"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/plumbing/transport/client"
)

// errUpToDate says the remote branch is at the local commit already.
var errUpToDate = errors.New("already up to date")

// errNotFastForward says the remote branch moved where this push may not
// follow (not an ancestor, or not the lease).
var errNotFastForward = errors.New("non-fast-forward")

// sendBranch pushes one branch as git send-pack does, but picks the
// objects to send the way git does too: the commits the remote lacks,
// found by walking back from the local tip and from the remote's tips at
// once until only commits the remote has are left, and of those commits'
// trees only what their parents' trees lack. go-git's own push instead
// lists every object reachable from every remote branch, a walk over the
// remote's whole history at every push.
func (r *Repo) sendBranch(ctx context.Context, remote *config.RemoteConfig, url string, auth transport.AuthMethod,
	branch string, local plumbing.Hash, lease *plumbing.Hash, progress io.Writer, stall time.Duration) error {
	// A remote that stops moving bytes is given up on after stall, however
	// long the whole push may take: from the first request (the reference
	// advertisement) to the remote's last word on the pack.
	ctx, stop := watchStalls(ctx, stall)
	defer stop()
	err := r.sendBranchWatched(ctx, remote, url, auth, branch, local, lease, progress)
	if _, ok := stalled(ctx); ok && err != nil {
		return ErrStalled
	}
	return err
}

func (r *Repo) sendBranchWatched(ctx context.Context, remote *config.RemoteConfig, url string, auth transport.AuthMethod,
	branch string, local plumbing.Hash, lease *plumbing.Hash, progress io.Writer) error {
	sess, ar, err := openReceivePack(ctx, url, auth)
	if err != nil {
		return err
	}
	defer sess.Close()
	name := plumbing.NewBranchReferenceName(branch)
	old, haves, err := remoteTip(ar, name)
	if err != nil {
		return err
	}
	if old == local {
		return errUpToDate
	}
	// Every object read to choose what to send, and every object sent, is
	// hashed as it is read: a forged object is never sent as the one it
	// replaced.
	st := r.verified()
	switch {
	case lease != nil && old != *lease:
		return errNotFastForward
	case lease == nil && !old.IsZero():
		if ok, err := descends(st, local, old); err != nil || !ok {
			return errors.Join(errNotFastForward, err)
		}
	}
	missing, err := commitsToSend(st, local, haves)
	if err != nil {
		return err
	}
	hashes, err := objectsToSend(st, missing)
	if err != nil {
		return err
	}
	cfg, err := r.repo.Storer.Config()
	if err != nil {
		return err
	}
	update := &packp.Command{Name: name, Old: old, New: local}
	if err := sendPack(ctx, sess, ar, update, st, hashes, cfg.Pack.Window, progress); err != nil {
		return err
	}
	// The remote-tracking branch follows, as git push updates it.
	for _, spec := range remote.Fetch {
		if spec.Match(name) {
			if err := r.repo.Storer.SetReference(plumbing.NewHashReference(spec.Dst(name), local)); err != nil {
				return err
			}
		}
	}
	return nil
}

// openReceivePack opens a receive-pack session with the remote at url
// (watched for stalls when ctx carries a watch) and reads the references it
// advertises. The caller closes the session.
func openReceivePack(ctx context.Context, url string, auth transport.AuthMethod) (transport.ReceivePackSession, *packp.AdvRefs, error) {
	ep, err := transport.NewEndpoint(url)
	if err != nil {
		return nil, nil, err
	}
	ep.Proxy = proxyOptions(ctx, ep)
	cl, err := client.NewClient(ep)
	if err != nil {
		return nil, nil, err
	}
	sess, err := cl.NewReceivePackSession(ep, auth)
	if err != nil {
		return nil, nil, err
	}
	ar, err := sess.AdvertisedReferencesContext(ctx)
	if err != nil {
		sess.Close()
		return nil, nil, err
	}
	return sess, ar, nil
}

// remoteTip is where the remote's branch name is (zero when it has none),
// and every commit the remote's references name: what it has.
func remoteTip(ar *packp.AdvRefs, name plumbing.ReferenceName) (plumbing.Hash, []plumbing.Hash, error) {
	remoteRefs, err := ar.AllReferences()
	if err != nil {
		return plumbing.ZeroHash, nil, err
	}
	old := plumbing.ZeroHash
	if ref, err := remoteRefs.Reference(name); err == nil {
		if ref.Type() != plumbing.HashReference {
			return plumbing.ZeroHash, nil, fmt.Errorf("the remote's %s is a symbolic reference", name)
		}
		old = ref.Hash()
	}
	var haves []plumbing.Hash
	iter, err := remoteRefs.IterReferences()
	if err != nil {
		return plumbing.ZeroHash, nil, err
	}
	iter.ForEach(func(ref *plumbing.Reference) error {
		if ref.Type() == plumbing.HashReference {
			haves = append(haves, ref.Hash())
		}
		return nil
	})
	return old, haves, nil
}

// sendPack sends the reference update with a pack of the objects hashes,
// read from st as they are encoded, and reads the remote's answer.
func sendPack(ctx context.Context, sess transport.ReceivePackSession, ar *packp.AdvRefs, update *packp.Command, st *verifiedObjects,
	hashes []plumbing.Hash, window uint, progress io.Writer) error {
	req := packp.NewReferenceUpdateRequestFromCapabilities(ar.Capabilities)
	// The server's progress (resolving deltas, checking objects) is asked
	// for even when nobody reads it: on a large push it is what shows the
	// stall watch that the server is still at work.
	if progress == nil {
		progress = io.Discard
	}
	req.Progress = progress
	if ar.Capabilities.Supports(capability.Sideband64k) {
		req.Capabilities.Set(capability.Sideband64k)
	} else if ar.Capabilities.Supports(capability.Sideband) {
		req.Capabilities.Set(capability.Sideband)
	}
	req.Commands = []*packp.Command{update}
	rd, wr := io.Pipe()
	req.Packfile = rd
	done := make(chan error, 1)
	go func() {
		_, err := packfile.NewEncoder(wr, st, !ar.Capabilities.Supports(capability.OFSDelta)).Encode(hashes, window)
		if err != nil {
			// The pack ends short, without its checksum, which the
			// remote refuses whole. A read error instead would leave
			// a local receive-pack waiting for the rest, and the
			// session waiting for it.
			wr.Close()
			done <- err
			return
		}
		done <- wr.Close()
	}()
	rs, err := sess.ReceivePack(ctx, req)
	if err != nil {
		rd.Close()
		// A forged object stops the encoder: say which, not how the pipe broke.
		return cmpOr(st.firstForged(), err)
	}
	if err := <-done; err != nil {
		return cmpOr(st.firstForged(), err)
	}
	if rs != nil {
		return rs.Error()
	}
	return nil
}

// commitQueue orders commits newest first, as git's revision walk does.
type commitQueue []*object.Commit

func (q commitQueue) Len() int { return len(q) }
func (q commitQueue) Less(i, j int) bool {
	return q[i].Committer.When.After(q[j].Committer.When)
}
func (q commitQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *commitQueue) Push(x any)   { *q = append(*q, x.(*object.Commit)) }
func (q *commitQueue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}

// commitsToSend walks from tip and from the remote's tips (haves) newest
// first, marking what the remote has, and stops as soon as every commit
// left to look at is one it has. It returns the commits the remote lacks,
// and the remote's commits at their edge, whose trees the remote has in
// full. Haves this repository does not know are skipped: the remote has
// them, but nothing here builds on them.
func commitsToSend(st storer.EncodedObjectStorer, tip plumbing.Hash, haves []plumbing.Hash) (commitSet, error) {
	set := commitSet{send: map[plumbing.Hash]*object.Commit{}, edge: map[plumbing.Hash]*object.Commit{}}
	shallow, err := shallowCommits(st)
	if err != nil {
		return set, err
	}
	w := &sendWalk{st: st, has: map[plumbing.Hash]bool{}, seen: map[plumbing.Hash]bool{}, queued: map[plumbing.Hash]bool{}, q: &commitQueue{}}
	for _, h := range haves {
		w.mark(h)
		if err := w.push(h, true); err != nil {
			return set, err
		}
	}
	if err := w.push(tip, false); err != nil {
		return set, err
	}
	for w.q.Len() > 0 && w.ours > 0 {
		c := heap.Pop(w.q).(*object.Commit)
		w.queued[c.Hash] = false
		theirs := w.has[c.Hash]
		if !theirs {
			w.ours--
			set.send[c.Hash] = c
		}
		if shallow[c.Hash] {
			continue
		}
		for _, p := range c.ParentHashes {
			if theirs {
				w.mark(p) // below a commit the remote has: the remote's
			}
			if err := w.push(p, theirs); err != nil {
				return set, err
			}
		}
	}
	// A commit found to be the remote's after it was listed is not sent.
	for h := range set.send {
		if w.has[h] {
			delete(set.send, h)
		}
	}
	return set, set.findEdge(st, shallow)
}

// sendWalk is the state of commitsToSend's walk: what the remote has,
// what was seen and is queued, and how many queued commits are not known
// to be the remote's (ours).
type sendWalk struct {
	st                storer.EncodedObjectStorer
	has, seen, queued map[plumbing.Hash]bool
	ours              int
	q                 *commitQueue
}

// mark notes that the remote has h.
func (w *sendWalk) mark(h plumbing.Hash) {
	if !w.has[h] && w.queued[h] {
		w.ours--
	}
	w.has[h] = true
}

// push queues commit h, once; one of the remote's (theirs) that this
// repository does not know is skipped.
func (w *sendWalk) push(h plumbing.Hash, theirs bool) error {
	if w.seen[h] {
		return nil
	}
	c, err := object.GetCommit(w.st, h)
	if errors.Is(err, plumbing.ErrObjectNotFound) && theirs {
		return nil
	}
	if err != nil {
		return err
	}
	w.seen[h], w.queued[h] = true, true
	if !w.has[h] {
		w.ours++
	}
	heap.Push(w.q, c)
	return nil
}

// shallowCommits are the commits at the edge of a shallow clone: they
// have no parents here, so the walk stops at them, as git's does, and the
// remote, which has their history or refuses the push, is sent their
// whole trees.
func shallowCommits(st storer.EncodedObjectStorer) (map[plumbing.Hash]bool, error) {
	shallow := map[plumbing.Hash]bool{}
	ss, ok := st.(interface {
		Shallow() ([]plumbing.Hash, error)
	})
	if !ok {
		return shallow, nil
	}
	list, err := ss.Shallow()
	if err != nil {
		return nil, fmt.Errorf("reading the shallow clone's boundary: %w", err)
	}
	for _, h := range list {
		shallow[h] = true
	}
	return shallow, nil
}

// findEdge fills in the parents of the commits to send that are not sent
// themselves (but not those of a shallow clone's edge).
func (set commitSet) findEdge(st storer.EncodedObjectStorer, shallow map[plumbing.Hash]bool) error {
	for _, c := range set.send {
		if shallow[c.Hash] {
			continue
		}
		for _, p := range c.ParentHashes {
			if _, ok := set.send[p]; ok {
				continue
			}
			pc, err := object.GetCommit(st, p)
			if err != nil {
				return err
			}
			set.edge[p] = pc
		}
	}
	return nil
}

// commitSet is the commits to send and the remote's commits at their edge.
type commitSet struct {
	send map[plumbing.Hash]*object.Commit
	edge map[plumbing.Hash]*object.Commit
}

// descends reports whether tip has old among its ancestors (or is old).
func descends(st storer.EncodedObjectStorer, tip, old plumbing.Hash) (bool, error) {
	c, err := object.GetCommit(st, tip)
	if err != nil {
		return false, err
	}
	found := false
	err = object.NewCommitPreorderIter(c, nil, nil).ForEach(func(c *object.Commit) error {
		if c.Hash == old {
			found = true
			return storer.ErrStop
		}
		return nil
	})
	return found, err
}

// objectsToSend lists the commits, and the trees and blobs of their trees
// that the edge commits' trees lack. A subtree whose hash the remote has
// is skipped whole, so only the changed paths are read.
func objectsToSend(st storer.EncodedObjectStorer, set commitSet) ([]plumbing.Hash, error) {
	has := map[plumbing.Hash]bool{}
	var markTree func(h plumbing.Hash) error
	markTree = func(h plumbing.Hash) error {
		if has[h] {
			return nil
		}
		has[h] = true
		t, err := object.GetTree(st, h)
		if err != nil {
			return err
		}
		for _, e := range t.Entries {
			if e.Mode == filemode.Dir {
				if err := markTree(e.Hash); err != nil {
					return err
				}
			} else {
				has[e.Hash] = true
			}
		}
		return nil
	}
	for _, c := range set.edge {
		if err := markTree(c.TreeHash); err != nil {
			return nil, err
		}
	}
	var out []plumbing.Hash
	var addTree func(h plumbing.Hash) error
	addTree = func(h plumbing.Hash) error {
		if has[h] {
			return nil
		}
		has[h] = true
		out = append(out, h)
		t, err := object.GetTree(st, h)
		if err != nil {
			return err
		}
		for _, e := range t.Entries {
			switch {
			case e.Mode == filemode.Dir:
				if err := addTree(e.Hash); err != nil {
					return err
				}
			case e.Mode == filemode.Submodule, has[e.Hash]:
			default:
				has[e.Hash] = true
				out = append(out, e.Hash)
			}
		}
		return nil
	}
	for h, c := range set.send {
		out = append(out, h)
		if err := addTree(c.TreeHash); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// cmpOr is the first error that is not nil.
func cmpOr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
