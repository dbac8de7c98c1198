//go:build !unix || wo_osroot

package gitops

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Outside unix (Windows), writes inside a worktree go through os.Root: no
// path, link or ".." can lead outside the worktree. This is weaker than the
// unix version in one way: a parent directory is checked (Lstat) and then
// opened, so a link swapped in between is followed, though only to a place
// inside the worktree. As on unix, a link or a file where a directory
// should be is refused, and a link at the target itself is replaced.

// worktreeDir is an open directory of a worktree.
type worktreeDir struct {
	root *os.Root
	path string // where it is, for messages and stat
}

// openWorktreeRoot opens the worktree's top directory.
func openWorktreeRoot(path string) (worktreeDir, error) {
	r, err := os.OpenRoot(path)
	if err != nil {
		return closedDir(), err
	}
	return worktreeDir{root: r, path: path}, nil
}

// closedDir is a worktreeDir that is not open.
func closedDir() worktreeDir { return worktreeDir{} }

func (d worktreeDir) isOpen() bool { return d.root != nil }

func (d worktreeDir) close() {
	if d.root != nil {
		d.root.Close()
	}
}

// describe says what fi is, for an error message.
func (d worktreeDir) describe(name string, fi fs.FileInfo) string {
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		if target, err := d.root.Readlink(name); err == nil {
			return fmt.Sprintf("a symbolic link to %q", target)
		}
		return "a symbolic link"
	case fi.IsDir():
		return "a directory"
	case fi.Mode().IsRegular():
		return "a file"
	default:
		return "a special file"
	}
}

// openDir opens the directory rel ("a/b", or "" for the root itself) below
// root, refusing a link or a file where a directory should be. With
// create, missing directories are made; without, a missing one gives an
// error wrapping fs.ErrNotExist.
func (root worktreeDir) openDir(rel string, create bool, op, target string) (worktreeDir, error) {
	if rel == "" || rel == "." {
		r, err := root.root.OpenRoot(".")
		if err != nil {
			return closedDir(), err
		}
		return worktreeDir{root: r, path: root.path}, nil
	}
	cur := root
	parts := strings.Split(rel, "/")
	for i, name := range parts {
		at := strings.Join(parts[:i+1], "/")
		fi, err := cur.root.Lstat(name)
		if errors.Is(err, fs.ErrNotExist) && create {
			if err = cur.root.Mkdir(name, 0o755); err == nil || errors.Is(err, fs.ErrExist) {
				fi, err = cur.root.Lstat(name)
			}
		}
		if err == nil && !fi.IsDir() {
			err = &UnsafePathError{Op: op, Path: target, At: at, Found: cur.describe(name, fi)}
		}
		var next *os.Root
		if err == nil {
			next, err = cur.root.OpenRoot(name)
		}
		if cur.root != root.root {
			cur.root.Close()
		}
		if err != nil {
			var unsafe *UnsafePathError
			if errors.Is(err, fs.ErrNotExist) && !errors.As(err, &unsafe) {
				return closedDir(), &os.PathError{Op: "open", Path: filepath.Join(root.path, filepath.FromSlash(at)), Err: os.ErrNotExist}
			}
			return closedDir(), err
		}
		cur = worktreeDir{root: next, path: filepath.Join(root.path, filepath.FromSlash(at))}
	}
	return cur, nil
}

// createFile opens name in d for writing, truncated, with perm if it is
// new. A symbolic link there is removed first and a regular file written
// in its place, as git does.
func (d worktreeDir) createFile(name string, perm uint32) (*os.File, error) {
	if fi, err := d.root.Lstat(name); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		if err := d.root.Remove(name); err != nil {
			return nil, err
		}
	}
	return d.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, fs.FileMode(perm))
}

// symlink makes name a symbolic link to target, replacing a file or link
// that is there.
func (d worktreeDir) symlink(name, target string) error {
	if err := d.root.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return d.root.Symlink(target, name)
}

// mkdir makes name a directory; one that is there already is fine, a link
// or file is not.
func (d worktreeDir) mkdir(name string) error {
	err := d.root.Mkdir(name, 0o755)
	if err == nil {
		return nil
	}
	if fi, lerr := d.root.Lstat(name); errors.Is(err, fs.ErrExist) && lerr == nil && fi.IsDir() {
		return nil
	}
	return err
}

// remove deletes the file or link name; one that is gone is fine.
func (d worktreeDir) remove(name string) error {
	if err := d.root.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
