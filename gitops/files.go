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
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/wo-runner/wo/internal/fileparts"
	"github.com/wo-runner/wo/internal/gitname"
)

// treeFile is one file of a tree: its path, mode and blob.
type treeFile struct {
	Path string
	Mode filemode.FileMode
	Hash plumbing.Hash
}

// writers is how many goroutines write files at once. Creating a file is
// mostly waiting on the file system, so more than the CPU count helps.
// They share the repository's one object storage, taking turns to read a
// blob (sharedBlobs): a storage per writer loaded the pack indexes and
// kept a delta cache once per writer, which cost more time on a small
// checkout and more memory on a large one than reading in turn does.
func writers() int { return max(4, 2*runtime.NumCPU()) }

// sharedBlobs reads blobs from one storage for several goroutines;
// go-git's pack readers are not safe to share, so reads take turns.
type sharedBlobs struct {
	mu sync.Mutex
	st *filesystem.Storage
}

// read returns a blob's content in buf's memory when it fits.
func (s *sharedBlobs) read(h plumbing.Hash, buf *bytes.Buffer) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	obj, err := s.st.EncodedObject(plumbing.BlobObject, h)
	if err != nil {
		return err
	}
	r, err := obj.Reader()
	if err != nil {
		return err
	}
	defer r.Close()
	buf.Reset()
	buf.Grow(int(obj.Size()))
	_, err = buf.ReadFrom(r)
	return err
}

// writeFiles writes files into the worktree in parallel and returns their
// index entries, stat data included so that git does not rehash them.
func (w *Worktree) writeFiles(ctx context.Context, files []treeFile, progress Progress) ([]*index.Entry, error) {
	root, err := openWorktreeRoot(w.Path)
	if err != nil {
		return nil, err
	}
	defer root.close()
	if err := makeDirs(root, files); err != nil {
		return nil, err
	}
	entries := make([]*index.Entry, len(files))
	jobs := make(chan int)
	errs := make(chan error, 1)
	var done atomic.Int64
	var wg sync.WaitGroup
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	blobs := &sharedBlobs{st: w.Repo.storage}
	for k := 0; k < min(writers(), len(files)); k++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf bytes.Buffer
			dirs := newDirCache(root)
			defer dirs.close()
			for i := range jobs {
				e, err := w.writeOne(blobs, dirs, files[i], &buf)
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

// makeDirs makes the folders of files, first and once each, so that the
// writers never race on creating them; each is made inside its parent,
// never through a link.
func makeDirs(root worktreeDir, files []treeFile) error {
	dirs := map[string]bool{}
	for _, f := range files {
		if d, _ := splitPath(f.Path); d != "" && !dirs[d] {
			for p := d; p != "" && !dirs[p]; p, _ = splitPath(p) {
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
		dir, err := root.openDir(d, true, "write", d)
		if err != nil {
			return err
		}
		dir.close()
	}
	return nil
}

// writeOne writes one blob to its path and returns its index entry. The
// file is made inside its directory's handle: a link at the path is
// replaced, a link above it is refused.
func (w *Worktree) writeOne(blobs *sharedBlobs, dirs *dirCache, f treeFile, buf *bytes.Buffer) (*index.Entry, error) {
	dirName, name := splitPath(f.Path)
	dir, err := dirs.get(dirName, "write", f.Path)
	if err != nil {
		return nil, err
	}
	entry := &index.Entry{Name: f.Path, Hash: f.Hash, Mode: f.Mode}
	switch f.Mode {
	case filemode.Submodule:
		if err := dir.mkdir(name); err != nil {
			return nil, err
		}
		return entry, nil
	case filemode.Symlink:
		fi, err := writeLink(blobs, dir, name, f, buf)
		if err != nil {
			return nil, err
		}
		fillStat(entry, fi)
		return entry, nil
	}
	perm := uint32(0o644)
	if f.Mode == filemode.Executable {
		perm = 0o755
	}
	if err := blobs.read(f.Hash, buf); err != nil {
		return nil, fmt.Errorf("%s: reading blob %s: %w", f.Path, f.Hash, err)
	}
	out, err := dir.createFile(name, perm)
	if err != nil {
		return nil, err
	}
	_, err = out.Write(buf.Bytes())
	if buf.Cap() > 1<<20 {
		*buf = bytes.Buffer{} // a large blob's memory is not kept for the next
	}
	var fi os.FileInfo
	if err == nil {
		fi, err = out.Stat()
	}
	// A file that was there already keeps its permissions through
	// O_TRUNC: set the executable bit as the tree has it.
	if err == nil && (fi.Mode().Perm()&0o100 != 0) != (perm&0o100 != 0) {
		if err = out.Chmod(os.FileMode(perm)); err == nil {
			fi, err = out.Stat()
		}
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("writing %s: %w", filepath.Join(dir.path, name), err)
	}
	fillStat(entry, fi)
	return entry, nil
}

// writeLink makes the link name in dir that the tree's f is, its target
// read into buf, and returns what the file system says of it.
func writeLink(blobs *sharedBlobs, dir worktreeDir, name string, f treeFile, buf *bytes.Buffer) (os.FileInfo, error) {
	if err := blobs.read(f.Hash, buf); err != nil {
		return nil, fmt.Errorf("%s: %w", f.Path, err)
	}
	if err := dir.symlink(name, buf.String()); err != nil {
		return nil, err
	}
	return os.Lstat(filepath.Join(dir.path, name))
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
// or would leave the repository, and source trees that git would not check
// out, without writing anything.
//
// parts names the files of which only some lines are wanted (a PR of a
// split that brings part of a file): path → line ranges ("1-12,30-41").
func (r *Repo) CheckFiles(source plumbing.Hash, sourceName string, paths []string, parts map[string]string) error {
	_, err := r.manifestFiles(source, sourceName, paths, parts, false)
	return err
}

// maxPartBlob bounds the file a part is cut from.
const maxPartBlob = 32 << 20

// WantedFile is the blob and mode a step writes at path from the source
// commit: the source's, or for part of the file (ranges, see CheckFiles)
// the blob of those lines.
func (r *Repo) WantedFile(source plumbing.Hash, path, ranges string) (plumbing.Hash, filemode.FileMode, error) {
	commit, err := r.Commit(source)
	if err != nil {
		return plumbing.ZeroHash, 0, err
	}
	f, err := commit.File(path)
	if err != nil {
		return plumbing.ZeroHash, 0, err
	}
	if ranges == "" {
		return f.Hash, f.Mode, nil
	}
	h, err := r.partBlob(treeFile{Path: path, Mode: f.Mode, Hash: f.Hash}, ranges, false)
	return h, f.Mode, err
}

// partBlob cuts the lines that ranges names out of a file's blob and
// returns the hash of what is left, stored when store is set.
func (r *Repo) partBlob(f treeFile, ranges string, store bool) (plumbing.Hash, error) {
	if f.Mode != filemode.Regular && f.Mode != filemode.Executable {
		return plumbing.ZeroHash, fmt.Errorf("%s: only part of it is asked for (lines %s), but it is not a regular file", f.Path, ranges)
	}
	obj, err := r.storage.EncodedObject(plumbing.BlobObject, f.Hash)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("%s: reading blob %s: %w", f.Path, f.Hash, err)
	}
	if obj.Size() > maxPartBlob {
		return plumbing.ZeroHash, fmt.Errorf("%s: only part of it is asked for, but it has %d bytes, more than the %d a part is cut from", f.Path, obj.Size(), maxPartBlob)
	}
	rd, err := obj.Reader()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	defer rd.Close()
	src, err := io.ReadAll(io.LimitReader(rd, maxPartBlob+1))
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("%s: reading blob %s: %w", f.Path, f.Hash, err)
	}
	part, err := fileparts.Cut(src, ranges)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("%s: the part asked for: %w; fix inputs.file_parts", f.Path, err)
	}
	if !store {
		return plumbing.ComputeHash(plumbing.BlobObject, part), nil
	}
	blob := r.storage.NewEncodedObject()
	blob.SetType(plumbing.BlobObject)
	w, err := blob.Writer()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if _, err := w.Write(part); err != nil {
		w.Close()
		return plumbing.ZeroHash, err
	}
	if err := w.Close(); err != nil {
		return plumbing.ZeroHash, err
	}
	return r.storage.SetEncodedObject(blob)
}

// manifestFiles finds the manifest's files at the source commit.
// A part of a file (parts) is cut from it, its blob stored when store is
// set.
func (r *Repo) manifestFiles(source plumbing.Hash, sourceName string, paths []string, parts map[string]string, store bool) ([]treeFile, error) {
	commit, err := r.Commit(source)
	if err != nil {
		return nil, err
	}
	tree, err := commit.Tree()
	if err != nil {
		return nil, err
	}
	what := sourceName + " (" + source.String()[:12] + ")"
	checked := checkedTrees{}
	var missing []string
	files := make([]treeFile, 0, len(paths))
	for _, p := range paths {
		if err := checkInside(r.Path, p); err != nil {
			return nil, err
		}
		entry, err := r.findChecked(tree, p, checked)
		if errors.Is(err, errNotInTree) {
			missing = append(missing, p)
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("checking out %s from %s: %w", p, what, err)
		}
		f := treeFile{Path: p, Mode: entry.Mode, Hash: entry.Hash}
		if ranges, ok := parts[p]; ok {
			if f.Hash, err = r.partBlob(f, ranges, store); err != nil {
				return nil, err
			}
		}
		files = append(files, f)
	}
	if len(missing) > 0 {
		return nil, &MissingFilesError{Source: what, Files: missing}
	}
	return files, nil
}

// CheckoutFiles copies files from the source commit into the worktree and
// stages them, as git checkout SOURCE -- FILES does: a symbolic link at a
// file's path is replaced by the file. Every file is checked first: if any
// is missing at the source, would land outside the worktree or below a
// link, nothing is written.
//
// parts names the files of which only some lines are written (see
// CheckFiles).
func (w *Worktree) CheckoutFiles(ctx context.Context, source plumbing.Hash, sourceName string, paths []string, parts map[string]string) error {
	files, err := w.Repo.manifestFiles(source, sourceName, paths, parts, true)
	if err != nil {
		return err
	}
	idx, err := w.readIndex()
	if err != nil {
		return err
	}
	if err := w.checkParents("write", paths); err != nil {
		return err
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

// checkParents makes sure that no path has a link (or a file) where one
// of its parent directories should be, without creating anything: a
// parent that does not exist yet will be made inside the worktree.
func (w *Worktree) checkParents(op string, paths []string) error {
	root, err := openWorktreeRoot(w.Path)
	if err != nil {
		return err
	}
	defer root.close()
	seen := map[string]bool{}
	for _, p := range paths {
		dir, _ := splitPath(p)
		if seen[dir] {
			continue
		}
		seen[dir] = true
		d, err := root.openDir(dir, false, op, p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		d.close()
	}
	return nil
}

// CheckWriteFiles reports manifest paths that CheckoutFiles would refuse
// to write because of what is in the worktree, without writing anything.
func (w *Worktree) CheckWriteFiles(paths []string) error {
	for _, p := range paths {
		if err := checkInside(w.Path, p); err != nil {
			return err
		}
	}
	return w.checkParents("write", paths)
}

// CheckRemoveFiles reports delete_manifest paths that RemoveFiles would
// refuse, without deleting anything.
func (w *Worktree) CheckRemoveFiles(paths []string) error {
	for _, p := range paths {
		if err := checkInside(w.Path, p); err != nil {
			return err
		}
	}
	return w.checkParents("delete", paths)
}

// RemoveFiles deletes tracked files from the worktree and the index, as
// git rm does; files already gone are fine. A link at a path is deleted
// itself; a path below a link is refused, and then nothing is deleted.
func (w *Worktree) RemoveFiles(paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	idx, err := w.readIndex()
	if err != nil {
		return err
	}
	if err := w.CheckRemoveFiles(paths); err != nil {
		return err
	}
	root, err := openWorktreeRoot(w.Path)
	if err != nil {
		return err
	}
	defer root.close()
	dirs := newDirCache(root)
	defer dirs.close()
	drop := map[string]bool{}
	for _, p := range paths {
		drop[p] = true
		dirName, name := splitPath(p)
		dir, err := dirs.get(dirName, "delete", p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		if err := dir.remove(name); err != nil {
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
		if gitname.IsDotGit(part) {
			return fmt.Errorf("%q points into .git (or a name a file system takes for it)", p)
		}
	}
	return nil
}

// realDir reports whether the slash path dir of the worktree is a
// directory all the way down, no component a link: a file below a link
// is not the worktree's, and reading it could read from outside.
func (w *Worktree) realDir(dir string, cache map[string]bool) bool {
	if dir == "" {
		return true
	}
	if ok, seen := cache[dir]; seen {
		return ok
	}
	parent, _ := splitPath(dir)
	ok := w.realDir(parent, cache)
	if ok {
		fi, err := os.Lstat(filepath.Join(w.Path, filepath.FromSlash(dir)))
		ok = err == nil && fi.IsDir()
	}
	cache[dir] = ok
	return ok
}
