package gitops

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// NotOwnedError is what cleanup found where the task's worktree should be
// when it cannot prove that it is this task's worktree; nothing was
// deleted.
type NotOwnedError struct {
	Path  string // the worktree's path, or the admin directory
	Found string
}

func (e *NotOwnedError) Error() string {
	return fmt.Sprintf("worktree %s: %s; wo deletes only a worktree it can prove is this task's, so nothing was deleted: look at what is there and remove it yourself if it is stale (git worktree remove), or point context.worktree_root and inputs.worktree_name at this task's worktree",
		e.Path, e.Found)
}

// removal is what Remove has proved to be this worktree's.
type removal struct {
	path     bool // the working directory (or nothing is there)
	admin    bool // .git/worktrees/<name> (or nothing is there)
	complete bool // both, marked complete: check for changes first
}

// provenRemoval finds what at the worktree's path and admin directory is
// provably this worktree's. The working directory is, when its .git file
// names the admin directory (or it is empty); the admin directory is, when
// its gitdir file names the working directory back (or it has none, which
// makes it prunable for git too) and its commondir is this repository's.
// Anything else there is somebody else's, and an error.
func (w *Worktree) provenRemoval() (removal, error) {
	var rm removal
	fi, err := os.Lstat(w.Path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return rm, fmt.Errorf("worktree %s: %w", w.Path, err)
	case fi.Mode()&os.ModeSymlink != 0:
		target, _ := os.Readlink(w.Path)
		return rm, &NotOwnedError{Path: w.Path, Found: fmt.Sprintf("is a symbolic link to %s, not a worktree", target)}
	case !fi.IsDir():
		return rm, &NotOwnedError{Path: w.Path, Found: "is a file, not a worktree"}
	case w.ownsPath() || isEmptyDir(w.Path):
		rm.path = true
	default:
		return rm, &NotOwnedError{Path: w.Path, Found: w.describePath()}
	}

	gitdir, gerr := readRegular(filepath.Join(w.AdminDir, "gitdir"))
	if _, err := os.Lstat(w.AdminDir); err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			return rm, fmt.Errorf("worktree admin files %s: %w", w.AdminDir, err)
		}
		return rm, nil
	}
	if gerr != nil {
		rm.admin = true // incomplete, as a crash leaves it: git would prune it too
		return rm, nil
	}
	other := strings.TrimSpace(string(gitdir))
	if !samePath(other, filepath.Join(w.Path, ".git")) {
		if rm.path {
			return rm, &NotOwnedError{Path: w.Path, Found: fmt.Sprintf("its .git file names %s, but git gives that admin directory to the worktree at %s (this folder is a copy, or the name is used twice)", w.AdminDir, filepath.Dir(other))}
		}
		return rm, nil // the name belongs to another worktree; ours is gone
	}
	if err := w.checkCommonDir(); err != nil {
		return rm, err
	}
	rm.admin = true
	_, ierr := os.Stat(w.indexPath())
	rm.complete = rm.path && ierr == nil
	return rm, nil
}

// checkCommonDir makes sure the admin directory belongs to this
// repository.
func (w *Worktree) checkCommonDir() error {
	b, err := readRegular(filepath.Join(w.AdminDir, "commondir"))
	if err != nil {
		return &NotOwnedError{Path: w.AdminDir, Found: "has no commondir file, so it is not a linked worktree's admin directory"}
	}
	dir := strings.TrimSpace(string(b))
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(w.AdminDir, dir)
	}
	if !samePath(dir, w.Repo.GitDir) {
		return &NotOwnedError{Path: w.AdminDir, Found: fmt.Sprintf("its commondir names %s, not this repository's %s", dir, w.Repo.GitDir)}
	}
	return nil
}

// describePath says what is at the worktree's path instead of a worktree.
func (w *Worktree) describePath() string {
	b, err := readRegular(filepath.Join(w.Path, ".git"))
	if err == nil {
		return fmt.Sprintf("its .git file names %q, not this worktree's admin directory %s", strings.TrimSpace(string(b)), w.AdminDir)
	}
	if fi, err := os.Lstat(filepath.Join(w.Path, ".git")); err == nil && fi.IsDir() {
		return "is a repository of its own (it has a .git directory), not a linked worktree"
	}
	entries, _ := os.ReadDir(w.Path)
	return fmt.Sprintf("is a folder of %d entries with no .git file, not a worktree", len(entries))
}

// CheckRemove reports whether Remove would delete the worktree: what is
// there must be provably this worktree's (see provenRemoval) and on
// branch, or on a detached HEAD when detachedOK (the branch was never
// switched to). Nothing there at all is fine.
func (w *Worktree) CheckRemove(branch string, detachedOK bool) error {
	rm, err := w.provenRemoval()
	if err != nil || !rm.complete {
		return err
	}
	b, err := os.ReadFile(filepath.Join(w.AdminDir, "HEAD"))
	if err != nil {
		return fmt.Errorf("worktree %s: reading HEAD: %w", w.Name, err)
	}
	head := strings.TrimSpace(string(b))
	ref, onBranch := strings.CutPrefix(head, "ref: refs/heads/")
	switch {
	case onBranch && ref == branch:
		return nil
	case !onBranch && detachedOK && plumbing.IsHash(head):
		return nil
	case onBranch:
		return &NotOwnedError{Path: w.Path, Found: fmt.Sprintf("is on branch %s, not this task's branch %s", ref, branch)}
	default:
		return &NotOwnedError{Path: w.Path, Found: fmt.Sprintf("has HEAD %q, not this task's branch %s", head, branch)}
	}
}

// Remove deletes the worktree, refusing when it has changes that are not
// committed, as git worktree remove does, and refusing anything that it
// cannot prove is this worktree (a user's folder at the path, another
// worktree's admin directory of the same name). Removing a worktree that
// is gone is not an error. The branch stays.
func (w *Worktree) Remove() error {
	rm, err := w.provenRemoval()
	if err != nil {
		return err
	}
	if rm.complete {
		changed, err := w.Changes()
		if err != nil {
			return err
		}
		if len(changed) > 0 {
			return fmt.Errorf("worktree %s has changes that are not committed (%s): commit them, or remove it yourself with git worktree remove --force %s",
				w.Path, summarizePaths(changed, 5), w.Path)
		}
		// Unmark it first: a crash while deleting leaves a worktree that
		// is incomplete, which the next attempt deletes without asking.
		if err := os.Remove(filepath.Join(w.AdminDir, "gitdir")); err != nil {
			return err
		}
	}
	return w.removeOwned(rm)
}

// removeOwned deletes what provenRemoval proved ours. The working
// directory is first renamed aside, so that a crash never leaves a
// half-deleted directory at the worktree's path that looks like someone
// else's files; its .git file goes last, so that what a crash leaves
// aside is still recognisably ours.
func (w *Worktree) removeOwned(rm removal) error {
	trash := w.Path + ".wo-removing"
	if _, err := os.Lstat(trash); err == nil { // left by an earlier crash
		switch {
		case w.ownsTrash(trash):
			if err := removeTree(trash); err != nil {
				return fmt.Errorf("removing %s: %w", trash, err)
			}
		case rm.path:
			return &NotOwnedError{Path: trash, Found: "is in the way and is not a worktree that wo was removing"}
		}
	}
	if rm.path {
		if err := os.Rename(w.Path, trash); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("removing worktree %s: %w", w.Path, err)
		}
		if err := removeTree(trash); err != nil {
			return fmt.Errorf("removing worktree %s: %w", w.Path, err)
		}
	}
	if rm.admin {
		if err := os.RemoveAll(w.AdminDir); err != nil {
			return fmt.Errorf("removing worktree admin files %s: %w", w.AdminDir, err)
		}
	}
	return nil
}

// ownsTrash reports whether a directory set aside for deletion is this
// worktree's: its .git file (kept to the last) names our admin directory,
// or nothing is left in it.
func (w *Worktree) ownsTrash(trash string) bool {
	fi, err := os.Lstat(trash)
	if err != nil || !fi.IsDir() {
		return false
	}
	if isEmptyDir(trash) {
		return true
	}
	b, err := readRegular(filepath.Join(trash, ".git"))
	if err != nil {
		b, err = readRegular(filepath.Join(trash, ".git.tmp"))
		return err == nil && strings.HasPrefix("gitdir: "+w.AdminDir+"\n", string(b))
	}
	return strings.TrimSpace(strings.TrimPrefix(string(b), "gitdir:")) == w.AdminDir
}

// removeTree deletes a directory, its .git file last. os.RemoveAll does
// not follow symbolic links.
func removeTree(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.Name() == ".git" || e.Name() == ".git.tmp" {
			continue
		}
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	return os.RemoveAll(dir)
}

func isEmptyDir(dir string) bool {
	f, err := os.Open(dir)
	if err != nil {
		return false
	}
	defer f.Close()
	names, err := f.Readdirnames(1)
	return len(names) == 0 && err != nil
}

// readRegular reads a small file that must be a regular file, not a link.
func readRegular(path string) ([]byte, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	return os.ReadFile(path)
}

// samePath reports whether a and b name the same file or directory.
func samePath(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}
