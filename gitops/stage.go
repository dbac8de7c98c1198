package gitops

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/wo-runner/wo/internal/gitname"
)

// What an agent (or anyone) left in a worktree is untrusted: staging reads
// the ignore files as git does, takes only regular files and symbolic
// links, never opens a named pipe or a device, reads no file past a bound,
// and refuses a nested repository rather than committing it as a gitlink
// or as the files of its .git.

// DefaultMaxFileSize bounds one file that wo stages or pushes after a
// review fix, when the work order sets no other (context.fix_max_file_bytes).
const DefaultMaxFileSize int64 = 10 << 20

// maxIgnoreFile bounds one ignore file: a .gitignore, info/exclude or the
// global excludes file.
const maxIgnoreFile = 4 << 20

// maxRefusalsListed bounds the refusals an error lists one by one; the
// rest are counted.
const maxRefusalsListed = 50

// StageOptions say what Stage takes into the index.
type StageOptions struct {
	// MaxFileSize bounds one file; a larger one is refused without being
	// read (DefaultMaxFileSize when 0).
	MaxFileSize int64
	// ExcludesFile is the user's global ignore file (core.excludesFile,
	// see Repo.ExcludesFile); "" for none.
	ExcludesFile string
	// Refuse, when set, says why a changed path must not be staged ("" to
	// stage it): the policy of what a fix may change.
	Refuse func(path string) string
	// RefuseLink, when set, says why a changed symbolic link must not be
	// staged with its target ("" to stage it); Refuse has passed its path.
	RefuseLink func(path, target string) string
	// MayExecute, when set, says whether a file may become executable
	// (new, or not executable in the index): one that may not is staged
	// as a regular file, its executable bits are taken off in the
	// worktree, and ModeKept is told its path.
	MayExecute func(path string) bool
	ModeKept   func(path string)
}

func (o StageOptions) maxSize() int64 {
	if o.MaxFileSize > 0 {
		return o.MaxFileSize
	}
	return DefaultMaxFileSize
}

// Refusal is a path that wo will not commit, and why.
type Refusal struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// StageRefusedError lists what the worktree holds that wo will not
// commit; nothing was staged.
type StageRefusedError struct {
	Worktree string
	Refused  []Refusal // the first maxRefusalsListed, in path order
	More     int       // how many more were refused
}

func (e *StageRefusedError) Error() string {
	return fmt.Sprintf("worktree %s holds %d path(s) wo will not commit, so nothing was staged: %s",
		e.Worktree, len(e.Refused)+e.More, ListRefusals(e.Refused, e.More))
}

// ListRefusals joins refusals for a message: "a (why); b (why) and 3 more".
func ListRefusals(refused []Refusal, more int) string {
	parts := make([]string, len(refused))
	for i, r := range refused {
		parts[i] = fmt.Sprintf("%s (%s)", r.Path, r.Reason)
	}
	out := strings.Join(parts, "; ")
	if more > 0 {
		out += fmt.Sprintf("; and %d more", more)
	}
	return out
}

// refusals collects refusals up to the listing bound.
type refusals struct {
	list []Refusal
	more int
}

func (r *refusals) add(path, reason string) {
	if len(r.list) < maxRefusalsListed {
		r.list = append(r.list, Refusal{Path: path, Reason: reason})
		return
	}
	r.more++
}

func (r *refusals) err(worktree string) error {
	if len(r.list) == 0 {
		return nil
	}
	sort.Slice(r.list, func(i, j int) bool { return r.list[i].Path < r.list[j].Path })
	return &StageRefusedError{Worktree: worktree, Refused: r.list, More: r.more}
}

// fileKind names what a mode is, for a message.
func fileKind(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "a regular file"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	}
	return "a special file"
}

// TooLargeError is a file over the size bound; it was not read whole.
type TooLargeError struct {
	Path  string
	Size  int64
	Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s has %s, over the limit of %s", e.Path, byteSize(e.Size), byteSize(e.Limit))
}

func tooLargeReason(size, limit int64) string {
	return fmt.Sprintf("%s, over the limit of %s for one file", byteSize(size), byteSize(limit))
}

// byteSize writes n bytes for a person: 200.0 MiB, 10 KiB, 12 bytes.
func byteSize(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// readBounded reads a regular file of at most limit bytes. It never
// follows a link at path itself unless follow is set, never waits on a
// named pipe or device (they are refused once open, before any read), and
// never reads more than limit+1 bytes, even from a file that grows.
func readBounded(path string, limit int64, follow bool) ([]byte, error) {
	var f *os.File
	var err error
	if follow {
		f, err = openFollow(path)
	} else {
		f, err = openNoFollow(path)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is %s, not a regular file", path, fileKind(fi.Mode()))
	}
	if fi.Size() > limit {
		return nil, &TooLargeError{Path: path, Size: fi.Size(), Limit: limit}
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, &TooLargeError{Path: path, Size: int64(len(b)), Limit: limit}
	}
	return b, nil
}

// parseIgnore reads gitignore patterns from text, as git does: one a
// line, blank lines and # comments skipped, each relative to domain.
func parseIgnore(text []byte, domain []string) []gitignore.Pattern {
	var ps []gitignore.Pattern
	for _, line := range strings.Split(string(text), "\n") {
		line = strings.TrimSuffix(line, "\r")
		if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		ps = append(ps, gitignore.ParsePattern(line, domain))
	}
	return ps
}

// ignoreFile reads the patterns of an ignore file outside the worktree
// (info/exclude, the global one): a missing file has none.
func ignoreFile(path string) ([]gitignore.Pattern, error) {
	if path == "" {
		return nil, nil
	}
	b, err := readBounded(path, maxIgnoreFile, true)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the ignore file %s: %w", path, err)
	}
	return parseIgnore(b, nil), nil
}

// scan is what differs between a worktree and its index, as git status
// shows it with the ignore files applied.
type scan struct {
	changed []string
	// special are changed paths that are neither regular files nor links
	// nor gone; nested are untracked directories holding a .git of their
	// own; oddNames are untracked paths that name .git in some spelling.
	// None of them can be staged.
	special  map[string]fs.FileMode
	nested   []string
	oddNames []string
}

// scan compares the working files with an index already read. Untracked
// files that an ignore file names are left out, as git leaves them out;
// tracked files count whatever the ignore files say.
func (w *Worktree) scan(idx *index.Index, opts StageOptions) (*scan, error) {
	s := &scan{special: map[string]fs.FileMode{}}
	tracked := make(map[string]*index.Entry, len(idx.Entries))
	realDirs := map[string]bool{}
	for _, e := range idx.Entries {
		tracked[e.Name] = e
		if changed, special := w.trackedChange(e, realDirs); changed {
			s.changed = append(s.changed, e.Name)
			if special != 0 {
				s.special[e.Name] = special
			}
		}
	}
	global, err := ignoreFile(opts.ExcludesFile)
	if err != nil {
		return nil, err
	}
	exclude, err := ignoreFile(filepath.Join(w.Repo.GitDir, "info", "exclude"))
	if err != nil {
		return nil, err
	}
	walk := &untrackedWalk{root: w.Path, s: s, tracked: tracked, patterns: append(global, exclude...)}
	err = filepath.WalkDir(w.Path, walk.visit)
	sort.Strings(s.changed)
	return s, err
}

// trackedChange reports whether the tracked file e differs from the
// working file, and the mode of a working file that is neither a regular
// file nor a link (a pipe, a device).
func (w *Worktree) trackedChange(e *index.Entry, realDirs map[string]bool) (bool, fs.FileMode) {
	if e.Mode == filemode.Submodule {
		return false, 0
	}
	if dir, _ := splitPath(e.Name); !w.realDir(dir, realDirs) {
		return true, 0 // gone: a link replaced its directory
	}
	target := filepath.Join(w.Path, filepath.FromSlash(e.Name))
	fi, err := os.Lstat(target)
	if err != nil {
		return true, 0
	}
	mode := fi.Mode()
	switch {
	case mode.IsDir():
		return true, 0 // gone: a directory took its place
	case !mode.IsRegular() && mode&fs.ModeSymlink == 0:
		return true, mode
	case mode.IsRegular() && (mode&0o111 != 0) != (e.Mode == filemode.Executable):
		return true, 0 // made executable, or no longer: git sees that too
	}
	if uint32(fi.Size()) == e.Size && fi.ModTime().Equal(e.ModifiedAt) {
		return false, 0
	}
	if uint32(fi.Size()) != e.Size || fi.Size() >= 1<<32 {
		return true, 0 // another size: changed, and not read
	}
	// The same size as the committed file: compare the content,
	// streamed, so that a large file that did not change is no change.
	h, err := hashWorktreeFile(target, fi)
	return err != nil || h != e.Hash, 0
}

// untrackedWalk finds the untracked files of a worktree, as git status
// does: what no ignore file names (patterns grows with each folder's
// .gitignore), not inside a submodule or a nested repository, and names
// git reads as .git apart.
type untrackedWalk struct {
	root     string
	s        *scan
	tracked  map[string]*index.Entry
	patterns []gitignore.Pattern
}

func (u *untrackedWalk) ignored(parts []string, isDir bool) bool {
	return gitignore.NewMatcher(u.patterns).Match(parts, isDir)
}

func (u *untrackedWalk) visit(p string, d fs.DirEntry, err error) error {
	if err != nil {
		return err
	}
	rel, _ := filepath.Rel(u.root, p)
	rel = filepath.ToSlash(rel)
	if rel == ".git" {
		if d.IsDir() {
			return fs.SkipDir
		}
		return nil
	}
	var parts []string
	if rel != "." {
		parts = strings.Split(rel, "/")
	}
	if d.IsDir() {
		return u.dir(p, rel, parts, d)
	}
	if _, ok := u.tracked[rel]; ok || u.ignored(parts, false) {
		return nil
	}
	if gitname.IsDotGit(d.Name()) {
		u.s.oddNames = append(u.s.oddNames, rel)
		return nil
	}
	u.s.changed = append(u.s.changed, rel)
	if mode := d.Type(); mode&fs.ModeSymlink == 0 && !mode.IsRegular() {
		u.s.special[rel] = mode
	}
	return nil
}

// dir decides whether the walk goes into a folder, and reads its
// .gitignore when it does.
func (u *untrackedWalk) dir(p, rel string, parts []string, d fs.DirEntry) error {
	if rel != "." {
		if e, ok := u.tracked[rel]; ok && e.Mode == filemode.Submodule {
			return fs.SkipDir
		}
		if u.ignored(parts, true) {
			return fs.SkipDir
		}
		if gitname.IsDotGit(d.Name()) {
			u.s.oddNames = append(u.s.oddNames, rel)
			return fs.SkipDir
		}
		if _, err := os.Lstat(filepath.Join(p, ".git")); err == nil {
			u.s.nested = append(u.s.nested, rel)
			return fs.SkipDir
		}
	}
	// A directory's own .gitignore applies below it; a link named
	// .gitignore is not read, as git does not read one.
	b, err := readBounded(filepath.Join(p, ".gitignore"), maxIgnoreFile, false)
	switch {
	case err == nil:
		u.patterns = append(u.patterns, parseIgnore(b, parts)...)
	case errors.Is(err, fs.ErrNotExist):
	default:
		var tooLarge *TooLargeError
		if errors.As(err, &tooLarge) {
			return fmt.Errorf("reading the ignore file %s: %w", filepath.Join(p, ".gitignore"), err)
		}
		// A link, pipe or directory named .gitignore: no patterns.
	}
	return nil
}

// Changes lists files that differ from the index, and untracked files
// that no ignore file names, as git status would show them.
func (w *Worktree) Changes() ([]string, error) {
	idx, err := w.readIndex()
	if err != nil {
		return nil, err
	}
	s, err := w.scan(idx, StageOptions{})
	if err != nil {
		return nil, err
	}
	changed := append(append(s.changed, s.nested...), s.oddNames...)
	sort.Strings(changed)
	return changed, nil
}

// hashWorktreeFile computes the blob hash of a symbolic link, or of a
// regular file of fi's size, streamed: never a link's target, never a
// pipe, never more bytes than fi says.
func hashWorktreeFile(path string, fi os.FileInfo) (plumbing.Hash, error) {
	if fi.Mode()&os.ModeSymlink != 0 {
		target, err := os.Readlink(path)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		return plumbing.ComputeHash(plumbing.BlobObject, []byte(target)), nil
	}
	f, err := openNoFollow(path)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	defer f.Close()
	if now, err := f.Stat(); err != nil || !now.Mode().IsRegular() || now.Size() != fi.Size() {
		return plumbing.ZeroHash, fmt.Errorf("%s changed while it was read", path)
	}
	h := plumbing.NewHasher(plumbing.BlobObject, fi.Size())
	n, err := io.Copy(h, io.LimitReader(f, fi.Size()))
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if n != fi.Size() {
		return plumbing.ZeroHash, fmt.Errorf("%s changed while it was read", path)
	}
	return h.Sum(), nil
}

// StageAll stages every change in the worktree, as git add -A does, with
// the default bounds and no policy; see Stage.
func (w *Worktree) StageAll() (bool, error) { return w.Stage(StageOptions{}) }

// Stage stages every change in the worktree, as git add -A does, and says
// whether anything changed. Untracked files that the ignore files name
// (.gitignore at every level, info/exclude, opts.ExcludesFile) are left
// out. Named pipes, sockets, devices, nested repositories, names git
// reads as .git, files over opts.MaxFileSize, paths opts.Refuse refuses
// and links opts.RefuseLink refuses are not staged: then nothing is, and
// a StageRefusedError lists them all.
func (w *Worktree) Stage(opts StageOptions) (bool, error) {
	idx, err := w.readIndex()
	if err != nil {
		return false, err
	}
	s, err := w.scan(idx, opts)
	if err != nil {
		return false, err
	}
	limit := opts.maxSize()
	todo, removed, refused, err := w.sortChanges(s, opts, limit)
	if err != nil {
		return false, err
	}
	if err := refused.err(w.Path); err != nil {
		return false, err
	}
	if len(todo) == 0 && len(removed) == 0 {
		return false, nil
	}
	staged := make([]*index.Entry, 0, len(todo))
	for _, f := range todo {
		e, err := stageFile(w.Repo.storage, f.target, f.name, f.fi, limit)
		var tooLarge *TooLargeError
		if errors.As(err, &tooLarge) { // it grew since it was looked at
			refused.add(f.name, tooLargeReason(tooLarge.Size, limit))
			continue
		}
		if err != nil {
			return false, err
		}
		if e.Mode == filemode.Executable && opts.MayExecute != nil && !opts.MayExecute(f.name) && !wasExecutable(idx, f.name) {
			if err := notExecutable(f.target); err != nil {
				return false, err
			}
			e.Mode = filemode.Regular
			if opts.ModeKept != nil {
				opts.ModeKept(f.name)
			}
		}
		staged = append(staged, e)
	}
	if err := refused.err(w.Path); err != nil {
		return false, err
	}
	putEntries(idx, staged, removed)
	return true, w.writeIndex(idx)
}

// wasExecutable reports whether the index has name as an executable file.
func wasExecutable(idx *index.Index, name string) bool {
	e, err := idx.Entry(name)
	return err == nil && e.Mode == filemode.Executable
}

// notExecutable takes the executable bits off the regular file at path,
// never through a link: it is opened without following one.
func notExecutable(path string) error {
	f, err := openNoFollow(path)
	if err != nil {
		return fmt.Errorf("keeping %s not executable: %w", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return fmt.Errorf("keeping %s not executable: it is no longer a regular file", path)
	}
	return f.Chmod(fi.Mode().Perm() &^ 0o111)
}

// fileToStage is a working file to store and add to the index.
type fileToStage struct {
	name, target string
	fi           os.FileInfo
}

// sortChanges sorts what a scan found into the files to stage, the ones
// gone (to remove from the index), and the ones refused, with why.
func (w *Worktree) sortChanges(s *scan, opts StageOptions, limit int64) ([]fileToStage, map[string]bool, refusals, error) {
	var refused refusals
	for _, p := range s.nested {
		refused.add(p+"/", "a nested git repository: wo commits neither a gitlink nor the files of another .git")
	}
	for _, p := range s.oddNames {
		refused.add(p, "a name git reads as .git")
	}
	removed := map[string]bool{}
	realDirs := map[string]bool{}
	var todo []fileToStage
	for _, name := range s.changed {
		if mode, ok := s.special[name]; ok {
			refused.add(name, fileKind(mode)+": only regular files and symbolic links are committed")
			continue
		}
		target := filepath.Join(w.Path, filepath.FromSlash(name))
		fi, gone, err := w.lookAt(target, name, realDirs)
		if err != nil {
			return nil, nil, refused, err
		}
		why := ""
		if !gone && fi.Mode().IsRegular() && fi.Size() > limit {
			why = tooLargeReason(fi.Size(), limit)
		} else if opts.Refuse != nil {
			why = opts.Refuse(name)
		}
		switch {
		case why != "":
			refused.add(name, why)
		case gone:
			removed[name] = true
		default:
			if why, err = refuseLink(opts, target, name, fi); err != nil {
				return nil, nil, refused, err
			}
			if why != "" {
				refused.add(name, why)
			} else {
				todo = append(todo, fileToStage{name, target, fi})
			}
		}
	}
	return todo, removed, refused, nil
}

// lookAt is the working file name at target, or gone: missing, a folder
// now, or below a link (git stages the link, never what it leads to).
func (w *Worktree) lookAt(target, name string, realDirs map[string]bool) (os.FileInfo, bool, error) {
	if dir, _ := splitPath(name); !w.realDir(dir, realDirs) {
		return nil, true, nil
	}
	fi, err := os.Lstat(target)
	if errors.Is(err, fs.ErrNotExist) || err == nil && fi.IsDir() {
		return fi, true, nil
	}
	return fi, false, err
}

// refuseLink is why opts.RefuseLink refuses the link at target, if it is
// one.
func refuseLink(opts StageOptions, target, name string, fi os.FileInfo) (string, error) {
	if opts.RefuseLink == nil || fi.Mode()&fs.ModeSymlink == 0 {
		return "", nil
	}
	link, err := os.Readlink(target)
	if err != nil {
		return "", err
	}
	return opts.RefuseLink(name, link), nil
}

// putEntries puts the staged entries in the index, in place of the ones
// of the same name, and takes the removed names out.
func putEntries(idx *index.Index, staged []*index.Entry, removed map[string]bool) {
	byName := make(map[string]int, len(idx.Entries))
	for i, e := range idx.Entries {
		byName[e.Name] = i
	}
	for _, e := range staged {
		if i, ok := byName[e.Name]; ok {
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
}

// stageFile stores a file's content (at most limit bytes) or a link's
// target as a blob and returns its index entry.
func stageFile(st *filesystem.Storage, path, name string, fi os.FileInfo, limit int64) (*index.Entry, error) {
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
		content, err = readBounded(path, limit, false)
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
