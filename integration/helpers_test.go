package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/wo-runner/wo/commands"
	"github.com/wo-runner/wo/internal/gittest"
	"github.com/wo-runner/wo/split"
)

// woBin is a wo binary built with -tags wofault, so tests can crash it at
// named points (WO_FAULT) or make it pause (WO_FAULT_PAUSE).
var woBin string

func buildWo() (cleanup func(), err error) {
	dir, err := os.MkdirTemp("", "wo-integration-")
	if err != nil {
		return nil, err
	}
	woBin = filepath.Join(dir, "wo")
	cmd := exec.Command("go", "build", "-tags", "wofault", "-o", woBin, "..")
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("building wo: %v\n%s", err, out)
	}
	return func() { os.RemoveAll(dir) }, nil
}

// fixture is a repository with a base branch, a source branch with the
// change, and a bare remote; plus a store and a work order over them.
type fixture struct {
	t      testing.TB
	root   string
	repo   string
	origin string
	store  string
	wtRoot string
	files  []string // the manifest
}

// emptyFixture is a new repository on main with an author configured, and
// where its bare remote, store and worktrees will go.
func emptyFixture(t testing.TB) *fixture {
	t.Helper()
	root := t.TempDir()
	f := &fixture{t: t, root: root, repo: filepath.Join(root, "repo"), origin: filepath.Join(root, "origin.git"),
		store: filepath.Join(root, "wo.db"), wtRoot: filepath.Join(root, "worktrees")}
	gittest.Run(t, root, "init", "-q", "-b", "main", f.repo)
	gittest.Run(t, f.repo, "config", "user.name", "Wo Runner")
	gittest.Run(t, f.repo, "config", "user.email", "wo@example.com")
	return f
}

// newFixture is the repository that buildFixture makes for n, and its bare
// remote: built once per n with the git command, then copied for each
// test (a dozen git processes each, otherwise).
func newFixture(t testing.TB, n int) *fixture {
	t.Helper()
	v, _ := fixtureTemplates.LoadOrStore(n, &fixtureTemplate{})
	tpl := v.(*fixtureTemplate)
	tpl.once.Do(func() { tpl.dir, tpl.files, tpl.err = buildFixtureTemplate(n) })
	if tpl.err != nil {
		t.Fatalf("building the fixture repository of %d files: %v", n, tpl.err)
	}
	root := t.TempDir()
	f := &fixture{t: t, root: root, repo: filepath.Join(root, "repo"), origin: filepath.Join(root, "origin.git"),
		store: filepath.Join(root, "wo.db"), wtRoot: filepath.Join(root, "worktrees"), files: append([]string(nil), tpl.files...)}
	if err := os.CopyFS(root, os.DirFS(tpl.dir)); err != nil {
		t.Fatal(err)
	}
	// origin is the template's remote until the configuration names this one.
	config := filepath.Join(f.repo, ".git", "config")
	b, err := os.ReadFile(config)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(config, bytes.ReplaceAll(b, []byte(filepath.Join(tpl.dir, "origin.git")), []byte(f.origin)), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := gittest.Run(t, f.repo, "remote", "get-url", "origin"); got != f.origin {
		t.Fatalf("the copied repository's origin is %s, want %s", got, f.origin)
	}
	return f
}

type fixtureTemplate struct {
	once  sync.Once
	dir   string
	files []string
	err   error
}

// fixtureTemplates are the repositories newFixture copies, by n; TestMain
// removes them.
var fixtureTemplates sync.Map

func removeFixtureTemplates() {
	fixtureTemplates.Range(func(_, v any) bool {
		if dir := v.(*fixtureTemplate).dir; dir != "" {
			os.RemoveAll(dir)
		}
		return true
	})
}

// buildFixtureTemplate makes, in a new folder, the repository: n files on
// the base branch, and on main a change to some and new files, all listed
// in the manifest; and its bare remote, which has the base branch. Both
// are packed, as a clone is, so that a copy is a few files.
func buildFixtureTemplate(n int) (dir string, files []string, err error) {
	dir, err = os.MkdirTemp("", "wo-integration-fixture-")
	if err != nil {
		return "", nil, err
	}
	repo, origin := filepath.Join(dir, "repo"), filepath.Join(dir, "origin.git")
	run := func(in string, args ...string) {
		if err != nil {
			return
		}
		if out, e := gittest.Try(in, args...); e != nil {
			err = fmt.Errorf("git %s: %v\n%s", strings.Join(args, " "), e, out)
		}
	}
	write := func(rel, content string) {
		if err != nil {
			return
		}
		path := filepath.Join(repo, rel)
		if err = os.MkdirAll(filepath.Dir(path), 0o755); err == nil {
			err = os.WriteFile(path, []byte(content), 0o644)
		}
	}
	run(dir, "init", "-q", "--template=", "-b", "main", repo)
	run(repo, "config", "user.name", "Wo Runner")
	run(repo, "config", "user.email", "wo@example.com")
	for i := 0; i < n; i++ {
		write(fmt.Sprintf("pkg%02d/file%04d.go", i%20, i), fmt.Sprintf("package pkg%02d\n\n// File %d.\n", i%20, i))
	}
	write("README.md", "# fixture\n")
	run(repo, "add", "-A")
	run(repo, "commit", "-q", "-m", "base")
	run(repo, "branch", "code-review-base")
	for i := 0; i < 3; i++ {
		p := fmt.Sprintf("pkg%02d/file%04d.go", i%20, i)
		write(p, "package changed\n")
		files = append(files, p)
	}
	for i := 0; i < 3; i++ {
		p := fmt.Sprintf("foundation/new%d.go", i)
		write(p, fmt.Sprintf("package foundation\n\nconst N%d = %d\n", i, i))
		files = append(files, p)
	}
	write("unrelated.txt", "not in the manifest\n")
	run(repo, "add", "-A")
	run(repo, "commit", "-q", "-m", "the big change")
	run(dir, "init", "-q", "--bare", "--template=", origin)
	run(repo, "remote", "add", "origin", origin)
	run(repo, "push", "-q", "origin", "code-review-base")
	run(repo, "-c", "repack.writeBitmaps=false", "gc", "-q", "--prune=now")
	run(origin, "-c", "repack.writeBitmaps=false", "gc", "-q", "--prune=now")
	run(repo, "fsck", "--strict", "--no-progress")
	run(origin, "fsck", "--strict", "--no-progress")
	if err != nil {
		os.RemoveAll(dir)
		return "", nil, err
	}
	return dir, files, nil
}

func writeFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// gitProcedure is the git part of the seed's procedure (steps 1–5 and 10)
// and the final update_task, as wo split writes it without GitHub.
func gitProcedure() []any { return split.ReviewProcedure(false) }

// task returns a work order over the fixture; change adjusts it.
func (f *fixture) task(key string, procedure []any, change func(doc map[string]any)) map[string]any {
	manifest := make([]any, len(f.files))
	for i, p := range f.files {
		manifest[i] = p
	}
	doc := map[string]any{
		"_key": key, "title": "PR #1: Foundation", "status": "open", "type": "task", "priority": "high",
		"x_owner": "platform-team",
		"work_order": map[string]any{
			"version": "1.0", "objective": "Put the foundation files up for review",
			"context": map[string]any{"repo_path": f.repo, "base_branch": "code-review-base", "source_branch": "main",
				"worktree_root": f.wtRoot, "x_ci": "kept"},
			"inputs": map[string]any{"branch_name": "review/01-foundation", "worktree_name": "pr-01-foundation",
				"pr_title": "PR #1: Foundation", "file_manifest": manifest},
			"procedure":        procedure,
			"success_criteria": []any{"Worktree cleaned up", "Task status updated to in_review"},
		},
	}
	if change != nil {
		change(doc)
	}
	return doc
}

// importTask stores a document through wo import.
func (f *fixture) importTask(doc map[string]any) {
	f.t.Helper()
	b, _ := json.Marshal([]any{doc})
	path := filepath.Join(f.root, "import.json")
	os.WriteFile(path, b, 0o644)
	if r := f.wo(nil, "import", path); r.code != 0 {
		f.t.Fatalf("import: %s", r.stderr)
	}
}

type woResult struct {
	code           int
	killed         bool
	stdout, stderr string
}

// wo runs the wo binary against the fixture's store.
func (f *fixture) wo(env []string, args ...string) woResult {
	f.t.Helper()
	cmd := f.cmd(env, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result(cmd, err, out.String(), errb.String())
	if slices.Contains(args, "--json") && !slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--jq") }) && !r.killed && out.Len() > 0 {
		// Every --json output the tests see holds to its published schema.
		if err := commands.CheckOutput(out.Bytes()); err != nil {
			f.t.Errorf("wo %s: %v\n%s", strings.Join(args, " "), err, out.String())
		}
	}
	return r
}

func (f *fixture) cmd(env []string, args ...string) *exec.Cmd {
	cmd := exec.Command(woBin, append(args, "--store", f.store)...)
	cmd.Env = append(os.Environ(), gittest.Env...)
	cmd.Env = append(cmd.Env, "WO_AGENT=", "GITHUB_TOKEN=", "GH_TOKEN=", "WO_FAULT=", "WO_FAULT_PAUSE=", "WO_FAULT_SIGNAL=")
	// The test agents write what they were given (their prompt, their
	// environment) to these two files beside the repository: the only
	// paths outside their worktree that the sandbox lets them write.
	cmd.Env = append(cmd.Env, "WO_AGENT_WRITABLE="+strings.Join(f.agentFiles(), string(os.PathListSeparator)))
	cmd.Env = append(cmd.Env, env...)
	return cmd
}

// agentFiles are the files a test agent may write outside its worktree,
// made empty if missing.
func (f *fixture) agentFiles() []string {
	files := []string{filepath.Join(f.root, "prompt.txt"), filepath.Join(f.root, "agent-env")}
	for _, p := range files {
		if fh, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
			fh.Close()
		}
	}
	return files
}

func result(cmd *exec.Cmd, err error, stdout, stderr string) woResult {
	r := woResult{stdout: stdout, stderr: stderr}
	if err == nil {
		return r
	}
	if ee, ok := err.(*exec.ExitError); ok {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			r.killed = true
			r.code = -1
			return r
		}
		r.code = ee.ExitCode()
		return r
	}
	r.code = -2
	r.stderr += err.Error()
	return r
}

// state reads the task through wo show --json.
func (f *fixture) doc(key string) map[string]any {
	f.t.Helper()
	r := f.wo(nil, "show", key, "--json")
	if r.code != 0 {
		f.t.Fatalf("show %s: %s", key, r.stderr)
	}
	var env struct {
		Data struct {
			Task map[string]any `json:"task"`
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &env); err != nil {
		f.t.Fatal(err)
	}
	return env.Data.Task
}

func stateOf(doc map[string]any) map[string]any {
	wo, _ := doc["work_order"].(map[string]any)
	st, _ := wo["state"].(map[string]any)
	return st
}

// assertGitDone checks the end result of the git steps with git itself:
// one branch with exactly one commit on top of the base, holding the
// manifest's files as they are on main; the remote at that commit; no
// worktree left; a clean fsck; completed_steps without duplicates.
func (f *fixture) assertGitDone(key string) {
	t := f.t
	t.Helper()
	if got := gittest.Run(t, f.repo, "branch", "--list", "review/*"); got != "review/01-foundation" {
		t.Errorf("branches: %q, want exactly review/01-foundation", got)
	}
	if n := gittest.Run(t, f.repo, "rev-list", "--count", "code-review-base..review/01-foundation"); n != "1" {
		t.Errorf("%s commits on the branch, want 1", n)
	}
	if msg := gittest.Run(t, f.repo, "log", "-1", "--format=%s", "review/01-foundation"); msg != "PR #1: Foundation" {
		t.Errorf("commit message %q", msg)
	}
	changed := strings.Split(gittest.Run(t, f.repo, "diff", "--name-only", "code-review-base", "review/01-foundation"), "\n")
	if strings.Join(changed, ",") != strings.Join(sorted(f.files), ",") {
		t.Errorf("the commit changes %v, want the manifest %v", changed, sorted(f.files))
	}
	if d := gittest.Run(t, f.repo, "diff", "main", "review/01-foundation", "--", "foundation", "pkg00/file0000.go"); d != "" {
		t.Errorf("committed files differ from main:\n%s", d)
	}
	local := gittest.Run(t, f.repo, "rev-parse", "review/01-foundation")
	if remote := gittest.Run(t, f.origin, "rev-parse", "refs/heads/review/01-foundation"); remote != local {
		t.Errorf("remote at %s, local at %s", remote, local)
	}
	if list := gittest.Run(t, f.repo, "worktree", "list", "--porcelain"); strings.Count(list, "worktree ") != 1 {
		t.Errorf("worktrees left:\n%s", list)
	}
	gittest.Run(t, f.repo, "fsck", "--strict", "--no-progress")
	st := stateOf(f.doc(key))
	done, _ := st["completed_steps"].([]any)
	seen := map[string]bool{}
	for _, s := range done {
		k := fmt.Sprint(s)
		if seen[k] {
			t.Errorf("completed_steps has %s twice: %v", k, done)
		}
		seen[k] = true
	}
	if len(done) != 7 || fmt.Sprint(st["current_step"]) != "7" {
		t.Errorf("state: current_step %v, completed_steps %v", st["current_step"], done)
	}
	if fmt.Sprint(st["commit_sha"]) != local || fmt.Sprint(st["pushed_sha"]) != local {
		t.Errorf("state records commit %v and push %v, branch is at %s", st["commit_sha"], st["pushed_sha"], local)
	}
	if st["worktree_path"] != nil {
		t.Errorf("worktree_path = %v, want null after cleanup", st["worktree_path"])
	}
}

func sorted(list []string) []string {
	out := append([]string(nil), list...)
	sort.Strings(out)
	return out
}

// waitFor polls cond until it holds or the time is up.
func waitFor(t testing.TB, what string, limit time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
