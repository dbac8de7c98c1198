package gitops

import (
	"fmt"
	"strings"
)

// What confined.go (unix) and confined_other.go share: the error for a
// path wo refuses, the open-directory cache and path splitting.

// UnsafePathError is a path that wo refuses to write or delete, because a
// symbolic link or a file sits where one of its parent directories should
// be.
type UnsafePathError struct {
	Op    string // "write", "delete"
	Path  string // the path asked for, relative to the worktree
	At    string // the offending parent, relative to the worktree
	Found string // what is there: "a symbolic link to /x", "a file"
}

func (e *UnsafePathError) Error() string {
	why := "git would not either"
	if strings.HasPrefix(e.Found, "a symbolic link") {
		why = fmt.Sprintf("wo does not %s through links, which can lead outside the worktree", e.Op)
	}
	return fmt.Sprintf("refusing to %s %s: %s is %s, not a directory, and %s; remove %s from the branch, or leave %s out of the manifest",
		e.Op, e.Path, e.At, e.Found, why, e.At, e.Path)
}

// dirCache keeps the last directory a writer used open: files arrive in
// path order, so most follow a sibling.
type dirCache struct {
	root worktreeDir
	name string
	dir  worktreeDir
}

func newDirCache(root worktreeDir) *dirCache {
	return &dirCache{root: root, dir: closedDir()}
}

func (c *dirCache) get(rel, op, target string) (worktreeDir, error) {
	if c.dir.isOpen() && c.name == rel {
		return c.dir, nil
	}
	c.dir.close()
	c.dir = closedDir()
	d, err := c.root.openDir(rel, false, op, target)
	if err != nil {
		return d, err
	}
	c.name, c.dir = rel, d
	return d, nil
}

func (c *dirCache) close() { c.dir.close() }

// splitPath splits a slash path into its directory ("" at the top) and
// its last component.
func splitPath(p string) (dir, name string) {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[:i], p[i+1:]
	}
	return "", p
}
