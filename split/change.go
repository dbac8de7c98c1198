// Package split turns a big change (base → source) into an ordered plan of
// review pull requests: one work order each, under one epic, ordered so
// that a PR comes after the PRs whose packages it imports.
package split

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"path"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"go/ast"
	"go/parser"
	"go/token"
	"go/version"

	"github.com/sergi/go-diff/diffmatchpatch"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/utils/diff"
	"github.com/go-git/go-git/v5/utils/merkletrie"

	"github.com/wo-runner/wo/gitops"
)

// File is one changed file.
type File struct {
	Path    string `json:"path"`
	OldPath string `json:"old_path,omitempty"` // for a rename
	Kind    string `json:"kind"`               // added, modified, deleted, renamed
	// Lines are what a reviewer reads: the lines of a new file (of the
	// old one for a deletion), the lines added and removed in a modified
	// or renamed text file.
	Lines  int  `json:"lines"`
	Binary bool `json:"binary,omitempty"`
	// Part is the lines of the file a PR brings when it brings part of
	// it ("1-12,30-41": its package clause, the imports and the whole
	// declarations that part needs); empty, the file whole. Only a cycle
	// of new files too large for one PR is cut this way, and the last PR
	// with the file brings it whole.
	Part string `json:"part,omitempty"`
	// SetApart says why the file is not reviewed line by line (a
	// lockfile, generated or vendored code, a test data blob): its lines
	// and the file do not count against a PR's budget.
	SetApart string `json:"set_apart,omitempty"`
	// Reason says why the plan put the file where it is (wo split --explain).
	Reason string `json:"reason,omitempty"`
	// Imports are the import paths of a Go file at the source.
	Imports []string `json:"-"`
	// BaseImports are the import paths of a modified, renamed or deleted
	// Go file at the base: what its old version needs, which must not
	// change under it before it changes itself.
	BaseImports []string `json:"-"`
	// Embeds are the patterns of a Go file's //go:embed directives.
	Embeds []string `json:"-"`
	// Problem says why a Go file cannot build as it is at the source (it
	// does not parse, or imports a package of the module that is not
	// there); the plan reports it with the PR that holds the file.
	Problem string `json:"-"`
	// src is a Go file's source, read again only to cut an oversize
	// package along its declarations; baseSrc is its old version (of a
	// modified, renamed or deleted Go file), to see what the change
	// does to the declarations that other files use.
	src, baseSrc []byte
	// pkg is the name in a Go file's package clause.
	pkg string
	// notCode says why a file named .go is not Go code that any build
	// compiles (a symbolic link, a file excluded from every build): it
	// goes with its folder's package as a plain file, importing nothing.
	notCode string
}

// Dir is the file's directory ("." for the root).
func (f File) Dir() string { return path.Dir(f.Path) }

// Change is what lies between two commits.
type Change struct {
	Base, Source       plumbing.Hash
	BaseRef, SourceRef string
	Files              []File
	// Module is the Go module path from go.mod at the source, if any.
	Module string
	// BaseModule is the Go module path from go.mod at the base, if any.
	BaseModule string
	// Modules maps the path of each module at the source that holds a
	// changed file, or that a go.work uses, to its root folder.
	Modules map[string]string
	// ModuleNeeds maps the folder of a go.mod to the local targets of
	// its replace directives (module roots).
	ModuleNeeds map[string][]string
	// WorkspaceUses maps the folder of a go.work to the roots of the
	// modules it uses.
	WorkspaceUses map[string][]string
	// Dropped are the modules that go.mod requires at the base and no
	// longer at the source: old code that imports them must land with
	// go.mod, or the tips between would not build.
	Dropped []string
	// baseMod and sourceMod are the root go.mod at each end, if any.
	baseMod, sourceMod *goMod
	// printfWrappers are the functions of the source tree that take a
	// format and its arguments, read when go.mod raises the go version
	// past 1.24 (whose go vet refuses a format that is not a constant).
	printfWrappers []string
	// intConsts are the package-level integer constants of the source
	// tree's files that the change leaves as they are, where a changed
	// file ranges over a name of its package ("dir:pkg.Name"): read when
	// go.mod raises the go version past 1.22.
	intConsts []string
	// kept are the Go files that the change leaves as they are, in the
	// folders its Go files are in or import (both ends): what they
	// declare is how a changed file reaches a type without naming it
	// (sc.Step is a workorder.Step), and which types the base has.
	kept []keptFile
	// keptCut says why kept holds only some of those files, or "".
	keptCut string
	// needs are the changed files each Go file must land with or after,
	// worked out by Make (symbolEdges).
	needs map[string][]fileEdge
}

// ReadChange lists the files that differ between base and source, with
// their line counts and, for Go files, their imports.
func ReadChange(ctx context.Context, repo *gitops.Repo, baseRef, sourceRef string) (*Change, error) {
	base, err := repo.Resolve(baseRef)
	if err != nil {
		return nil, fmt.Errorf("--base: %w", err)
	}
	source, err := repo.Resolve(sourceRef)
	if err != nil {
		return nil, fmt.Errorf("--source: %w", err)
	}
	// The change is read through a storage of its own that keeps the pack
	// files open: otherwise each of thousands of blobs opens the pack again.
	// A blob over maxBlobRead is streamed from the pack, not held whole
	// in memory (a change may carry a file of hundreds of megabytes).
	st := filesystem.NewStorageWithOptions(osfs.New(repo.GitDir), cache.NewObjectLRUDefault(), filesystem.Options{KeepDescriptors: true, LargeObjectThreshold: maxBlobRead})
	defer st.Close()
	baseTree, err := treeOf(st, base)
	if err != nil {
		return nil, err
	}
	sourceTree, err := treeOf(st, source)
	if err != nil {
		return nil, err
	}
	changes, err := diffTrees(ctx, st, baseTree, sourceTree)
	if err != nil {
		return nil, fmt.Errorf("comparing %s and %s: %w", baseRef, sourceRef, err)
	}
	c := &Change{Base: base, Source: source, BaseRef: baseRef, SourceRef: sourceRef}
	for _, ch := range changes {
		f, err := readChangedFile(st, ch, c)
		if err != nil {
			return nil, err
		}
		c.Files = append(c.Files, f)
	}
	readGoMods(c, st, baseTree, sourceTree)
	sort.Slice(c.Files, func(i, j int) bool { return c.Files[i].Path < c.Files[j].Path })
	if c.baseMod != nil && c.sourceMod != nil && vetsFormats(c.baseMod.goVersion, c.sourceMod.goVersion) {
		c.printfWrappers = printfWrappers(ctx, st, sourceTree)
	}
	if c.baseMod != nil && c.sourceMod != nil && version.Compare("go"+c.baseMod.goVersion, "go1.22") < 0 &&
		version.Compare("go"+c.sourceMod.goVersion, "go1.22") >= 0 {
		c.intConsts = unchangedIntConsts(c, st, sourceTree)
	}
	readModules(c, st, sourceTree)
	markMissingImports(c, sourceTree)
	if c.modifies() {
		c.kept = keptGoFiles(ctx, c, st, sourceTree)
	}
	return c, nil
}

// keptFile is a Go file the change leaves as it is.
type keptFile struct {
	path string
	src  []byte
}

// maxKeptRead bounds the source that keptGoFiles holds. A change whose
// folders hold more unchanged Go source than this is read in part (the
// changed files' own folders first), and the plan says so: a type reached
// only through the files left unread ties nothing.
var maxKeptRead int64 = 128 << 20

// keptGoFiles reads the Go files the change leaves as they are: first in
// the folders of the changed Go files, at either end, then (their code,
// not their tests) in the module's packages those files import. What a
// changed file can see of its package and its imports is declared there.
func keptGoFiles(ctx context.Context, c *Change, st storer.EncodedObjectStorer, source *object.Tree) []keptFile {
	changed := map[string]bool{}
	own, imported := map[string]bool{}, map[string]bool{}
	for _, f := range c.Files {
		changed[f.Path], changed[f.OldPath] = true, true
		if path.Ext(f.Path) != ".go" || belowTestdata(f.Dir()) {
			continue
		}
		own[f.Dir()] = true
		if f.OldPath != "" {
			own[path.Dir(f.OldPath)] = true
		}
		for _, imp := range f.Imports {
			imported[c.packageDir(imp)] = true
		}
		for _, imp := range f.BaseImports {
			imported[packageDir(c.BaseModule, imp)] = true
		}
	}
	delete(imported, "")
	for d := range own {
		delete(imported, d)
	}
	var out []keptFile
	var read int64
	for _, pass := range []struct {
		dirs  map[string]bool
		tests bool // a package's tests see it; an importer sees its code
	}{{own, true}, {imported, false}} {
		for _, dir := range sortedKeys(pass.dirs) {
			for _, e := range goFilesIn(source, dir) {
				name := path.Join(dir, e.Name)
				if changed[name] || !pass.tests && strings.HasSuffix(e.Name, "_test.go") {
					continue
				}
				if ctx.Err() != nil {
					return out
				}
				blob, err := object.GetBlob(st, e.Hash)
				if err != nil || blob.Size > maxBlobRead {
					continue // too big to parse whole: a generated table
				}
				if read+blob.Size > maxKeptRead {
					c.keptCut = fmt.Sprintf("the Go files the change leaves as they are, in the folders it touches and imports, hold over %d MiB: "+
						"split read them up to %s and no further, so a type that a changed file reaches only through the rest ties nothing (a tip may not build)", maxKeptRead>>20, name)
					return out
				}
				src, err := blobHead(blob, maxBlobRead)
				if err != nil || excludedFromEveryBuild(src) != "" {
					continue
				}
				read += int64(len(src))
				out = append(out, keptFile{name, src})
			}
		}
	}
	return out
}

// goFilesIn are the regular .go files of one folder of a tree ("." its
// root); none where the folder is not there.
func goFilesIn(root *object.Tree, dir string) []object.TreeEntry {
	tree := root
	if dir != "." {
		t, err := root.Tree(dir)
		if err != nil {
			return nil
		}
		tree = t
	}
	var out []object.TreeEntry
	for _, e := range tree.Entries {
		if e.Mode.IsFile() && path.Ext(e.Name) == ".go" {
			out = append(out, e)
		}
	}
	return out
}

// readChangedFile reads one changed file: its kind, the lines a reviewer
// reads, and a Go file's header and sources at both ends. The source's
// go.mod gives c its module path.
func readChangedFile(st storer.EncodedObjectStorer, ch *object.Change, c *Change) (File, error) {
	action, err := ch.Action()
	if err != nil {
		return File{}, err
	}
	for _, name := range []string{ch.From.Name, ch.To.Name} {
		if !utf8.ValidString(name) {
			return File{}, fmt.Errorf("the path %q between %s and %s is not UTF-8: a work order's file list (JSON) cannot name it, so its PR would lose it; rename it in %s", name, c.BaseRef, c.SourceRef, c.SourceRef)
		}
	}
	f := File{Path: ch.To.Name}
	entry := ch.To.TreeEntry
	switch {
	case action == merkletrie.Delete:
		f.Path, f.Kind, entry = ch.From.Name, "deleted", ch.From.TreeEntry
	case action == merkletrie.Insert:
		f.Kind = "added"
	case ch.From.Name != ch.To.Name:
		f.Kind, f.OldPath = "renamed", ch.From.Name
	default:
		f.Kind = "modified"
	}
	readContent(st, &f, entry, c)
	if (f.Kind == "modified" || f.Kind == "renamed") && !f.Binary && ch.From.TreeEntry.Mode.IsFile() && entry.Mode.IsFile() {
		f.Lines = changedLines(st, ch.From.TreeEntry.Hash, entry.Hash, f.Lines)
	}
	if f.Kind != "added" && path.Ext(f.Path) == ".go" && ch.From.TreeEntry.Mode.IsFile() {
		readBaseVersion(st, &f, ch.From)
	}
	return f, nil
}

// readContent reads the file's entry (the source's, the base's for a
// deletion): its lines, whether it is binary, and a Go file's header.
func readContent(st storer.EncodedObjectStorer, f *File, entry object.TreeEntry, c *Change) {
	if entry.Mode == filemode.Submodule {
		f.Binary = true
		return
	}
	if entry.Mode == filemode.Symlink {
		// A link holds its target's path, not Go source.
		f.Lines = 1
		if path.Ext(f.Path) == ".go" {
			f.notCode = "a symbolic link, not Go source"
		}
		return
	}
	if n, big, err := largeBlob(st, entry.Hash); err == nil && big {
		// Counted as it streams by, never held: a change may carry a
		// file of gigabytes.
		f.Lines, f.Binary = n.lines, n.binary
		if f.Kind != "deleted" && path.Ext(f.Path) == ".go" && !f.Binary {
			readLargeGoHeader(st, f, entry)
		}
		return
	}
	data, err := readBlob(st, entry.Hash)
	if err != nil {
		return
	}
	f.Lines, f.Binary = countLines(data)
	if f.Kind != "deleted" && path.Ext(f.Path) == ".go" {
		if f.notCode = excludedFromEveryBuild(data); f.notCode == "" {
			f.src = data
			f.pkg, f.Imports, f.Embeds, f.Problem = goHeader(f.Path, data)
		}
	}
	if f.Path == "go.mod" && f.Kind != "deleted" {
		c.Module = modulePath(data)
	}
}

// readLargeGoHeader reads only the header of a Go file over maxBlobRead:
// the package clause, build constraints and imports are at its top. It
// is too big to cut along its declarations.
func readLargeGoHeader(st storer.EncodedObjectStorer, f *File, entry object.TreeEntry) {
	head, err := readHead(st, entry.Hash, headerRead)
	if err != nil {
		return
	}
	if f.notCode = excludedFromEveryBuild(head); f.notCode == "" {
		f.pkg, f.Imports, f.Embeds, f.Problem = goHeader(f.Path, head)
		if f.Problem != "" {
			f.Problem = fmt.Sprintf("%s is over %d MiB and its first %d KiB hold no whole header, so its imports are a guess: %s", f.Path, maxBlobRead>>20, headerRead>>10, f.Problem)
		}
	}
}

// readBaseVersion reads a Go file's imports at the base, and its old
// source if it is not over maxBlobRead.
func readBaseVersion(st storer.EncodedObjectStorer, f *File, from object.ChangeEntry) {
	limit := int64(headerRead)
	if _, big, err := largeBlob(st, from.TreeEntry.Hash); err == nil && !big {
		limit = maxBlobRead
	}
	if data, err := readHead(st, from.TreeEntry.Hash, limit); err == nil && excludedFromEveryBuild(data) == "" {
		_, f.BaseImports, _, _ = goHeader(from.Name, data)
		if limit == maxBlobRead {
			f.baseSrc = data
		}
	}
}

// readGoMods reads the root go.mod at each end: the module paths, the
// go directives and the modules dropped.
func readGoMods(c *Change, st storer.EncodedObjectStorer, baseTree, sourceTree *object.Tree) {
	if e, err := baseTree.FindEntry("go.mod"); err == nil {
		if data, err := readBlob(st, e.Hash); err == nil {
			c.BaseModule = modulePath(data)
			c.baseMod = readGoMod(data)
			source := fileAt(st, sourceTree, "go.mod")
			c.Dropped = droppedModules(data, source)
			if source != nil {
				c.sourceMod = readGoMod(source)
			}
		}
	}
	if c.Module == "" {
		if e, err := sourceTree.FindEntry("go.mod"); err == nil {
			if data, err := readBlob(st, e.Hash); err == nil {
				c.Module = modulePath(data)
			}
		}
	}
}

// diffTrees lists what differs between two trees, as go-git's
// DiffTreeWithOptions does (renames detected), but walks the trees by
// hash: go-git's walk looks each folder up by its path and refuses a
// name with a control character (ESC, BEL), which git accepts. A file
// whose own name has one is left out of rename detection, which reads a
// file through its folder by that name and would refuse it too.
func diffTrees(ctx context.Context, st storer.EncodedObjectStorer, from, to *object.Tree) (object.Changes, error) {
	w := &treeWalk{ctx: ctx, st: st}
	if err := w.walk("", from, to); err != nil {
		return nil, err
	}
	// go-git pairs files of the same content through a map, so which
	// deletion became which rename changed from run to run (go-task's
	// styleguide.md, the same in many translations), and the plan with
	// it: they are paired here first, in an order of their own.
	changes, exact, twins := pairIdentical(w.changes)
	changes, err := pairSimilar(st, changes)
	if err != nil {
		return nil, err
	}
	changes = append(append(append(changes, exact...), twins...), w.odd...)
	sort.SliceStable(changes, func(i, j int) bool { return changeName(changes[i]) < changeName(changes[j]) })
	return changes, nil
}

// treeWalk walks two trees side by side for diffTrees: changes are what
// differs, odd what differs in a file whose name has a control
// character.
type treeWalk struct {
	ctx          context.Context
	st           storer.EncodedObjectStorer
	changes, odd object.Changes
}

func (w *treeWalk) add(c *object.Change) {
	if hasControl(c.From.TreeEntry.Name) || hasControl(c.To.TreeEntry.Name) {
		w.odd = append(w.odd, c)
	} else {
		w.changes = append(w.changes, c)
	}
}

// entryPairs pairs the entries of two trees (either may be nil) by name,
// in name order.
func entryPairs(a, b *object.Tree) ([]string, map[string][2]*object.TreeEntry) {
	entries := map[string][2]*object.TreeEntry{}
	var names []string
	for side, t := range []*object.Tree{a, b} {
		if t == nil {
			continue
		}
		for i := range t.Entries {
			e := &t.Entries[i]
			pair, seen := entries[e.Name]
			if !seen {
				names = append(names, e.Name)
			}
			pair[side] = e
			entries[e.Name] = pair
		}
	}
	sort.Strings(names)
	return names, entries
}

func (w *treeWalk) walk(prefix string, a, b *object.Tree) error {
	if err := w.ctx.Err(); err != nil {
		return err
	}
	names, entries := entryPairs(a, b)
	for _, name := range names {
		x, y := entries[name][0], entries[name][1]
		p := prefix + name
		if x != nil && y != nil && x.Hash == y.Hash && x.Mode == y.Mode {
			continue
		}
		xDir, yDir := x != nil && x.Mode == filemode.Dir, y != nil && y.Mode == filemode.Dir
		if x != nil && y != nil && !xDir && !yDir {
			w.add(&object.Change{From: object.ChangeEntry{Name: p, Tree: a, TreeEntry: *x}, To: object.ChangeEntry{Name: p, Tree: b, TreeEntry: *y}})
			continue
		}
		if xDir || yDir {
			if err := w.walkFolders(p, x, y, xDir, yDir); err != nil {
				return err
			}
		}
		if x != nil && !xDir {
			w.add(&object.Change{From: object.ChangeEntry{Name: p, Tree: a, TreeEntry: *x}})
		}
		if y != nil && !yDir {
			w.add(&object.Change{To: object.ChangeEntry{Name: p, Tree: b, TreeEntry: *y}})
		}
	}
	return nil
}

// walkFolders walks into the folder p at either end (x at the base if
// xDir, y at the source if yDir).
func (w *treeWalk) walkFolders(p string, x, y *object.TreeEntry, xDir, yDir bool) error {
	var subA, subB *object.Tree
	var err error
	if xDir {
		if subA, err = object.GetTree(w.st, x.Hash); err != nil {
			return fmt.Errorf("%q: %w", p, err)
		}
	}
	if yDir {
		if subB, err = object.GetTree(w.st, y.Hash); err != nil {
			return fmt.Errorf("%q: %w", p, err)
		}
	}
	return w.walk(p+"/", subA, subB)
}

func changeName(c *object.Change) string {
	if c.To.Name != "" {
		return c.To.Name
	}
	return c.From.Name
}

// renameScore is how alike (in percent of lines) a deleted and an added
// file must be to be a rename, as git's default.
const renameScore = 60

// pairSimilar pairs deleted and added text files whose lines are mostly
// alike as renames, as git does, in an order of their own: go-git's search
// walks maps and chose among equally alike files at random (go-task's
// styleguide.md in four translations), so the plan changed from run to
// run. Pairs go best first (most alike, then the most folders in common,
// then path order); a file over maxBlobRead, binary or not a regular
// file is left as it is, and so is everything when the pairs to weigh
// are too many.
func pairSimilar(st storer.EncodedObjectStorer, changes object.Changes) (object.Changes, error) {
	var dels, adds []*object.Change
	for _, c := range changes {
		switch {
		case c.From.Name != "" && c.To.Name == "" && c.From.TreeEntry.Mode == filemode.Regular:
			dels = append(dels, c)
		case c.From.Name == "" && c.To.Name != "" && c.To.TreeEntry.Mode == filemode.Regular:
			adds = append(adds, c)
		}
	}
	if len(dels) == 0 || len(adds) == 0 || len(dels)*len(adds) > 4_000_000 {
		return changes, nil
	}
	pairs := similarPairs(st, dels, adds)
	used := map[*object.Change]bool{}
	var out object.Changes
	for _, p := range pairs {
		d, a := dels[p.d], adds[p.a]
		if used[d] || used[a] {
			continue
		}
		used[d], used[a] = true, true
		out = append(out, &object.Change{From: d.From, To: a.To})
	}
	for _, c := range changes {
		if !used[c] {
			out = append(out, c)
		}
	}
	return out, nil
}

// lineSet is a text file's lines, each with how often it comes, and
// their number.
type lineSet struct {
	lines map[string]int
	n     int
}

// readLines reads a blob's lines; nil for one over maxBlobRead, binary,
// or not read.
func readLines(st storer.EncodedObjectStorer, h plumbing.Hash) *lineSet {
	if _, big, err := largeBlob(st, h); err != nil || big {
		return nil
	}
	data, err := readBlob(st, h)
	if err != nil {
		return nil
	}
	if _, binary := countLines(data); binary {
		return nil
	}
	t := &lineSet{lines: map[string]int{}}
	for _, l := range bytes.Split(data, []byte("\n")) {
		t.lines[string(bytes.TrimRight(l, "\r"))]++
		t.n++
	}
	return t
}

// renamePair is a deletion (dels[d]) and an addition (adds[a]) alike
// enough to be a rename: score is the percent of lines in common, like
// pathLikeness.
type renamePair struct{ d, a, score, like int }

// similarPairs are the deletions and additions alike enough to be a
// rename, best first.
func similarPairs(st storer.EncodedObjectStorer, dels, adds []*object.Change) []renamePair {
	from, to := make([]*lineSet, len(dels)), make([]*lineSet, len(adds))
	for i, c := range dels {
		from[i] = readLines(st, c.From.TreeEntry.Hash)
	}
	for i, c := range adds {
		to[i] = readLines(st, c.To.TreeEntry.Hash)
	}
	var pairs []renamePair
	for i, f := range from {
		for j, t := range to {
			if f == nil || t == nil || min(f.n, t.n)*100 < renameScore*max(f.n, t.n) {
				continue
			}
			common := 0
			for l, k := range f.lines {
				common += min(k, t.lines[l])
			}
			if score := common * 100 / max(f.n, t.n); score >= renameScore {
				pairs = append(pairs, renamePair{i, j, score, pathLikeness(dels[i].From.Name, adds[j].To.Name)})
			}
		}
	}
	sort.Slice(pairs, func(x, y int) bool {
		p, q := pairs[x], pairs[y]
		if p.score != q.score {
			return p.score > q.score
		}
		if p.like != q.like {
			return p.like > q.like
		}
		if adds[p.a].To.Name != adds[q.a].To.Name {
			return adds[p.a].To.Name < adds[q.a].To.Name
		}
		return dels[p.d].From.Name < dels[q.d].From.Name
	})
	return pairs
}

// pathLikeness is how alike two paths are: two for each folder they
// share from the top, one more for the same name.
func pathLikeness(a, b string) int {
	n := 0
	x, y := strings.Split(path.Dir(a), "/"), strings.Split(path.Dir(b), "/")
	for i := 0; i < len(x) && i < len(y) && x[i] == y[i]; i++ {
		n += 2
	}
	if path.Base(a) == path.Base(b) {
		n++
	}
	return n
}

// pairIdentical takes out the deletions and additions of the same
// content (blob and mode) and pairs them as renames: each added file, in
// path order, with the deleted one whose path is most like its own (the
// most folders in common, then the same name, then the first in path
// order). Of the files of one content left on one side, only the first
// in path order goes on to go-git's search for similar files, which
// would otherwise choose among equals at random: the others (twins) stay
// deletions or additions. It returns the other changes, the renames and
// the twins.
func pairIdentical(changes object.Changes) (rest, renames, twins object.Changes) {
	type key struct {
		h plumbing.Hash
		m filemode.FileMode
	}
	gone, added := map[key][]*object.Change{}, map[key][]*object.Change{}
	for _, c := range changes {
		switch {
		case c.From.Name != "" && c.To.Name == "":
			k := key{c.From.TreeEntry.Hash, c.From.TreeEntry.Mode}
			gone[k] = append(gone[k], c)
		case c.From.Name == "" && c.To.Name != "":
			k := key{c.To.TreeEntry.Hash, c.To.TreeEntry.Mode}
			added[k] = append(added[k], c)
		}
	}
	paired := map[*object.Change]bool{}
	likeness := pathLikeness
	for _, list := range gone {
		sort.Slice(list, func(i, j int) bool { return list[i].From.Name < list[j].From.Name })
	}
	for _, list := range added {
		sort.Slice(list, func(i, j int) bool { return list[i].To.Name < list[j].To.Name })
	}
	for k, ins := range added {
		dels := gone[k]
		if len(dels) == 0 {
			continue
		}
		for _, in := range ins {
			best := -1
			for i, d := range dels {
				if !paired[d] && (best < 0 || likeness(d.From.Name, in.To.Name) > likeness(dels[best].From.Name, in.To.Name)) {
					best = i
				}
			}
			if best < 0 {
				break
			}
			d := dels[best]
			paired[d], paired[in] = true, true
			renames = append(renames, &object.Change{From: d.From, To: in.To})
		}
	}
	twin := map[*object.Change]bool{}
	for _, side := range []map[key][]*object.Change{gone, added} {
		for _, list := range side {
			first := true
			for _, c := range list { // in path order where it was sorted above
				if paired[c] {
					continue
				}
				if !first {
					twin[c] = true
				}
				first = false
			}
		}
	}
	for _, c := range changes {
		switch {
		case twin[c]:
			twins = append(twins, c)
		case !paired[c]:
			rest = append(rest, c)
		}
	}
	sort.Slice(renames, func(i, j int) bool { return renames[i].To.Name < renames[j].To.Name })
	return rest, renames, twins
}

func hasControl(name string) bool {
	for i := 0; i < len(name); i++ {
		if name[i] < 0x20 || name[i] == 0x7f {
			return true
		}
	}
	return false
}

func treeOf(st storer.EncodedObjectStorer, h plumbing.Hash) (*object.Tree, error) {
	commit, err := object.GetCommit(st, h)
	if err != nil {
		return nil, err
	}
	return commit.Tree()
}

// readBlob reads a whole blob; callers check its size first.
func readBlob(st storer.EncodedObjectStorer, h plumbing.Hash) ([]byte, error) {
	return readHead(st, h, math.MaxInt64)
}

// headerRead is how much of a Go file is read for its header (package
// clause, build constraints and imports) when its body is not needed.
const headerRead = 64 << 10

// readHead reads up to limit bytes from the start of a blob.
func readHead(st storer.EncodedObjectStorer, h plumbing.Hash, limit int64) ([]byte, error) {
	blob, err := object.GetBlob(st, h)
	if err != nil {
		return nil, err
	}
	return blobHead(blob, limit)
}

// blobHead reads up to limit bytes from the start of a blob in hand.
func blobHead(blob *object.Blob, limit int64) ([]byte, error) {
	rd, err := blob.Reader()
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	return io.ReadAll(io.LimitReader(rd, limit))
}

// changedLines counts the lines added and removed between two versions of
// a text file, or keeps the whole count when either is too big to read or
// binary, or the diff takes too long.
func changedLines(st storer.EncodedObjectStorer, from, to plumbing.Hash, whole int) int {
	var text [2]string
	for i, h := range []plumbing.Hash{from, to} {
		if _, big, err := largeBlob(st, h); err != nil || big {
			return whole
		}
		data, err := readBlob(st, h)
		if err != nil {
			return whole
		}
		if _, binary := countLines(data); binary {
			return whole
		}
		text[i] = string(data)
	}
	return diffLines(text[0], text[1])
}

// diffLines counts the lines added and removed from a to b.
func diffLines(a, b string) int {
	n := 0
	for _, d := range diff.DoWithTimeout(a, b, 2*time.Second) {
		if d.Type != diffmatchpatch.DiffEqual {
			lines, _ := countLines([]byte(d.Text))
			n += lines
		}
	}
	return n
}

// maxBlobRead is the largest file ReadChange reads whole (to parse a Go
// file's imports and embeds, or go.mod); a larger one is only counted.
const maxBlobRead = 8 << 20

// lineCount is what countLines says of a file.
type lineCount struct {
	lines  int
	binary bool
}

// largeBlob counts the lines of a blob over maxBlobRead as it streams by;
// big is false (and nothing is read) for a smaller one.
func largeBlob(st storer.EncodedObjectStorer, h plumbing.Hash) (n lineCount, big bool, err error) {
	blob, err := object.GetBlob(st, h)
	if err != nil || blob.Size <= maxBlobRead {
		return n, false, err
	}
	rd, err := blob.Reader()
	if err != nil {
		return n, true, err
	}
	defer rd.Close()
	buf := make([]byte, 64<<10)
	var read int64
	var last byte
	for {
		k, err := rd.Read(buf)
		if k > 0 {
			if read < 8000 && bytes.IndexByte(buf[:min(k, int(8000-read))], 0) >= 0 {
				return lineCount{binary: true}, true, nil
			}
			n.lines += bytes.Count(buf[:k], []byte{'\n'})
			last, read = buf[k-1], read+int64(k)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return n, true, err
		}
	}
	if read > 0 && last != '\n' {
		n.lines++
	}
	return n, true, nil
}

// countLines counts lines as diff does, and calls a file with a NUL byte in
// its first 8000 bytes binary (as git does); binary files count no lines.
func countLines(data []byte) (int, bool) {
	head := data
	if len(head) > 8000 {
		head = head[:8000]
	}
	if bytes.IndexByte(head, 0) >= 0 {
		return 0, true
	}
	n := bytes.Count(data, []byte{'\n'})
	if len(data) > 0 && data[len(data)-1] != '\n' {
		n++
	}
	return n, false
}

// unchangedIntConsts finds, for the changed Go files that range over a
// name they do not declare, the integer constants of that name in the
// files of their package that the change leaves as they are: the parser
// sees a constant only in its own file, and a range over an integer
// needs Go 1.22.
func unchangedIntConsts(c *Change, st storer.EncodedObjectStorer, source *object.Tree) []string {
	changed := map[string]bool{}
	fset := token.NewFileSet()
	for _, f := range c.Files {
		changed[f.Path] = true
	}
	wanted := rangedOverNames(c, fset)
	var out []string
	for _, dir := range sortedKeys(wanted) {
		for _, e := range goFilesIn(source, dir) {
			name := path.Join(dir, e.Name)
			if strings.HasSuffix(e.Name, "_test.go") || changed[name] {
				continue
			}
			src, err := readHead(st, e.Hash, maxBlobRead)
			if err != nil {
				continue
			}
			if a, err := parser.ParseFile(fset, name, src, 0); err == nil {
				out = append(out, intConstsNamed(a, dir, wanted[dir])...)
			}
		}
	}
	return out
}

// rangedOverNames are, by folder, the names that the changed Go files
// range over without declaring them in the file.
func rangedOverNames(c *Change, fset *token.FileSet) map[string]map[string]bool {
	wanted := map[string]map[string]bool{} // folder → names ranged over
	for _, f := range c.Files {
		if f.src == nil || f.Kind == "deleted" || !strings.Contains(string(f.src), "range ") {
			continue
		}
		a, err := parser.ParseFile(fset, f.Path, f.src, 0)
		if err != nil {
			continue
		}
		ast.Inspect(a, func(n ast.Node) bool {
			if r, ok := n.(*ast.RangeStmt); ok {
				if id, ok := r.X.(*ast.Ident); ok && id.Obj == nil {
					if wanted[f.Dir()] == nil {
						wanted[f.Dir()] = map[string]bool{}
					}
					wanted[f.Dir()][id.Name] = true
				}
			}
			return true
		})
	}
	return wanted
}

// intConstsNamed are the keys ("dir:pkg.Name") of the integer constants
// of a file whose names are wanted.
func intConstsNamed(a *ast.File, dir string, wanted map[string]bool) []string {
	var out []string
	for _, d := range a.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, n := range vs.Names {
				t, typed := vs.Type.(*ast.Ident)
				if wanted[n.Name] && (typed && intTypes[t.Name] || vs.Type == nil && i < len(vs.Values) && isInt(vs.Values[i], 0)) {
					out = append(out, dir+":"+a.Name.Name+"."+n.Name)
				}
			}
		}
	}
	return out
}
