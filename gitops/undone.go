package gitops

import (
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/wo-runner/wo/internal/gitname"
)

// Undone lists the changes of the commits on tip's line that a push of to
// in tip's place would take back: walking from tip by first parents until
// a commit to descends from (at most max), each path a commit changed
// that to holds as the commit's parent did. A rewrite that replaces a
// commit with another (an amended commit of the same files) takes back
// nothing; one that goes back to an older commit, or leaves out a review
// fix, takes back that fix's change. Commits are hashed as they are read.
func (r *Repo) Undone(tip, to plumbing.Hash, max int) ([]PathChange, error) {
	v := r.verified()
	target, err := r.commitTree(to)
	if err != nil {
		return nil, err
	}
	var out []PathChange
	for h, n := tip, 0; ; n++ {
		if in, err := descends(v, to, h); err != nil {
			return nil, err
		} else if in {
			return out, nil
		}
		if n == max {
			return nil, fmt.Errorf("%s is more than %d commits from where %s joins it: wo looks at no more", gitname.Short(tip.String()), max, gitname.Short(to.String()))
		}
		c, err := object.GetCommit(v, h)
		if err != nil {
			return nil, fmt.Errorf("reading commit %s: %w", h, err)
		}
		tree, err := c.Tree()
		if err != nil {
			return nil, err
		}
		parent := &object.Tree{}
		if len(c.ParentHashes) > 0 {
			if parent, err = r.commitTree(c.ParentHashes[0]); err != nil {
				return nil, err
			}
		}
		changes, err := object.DiffTree(parent, tree)
		if err != nil {
			return nil, err
		}
		for _, ch := range changes {
			name := ch.To.Name
			if name == "" {
				name = ch.From.Name
			}
			before, _ := parent.FindEntry(name)
			now, _ := target.FindEntry(name)
			if sameEntry(before, now) {
				out = append(out, PathChange{Commit: c.Hash, Path: name, Deleted: ch.To.Name == ""})
			}
		}
		if len(c.ParentHashes) == 0 {
			return out, nil
		}
		h = c.ParentHashes[0]
	}
}

// sameEntry reports whether two tree entries (nil: absent) are the same
// file.
func sameEntry(a, b *object.TreeEntry) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Hash == b.Hash && a.Mode == b.Mode
}
