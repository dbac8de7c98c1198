package gitops

import (
	"errors"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/utils/merkletrie"

	"github.com/wo-runner/wo/internal/gitname"
)

// PathChange is one path that one commit changed.
type PathChange struct {
	Commit plumbing.Hash
	Path   string
	// Mode is what the commit left at the path: the old mode when the
	// commit deleted it.
	Mode    filemode.FileMode
	Size    int64 // the blob's size; 0 for a deletion or a gitlink
	Deleted bool
	// Blob is what the commit left at the path (zero for a deletion).
	Blob plumbing.Hash
	// Before and BeforeMode are what the path held in the commit's
	// parent (zero when the commit added it).
	Before     plumbing.Hash
	BeforeMode filemode.FileMode
}

// NotALineError says a branch is not a line of commits on top of a base:
// its history was rewritten, it came from elsewhere, or it holds a merge.
type NotALineError struct {
	Base, Tip plumbing.Hash
	At        plumbing.Hash // the commit where the walk stopped
	Reason    string
	Root      bool // At is a root commit: nothing under it is Base

}

func (e *NotALineError) Error() string {
	if e.Base.IsZero() {
		return fmt.Sprintf("%s is not a line of commits on top of what the remote has: %s %s", gitname.Short(e.Tip.String()), gitname.Short(e.At.String()), e.Reason)
	}
	return fmt.Sprintf("%s is not a line of commits on top of %s: %s %s", gitname.Short(e.Tip.String()), gitname.Short(e.Base.String()), gitname.Short(e.At.String()), e.Reason)
}

// LineChanges lists what each commit from base (not included) to tip
// changed, oldest first, when tip descends from base through commits of
// one parent each, at most max of them; else a NotALineError. Every tree on
// the way to a changed path is checked as a checkout would check it
// (UnsafeTreeError), since a crafted tree hides a name such as "../x" or
// ".git" from a list of paths.
func (r *Repo) LineChanges(base, tip plumbing.Hash, max int) ([]PathChange, error) {
	// What the gate reads is what a push sends: hashed as it is read.
	v := r.verified()
	line, err := lineOf(v, base, tip, max)
	if err != nil {
		return nil, err
	}
	if len(line) == 0 {
		return nil, nil
	}
	var out []PathChange
	checked := checkedTrees{}
	// Each commit is compared with its parent: base for the oldest, then
	// the commit before it, whose tree was read already.
	from, err := r.commitTree(base)
	if err != nil {
		return nil, err
	}
	for i := len(line) - 1; i >= 0; i-- {
		c := line[i]
		to, err := c.Tree()
		if err != nil {
			return nil, err
		}
		changes, err := object.DiffTree(from, to)
		if err != nil {
			return nil, fmt.Errorf("comparing commit %s with its parent: %w", gitname.Short(c.Hash.String()), err)
		}
		for _, ch := range changes {
			action, err := ch.Action()
			if err != nil {
				return nil, err
			}
			hash := ch.To.TreeEntry.Hash
			pc := PathChange{Commit: c.Hash, Path: ch.To.Name, Mode: ch.To.TreeEntry.Mode, Blob: hash}
			if action == merkletrie.Modify {
				pc.Before, pc.BeforeMode = ch.From.TreeEntry.Hash, ch.From.TreeEntry.Mode
			}
			if action == merkletrie.Delete {
				pc = PathChange{Commit: c.Hash, Path: ch.From.Name, Mode: ch.From.TreeEntry.Mode, Deleted: true}
			} else if err := checkPathTrees(v, to, pc.Path, checked); err != nil {
				return nil, err
			}
			if !pc.Deleted && pc.Mode != filemode.Submodule {
				if pc.Size, err = r.storage.EncodedObjectSize(hash); err != nil {
					return nil, fmt.Errorf("reading %s of commit %s: %w", pc.Path, gitname.Short(c.Hash.String()), err)
				}
			}
			out = append(out, pc)
		}
		from = to
	}
	return out, nil
}

// lineOf is the commits from tip down to base (not included), newest
// first: each of one parent, at most max of them.
func lineOf(v *verifiedObjects, base, tip plumbing.Hash, max int) ([]*object.Commit, error) {
	var line []*object.Commit
	for h := tip; h != base; {
		if len(line) == max {
			return nil, &NotALineError{Base: base, Tip: tip, At: h, Reason: fmt.Sprintf("is more than %d commits away (wo checks at most that many)", max)}
		}
		c, err := object.GetCommit(v, h)
		if err != nil {
			return nil, fmt.Errorf("reading commit %s: %w", h, err)
		}
		switch len(c.ParentHashes) {
		case 0:
			return nil, &NotALineError{Base: base, Tip: tip, At: h, Reason: "is a root commit: the branch does not descend from " + gitname.Short(base.String())}
		case 1:
		default:
			return nil, &NotALineError{Base: base, Tip: tip, At: h, Reason: "is a merge: a fix must be commits of one parent each"}
		}
		line = append(line, c)
		h = c.ParentHashes[0]
	}
	return line, nil
}

// commitTree reads the tree of commit h, hashing what it reads.
func (r *Repo) commitTree(h plumbing.Hash) (*object.Tree, error) {
	c, err := object.GetCommit(r.verified(), h)
	if err != nil {
		return nil, fmt.Errorf("reading commit %s: %w", h, err)
	}
	return c.Tree()
}

// checkPathTrees checks the entries of every tree from root down to the
// one holding path.
func checkPathTrees(st storer.EncodedObjectStorer, root *object.Tree, path string, checked checkedTrees) error {
	t := root
	parts := strings.Split(path, "/")
	for i, name := range parts {
		if err := checked.check(strings.Join(parts[:i], "/")+slashIf(i), t); err != nil {
			return err
		}
		if i == len(parts)-1 {
			return nil
		}
		var next *object.TreeEntry
		for j := range t.Entries {
			if t.Entries[j].Name == name {
				next = &t.Entries[j]
				break
			}
		}
		if next == nil || next.Mode != filemode.Dir {
			return errors.New("the tree of " + path + " has no directory " + strings.Join(parts[:i+1], "/"))
		}
		sub, err := object.GetTree(st, next.Hash)
		if err != nil {
			return err
		}
		t = sub
	}
	return nil
}

// slashIf is the separator after a non-empty prefix of i components.
func slashIf(i int) string {
	if i == 0 {
		return ""
	}
	return "/"
}
