package gitops

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/index"
)

// Worktree is a linked worktree: a working directory at Path whose git
// state lives in GitDir/worktrees/Name, as `git worktree add` makes it.
type Worktree struct {
	Repo     *Repo
	Name     string
	Path     string
	AdminDir string
	// Owner, when set, is written to OwnerFile as Create makes the
	// worktree: the task whose run created it.
	Owner string
}

// OwnerFile, in a linked worktree's admin directory, names the task whose
// run created the worktree. git ignores the file and deletes it with the
// admin directory (git worktree remove, prune). wo undo takes it as proof
// that wo made the worktree: a document can name any path, but cannot
// write this file.
const OwnerFile = "wo-task"

// CreatedFor is the task that OwnerFile names; marked is false when the
// worktree has no such file (git made it, or a wo from before the file).
func (w *Worktree) CreatedFor() (owner string, marked bool) {
	b, err := readRegular(filepath.Join(w.AdminDir, OwnerFile))
	if err != nil {
		return "", false
	}
	return strings.TrimSpace(string(b)), true
}

// Worktree describes the linked worktree name at path; nothing is created.
func (r *Repo) Worktree(name, path string) (*Worktree, error) {
	if name == "" || strings.ContainsAny(name, `/\`) || name == "." || name == ".." {
		return nil, fmt.Errorf("worktree name %q: use a single path component such as pr-01-foundation", name)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	abs = filepath.Clean(abs)
	if within(abs, r.GitDir) {
		return nil, fmt.Errorf("worktree %s is inside the repository's .git directory %s: choose a worktree_root outside it", abs, r.GitDir)
	}
	if abs == r.Path || within(r.Path, abs) {
		return nil, fmt.Errorf("worktree %s would contain the repository %s: choose a separate worktree_root", abs, r.Path)
	}
	return &Worktree{Repo: r, Name: name, Path: abs, AdminDir: filepath.Join(r.GitDir, "worktrees", name)}, nil
}

// within reports whether path is dir or below it.
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

func (w *Worktree) indexPath() string { return filepath.Join(w.AdminDir, "index") }

// Complete reports whether the worktree exists in full: its admin files,
// its .git file and its index. A worktree cut short by a crash is not.
func (w *Worktree) Complete() bool {
	for _, p := range []string{filepath.Join(w.AdminDir, "gitdir"), w.indexPath(), filepath.Join(w.Path, ".git")} {
		if _, err := os.Stat(p); err != nil {
			return false
		}
	}
	return w.ownsPath()
}

// ownsPath reports whether Path's .git file points at this worktree's
// admin directory. A crash while that file was being written leaves only
// its temporary file, holding (a prefix of) the same line: that is ours too.
func (w *Worktree) ownsPath() bool {
	line := "gitdir: " + w.AdminDir + "\n"
	if b, err := readRegular(filepath.Join(w.Path, ".git")); err == nil {
		return strings.TrimSpace(strings.TrimPrefix(string(b), "gitdir:")) == w.AdminDir
	}
	entries, err := os.ReadDir(w.Path)
	if err != nil || len(entries) != 1 || entries[0].Name() != ".git.tmp" {
		return false
	}
	b, err := readRegular(filepath.Join(w.Path, ".git.tmp"))
	return err == nil && strings.HasPrefix(line, string(b))
}

// bigTree is the size of tree from which Create keeps the heap tight.
const bigTree = 5000

// tightHeap halves the garbage collector's headroom until the returned
// function is called; the first of several concurrent Creates (wo run
// --epic --parallel) lowers it, the last puts back what was there.
func tightHeap() (restore func()) {
	heapMu.Lock()
	defer heapMu.Unlock()
	if heapTight == 0 {
		heapSaved = debug.SetGCPercent(50)
	}
	heapTight++
	return func() {
		heapMu.Lock()
		defer heapMu.Unlock()
		if heapTight--; heapTight == 0 {
			debug.SetGCPercent(heapSaved)
		}
	}
}

var (
	heapMu    sync.Mutex
	heapTight int
	heapSaved int
)

// Progress reports how many of total files a long operation has written.
type Progress func(done, total int)

// Create makes the worktree with HEAD detached at base and every file of
// base's tree checked out and staged. A complete worktree is left alone; one
// cut short by a crash is removed and made again. It refuses to touch a
// path that holds anything else.
func (w *Worktree) Create(ctx context.Context, base plumbing.Hash, progress Progress) error {
	if w.Complete() {
		return nil
	}
	if err := w.checkFree(); err != nil {
		return err
	}
	// A partial worktree of ours (checkFree made sure): start over.
	if err := w.removeOwned(removal{path: true, admin: true}); err != nil {
		return err
	}
	commit, err := w.Repo.Commit(base)
	if err != nil {
		return fmt.Errorf("creating worktree %s: base %s: %w", w.Name, base, err)
	}
	// The whole tree is listed, and checked, before anything is made.
	tree, err := commit.Tree()
	if err != nil {
		return err
	}
	files, err := w.Repo.listTree(tree)
	if err != nil {
		return fmt.Errorf("creating worktree %s from %s: %w", w.Name, base.String()[:12], err)
	}
	if len(files) >= bigTree {
		// A big checkout's live heap is its index entries; the garbage
		// collector's default headroom (as much again) made wo's peak
		// memory twice git's. Collecting sooner costs little next to
		// creating the files.
		defer tightHeap()()
	}
	if err := w.writeAdmin(base); err != nil {
		return err
	}
	if err := os.MkdirAll(w.Path, 0o755); err != nil {
		return fmt.Errorf("creating worktree %s: %w", w.Path, err)
	}
	// The .git file comes first, so that a crash leaves a directory that is
	// recognisably ours.
	if err := writeFile(filepath.Join(w.Path, ".git"), "gitdir: "+w.AdminDir+"\n"); err != nil {
		return err
	}
	entries, err := w.writeFiles(ctx, files, progress)
	if err != nil {
		return fmt.Errorf("creating worktree %s: %w", w.Name, err)
	}
	if err := w.writeIndex(&index.Index{Version: 2, Entries: entries}); err != nil {
		return err
	}
	// gitdir last: it marks the worktree complete for git and for wo.
	return writeFile(filepath.Join(w.AdminDir, "gitdir"), filepath.Join(w.Path, ".git")+"\n")
}

// writeAdmin makes the worktree's admin folder in the repository's .git:
// the owner first, so that even a worktree cut short is provably ours,
// then commondir and HEAD (gitdir comes last, when the worktree is whole).
func (w *Worktree) writeAdmin(base plumbing.Hash) error {
	if err := os.MkdirAll(w.AdminDir, 0o755); err != nil {
		return err
	}
	if w.Owner != "" {
		if err := writeFile(filepath.Join(w.AdminDir, OwnerFile), w.Owner+"\n"); err != nil {
			return err
		}
	}
	if err := writeFile(filepath.Join(w.AdminDir, "commondir"), "../..\n"); err != nil {
		return err
	}
	return writeFile(filepath.Join(w.AdminDir, "HEAD"), base.String()+"\n")
}

// CheckFree reports whether Create could proceed: the worktree is complete
// already, or its name and path are free (or a partial worktree of ours).
func (w *Worktree) CheckFree() error {
	if w.Complete() {
		return nil
	}
	if real, err := filepath.EvalSymlinks(filepath.Dir(w.Path)); err == nil {
		if gd, err := filepath.EvalSymlinks(w.Repo.GitDir); err == nil && within(real, gd) {
			return fmt.Errorf("worktree %s is inside the repository's .git directory %s: choose a worktree_root outside it", w.Path, gd)
		}
	}
	return w.checkFree()
}

// checkFree fails if the admin name or the path belong to something else.
func (w *Worktree) checkFree() error {
	if b, err := os.ReadFile(filepath.Join(w.AdminDir, "gitdir")); err == nil {
		other := filepath.Dir(strings.TrimSpace(string(b)))
		if other != w.Path {
			return fmt.Errorf("worktree name %s is already used by %s: choose another worktree name, or remove that worktree with git worktree remove %s", w.Name, other, other)
		}
	}
	entries, err := os.ReadDir(w.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("worktree path %s: %w", w.Path, err)
	}
	if len(entries) > 0 && !w.ownsPath() {
		return fmt.Errorf("worktree path %s exists and holds other files: remove it, or choose another worktree_root", w.Path)
	}
	return nil
}

func summarizePaths(paths []string, max int) string {
	if len(paths) <= max {
		return strings.Join(paths, ", ")
	}
	return strings.Join(paths[:max], ", ") + fmt.Sprintf(" and %d more", len(paths)-max)
}

// Head returns the commit the worktree's HEAD points to, and the branch if
// HEAD is on one.
func (w *Worktree) Head() (plumbing.Hash, string, error) {
	defer w.Repo.lockRefs()()
	return w.head()
}

func (w *Worktree) head() (plumbing.Hash, string, error) {
	b, err := os.ReadFile(filepath.Join(w.AdminDir, "HEAD"))
	if err != nil {
		return plumbing.ZeroHash, "", fmt.Errorf("worktree %s: reading HEAD: %w", w.Name, err)
	}
	s := strings.TrimSpace(string(b))
	if ref, ok := strings.CutPrefix(s, "ref: "); ok {
		branch := strings.TrimPrefix(ref, "refs/heads/")
		h, exists, err := w.Repo.branchHash(branch)
		if err != nil {
			return plumbing.ZeroHash, "", err
		}
		if !exists {
			return plumbing.ZeroHash, branch, fmt.Errorf("worktree %s: HEAD names branch %s, which does not exist", w.Name, branch)
		}
		return h, branch, nil
	}
	if !plumbing.IsHash(s) {
		return plumbing.ZeroHash, "", fmt.Errorf("worktree %s: HEAD holds %q", w.Name, s)
	}
	return plumbing.NewHash(s), "", nil
}

// SwitchBranch points HEAD at branch, creating the branch at HEAD's commit
// if it does not exist. The files are not touched: the branch starts where
// HEAD is. It refuses a branch checked out in another worktree.
func (w *Worktree) SwitchBranch(branch string) (plumbing.Hash, error) {
	defer w.Repo.lockRefs()()
	head, current, err := w.head()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if current == branch {
		return head, nil
	}
	if where, ok := w.Repo.CheckedOutAt(branch); ok && where != w.Path {
		return plumbing.ZeroHash, fmt.Errorf("branch %s is already checked out at %s: a branch can be checked out in one worktree only; remove that worktree or choose another branch_name", branch, where)
	}
	tip, exists, err := w.Repo.branchHash(branch)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if !exists {
		ref := plumbing.NewHashReference(plumbing.NewBranchReferenceName(branch), head)
		if err := w.Repo.repo.Storer.SetReference(ref); err != nil {
			return plumbing.ZeroHash, fmt.Errorf("creating branch %s: %w", branch, err)
		}
		tip = head
	} else if tip != head {
		return plumbing.ZeroHash, fmt.Errorf("branch %s exists at %s, not at the worktree's commit %s: delete or rename it, or set inputs.branch_name to a new branch", branch, tip.String()[:12], head.String()[:12])
	}
	if err := writeFile(filepath.Join(w.AdminDir, "HEAD"), "ref: refs/heads/"+branch+"\n"); err != nil {
		return plumbing.ZeroHash, err
	}
	return tip, nil
}

// StartPoint is where a worktree for branch should start: the branch's tip
// when the branch exists and grew from base (this work order's own branch
// from an earlier run), else base. A branch that does not descend from base
// is an error: it is somebody else's.
func (r *Repo) StartPoint(branch string, base plumbing.Hash) (plumbing.Hash, error) {
	defer r.lockRefs()()
	tip, exists, err := r.branchHash(branch)
	if err != nil || !exists || tip == base {
		return base, err
	}
	baseCommit, err := r.Commit(base)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	tipCommit, err := r.Commit(tip)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if ok, err := baseCommit.IsAncestor(tipCommit); err != nil || !ok {
		return plumbing.ZeroHash, fmt.Errorf("branch %s exists at %s, which does not descend from the base %s: delete or rename it, or set inputs.branch_name to a new branch",
			branch, tip.String()[:12], base.String()[:12])
	}
	return tip, nil
}

// CheckedOutAt says which worktree (main or linked) has branch checked out.
func (r *Repo) CheckedOutAt(branch string) (string, bool) {
	want := "ref: refs/heads/" + branch
	if b, err := os.ReadFile(filepath.Join(r.GitDir, "HEAD")); err == nil && strings.TrimSpace(string(b)) == want {
		return r.Path, true
	}
	dirs, _ := os.ReadDir(filepath.Join(r.GitDir, "worktrees"))
	for _, d := range dirs {
		admin := filepath.Join(r.GitDir, "worktrees", d.Name())
		b, err := os.ReadFile(filepath.Join(admin, "HEAD"))
		if err != nil || strings.TrimSpace(string(b)) != want {
			continue
		}
		where := admin
		if g, err := os.ReadFile(filepath.Join(admin, "gitdir")); err == nil {
			where = filepath.Dir(strings.TrimSpace(string(g)))
		}
		return where, true
	}
	return "", false
}

func (w *Worktree) readIndex() (*index.Index, error) {
	f, err := os.Open(w.indexPath())
	if err != nil {
		return nil, fmt.Errorf("worktree %s: reading index: %w", w.Name, err)
	}
	defer f.Close()
	idx := &index.Index{}
	if err := index.NewDecoder(bufio.NewReaderSize(f, 1<<16)).Decode(idx); err != nil {
		return nil, fmt.Errorf("worktree %s: reading index: %w", w.Name, err)
	}
	return idx, nil
}

// writeIndex replaces the index atomically.
func (w *Worktree) writeIndex(idx *index.Index) error {
	sort.Slice(idx.Entries, func(i, j int) bool { return idx.Entries[i].Name < idx.Entries[j].Name })
	tmp, err := os.CreateTemp(w.AdminDir, "index.tmp*")
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(tmp, 1<<16)
	if err := index.NewEncoder(bw).Encode(idx); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return fmt.Errorf("worktree %s: writing index: %w", w.Name, err)
	}
	if err := bw.Flush(); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), w.indexPath())
}

// writeFile writes a small file atomically.
func writeFile(path, content string) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
