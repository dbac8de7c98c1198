// Package gitops does wo's git work through go-git: linked worktrees,
// branches, bringing files in from another branch, commits and pushes.
//
// go-git v5 can open a linked worktree but cannot create one, and its
// checkout rescans the whole tree; so this package writes the worktree's
// admin files, its working files (in parallel) and its index itself, and
// uses go-git for objects, references, configuration and the push.
package gitops

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// Repo is a repository with a working tree (the main worktree) whose
// linked worktrees wo manages.
type Repo struct {
	Path    string // the main worktree
	GitDir  string // the common git directory, Path/.git
	repo    *git.Repository
	storage *filesystem.Storage
}

// Open opens the repository at path, which must be a non-bare repository's
// main worktree.
func Open(path string) (*Repo, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	gitDir := filepath.Join(abs, ".git")
	fi, err := os.Stat(gitDir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, fmt.Errorf("opening repository %s: no .git directory there: set context.repo_path to the repository's main checkout", abs)
	case err != nil:
		return nil, fmt.Errorf("opening repository %s: %w", abs, err)
	case !fi.IsDir():
		return nil, fmt.Errorf("opening repository %s: .git is a file, so this is a linked worktree or submodule: set context.repo_path to the main checkout", abs)
	}
	st := filesystem.NewStorageWithOptions(osfs.New(gitDir), cache.NewObjectLRU(objectCacheSize), storageOptions)
	r, err := git.Open(st, osfs.New(abs))
	if err != nil {
		st.Close()
		return nil, fmt.Errorf("opening repository %s: %w", abs, err)
	}
	return &Repo{Path: abs, GitDir: gitDir, repo: r, storage: st}, nil
}

// objectCacheSize bounds go-git's cache of decoded objects. It pays when
// a delta's base is read again (the commits, trees and blobs of nearby
// history); a checkout reads each blob once, so a larger cache only fills
// with blobs that are never read again: at 8 MiB it was half of the live
// heap of a 30,000-file checkout.
const objectCacheSize = 2 * cache.MiByte

// storageOptions keep pack files open once read: without, go-git opens
// (and resolves the path of) the pack file again for every object it
// reads, which was a third of a checkout's time on a packed repository.
var storageOptions = filesystem.Options{KeepDescriptors: true}

// Close releases the open pack files.
func (r *Repo) Close() error { return r.storage.Close() }

// Git returns the go-git repository.
func (r *Repo) Git() *git.Repository { return r.repo }

// refLocks serialise, per repository, the operations of this process that
// read or write references. go-git rewrites a reference file in place, so
// a goroutine reading references while another writes one (two pushes of
// wo run --epic --parallel) can read an empty file.
var refLocks sync.Map // common git dir → *sync.Mutex

func (r *Repo) lockRefs() func() {
	m, _ := refLocks.LoadOrStore(r.GitDir, &sync.Mutex{})
	mu := m.(*sync.Mutex)
	mu.Lock()
	return mu.Unlock
}

// Resolve turns a branch, tag or commit id into a commit hash.
func (r *Repo) Resolve(rev string) (plumbing.Hash, error) {
	defer r.lockRefs()()
	return r.resolve(rev)
}

func (r *Repo) resolve(rev string) (plumbing.Hash, error) {
	for _, name := range []plumbing.ReferenceName{
		plumbing.NewBranchReferenceName(rev),
		plumbing.NewRemoteReferenceName("origin", rev),
		plumbing.NewTagReferenceName(rev),
		plumbing.ReferenceName(rev),
	} {
		ref, err := r.repo.Reference(name, true)
		if err == nil {
			return r.peel(ref.Hash())
		}
	}
	if plumbing.IsHash(rev) {
		return r.peel(plumbing.NewHash(rev))
	}
	if len(rev) >= 4 && len(rev) < 40 && isHex(rev) {
		if h, err := r.repo.ResolveRevision(plumbing.Revision(rev)); err == nil {
			return *h, nil
		}
	}
	return plumbing.ZeroHash, fmt.Errorf("%s has no branch, tag or commit %q", r.Path, rev)
}

// peel follows annotated tags to the commit.
func (r *Repo) peel(h plumbing.Hash) (plumbing.Hash, error) {
	if tag, err := r.repo.TagObject(h); err == nil {
		c, err := tag.Commit()
		if err != nil {
			return plumbing.ZeroHash, err
		}
		return c.Hash, nil
	}
	if _, err := r.repo.CommitObject(h); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("%s: %s is not a commit: %w", r.Path, h, err)
	}
	return h, nil
}

func isHex(s string) bool {
	for _, c := range s {
		if !strings.ContainsRune("0123456789abcdefABCDEF", c) {
			return false
		}
	}
	return true
}

// Commit reads a commit object.
func (r *Repo) Commit(h plumbing.Hash) (*object.Commit, error) { return r.repo.CommitObject(h) }

// BranchHash returns where a local branch points, and whether it exists.
func (r *Repo) BranchHash(branch string) (plumbing.Hash, bool, error) {
	defer r.lockRefs()()
	return r.branchHash(branch)
}

func (r *Repo) branchHash(branch string) (plumbing.Hash, bool, error) {
	ref, err := r.repo.Reference(plumbing.NewBranchReferenceName(branch), false)
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return plumbing.ZeroHash, false, nil
	}
	if err != nil {
		return plumbing.ZeroHash, false, err
	}
	return ref.Hash(), true, nil
}

// Signature is a commit author or committer.
type Signature struct{ Name, Email string }

// Identity returns the author for commits: the repository's git config, then
// the user's global config, then WO_GIT_AUTHOR_NAME / WO_GIT_AUTHOR_EMAIL.
func (r *Repo) Identity(getenv func(string) string) (Signature, error) {
	var sig Signature
	for _, scope := range []config.Scope{config.LocalScope, config.GlobalScope, config.SystemScope} {
		cfg, err := r.repo.ConfigScoped(scope)
		if err != nil {
			continue
		}
		if sig.Name == "" {
			sig.Name = cfg.User.Name
		}
		if sig.Email == "" {
			sig.Email = cfg.User.Email
		}
	}
	if sig.Name == "" {
		sig.Name = getenv("WO_GIT_AUTHOR_NAME")
	}
	if sig.Email == "" {
		sig.Email = getenv("WO_GIT_AUTHOR_EMAIL")
	}
	if sig.Name == "" || sig.Email == "" {
		return sig, fmt.Errorf("no commit author for %s: set git config user.name and user.email, or WO_GIT_AUTHOR_NAME and WO_GIT_AUTHOR_EMAIL", r.Path)
	}
	return sig, nil
}

// ReadBlob reads a blob's content.
func (r *Repo) ReadBlob(h plumbing.Hash) ([]byte, error) {
	obj, err := r.repo.Storer.EncodedObject(plumbing.BlobObject, h)
	if err != nil {
		return nil, err
	}
	rd, err := obj.Reader()
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	return io.ReadAll(rd)
}
