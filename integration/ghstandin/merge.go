package ghstandin

import (
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// Merge methods, as GitHub's merge button and API name them.
const (
	MergeCommit = "merge"
	MergeSquash = "squash"
	MergeRebase = "rebase"
)

// MergeAs merges a pull request the way a person on GitHub would, in the
// bare repository behind repo: a merge commit (two parents), a squash (one
// new commit on the base holding the whole change: git cannot tell it
// equals the branch's commits) or a rebase (the branch's commits copied
// onto the base). With deleteHead, the head branch is deleted as GitHub's
// "Automatically delete head branches" setting (or the merged PR's
// "Delete branch" button) does, and, as GitHub does then, the open pull
// requests based on it are retargeted to the merged one's base. A branch
// deleted any other way (a push, the refs API: DeleteBranch) closes them
// instead, and they cannot be reopened (GitHub's documentation on the
// automatic deletion of branches; cli/cli#14223 shows the API case).
// It returns the base's new tip.
func (s *Server) MergeAs(repo string, number int, method string, deleteHead bool) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.find(repo, strconv.Itoa(number))
	if p == nil || p.State != "open" {
		return "", fmt.Errorf("pull request #%d is not open", number)
	}
	r, err := git.PlainOpen(s.Remotes[repo])
	if err != nil {
		return "", err
	}
	baseRef, err := r.Reference(plumbing.NewBranchReferenceName(p.Base), true)
	if err != nil {
		return "", fmt.Errorf("base %s: %w", p.Base, err)
	}
	headRef, err := r.Reference(plumbing.NewBranchReferenceName(p.Head), true)
	if err != nil {
		return "", fmt.Errorf("head %s: %w", p.Head, err)
	}
	base, err := r.CommitObject(baseRef.Hash())
	if err != nil {
		return "", err
	}
	head, err := r.CommitObject(headRef.Hash())
	if err != nil {
		return "", err
	}
	bases, err := base.MergeBase(head)
	if err != nil || len(bases) == 0 {
		return "", fmt.Errorf("pull request #%d: no common history with %s", number, p.Base)
	}
	st := r.Storer
	when := time.Now()
	sig := object.Signature{Name: "GitHub", Email: "noreply@github.example", When: when}
	var tip plumbing.Hash
	switch method {
	case MergeCommit, MergeSquash:
		tree, err := applyChange(r, bases[0], head, base)
		if err != nil {
			return "", fmt.Errorf("pull request #%d is not mergeable: %w", number, err)
		}
		c := &object.Commit{Author: sig, Committer: sig, TreeHash: tree, ParentHashes: []plumbing.Hash{base.Hash}}
		if method == MergeCommit {
			c.Message = fmt.Sprintf("Merge pull request #%d from %s\n", number, p.Head)
			c.ParentHashes = append(c.ParentHashes, head.Hash)
		} else {
			c.Message = fmt.Sprintf("%s (#%d)\n", p.Title, number)
		}
		if tip, err = writeCommit(st, c); err != nil {
			return "", err
		}
	case MergeRebase:
		var chain []*object.Commit
		for c := head; c.Hash != bases[0].Hash; {
			chain = append([]*object.Commit{c}, chain...)
			if c.NumParents() == 0 {
				break
			}
			if c, err = c.Parent(0); err != nil {
				return "", err
			}
		}
		tip = base.Hash
		for _, c := range chain {
			onto, err := r.CommitObject(tip)
			if err != nil {
				return "", err
			}
			parent, err := c.Parent(0)
			if err != nil {
				return "", err
			}
			tree, err := applyChange(r, parent, c, onto)
			if err != nil {
				return "", fmt.Errorf("pull request #%d cannot be rebased: %w", number, err)
			}
			copied := &object.Commit{Author: c.Author, Committer: sig, Message: c.Message, TreeHash: tree, ParentHashes: []plumbing.Hash{tip}}
			if tip, err = writeCommit(st, copied); err != nil {
				return "", err
			}
		}
	default:
		return "", fmt.Errorf("merge method %q: merge, squash or rebase", method)
	}
	if err := st.SetReference(plumbing.NewHashReference(baseRef.Name(), tip)); err != nil {
		return "", err
	}
	p.State, p.Merged, p.UpdatedAt, p.mergeSHA = "closed", true, time.Now().UTC(), tip.String()
	if deleteHead {
		if err := st.RemoveReference(headRef.Name()); err != nil {
			return "", err
		}
		for _, q := range s.prs[repo] {
			if q.State == "open" && q.Base == p.Head {
				q.Base, q.UpdatedAt = p.Base, time.Now().UTC()
			}
		}
	}
	return tip.String(), nil
}

// DeleteBranch deletes a branch of the bare repository behind repo, as a
// person deleting it by hand or through the API does: GitHub then closes
// the open pull requests based on it (they cannot be reopened).
func (s *Server) DeleteBranch(repo, branch string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := git.PlainOpen(s.Remotes[repo])
	if err != nil {
		return err
	}
	return r.Storer.RemoveReference(plumbing.NewBranchReferenceName(branch))
}

// applyChange is the tree of onto with the change from one commit to
// another applied, path by path; a path that onto changed differently is
// a conflict.
func applyChange(r *git.Repository, from, to, onto *object.Commit) (plumbing.Hash, error) {
	files := func(c *object.Commit) (map[string]object.TreeEntry, error) {
		t, err := c.Tree()
		if err != nil {
			return nil, err
		}
		out := map[string]object.TreeEntry{}
		err = t.Files().ForEach(func(f *object.File) error {
			out[f.Name] = object.TreeEntry{Name: f.Name, Mode: f.Mode, Hash: f.Hash}
			return nil
		})
		return out, err
	}
	a, err := files(from)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	b, err := files(to)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	out, err := files(onto)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	same := func(x, y object.TreeEntry, okX, okY bool) bool { return okX == okY && (!okX || x.Hash == y.Hash) }
	paths := map[string]bool{}
	for p := range a {
		paths[p] = true
	}
	for p := range b {
		paths[p] = true
	}
	var conflicts []string
	base := map[string]object.TreeEntry{}
	for p, e := range out {
		base[p] = e
	}
	for p := range paths {
		x, inA := a[p]
		y, inB := b[p]
		if same(x, y, inA, inB) {
			continue
		}
		z, inOnto := base[p]
		if !same(z, x, inOnto, inA) && !same(z, y, inOnto, inB) {
			conflicts = append(conflicts, p)
			continue
		}
		if inB {
			out[p] = y
		} else {
			delete(out, p)
		}
	}
	if len(conflicts) > 0 {
		sort.Strings(conflicts)
		return plumbing.ZeroHash, fmt.Errorf("conflicts in %v", conflicts)
	}
	return writeTree(r.Storer, out)
}

// writeTree writes the nested trees of a flat path → entry map.
func writeTree(st storer.EncodedObjectStorer, files map[string]object.TreeEntry) (plumbing.Hash, error) {
	type dir struct {
		entries []object.TreeEntry
		subdirs map[string]*dir
	}
	root := &dir{subdirs: map[string]*dir{}}
	for p, e := range files {
		d := root
		parts := splitAll(p)
		for _, name := range parts[:len(parts)-1] {
			next, ok := d.subdirs[name]
			if !ok {
				next = &dir{subdirs: map[string]*dir{}}
				d.subdirs[name] = next
			}
			d = next
		}
		e.Name = parts[len(parts)-1]
		d.entries = append(d.entries, e)
	}
	var write func(d *dir) (plumbing.Hash, error)
	write = func(d *dir) (plumbing.Hash, error) {
		entries := append([]object.TreeEntry(nil), d.entries...)
		for name, sub := range d.subdirs {
			h, err := write(sub)
			if err != nil {
				return plumbing.ZeroHash, err
			}
			entries = append(entries, object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: h})
		}
		key := func(e object.TreeEntry) string {
			if e.Mode == filemode.Dir {
				return e.Name + "/"
			}
			return e.Name
		}
		sort.Slice(entries, func(i, j int) bool { return key(entries[i]) < key(entries[j]) })
		obj := st.NewEncodedObject()
		if err := (&object.Tree{Entries: entries}).Encode(obj); err != nil {
			return plumbing.ZeroHash, err
		}
		return st.SetEncodedObject(obj)
	}
	return write(root)
}

func splitAll(p string) []string {
	var out []string
	start := 0
	for i := 0; i < len(p); i++ {
		if p[i] == '/' {
			out = append(out, p[start:i])
			start = i + 1
		}
	}
	return append(out, p[start:])
}

func writeCommit(st storer.EncodedObjectStorer, c *object.Commit) (plumbing.Hash, error) {
	obj := st.NewEncodedObject()
	if err := c.Encode(obj); err != nil {
		return plumbing.ZeroHash, err
	}
	return st.SetEncodedObject(obj)
}
