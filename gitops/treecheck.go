package gitops

import (
	"errors"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/wo-runner/wo/internal/gitname"
)

// UnsafeTreeError is a tree that git fsck rejects and that wo will not
// check out: a crafted tree can carry a write outside the worktree (a link
// named a and a directory a/ in the same tree) or into .git.
type UnsafeTreeError struct {
	Path   string // the entry, from the top of the tree
	Reason string
}

func (e *UnsafeTreeError) Error() string {
	return fmt.Sprintf("the tree has an entry wo will not check out: %q %s (git fsck rejects such trees); the branch may be crafted to write outside the worktree: rewrite it without that entry, or use another branch",
		e.Path, e.Reason)
}

// checkTreeEntries refuses a tree whose entries git would refuse to check
// out: names that are empty, "." or "..", hold '/' or NUL, or are .git in
// any case or spelling that a case-folding or NTFS/HFS+ file system takes
// for .git; and names that occur twice (a link a beside a directory a/).
func checkTreeEntries(prefix string, entries []object.TreeEntry) error {
	var seen map[string]struct{}
	if len(entries) > 1 {
		seen = make(map[string]struct{}, len(entries))
	}
	for _, e := range entries {
		if reason := unsafeName(e.Name); reason != "" {
			return &UnsafeTreeError{Path: prefix + e.Name, Reason: reason}
		}
		if seen != nil {
			if _, dup := seen[e.Name]; dup {
				return &UnsafeTreeError{Path: prefix + e.Name, Reason: "appears twice in one directory (duplicateEntries)"}
			}
			seen[e.Name] = struct{}{}
		}
	}
	return nil
}

// unsafeName says what is wrong with a tree entry's name, or "".
func unsafeName(name string) string {
	switch {
	case name == "":
		return "has an empty name"
	case name == "." || name == "..":
		return "is a '.' or '..' entry"
	case strings.ContainsRune(name, '/'):
		return "has a '/' inside its name"
	case strings.ContainsRune(name, 0):
		return "has a NUL byte inside its name"
	case gitname.IsDotGit(name):
		return "names the .git directory"
	}
	return ""
}

// checkedTrees remembers which trees were checked already in one call.
type checkedTrees map[plumbing.Hash]bool

func (c checkedTrees) check(prefix string, t *object.Tree) error {
	if c[t.Hash] {
		return nil
	}
	if err := checkTreeEntries(prefix, t.Entries); err != nil {
		return err
	}
	c[t.Hash] = true
	return nil
}

// listTree lists every file of a tree, in path order, without reading
// blobs; it refuses a tree with an entry that git would not check out.
func (r *Repo) listTree(tree *object.Tree) ([]treeFile, error) {
	var files []treeFile
	checked := checkedTrees{}
	var walk func(prefix string, t *object.Tree) error
	walk = func(prefix string, t *object.Tree) error {
		if err := checked.check(prefix, t); err != nil {
			return err
		}
		for _, e := range t.Entries {
			if e.Mode != filemode.Dir {
				files = append(files, treeFile{Path: prefix + e.Name, Mode: e.Mode, Hash: e.Hash})
				continue
			}
			sub, err := r.repo.TreeObject(e.Hash)
			if err != nil {
				return fmt.Errorf("%s%s: reading tree %s: %w", prefix, e.Name, e.Hash, err)
			}
			if err := walk(prefix+e.Name+"/", sub); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk("", tree); err != nil {
		return nil, err
	}
	return files, nil
}

// errNotInTree is a path the tree does not hold (or holds as a directory).
var errNotInTree = errors.New("not in the tree")

// findChecked finds the file at slash path p, checking every tree on the
// way as listTree does, so that a crafted tree is refused by name rather
// than checked out in part.
func (r *Repo) findChecked(tree *object.Tree, p string, checked checkedTrees) (*object.TreeEntry, error) {
	t, prefix := tree, ""
	for {
		if err := checked.check(prefix, t); err != nil {
			return nil, err
		}
		name, rest, more := strings.Cut(p, "/")
		var found *object.TreeEntry
		for i := range t.Entries {
			if t.Entries[i].Name == name {
				found = &t.Entries[i]
				break
			}
		}
		switch {
		case found == nil:
			return nil, errNotInTree
		case !more && found.Mode == filemode.Dir:
			return nil, errNotInTree
		case !more:
			return found, nil
		case found.Mode != filemode.Dir:
			return nil, errNotInTree
		}
		sub, err := r.repo.TreeObject(found.Hash)
		if err != nil {
			return nil, fmt.Errorf("%s%s: reading tree %s: %w", prefix, name, found.Hash, err)
		}
		t, prefix, p = sub, prefix+name+"/", rest
	}
}

// CheckCommitTree refuses a commit whose tree holds an entry git would not
// check out (a name twice, .git in any spelling, '..'), so that a run can
// stop before it creates anything from it.
func (r *Repo) CheckCommitTree(h plumbing.Hash) error {
	c, err := r.repo.CommitObject(h)
	if err != nil {
		return fmt.Errorf("%s: reading commit %s: %w", r.Path, h, err)
	}
	tree, err := c.Tree()
	if err != nil {
		return fmt.Errorf("%s: reading the tree of %s: %w", r.Path, h, err)
	}
	_, err = r.listTree(tree)
	return err
}
