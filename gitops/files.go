package gitops

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// treeFile is one file of a tree: its path, mode and blob.
type treeFile struct {
	Path string
	Mode filemode.FileMode
	Hash plumbing.Hash
}

// listTree lists every file of a tree, in path order, without reading blobs.
func listTree(tree *object.Tree) ([]treeFile, error) {
	var files []treeFile
	walker := object.NewTreeWalker(tree, true, nil)
	defer walker.Close()
	for {
		name, entry, err := walker.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if entry.Mode == filemode.Dir {
			continue
		}
		files = append(files, treeFile{Path: name, Mode: entry.Mode, Hash: entry.Hash})
	}
	return files, nil
}

// writers is how many goroutines write files at once. Writing is mostly
// waiting on the file system, so more than the CPU count helps.
func writers() int { return max(4, 2*runtime.NumCPU()) }

// writeFiles writes files into the worktree in parallel and returns their
// index entries, stat data included so that git does not rehash them.
func (w *Worktree) writeFiles(ctx context.Context, files []treeFile, progress Progress) ([]*index.Entry, error) {
	// Directories first, once each, so writers never race on MkdirAll.
	dirs := map[string]bool{}
	for _, f := range files {
		if d := filepath.Dir(f.Path); d != "." && !dirs[d] {
			for p := d; p != "." && !dirs[p]; p = filepath.Dir(p) {
				dirs[p] = true
			}
		}
	}
	sorted := make([]string, 0, len(dirs))
	for d := range dirs {
		sorted = append(sorted, d)
	}
	sort.Strings(sorted)
	for _, d := range sorted {
		if err := os.Mkdir(filepath.Join(w.Path, filepath.FromSlash(d)), 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
	}

	entries := make([]*index.Entry, len(files))
	jobs := make(chan int)
	errs := make(chan error, 1)
	var done atomic.Int64
	var wg sync.WaitGroup
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for n := 0; n < writers(); n++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st := w.Repo.newStorage()
			defer st.Close()
			buf := make([]byte, 64<<10)
			for i := range jobs {
				e, err := w.writeOne(st, files[i], buf)
				if err != nil {
					select {
					case errs <- err:
					default:
					}
					cancel()
					continue
				}
				entries[i] = e
				if n := done.Add(1); progress != nil && n%1000 == 0 {
					progress(int(n), len(files))
				}
			}
		}()
	}
feed:
	for i := range files {
		select {
		case jobs <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	select {
	case err := <-errs:
		return nil, err
	default:
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if progress != nil {
		progress(len(files), len(files))
	}
	return entries, nil
}

// writeOne writes one blob to its path and returns its index entry.
func (w *Worktree) writeOne(st *filesystem.Storage, f treeFile, buf []byte) (*index.Entry, error) {
	target := filepath.Join(w.Path, filepath.FromSlash(f.Path))
	entry := &index.Entry{Name: f.Path, Hash: f.Hash, Mode: f.Mode}
	switch f.Mode {
	case filemode.Submodule:
		if err := os.MkdirAll(target, 0o755); err != nil {
			return nil, err
		}
		return entry, nil
	case filemode.Symlink:
		content, err := readBlob(st, f.Hash)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.Path, err)
		}
		os.Remove(target)
		if err := os.Symlink(string(content), target); err != nil {
			return nil, err
		}
	default:
		perm := os.FileMode(0o644)
		if f.Mode == filemode.Executable {
			perm = 0o755
		}
		obj, err := st.EncodedObject(plumbing.BlobObject, f.Hash)
		if err != nil {
			return nil, fmt.Errorf("%s: reading blob %s: %w", f.Path, f.Hash, err)
		}
		r, err := obj.Reader()
		if err != nil {
			return nil, err
		}
		out, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
		if err != nil {
			r.Close()
			return nil, err
		}
		_, err = io.CopyBuffer(onlyWriter{out}, r, buf)
		r.Close()
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, fmt.Errorf("writing %s: %w", target, err)
		}
	}
	fi, err := os.Lstat(target)
	if err != nil {
		return nil, err
	}
	fillStat(entry, fi)
	return entry, nil
}

// onlyWriter hides ReadFrom so io.CopyBuffer uses the buffer it is given.
type onlyWriter struct{ io.Writer }

func readBlob(st *filesystem.Storage, h plumbing.Hash) ([]byte, error) {
	obj, err := st.EncodedObject(plumbing.BlobObject, h)
	if err != nil {
		return nil, err
	}
	r, err := obj.Reader()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}

// MissingFilesError lists manifest files that the source commit lacks.
type MissingFilesError struct {
	Source string
	Files  []string
}

func (e *MissingFilesError) Error() string {
	return fmt.Sprintf("%d file(s) of the manifest do not exist at %s: %s; fix inputs.file_manifest or context.source_branch",
		len(e.Files), e.Source, summarizePaths(e.Files, 10))
}

// CheckFiles reports manifest files that are missing at the source commit
// or would leave the repository, without writing anything.
func (r *Repo) CheckFiles(source plumbing.Hash, sourceName string, paths []string) error {
	commit, err := r.Commit(source)
	if err != nil {
		return err
	}
	tree, err := commit.Tree()
	if err != nil {
		return err
	}
	var missing []string
	for _, p := range paths {
		if err := checkInside(r.Path, p); err != nil {
			return err
		}
		if entry, err := tree.FindEntry(p); err != nil || entry.Mode == filemode.Dir {
			missing = append(missing, p)
		}
	}
	if len(missing) > 0 {
		return &MissingFilesError{Source: sourceName + " (" + source.String()[:12] + ")", Files: missing}
	}
	return nil
}

// CheckoutFiles copies files from the source commit into the worktree and
// stages them, as git checkout SOURCE -- FILES does. Every file is checked
// first: if any is missing at the source or would land outside the
// worktree, nothing is written.
func (w *Worktree) CheckoutFiles(ctx context.Context, source plumbing.Hash, sourceName string, paths []string) error {
	commit, err := w.Repo.Commit(source)
	if err != nil {
		return err
	}
	tree, err := commit.Tree()
	if err != nil {
		return err
	}
	if err := w.Repo.CheckFiles(source, sourceName, paths); err != nil {
		return err
	}
	files := make([]treeFile, 0, len(paths))
	for _, p := range paths {
		entry, err := tree.FindEntry(p)
		if err != nil {
			return err
		}
		files = append(files, treeFile{Path: p, Mode: entry.Mode, Hash: entry.Hash})
	}
	idx, err := w.readIndex()
	if err != nil {
		return err
	}
	for _, f := range files {
		// A symlinked parent directory could carry a write outside the tree.
		dir := filepath.Join(w.Path, filepath.FromSlash(filepath.Dir(f.Path)))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		real, err := filepath.EvalSymlinks(dir)
		if err != nil {
			return err
		}
		root, _ := filepath.EvalSymlinks(w.Path)
		if !within(real, root) {
			return fmt.Errorf("%s would be written through a symbolic link to %s, outside the worktree", f.Path, real)
		}
	}
	entries, err := w.writeFiles(ctx, files, nil)
	if err != nil {
		return err
	}
	byName := make(map[string]int, len(idx.Entries))
	for i, e := range idx.Entries {
		byName[e.Name] = i
	}
	for _, e := range entries {
		if i, ok := byName[e.Name]; ok {
			idx.Entries[i] = e
		} else {
			idx.Entries = append(idx.Entries, e)
		}
	}
	return w.writeIndex(idx)
}

// RemoveFiles deletes tracked files from the worktree and the index, as
// git rm does; files already gone are fine.
func (w *Worktree) RemoveFiles(paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	idx, err := w.readIndex()
	if err != nil {
		return err
	}
	drop := map[string]bool{}
	for _, p := range paths {
		if err := checkInside(w.Path, p); err != nil {
			return err
		}
		drop[p] = true
		if err := os.Remove(filepath.Join(w.Path, filepath.FromSlash(p))); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	kept := idx.Entries[:0]
	for _, e := range idx.Entries {
		if !drop[e.Name] {
			kept = append(kept, e)
		}
	}
	idx.Entries = kept
	return w.writeIndex(idx)
}

// checkInside rejects paths that would leave the worktree.
func checkInside(root, p string) error {
	if p == "" || filepath.IsAbs(p) || strings.HasPrefix(p, "/") {
		return fmt.Errorf("%q is not a path relative to the repository root", p)
	}
	clean := filepath.Clean(filepath.FromSlash(p))
	if clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) || !within(filepath.Join(root, clean), root) {
		return fmt.Errorf("%q points outside the repository", p)
	}
	for _, part := range strings.Split(clean, string(filepath.Separator)) {
		if part == ".git" {
			return fmt.Errorf("%q points into .git", p)
		}
	}
	return nil
}

// Changes lists files that differ from the index, and untracked files, as
// git status would show them.
func (w *Worktree) Changes() ([]string, error) {
	idx, err := w.readIndex()
	if err != nil {
		return nil, err
	}
	return w.changes(idx)
}

// changes compares the working files with an index already read.
func (w *Worktree) changes(idx *index.Index) ([]string, error) {
	tracked := make(map[string]*index.Entry, len(idx.Entries))
	var changed []string
	for _, e := range idx.Entries {
		tracked[e.Name] = e
		if e.Mode == filemode.Submodule {
			continue
		}
		target := filepath.Join(w.Path, filepath.FromSlash(e.Name))
		fi, err := os.Lstat(target)
		if err != nil {
			changed = append(changed, e.Name)
			continue
		}
		if uint32(fi.Size()) == e.Size && fi.ModTime().Equal(e.ModifiedAt) {
			continue
		}
		h, err := hashWorktreeFile(target, fi)
		if err != nil || h != e.Hash {
			changed = append(changed, e.Name)
		}
	}
	err := filepath.WalkDir(w.Path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(w.Path, p)
		rel = filepath.ToSlash(rel)
		if rel == "." || rel == ".git" {
			return nil
		}
		if d.IsDir() {
			if e, ok := tracked[rel]; ok && e.Mode == filemode.Submodule {
				return fs.SkipDir
			}
			return nil
		}
		if _, ok := tracked[rel]; !ok {
			changed = append(changed, rel)
		}
		return nil
	})
	sort.Strings(changed)
	return changed, err
}

// hashWorktreeFile computes the blob hash of a file or symbolic link.
func hashWorktreeFile(path string, fi os.FileInfo) (plumbing.Hash, error) {
	if fi.Mode()&os.ModeSymlink != 0 {
		target, err := os.Readlink(path)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		return plumbing.ComputeHash(plumbing.BlobObject, []byte(target)), nil
	}
	f, err := os.Open(path)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	defer f.Close()
	h := plumbing.NewHasher(plumbing.BlobObject, fi.Size())
	if _, err := io.Copy(h, f); err != nil {
		return plumbing.ZeroHash, err
	}
	return h.Sum(), nil
}

// StageAll stages every change in the worktree, as git add -A does, and
// says whether anything changed.
func (w *Worktree) StageAll() (bool, error) {
	idx, err := w.readIndex()
	if err != nil {
		return false, err
	}
	changed, err := w.changes(idx)
	if err != nil || len(changed) == 0 {
		return false, err
	}
	byName := make(map[string]int, len(idx.Entries))
	for i, e := range idx.Entries {
		byName[e.Name] = i
	}
	st := w.Repo.newStorage()
	defer st.Close()
	var removed = map[string]bool{}
	for _, name := range changed {
		target := filepath.Join(w.Path, filepath.FromSlash(name))
		fi, err := os.Lstat(target)
		if errors.Is(err, fs.ErrNotExist) {
			removed[name] = true
			continue
		}
		if err != nil {
			return false, err
		}
		e, err := stageFile(st, target, name, fi)
		if err != nil {
			return false, err
		}
		if i, ok := byName[name]; ok {
			idx.Entries[i] = e
		} else {
			idx.Entries = append(idx.Entries, e)
		}
	}
	if len(removed) > 0 {
		kept := idx.Entries[:0]
		for _, e := range idx.Entries {
			if !removed[e.Name] {
				kept = append(kept, e)
			}
		}
		idx.Entries = kept
	}
	return true, w.writeIndex(idx)
}

// stageFile stores a file's content as a blob and returns its index entry.
func stageFile(st *filesystem.Storage, path, name string, fi os.FileInfo) (*index.Entry, error) {
	var content []byte
	var err error
	mode := filemode.Regular
	switch {
	case fi.Mode()&os.ModeSymlink != 0:
		mode = filemode.Symlink
		var target string
		target, err = os.Readlink(path)
		content = []byte(target)
	default:
		if fi.Mode()&0o111 != 0 {
			mode = filemode.Executable
		}
		content, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, err
	}
	obj := st.NewEncodedObject()
	obj.SetType(plumbing.BlobObject)
	obj.SetSize(int64(len(content)))
	wr, err := obj.Writer()
	if err != nil {
		return nil, err
	}
	if _, err := io.Copy(wr, bytes.NewReader(content)); err != nil {
		return nil, err
	}
	wr.Close()
	if st.HasEncodedObject(obj.Hash()) != nil {
		if _, err := st.SetEncodedObject(obj); err != nil {
			return nil, err
		}
	}
	e := &index.Entry{Name: name, Hash: obj.Hash(), Mode: mode}
	fillStat(e, fi)
	return e, nil
}
