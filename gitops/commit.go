package gitops

import (
	"fmt"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// CommitResult says what Commit did.
type CommitResult struct {
	Hash    plumbing.Hash // the branch's commit after the call
	Created bool          // false when there was nothing to commit
}

// Commit records the index as a commit on the worktree's branch (or its
// detached HEAD). When the index equals HEAD's tree there is nothing to
// commit, which is success: after a crash between committing and recording
// it, the rerun finds the commit already there.
func (w *Worktree) Commit(message string, author Signature, when time.Time) (CommitResult, error) {
	defer w.Repo.lockRefs()()
	head, branch, err := w.head()
	if err != nil {
		return CommitResult{}, err
	}
	headCommit, err := w.Repo.Commit(head)
	if err != nil {
		return CommitResult{}, err
	}
	idx, err := w.readIndex()
	if err != nil {
		return CommitResult{}, err
	}
	st := w.Repo.repo.Storer
	treeHash, err := writeTrees(st, idx.Entries)
	if err != nil {
		return CommitResult{}, fmt.Errorf("worktree %s: writing trees: %w", w.Name, err)
	}
	if treeHash == headCommit.TreeHash {
		return CommitResult{Hash: head}, nil
	}
	sig := object.Signature{Name: author.Name, Email: author.Email, When: when}
	c := &object.Commit{
		Author: sig, Committer: sig,
		Message:      strings.TrimRight(message, "\n") + "\n",
		TreeHash:     treeHash,
		ParentHashes: []plumbing.Hash{head},
	}
	obj := st.NewEncodedObject()
	if err := c.Encode(obj); err != nil {
		return CommitResult{}, err
	}
	hash, err := st.SetEncodedObject(obj)
	if err != nil {
		return CommitResult{}, err
	}
	if branch == "" {
		if err := writeFile(w.AdminDir+"/HEAD", hash.String()+"\n"); err != nil {
			return CommitResult{}, err
		}
		return CommitResult{Hash: hash, Created: true}, nil
	}
	name := plumbing.NewBranchReferenceName(branch)
	err = st.CheckAndSetReference(plumbing.NewHashReference(name, hash), plumbing.NewHashReference(name, head))
	if err != nil {
		return CommitResult{}, fmt.Errorf("moving branch %s to the new commit: %w (did someone else commit to it?)", branch, err)
	}
	return CommitResult{Hash: hash, Created: true}, nil
}

// writeTrees builds the tree objects for index entries and returns the root
// tree's hash. Trees that exist already are not written again.
func writeTrees(st storer.EncodedObjectStorer, entries []*index.Entry) (plumbing.Hash, error) {
	children := map[string][]object.TreeEntry{}
	dirs := map[string]bool{"": true}
	for _, e := range entries {
		dir, name := path.Split(e.Name)
		dir = strings.TrimSuffix(dir, "/")
		children[dir] = append(children[dir], object.TreeEntry{Name: name, Mode: e.Mode, Hash: e.Hash})
		for d := dir; d != "" && !dirs[d]; d = parent(d) {
			dirs[d] = true
		}
	}
	// Deepest directories first, so every child tree exists before its parent.
	order := make([]string, 0, len(dirs))
	for d := range dirs {
		order = append(order, d)
	}
	sort.Slice(order, func(i, j int) bool {
		di, dj := strings.Count(order[i], "/"), strings.Count(order[j], "/")
		if order[i] == "" || order[j] == "" {
			return order[j] == ""
		}
		if di != dj {
			return di > dj
		}
		return order[i] < order[j]
	})
	hashes := map[string]plumbing.Hash{}
	for _, d := range order {
		if d != "" {
			children[parent(d)] = append(children[parent(d)], object.TreeEntry{Name: path.Base(d), Mode: filemode.Dir})
		}
	}
	for _, d := range order {
		list := children[d]
		for i := range list {
			if list[i].Mode == filemode.Dir {
				list[i].Hash = hashes[join(d, list[i].Name)]
			}
		}
		sort.Slice(list, func(i, j int) bool { return treeKey(list[i]) < treeKey(list[j]) })
		obj := st.NewEncodedObject()
		if err := (&object.Tree{Entries: list}).Encode(obj); err != nil {
			return plumbing.ZeroHash, err
		}
		h := obj.Hash()
		if st.HasEncodedObject(h) != nil {
			if _, err := st.SetEncodedObject(obj); err != nil {
				return plumbing.ZeroHash, err
			}
		}
		hashes[d] = h
	}
	return hashes[""], nil
}

// treeKey is git's tree order: directories sort as if named "name/".
func treeKey(e object.TreeEntry) string {
	if e.Mode == filemode.Dir {
		return e.Name + "/"
	}
	return e.Name
}

func parent(d string) string {
	if i := strings.LastIndexByte(d, '/'); i >= 0 {
		return d[:i]
	}
	return ""
}

func join(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}
