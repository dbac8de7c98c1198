//go:build unix

package gitops

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wo-runner/wo/internal/gittest"
)

// The fix gate's staging (issue 24): what an agent leaves in a worktree is
// staged as git add -A stages it, ignore files included, and what git
// would turn into a gitlink, hang on or read whole is refused.

// stagedWorktree is a created worktree of the fixture on branch review/x.
func stagedWorktree(t *testing.T) (*Repo, *Worktree) {
	t.Helper()
	r, base, w, _ := plannedWorktree(t, "wt")
	if err := w.Create(context.Background(), base, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := w.SwitchBranch("review/x"); err != nil {
		t.Fatal(err)
	}
	return r, w
}

// staged is what the index holds beyond HEAD, as git reports it.
func staged(t *testing.T, w *Worktree) []string {
	t.Helper()
	out := gittest.Run(t, w.Path, "diff", "--cached", "--name-only")
	if out == "" {
		return nil
	}
	return strings.Split(out, "\n")
}

// stagedStatus is staged with git's letter for each change and the
// index's mode: "M 100644 path", "D path".
func stagedStatus(t *testing.T, w *Worktree) string {
	t.Helper()
	var out []string
	for _, line := range strings.Split(gittest.Run(t, w.Path, "diff", "--cached", "--name-status"), "\n") {
		status, path, _ := strings.Cut(line, "\t")
		if status == "D" {
			out = append(out, "D "+path)
			continue
		}
		mode, _, _ := strings.Cut(gittest.Run(t, w.Path, "ls-files", "-s", "--", path), " ")
		out = append(out, status+" "+mode+" "+path)
	}
	return strings.Join(out, "\n")
}

// gitWouldAdd is what git add -A would stage, with the same global
// excludes file: the oracle for the ignore rules.
func gitWouldAdd(t *testing.T, w *Worktree, excludes string) []string {
	t.Helper()
	out := gittest.Run(t, w.Path, "-c", "core.excludesFile="+excludes, "add", "-A", "--dry-run")
	var paths []string
	for _, line := range strings.Split(out, "\n") {
		if p, ok := strings.CutPrefix(line, "add '"); ok {
			paths = append(paths, strings.TrimSuffix(p, "'"))
		}
	}
	sort.Strings(paths)
	return paths
}

func TestStageLeavesOutWhatTheIgnoreFilesName(t *testing.T) {
	t.Parallel()
	r, w := stagedWorktree(t)
	global := filepath.Join(t.TempDir(), "global-ignore")
	write(t, global, "*.bak\n")
	write(t, filepath.Join(r.GitDir, "info", "exclude"), "# comment\n\nsecret.txt\r\n")
	write(t, filepath.Join(w.Path, ".gitignore"), ".env\nnode_modules/\n")
	write(t, filepath.Join(w.Path, "sub/.gitignore"), "*.log\n!keep.log\n")
	// A link named .gitignore is not read (git does not follow one).
	write(t, filepath.Join(w.Path, "patterns"), "*.go\n")
	os.MkdirAll(filepath.Join(w.Path, "linked"), 0o755)
	os.Symlink("../patterns", filepath.Join(w.Path, "linked/.gitignore"))
	for _, p := range []string{".env", "node_modules/x/index.js", "sub/a.log", "sub/keep.log", "sub/deeper/b.log",
		"secret.txt", "notes.bak", "new.go", "linked/c.go", "other/.env"} {
		write(t, filepath.Join(w.Path, p), p+"\n")
	}
	write(t, filepath.Join(w.Path, "internal/a/a.go"), "package a // tracked, changed\n")
	want := gitWouldAdd(t, w, global)

	changed, err := w.Stage(StageOptions{ExcludesFile: global})
	if err != nil || !changed {
		t.Fatalf("Stage: %v %v", changed, err)
	}
	got := staged(t, w)
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("staged %v\ngit add -A would stage %v", got, want)
	}
	for _, p := range []string{".env", "other/.env", "node_modules/x/index.js", "sub/a.log", "secret.txt", "notes.bak"} {
		for _, s := range got {
			if s == p {
				t.Errorf("%s is ignored but was staged", p)
			}
		}
	}
	if !contains(got, "linked/c.go") || !contains(got, "sub/keep.log") {
		t.Errorf("staged %v: a linked .gitignore was read, or a negated pattern ignored", got)
	}
	// Changes reads the same ignore files but the global one, which it
	// is not given.
	list, err := w.Changes()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(list, ",") != "notes.bak" {
		t.Errorf("after staging, Changes lists %v, want notes.bak alone", list)
	}
}

func TestStageTakesATrackedFileEvenWhenIgnored(t *testing.T) {
	t.Parallel()
	_, w := stagedWorktree(t)
	write(t, filepath.Join(w.Path, ".gitignore"), "internal/\nREADME.md\n")
	write(t, filepath.Join(w.Path, "internal/a/a.go"), "package a // changed\n")
	write(t, filepath.Join(w.Path, "internal/a/new.go"), "package a // new, ignored\n")
	if _, err := w.Stage(StageOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(staged(t, w), ","); got != ".gitignore,internal/a/a.go" {
		t.Errorf("staged %s, want the ignore file and the tracked change only", got)
	}
}

// finishes runs f and fails the test if it does not return: a named pipe
// opened for reading waits for a writer forever.
func finishes(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { f(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatalf("%s did not return: it waits on a named pipe", what)
	}
}

func refusedPaths(t *testing.T, err error) map[string]string {
	t.Helper()
	var refused *StageRefusedError
	if !errors.As(err, &refused) {
		t.Fatalf("err %v, want a StageRefusedError", err)
	}
	out := map[string]string{}
	for _, r := range refused.Refused {
		out[r.Path] = r.Reason
	}
	return out
}

func TestStageRefusesWhatIsNotAFileAndStagesNothing(t *testing.T) {
	t.Parallel()
	r, w := stagedWorktree(t)
	write(t, filepath.Join(w.Path, "fine.go"), "package fine\n")
	if err := syscall.Mkfifo(filepath.Join(w.Path, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A tracked file replaced by a pipe is not read either.
	os.Remove(filepath.Join(w.Path, "README.md"))
	if err := syscall.Mkfifo(filepath.Join(w.Path, "README.md"), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("unix", filepath.Join(w.Path, "sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	gittest.Run(t, w.Path, "init", "-q", "vendor/x")
	write(t, filepath.Join(w.Path, "vendor/x/lib.go"), "package x\n")
	write(t, filepath.Join(w.Path, "deep/.GIT"), "[core]\n")
	big, err := os.Create(filepath.Join(w.Path, "big.bin"))
	if err != nil {
		t.Fatal(err)
	}
	big.Truncate(200 << 20) // sparse: nothing is written, and wo must read nothing
	big.Close()
	objects := countObjects(t, r.Path)

	var stageErr error
	finishes(t, "Stage", func() { _, stageErr = w.Stage(StageOptions{}) })
	got := refusedPaths(t, stageErr)
	want := map[string]string{
		"pipe":      "a named pipe: only regular files and symbolic links are committed",
		"README.md": "a named pipe: only regular files and symbolic links are committed",
		"sock":      "a socket: only regular files and symbolic links are committed",
		"vendor/x/": "a nested git repository: wo commits neither a gitlink nor the files of another .git",
		"deep/.GIT": "a name git reads as .git",
		"big.bin":   "200.0 MiB, over the limit of 10.0 MiB for one file",
	}
	for p, reason := range want {
		if got[p] != reason {
			t.Errorf("%s: refused as %q, want %q", p, got[p], reason)
		}
	}
	if len(got) != len(want) {
		t.Errorf("refused %v, want exactly %v", got, want)
	}
	if s := staged(t, w); len(s) != 0 {
		t.Errorf("staged %v after a refusal, want nothing", s)
	}
	if n := countObjects(t, r.Path); n != objects {
		t.Errorf("%d objects written to the repository before the refusal", n-objects)
	}
	msg := stageErr.Error()
	if !strings.HasPrefix(msg, "worktree "+w.Path+" holds 6 path(s) wo will not commit, so nothing was staged: README.md (a named pipe") ||
		!strings.HasSuffix(msg, "; vendor/x/ (a nested git repository: wo commits neither a gitlink nor the files of another .git)") {
		t.Errorf("message: %s", msg)
	}

	var changed []string
	finishes(t, "Changes", func() { changed, err = w.Changes() })
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"README.md", "big.bin", "deep/.GIT", "fine.go", "pipe", "sock", "vendor/x"} {
		if !contains(changed, p) {
			t.Errorf("Changes does not list %s: %v", p, changed)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestStageSizeLimitIsInclusive(t *testing.T) {
	t.Parallel()
	_, w := stagedWorktree(t)
	write(t, filepath.Join(w.Path, "at.txt"), strings.Repeat("a", 100))
	if _, err := w.Stage(StageOptions{MaxFileSize: 100}); err != nil {
		t.Fatalf("a file of exactly the limit: %v", err)
	}
	write(t, filepath.Join(w.Path, "over.txt"), strings.Repeat("a", 101))
	_, err := w.Stage(StageOptions{MaxFileSize: 100})
	if got := refusedPaths(t, err); got["over.txt"] != "101 bytes, over the limit of 100 bytes for one file" || len(got) != 1 {
		t.Errorf("refused %v", got)
	}
	// A tracked file that grew past the limit is refused too, unread.
	write(t, filepath.Join(w.Path, "README.md"), strings.Repeat("r", 2048))
	os.Remove(filepath.Join(w.Path, "over.txt"))
	_, err = w.Stage(StageOptions{MaxFileSize: 1024})
	if got := refusedPaths(t, err); got["README.md"] != "2.0 KiB, over the limit of 1.0 KiB for one file" {
		t.Errorf("refused %v", got)
	}
}

func TestStageAsksThePolicyAboutEveryChangeDeletionsToo(t *testing.T) {
	t.Parallel()
	_, w := stagedWorktree(t)
	write(t, filepath.Join(w.Path, "internal/a/a.go"), "package a // allowed\n")
	write(t, filepath.Join(w.Path, "docs/new.md"), "not allowed\n")
	os.Remove(filepath.Join(w.Path, "bin/run.sh"))
	var asked []string
	refuse := func(p string) string {
		asked = append(asked, p)
		if strings.HasPrefix(p, "internal/") {
			return ""
		}
		return "outside the allow-list"
	}
	_, err := w.Stage(StageOptions{Refuse: refuse})
	got := refusedPaths(t, err)
	if len(got) != 2 || got["docs/new.md"] != "outside the allow-list" || got["bin/run.sh"] != "outside the allow-list" {
		t.Errorf("refused %v", got)
	}
	if strings.Join(asked, ",") != "bin/run.sh,docs/new.md,internal/a/a.go" {
		t.Errorf("asked about %v", asked)
	}
	if s := staged(t, w); len(s) != 0 {
		t.Errorf("staged %v", s)
	}
	// Allowed alone, it is staged.
	os.RemoveAll(filepath.Join(w.Path, "docs"))
	gittest.Run(t, w.Path, "checkout", "--", "bin/run.sh")
	if changed, err := w.Stage(StageOptions{Refuse: refuse}); err != nil || !changed {
		t.Fatalf("Stage: %v %v", changed, err)
	}
	if got := strings.Join(staged(t, w), ","); got != "internal/a/a.go" {
		t.Errorf("staged %s", got)
	}
	if changed, err := w.Stage(StageOptions{Refuse: refuse}); err != nil || changed {
		t.Errorf("staging again: %v %v, want nothing changed", changed, err)
	}
}

func TestARefusalListIsBoundedAndCounted(t *testing.T) {
	t.Parallel()
	_, w := stagedWorktree(t)
	for i := 0; i < maxRefusalsListed+7; i++ {
		write(t, filepath.Join(w.Path, "junk", strings.Repeat("x", i+1)), "x")
	}
	_, err := w.Stage(StageOptions{Refuse: func(string) string { return "no" }})
	var refused *StageRefusedError
	if !errors.As(err, &refused) || len(refused.Refused) != maxRefusalsListed || refused.More != 7 {
		t.Fatalf("err %v", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "holds 57 path(s)") || !strings.HasSuffix(msg, "; and 7 more") {
		t.Errorf("message: %s", msg)
	}
}

func TestAnIgnoreFileThatIsNotAFileIsNotWaitedOn(t *testing.T) {
	t.Parallel()
	r, w := stagedWorktree(t)
	// The shared .git is the agent's to write: a pipe or a huge file as
	// info/exclude must neither hang nor be read whole.
	os.MkdirAll(filepath.Join(r.GitDir, "info"), 0o755)
	os.Remove(filepath.Join(r.GitDir, "info", "exclude"))
	if err := syscall.Mkfifo(filepath.Join(r.GitDir, "info", "exclude"), 0o644); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(w.Path, "new.go"), "package x\n")
	var err error
	finishes(t, "Stage", func() { _, err = w.Stage(StageOptions{}) })
	if err == nil || !strings.Contains(err.Error(), "info/exclude is a named pipe, not a regular file") {
		t.Errorf("err %v", err)
	}
	os.Remove(filepath.Join(r.GitDir, "info", "exclude"))
	f, _ := os.Create(filepath.Join(w.Path, ".gitignore"))
	f.Truncate(maxIgnoreFile + 1)
	f.Close()
	_, err = w.Stage(StageOptions{})
	var tooLarge *TooLargeError
	if !errors.As(err, &tooLarge) || !strings.Contains(err.Error(), "reading the ignore file "+filepath.Join(w.Path, ".gitignore")) {
		t.Errorf("err %v", err)
	}
	// A pipe named .gitignore in the worktree has no patterns, and is
	// refused as what it is.
	os.Remove(filepath.Join(w.Path, ".gitignore"))
	syscall.Mkfifo(filepath.Join(w.Path, ".gitignore"), 0o644)
	finishes(t, "Stage", func() { _, err = w.Stage(StageOptions{}) })
	if got := refusedPaths(t, err); !strings.HasPrefix(got[".gitignore"], "a named pipe") {
		t.Errorf("refused %v", got)
	}
}

func TestExcludesFileIsWhereGitLooks(t *testing.T) {
	t.Parallel()
	r, _ := stagedWorktree(t)
	home := t.TempDir()
	env := map[string]string{"HOME": home, "GIT_CONFIG_NOSYSTEM": "1"}
	getenv := func(k string) string { return env[k] }
	if got, want := r.ExcludesFile(getenv), filepath.Join(home, ".config/git/ignore"); got != want {
		t.Errorf("default: %s, want %s", got, want)
	}
	env["XDG_CONFIG_HOME"] = filepath.Join(home, "xdg")
	if got, want := r.ExcludesFile(getenv), filepath.Join(home, "xdg/git/ignore"); got != want {
		t.Errorf("with XDG_CONFIG_HOME: %s, want %s", got, want)
	}
	write(t, filepath.Join(home, "xdg/git/config"), "[core]\n\texcludesFile = /from/xdg\n")
	if got := r.ExcludesFile(getenv); got != "/from/xdg" {
		t.Errorf("from the XDG config: %s", got)
	}
	write(t, filepath.Join(home, ".gitconfig"), "[user]\n\tname = x\n[core]\n\tExcludesFile = ~/.global-ignore\n")
	if got, want := r.ExcludesFile(getenv), filepath.Join(home, ".global-ignore"); got != want {
		t.Errorf("~/.gitconfig wins over the XDG file: %s, want %s", got, want)
	}
	env["GIT_CONFIG_GLOBAL"] = filepath.Join(home, "elsewhere")
	write(t, env["GIT_CONFIG_GLOBAL"], "[core]\nexcludesfile = /from/global\n")
	if got := r.ExcludesFile(getenv); got != "/from/global" {
		t.Errorf("GIT_CONFIG_GLOBAL: %s", got)
	}
	gittest.Run(t, r.Path, "config", "core.excludesFile", "/from/repo")
	if got := r.ExcludesFile(getenv); got != "/from/repo" {
		t.Errorf("the repository's own setting wins: %s", got)
	}
	// A configuration file that is a pipe sets nothing and is not waited on.
	os.Remove(env["GIT_CONFIG_GLOBAL"])
	syscall.Mkfifo(env["GIT_CONFIG_GLOBAL"], 0o644)
	gittest.Run(t, r.Path, "config", "--unset", "core.excludesFile")
	var got string
	finishes(t, "ExcludesFile", func() { got = r.ExcludesFile(getenv) })
	if want := filepath.Join(home, "xdg/git/ignore"); got != want {
		t.Errorf("with a pipe as the global config: %s, want %s", got, want)
	}
	if got := r.ExcludesFile(func(k string) string { return map[string]string{"GIT_CONFIG_NOSYSTEM": "true"}[k] }); got != "" {
		t.Errorf("with no HOME and no setting: %q, want none", got)
	}
	for v, want := range map[string]bool{"1": true, "true": true, " Yes": true, "on": true, "0": false, "": false, "no": false} {
		if configTrue(v) != want {
			t.Errorf("configTrue(%q) = %v", v, !want)
		}
	}
}

// A file or link whose stat changed but whose content did not is not a
// change; a changed file keeps its executable bit; a file replaced by a
// folder is gone; a gitlink's folder is not walked.
func TestStageStagesWhatChangedAsGitDoes(t *testing.T) {
	t.Parallel()
	r, w := stagedWorktree(t)
	later := time.Now().Add(time.Hour)
	for _, p := range []string{"README.md", "bin/run.sh"} {
		if err := os.Chtimes(filepath.Join(w.Path, p), later, later); err != nil {
			t.Fatal(err)
		}
	}
	os.Remove(filepath.Join(w.Path, "link"))
	os.Symlink("README.md", filepath.Join(w.Path, "link")) // the same link, made again
	if changed, err := w.Stage(StageOptions{MaxFileSize: int64(len("hello\n"))}); err != nil || changed {
		t.Fatalf("nothing changed but stat data: %v %v", changed, err)
	}
	if list, err := w.Changes(); err != nil || len(list) != 0 {
		t.Fatalf("Changes %v %v", list, err)
	}

	write(t, filepath.Join(w.Path, "bin/run.sh"), "#!/bin/sh\necho changed\n")
	write(t, filepath.Join(w.Path, "new.sh"), "#!/bin/sh\n")
	os.Chmod(filepath.Join(w.Path, "new.sh"), 0o755)
	write(t, filepath.Join(w.Path, "plain.txt"), "plain\n")
	os.Remove(filepath.Join(w.Path, "README.md"))
	write(t, filepath.Join(w.Path, "README.md/inside.md"), "a folder now\n")
	head := gittest.Run(t, w.Path, "rev-parse", "HEAD")
	gittest.Run(t, w.Path, "update-index", "--add", "--cacheinfo", "160000,"+head+",vendor/sub")
	write(t, filepath.Join(w.Path, "vendor/sub/file.go"), "a submodule's checkout\n")
	if _, err := w.Stage(StageOptions{}); err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{"D README.md", "A 100644 README.md/inside.md", "M 100755 bin/run.sh", "A 100755 new.sh",
		"A 100644 plain.txt", "A 160000 vendor/sub"}, "\n")
	if got := stagedStatus(t, w); got != want {
		t.Errorf("staged:\n%s\nwant:\n%s", got, want)
	}
	_ = r
}

// A file made executable is a change, as git sees it; where it may not
// be, its text is staged with its old mode, the worktree's bit is taken
// off, and the caller is told.
func TestStageKeepsAFileNotExecutableUnlessItMayBe(t *testing.T) {
	t.Parallel()
	_, w := stagedWorktree(t)
	readme := filepath.Join(w.Path, "README.md")
	if err := os.Chmod(readme, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(w.Path, "new.sh"), "echo hi\n")
	os.Chmod(filepath.Join(w.Path, "new.sh"), 0o755)
	var kept []string
	changed, err := w.Stage(StageOptions{MayExecute: func(p string) bool { return p == "new.sh" }, ModeKept: func(p string) { kept = append(kept, p) }})
	if err != nil || !changed {
		t.Fatalf("Stage: %v %v", changed, err)
	}
	if strings.Join(kept, ",") != "README.md" {
		t.Errorf("told of %v, want README.md", kept)
	}
	modes := gittest.Run(t, w.Path, "ls-files", "-s", "README.md", "new.sh")
	if !strings.Contains(modes, "100644 ") || !strings.Contains(modes, "100755 ") || strings.Index(modes, "100644") > strings.Index(modes, "100755") {
		t.Errorf("index modes:\n%s", modes)
	}
	if fi, _ := os.Stat(readme); fi.Mode()&0o111 != 0 {
		t.Errorf("README.md is still executable in the worktree: %v", fi.Mode())
	}
	if st := gittest.Run(t, w.Path, "status", "--porcelain", "README.md"); st != "" {
		t.Errorf("git sees a change left: %q", st)
	}
	// A mode change alone is a change, also without the policy.
	os.Chmod(readme, 0o755)
	if changed, err := w.Stage(StageOptions{}); err != nil || !changed {
		t.Errorf("a file made executable: changed %v, %v", changed, err)
	}
}
