package gitops

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/wo-runner/wo/internal/gitname"
)

// RebuildOptions say how to move a branch of a stack onto a new parent.
type RebuildOptions struct {
	// Head is the branch's commit now; OldParent the commit it was built
	// on (its parent branch's head then); NewParent what it is to be built
	// on now.
	Head, OldParent, NewParent plumbing.Hash
	Message                    string
	Author                     Signature
	When                       time.Time
}

// RebuildResult is what Rebuild made.
type RebuildResult struct {
	Hash plumbing.Hash // the rebuilt commit (Head when Unchanged)
	// Unchanged: the branch already is its part on top of NewParent.
	Unchanged bool
	// Conflicts are the paths the branch changed that NewParent changed
	// differently: a person must settle them.
	Conflicts []string
}

// Rebuild makes the branch's own change, file for file, on top of a new
// parent: every path that differs between OldParent and Head takes Head's
// version (or goes, when Head removed it) over NewParent's tree. This is a
// rebase by construction, not by replaying commits, so a squash merge of
// the parent branch (one new commit git cannot tell equals the old ones)
// meets no phantom conflict: the paths the parent changed are the same in
// NewParent. A path that NewParent changed to something else than both
// OldParent and Head is a conflict; the commit is not made.
func (r *Repo) Rebuild(o RebuildOptions) (RebuildResult, error) {
	if o.NewParent == o.OldParent {
		return RebuildResult{Hash: o.Head, Unchanged: true}, nil
	}
	// Every commit and tree is hashed as it is read: a forged loose object
	// of the head (its file overwritten) would otherwise be rebuilt, and
	// pushed, as the branch's change.
	v := r.verified()
	head, headCommit, err := treeFiles(v, o.Head)
	if err != nil {
		return RebuildResult{}, err
	}
	old, _, err := treeFiles(v, o.OldParent)
	if err != nil {
		return RebuildResult{}, err
	}
	next, _, err := treeFiles(v, o.NewParent)
	if err != nil {
		return RebuildResult{}, err
	}
	out, conflicts := moveChange(head, old, next)
	if len(conflicts) > 0 {
		return RebuildResult{Conflicts: conflicts}, nil
	}
	entries := make([]*index.Entry, 0, len(out))
	for p, e := range out {
		entries = append(entries, &index.Entry{Name: p, Hash: e.Hash, Mode: e.Mode})
	}
	st := r.repo.Storer
	tree, err := writeTrees(st, entries)
	if err != nil {
		return RebuildResult{}, err
	}
	if len(headCommit.ParentHashes) == 1 && headCommit.ParentHashes[0] == o.NewParent && headCommit.TreeHash == tree {
		return RebuildResult{Hash: o.Head, Unchanged: true}, nil
	}
	sig := object.Signature{Name: o.Author.Name, Email: o.Author.Email, When: o.When}
	c := &object.Commit{Author: sig, Committer: sig, Message: strings.TrimRight(o.Message, "\n") + "\n",
		TreeHash: tree, ParentHashes: []plumbing.Hash{o.NewParent}}
	obj := st.NewEncodedObject()
	if err := c.Encode(obj); err != nil {
		return RebuildResult{}, err
	}
	hash, err := st.SetEncodedObject(obj)
	if err != nil {
		return RebuildResult{}, err
	}
	return RebuildResult{Hash: hash}, nil
}

// treeFiles is every entry of commit h's tree but folders, gitlinks
// (submodules) too, by path, and the commit; no blob is read: the tree
// says each one's mode and hash.
func treeFiles(v *verifiedObjects, h plumbing.Hash) (map[string]object.TreeEntry, *object.Commit, error) {
	c, err := object.GetCommit(v, h)
	if err != nil {
		return nil, nil, fmt.Errorf("reading commit %s: %w", gitname.Short(h.String()), err)
	}
	t, err := c.Tree()
	if err != nil {
		return nil, nil, err
	}
	out := map[string]object.TreeEntry{}
	walker := object.NewTreeWalker(t, true, nil)
	defer walker.Close()
	for {
		name, e, err := walker.Next()
		if err == io.EOF {
			return out, c, nil
		}
		if err != nil {
			return nil, nil, fmt.Errorf("reading the tree of %s: %w", gitname.Short(h.String()), err)
		}
		if e.Mode != filemode.Dir {
			out[name] = object.TreeEntry{Name: name, Mode: e.Mode, Hash: e.Hash}
		}
	}
}

// moveChange is next's files with the branch's change (what head changed
// since old) on top, or the paths that next changed otherwise (sorted):
// the conflicts.
func moveChange(head, old, next map[string]object.TreeEntry) (map[string]object.TreeEntry, []string) {
	out := make(map[string]object.TreeEntry, len(next))
	for p, e := range next {
		out[p] = e
	}
	same := func(a, b object.TreeEntry, okA, okB bool) bool {
		return okA == okB && (!okA || (a.Hash == b.Hash && a.Mode == b.Mode))
	}
	paths := map[string]bool{}
	for p := range head {
		paths[p] = true
	}
	for p := range old {
		paths[p] = true
	}
	var conflicts []string
	for p := range paths {
		h, inHead := head[p]
		b, inOld := old[p]
		if same(h, b, inHead, inOld) {
			continue // not the branch's change
		}
		n, inNext := next[p]
		if !same(n, b, inNext, inOld) && !same(n, h, inNext, inHead) {
			conflicts = append(conflicts, p)
			continue
		}
		if inHead {
			out[p] = h
		} else {
			delete(out, p)
		}
	}
	sort.Strings(conflicts)
	return out, conflicts
}

// SetBranch points a local branch at h, if it is still at was (zero: it
// may not exist yet).
func (r *Repo) SetBranch(branch string, h, was plumbing.Hash) error {
	defer r.lockRefs()()
	name := plumbing.NewBranchReferenceName(branch)
	if was.IsZero() {
		return r.repo.Storer.SetReference(plumbing.NewHashReference(name, h))
	}
	if err := r.repo.Storer.CheckAndSetReference(plumbing.NewHashReference(name, h), plumbing.NewHashReference(name, was)); err != nil {
		return fmt.Errorf("moving branch %s to %s: it is no longer at %s: %w", branch, gitname.Short(h.String()), gitname.Short(was.String()), err)
	}
	return nil
}

// Descends reports whether tip has ancestor among its history (or is it).
func (r *Repo) Descends(tip, ancestor plumbing.Hash) (bool, error) {
	return descends(r.verified(), tip, ancestor)
}

// Overlap lists the paths that both changed from base to a and from base
// to b: a base that moved in a branch's own files. Only the trees are
// compared: no file's content is diffed.
func (r *Repo) Overlap(base, a, b plumbing.Hash) ([]string, error) {
	from, err := r.commitTree(base)
	if err != nil {
		return nil, err
	}
	changed := func(to plumbing.Hash) (map[string]bool, error) {
		t, err := r.commitTree(to)
		if err != nil {
			return nil, err
		}
		changes, err := object.DiffTree(from, t)
		if err != nil {
			return nil, err
		}
		out := map[string]bool{}
		for _, ch := range changes {
			if ch.From.Name != "" {
				out[ch.From.Name] = true
			}
			if ch.To.Name != "" {
				out[ch.To.Name] = true
			}
		}
		return out, nil
	}
	x, err := changed(a)
	if err != nil {
		return nil, err
	}
	y, err := changed(b)
	if err != nil {
		return nil, err
	}
	var out []string
	for p := range x {
		if y[p] {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out, nil
}
