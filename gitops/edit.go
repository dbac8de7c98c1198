package gitops

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// FileTooLargeError says a file is larger than wo reads for an edit.
type FileTooLargeError struct {
	Path  string
	Limit int64
}

func (e *FileTooLargeError) Error() string {
	return fmt.Sprintf("%s is larger than the %d bytes wo edits", e.Path, e.Limit)
}

// ReadFile reads the regular file rel (slash-separated, inside the
// worktree) up to limit bytes. The path comes from a review: the file
// itself being a link, missing or not regular is an error, and a folder
// link on the way is followed only within the worktree (os.Root), never
// out of it.
func (w *Worktree) ReadFile(rel string, limit int64) ([]byte, error) {
	if err := checkInside(w.Path, rel); err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(w.Path)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	fi, err := root.Lstat(filepath.FromSlash(rel))
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (%s): wo reads only regular files for an edit", rel, fi.Mode().Type())
	}
	if fi.Size() > limit {
		return nil, &FileTooLargeError{Path: rel, Limit: limit}
	}
	f, err := root.OpenFile(filepath.FromSlash(rel), os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, &FileTooLargeError{Path: rel, Limit: limit}
	}
	return data, nil
}

// ReplaceFile writes content over the existing regular file rel in the
// worktree, keeping its permissions. It never follows a link: a link on
// the way is refused, and a file that is not there is an error (an edit
// changes a file; it does not make one).
func (w *Worktree) ReplaceFile(rel string, content []byte) error {
	if err := checkInside(w.Path, rel); err != nil {
		return err
	}
	if strings.HasSuffix(rel, "/") || path.Clean(rel) != rel {
		return fmt.Errorf("%q is not a clean path relative to the worktree", rel)
	}
	root, err := openWorktreeRoot(w.Path)
	if err != nil {
		return err
	}
	defer root.close()
	dirName, name := splitPath(rel)
	dir, err := root.openDir(dirName, false, "edit", rel)
	if err != nil {
		return err
	}
	defer dir.close()
	fi, err := os.Lstat(filepath.Join(dir.path, name))
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file (%s): wo edits only regular files", rel, fi.Mode().Type())
	}
	out, err := dir.createFile(name, uint32(fi.Mode().Perm()))
	if err != nil {
		return err
	}
	_, err = out.Write(content)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", rel, err)
	}
	return nil
}

// IsNotExist reports whether err says a file is not there.
func IsNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
