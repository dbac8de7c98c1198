package gitops

import (
	"errors"
	"fmt"
	"io"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/wo-runner/wo/internal/gitname"
)

// MaxLinkTarget bounds the target of a symbolic link that wo reads from a
// commit: longer than any path a system resolves (PATH_MAX is 4096 on
// Linux), so a longer one is read only that far.
const MaxLinkTarget = 4096

// LinkTarget reads the target of the symbolic link at slash path p in
// commit h; ok is false when the commit holds no link there (nothing, a
// file or a folder). A target over MaxLinkTarget bytes comes back cut to
// MaxLinkTarget+1 bytes, longer than any a check accepts. The trees on the
// way are checked as a checkout checks them (UnsafeTreeError).
func (r *Repo) LinkTarget(h plumbing.Hash, p string) (target string, ok bool, err error) {
	tree, err := r.commitTree(h)
	if err != nil {
		return "", false, err
	}
	e, err := r.findChecked(tree, p, checkedTrees{})
	if errors.Is(err, errNotInTree) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	if e.Mode != filemode.Symlink {
		return "", false, nil
	}
	blob, err := r.repo.BlobObject(e.Hash)
	if err != nil {
		return "", false, fmt.Errorf("reading the link %s of %s: %w", p, gitname.Short(h.String()), err)
	}
	rd, err := blob.Reader()
	if err != nil {
		return "", false, fmt.Errorf("reading the link %s of %s: %w", p, gitname.Short(h.String()), err)
	}
	defer rd.Close()
	b, err := io.ReadAll(io.LimitReader(rd, MaxLinkTarget+1))
	if err != nil {
		return "", false, fmt.Errorf("reading the link %s of %s: %w", p, gitname.Short(h.String()), err)
	}
	return string(b), true, nil
}
