//go:build unix && !wo_osroot

package gitops

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// Everything wo writes or deletes inside a worktree goes through the
// functions of this file. They work relative to an open directory, one
// path component at a time, with O_NOFOLLOW: a symbolic link that the
// repository (or anyone) put in the worktree is never followed, neither at
// the target nor in a parent directory, and no directory is created
// outside the worktree. A link at the target itself is replaced, as git
// replaces it; a link where a directory should be is refused.

// worktreeDir is an open directory of a worktree.
type worktreeDir struct {
	fd   int
	path string // where it is, for messages and stat
}

// openWorktreeRoot opens the worktree's top directory. The root itself may
// be reached through links (the user chose it); nothing below it is.
func openWorktreeRoot(path string) (worktreeDir, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return worktreeDir{fd: -1}, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return worktreeDir{fd: fd, path: path}, nil
}

// closedDir is a worktreeDir that is not open.
func closedDir() worktreeDir { return worktreeDir{fd: -1} }

func (d worktreeDir) isOpen() bool { return d.fd >= 0 }

func (d worktreeDir) close() {
	if d.fd >= 0 {
		unix.Close(d.fd)
	}
}

// describeAt says what is at name in dir, for an error message.
func describeAt(dir int, name string) string {
	var st unix.Stat_t
	if err := unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return "unreadable (" + err.Error() + ")"
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFLNK:
		buf := make([]byte, 4096)
		n, err := unix.Readlinkat(dir, name, buf)
		if err != nil {
			return "a symbolic link"
		}
		return fmt.Sprintf("a symbolic link to %q", buf[:n])
	case unix.S_IFDIR:
		return "a directory"
	case unix.S_IFREG:
		return "a file"
	default:
		return "a special file"
	}
}

// openDir opens the directory rel ("a/b", or "" for the root itself) below
// root without following links. With create, missing directories are made
// (inside root only); without, a missing one gives an error wrapping
// fs.ErrNotExist. op and target say what the directory is for, for the
// error message.
func (root worktreeDir) openDir(rel string, create bool, op, target string) (worktreeDir, error) {
	if rel == "" || rel == "." {
		fd, err := unix.Openat(root.fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return worktreeDir{fd: -1}, &os.PathError{Op: "open", Path: root.path, Err: err}
		}
		return worktreeDir{fd: fd, path: root.path}, nil
	}
	cur := root.fd
	closeCur := func() {
		if cur != root.fd {
			unix.Close(cur)
		}
	}
	done := 0
	for done < len(rel) {
		end := strings.IndexByte(rel[done:], '/')
		if end < 0 {
			end = len(rel)
		} else {
			end += done
		}
		name := rel[done:end]
		fd, err := openDirAt(cur, name)
		if errors.Is(err, unix.ENOENT) && create {
			if err = unix.Mkdirat(cur, name, 0o755); err == nil || errors.Is(err, unix.EEXIST) {
				fd, err = openDirAt(cur, name)
			}
		}
		if err != nil {
			defer closeCur()
			if errors.Is(err, unix.ENOENT) {
				return worktreeDir{fd: -1}, &os.PathError{Op: "open", Path: filepath.Join(root.path, rel[:end]), Err: os.ErrNotExist}
			}
			if found := describeAt(cur, name); found != "a directory" {
				return worktreeDir{fd: -1}, &UnsafePathError{Op: op, Path: target, At: rel[:end], Found: found}
			}
			return worktreeDir{fd: -1}, &os.PathError{Op: "open", Path: filepath.Join(root.path, rel[:end]), Err: err}
		}
		closeCur()
		cur = fd
		done = end + 1
	}
	return worktreeDir{fd: cur, path: filepath.Join(root.path, filepath.FromSlash(rel))}, nil
}

func openDirAt(dir int, name string) (int, error) {
	for {
		fd, err := unix.Openat(dir, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

// createFile opens name in dir for writing, truncated, with perm if it is
// new. A symbolic link there is removed first and a regular file written
// in its place, as git does; the link's target is never opened.
func (d worktreeDir) createFile(name string, perm uint32) (*os.File, error) {
	flags := unix.O_WRONLY | unix.O_CREAT | unix.O_TRUNC | unix.O_NOFOLLOW | unix.O_CLOEXEC
	fd, err := unix.Openat(d.fd, name, flags, perm)
	if err != nil && !errors.Is(err, unix.ENOENT) && describeAt(d.fd, name) != "a file" {
		// A link (ELOOP; EMLINK on some systems): replace it.
		if uerr := unix.Unlinkat(d.fd, name, 0); uerr == nil {
			fd, err = unix.Openat(d.fd, name, flags|unix.O_EXCL, perm)
		}
	}
	if err != nil {
		return nil, &os.PathError{Op: "create", Path: filepath.Join(d.path, name), Err: err}
	}
	return os.NewFile(uintptr(fd), filepath.Join(d.path, name)), nil
}

// symlink makes name a symbolic link to target, replacing a file or link
// that is there.
func (d worktreeDir) symlink(name, target string) error {
	if err := unix.Unlinkat(d.fd, name, 0); err != nil && !errors.Is(err, unix.ENOENT) {
		return &os.PathError{Op: "replace", Path: filepath.Join(d.path, name), Err: err}
	}
	if err := unix.Symlinkat(target, d.fd, name); err != nil {
		return &os.PathError{Op: "symlink", Path: filepath.Join(d.path, name), Err: err}
	}
	return nil
}

// mkdir makes name a directory; one that is there already is fine, a link
// or file is not.
func (d worktreeDir) mkdir(name string) error {
	err := unix.Mkdirat(d.fd, name, 0o755)
	if err == nil {
		return nil
	}
	if errors.Is(err, unix.EEXIST) && describeAt(d.fd, name) == "a directory" {
		return nil
	}
	return &os.PathError{Op: "mkdir", Path: filepath.Join(d.path, name), Err: err}
}

// remove deletes the file or link name; one that is gone is fine. A link
// is removed itself, never what it points to.
func (d worktreeDir) remove(name string) error {
	err := unix.Unlinkat(d.fd, name, 0)
	if err == nil || errors.Is(err, unix.ENOENT) {
		return nil
	}
	return &os.PathError{Op: "remove", Path: filepath.Join(d.path, name), Err: err}
}
