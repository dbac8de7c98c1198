package procedure

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wo-runner/wo/integration/ghstandin"
	"github.com/wo-runner/wo/store"
	"github.com/wo-runner/wo/workorder"
)

// This file is a harness for unit tests of single actions: a real run (the
// engine's own run type, with a StateWriteBack over an embedded SQLite store
// and a lease held) over a work order whose repository is a real git
// repository with a bare remote, both made with the git command, and,
// when a test asks, the GitHub stand-in on loopback. A test runs one
// action's Run, Check or Plan through a StepContext, exactly as the engine
// would, without building the binary.

// The token the stand-in accepts.
const standinToken = "ghs_UNIT_STANDIN_0123456789"

// The fixture's names, as the default work order uses them.
const (
	fixBase     = "code-review-base"
	fixSource   = "main"
	fixBranch   = "review/01-foundation"
	fixWorktree = "pr-01-foundation"
	fixTitle    = "PR #1: Foundation"
	fixRepo     = "acme/hermes"
	fixKey      = "task_cr_01"
)

// fixture file contents: the base has pkg/a.go and README.md; the source
// branch changes pkg/a.go and adds foundation/new.go and unrelated.txt.
const (
	baseA    = "package pkg\n\n// A is the base version.\nconst A = 1\n"
	sourceA  = "package pkg\n\n// A is the changed version.\nconst A = 2\n"
	sourceN  = "package foundation\n\nconst N = 0\n"
	readme   = "# hermes\n"
	unrelate = "not in the manifest\n"
)

// stepOpts describe the work order and the world around it.
type stepOpts struct {
	// Context and Inputs are merged over the defaults; a nil value
	// removes the default.
	Context map[string]any
	Inputs  map[string]any
	// State is the initial work_order.state.
	State map[string]any
	// Procedure replaces seedSteps().
	Procedure []any
	// Approval makes the work order ask for approval before it changes
	// anything.
	Approval bool
	// SuccessCriteria of the work order; none by default.
	SuccessCriteria []any
	// GitHub starts the stand-in; Reviews are its reviewer's rounds and
	// ReviewDelay how long after a push a review arrives (0: at once).
	GitHub      bool
	Reviews     [][]ghstandin.Comment
	ReviewDelay time.Duration
	// ReviewerLogin is who the stand-in's reviewer is; its default is
	// coderabbitai[bot], and wo's own login is wo-bot.
	ReviewerLogin string
	// StandIn, when set, configures the stand-in before it starts (a
	// reviewer's mode, say).
	StandIn func(*ghstandin.Server)
	// Agent is the body of a shell script used as the agent command.
	Agent string
	// Actions is the engine's table; nil means this build's.
	Actions Actions
	// Env is what Engine.Getenv answers (GITHUB_TOKEN is set when GitHub).
	Env map[string]string
	// Serial keeps the test out of the parallel ones: it changes the
	// process's environment (t.Setenv). Every other harness test runs in
	// parallel, as each has its own repositories, store and stand-in.
	Serial bool
}

// parallelTests are the tests the harness has made parallel, so that a
// test that builds several harnesses asks only once.
var parallelTests sync.Map

// The fixture's repository and bare remote are built once with the git
// command and copied for each harness: building them is a dozen git
// processes, which made up a good part of the package's test time (and
// of every mutant's, under mutation testing).
var (
	templateOnce sync.Once
	templateDir  string
	templateErr  error
)

func buildTemplate() (string, error) {
	templateOnce.Do(func() {
		dir, err := os.MkdirTemp("", "wo-procedure-fixture-")
		if err != nil {
			templateErr = err
			return
		}
		templateDir = dir
		repo, remote := filepath.Join(dir, "repo"), filepath.Join(dir, "origin.git")
		files := func(m map[string]string) error {
			for name, content := range m {
				path := filepath.Join(repo, name)
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					return err
				}
				if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
					return err
				}
			}
			return nil
		}
		steps := []func() error{
			// No template: no sample hooks, no info/exclude to copy for
			// every test.
			func() error { return gitErr(dir, "init", "-q", "--template=", "-b", "main", repo) },
			func() error { return gitErr(repo, "config", "user.name", "Wo Runner") },
			func() error { return gitErr(repo, "config", "user.email", "wo@example.com") },
			func() error { return files(map[string]string{"README.md": readme, "pkg/a.go": baseA}) },
			func() error { return gitErr(repo, "add", "-A") },
			func() error { return gitErr(repo, "commit", "-q", "-m", "base") },
			func() error { return gitErr(repo, "branch", fixBase) },
			func() error {
				return files(map[string]string{"pkg/a.go": sourceA, "foundation/new.go": sourceN, "unrelated.txt": unrelate})
			},
			func() error { return gitErr(repo, "add", "-A") },
			func() error { return gitErr(repo, "commit", "-q", "-m", "the big change") },
			func() error { return gitErr(dir, "init", "-q", "--bare", "--template=", remote) },
			func() error { return gitErr(repo, "remote", "add", "origin", remote) },
			func() error { return gitErr(repo, "push", "-q", "origin", fixBase) },
			// One pack and one packed-refs file in each, not a folder per
			// object: fewer files for every test to copy.
			func() error { return gitErr(repo, "-c", "repack.writeBitmaps=false", "gc", "-q", "--prune=now") },
			func() error { return gitErr(remote, "-c", "repack.writeBitmaps=false", "gc", "-q", "--prune=now") },
			func() error {
				// Reflogs and the folders git makes again when it needs
				// them; git fsck below proves both still repositories.
				for _, p := range []string{"repo/.git/logs", "repo/.git/info", "repo/.git/COMMIT_EDITMSG", "repo/.git/refs/tags",
					"repo/.git/refs/remotes", "repo/.git/objects/info", "origin.git/info", "origin.git/refs/tags", "origin.git/objects/info"} {
					if err := os.RemoveAll(filepath.Join(dir, p)); err != nil {
						return err
					}
				}
				return nil
			},
			func() error { return gitErr(repo, "fsck", "--strict", "--no-progress") },
			func() error { return gitErr(remote, "fsck", "--strict", "--no-progress") },
		}
		for _, step := range steps {
			if templateErr = step(); templateErr != nil {
				return
			}
		}
	})
	return templateDir, templateErr
}

func gitErr(dir string, args ...string) error {
	if out, err := gitTry(dir, args...); err != nil {
		return fmt.Errorf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

func TestMain(m *testing.M) {
	code := m.Run()
	if templateDir != "" {
		os.RemoveAll(templateDir)
	}
	os.Exit(code)
}

// stepHarness is a run over a fixture, and handles to look at the world.
type stepHarness struct {
	t        *testing.T
	ctx      context.Context
	r        *run
	store    store.Store
	Root     string // the temporary folder
	Repo     string // the main repository, on main
	Remote   string // the bare remote behind origin
	WtRoot   string // context.worktree_root
	Worktree string // where the work order's worktree goes
	GH       *ghstandin.Server
	env      map[string]string
}

// seedSteps is the seed's eleven-step procedure.
func seedSteps() []any {
	steps := []map[string]any{
		{"action": "create_worktree", "command": "git worktree add <worktree_root>/<worktree_name> <base_branch>"},
		{"action": "create_branch", "command": "git checkout -b <branch_name>"},
		{"action": "checkout_files", "command": "git checkout <source_branch> -- <file_manifest>"},
		{"action": "commit", "command": "git add -A && git commit -m '<pr_title>'"},
		{"action": "push", "command": "git push -u origin <branch_name>"},
		{"action": "create_pr", "command": "gh pr create --base <base_branch> --title '<pr_title>' --body '<body>'"},
		{"action": "wait_for_review", "duration_minutes": 10},
		{"action": "check_review", "command": "gh api repos/<repo>/pulls/<pr_number>/comments"},
		{"action": "conditional_loop", "condition": "review_comments_exist", "loop_to": 7, "fix_action": "Read comments, fix issues, commit, push"},
		{"action": "cleanup_worktree", "command": "git worktree remove <worktree_root>/<worktree_name>"},
		{"action": "update_task"},
	}
	out := make([]any, len(steps))
	for i, s := range steps {
		s["step"] = i + 1
		out[i] = s
	}
	return out
}

// bareSteps is a procedure of the given actions without command templates,
// for work orders that leave out a context field the seed's commands name.
func bareSteps(actions ...string) []any {
	out := make([]any, len(actions))
	for i, a := range actions {
		out[i] = map[string]any{"step": i + 1, "action": a}
	}
	return out
}

// gitIn runs the real git command in dir and returns its trimmed output.
func gitIn(t testing.TB, dir string, args ...string) string {
	t.Helper()
	out, err := gitTry(dir, args...)
	if err != nil {
		t.Fatalf("git %s (in %s): %v\n%s", strings.Join(args, " "), dir, err, out)
	}
	return out
}

// gitTry runs git and returns its output and error.
func gitTry(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=Fixture", "GIT_AUTHOR_EMAIL=fixture@example.com",
		"GIT_COMMITTER_NAME=Fixture", "GIT_COMMITTER_EMAIL=fixture@example.com", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// someonePushes is another person at work on the remote: from a clone of
// the branch from (in a folder of root), they commit theirs.txt as Alice
// and push it to the branch to. It returns their commit.
func someonePushes(t testing.TB, root, remote, from, to string) string {
	t.Helper()
	other := filepath.Join(root, "someone-else")
	gitIn(t, root, "clone", "-q", "--branch", from, remote, other)
	writeTestFile(t, filepath.Join(other, "theirs.txt"), "theirs\n")
	gitIn(t, other, "add", "-A")
	gitIn(t, other, "-c", "user.name=Alice", "-c", "user.email=alice@example.com", "commit", "-q", "-m", "theirs")
	gitIn(t, other, "push", "-q", "origin", "HEAD:refs/heads/"+to)
	return gitIn(t, other, "rev-parse", "HEAD")
}

func writeTestFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readTestFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// newStepContext builds the fixture and a run over the work order
// task_cr_01 that opts describe, holding its lease.
func newStepContext(t *testing.T, opts stepOpts) *stepHarness {
	t.Helper()
	ctx := context.Background()
	root := t.TempDir()
	h := &stepHarness{t: t, ctx: ctx, Root: root, Repo: filepath.Join(root, "repo"), Remote: filepath.Join(root, "origin.git"),
		WtRoot: filepath.Join(root, "worktrees"), env: map[string]string{}}
	h.Worktree = filepath.Join(h.WtRoot, fixWorktree)

	if !opts.Serial {
		if _, done := parallelTests.LoadOrStore(t, true); !done {
			t.Parallel()
		}
	}
	template, err := buildTemplate()
	if err != nil {
		t.Fatalf("building the fixture repository: %v", err)
	}
	if err := os.CopyFS(root, os.DirFS(template)); err != nil {
		t.Fatal(err)
	}
	gitIn(t, h.Repo, "remote", "set-url", "origin", h.Remote)

	for k, v := range opts.Env {
		h.env[k] = v
	}
	e := &Engine{Runner: "tester@host:1", Attempts: 1, Backoff: time.Millisecond, ActionSettings: ActionSettings{PollInterval: time.Millisecond},
		Getenv: func(k string) string { return h.env[k] }, Actions: opts.Actions}
	if opts.GitHub {
		gh := ghstandin.New(standinToken)
		gh.Remotes[fixRepo] = h.Remote
		gh.ReviewRounds = opts.Reviews
		gh.ReviewDelay = opts.ReviewDelay
		if opts.ReviewerLogin != "" {
			gh.ReviewerLogin = opts.ReviewerLogin
		}
		if opts.StandIn != nil {
			opts.StandIn(gh)
		}
		if err := gh.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(gh.Close)
		h.GH = gh
		e.GitHubAPI = gh.URL
		if _, set := opts.Env["GITHUB_TOKEN"]; !set {
			h.env["GITHUB_TOKEN"] = standinToken
		}
	}
	if opts.Agent != "" {
		path := filepath.Join(root, "agent.sh")
		if err := os.WriteFile(path, []byte("#!/bin/sh\n"+opts.Agent), 0o755); err != nil {
			t.Fatal(err)
		}
		e.Agent = path
	}

	s, err := store.OpenSQLite(ctx, filepath.Join(root, "wo.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	e.Store = s
	h.store = s
	e.defaults()

	woContext := map[string]any{"repo_path": h.Repo, "base_branch": fixBase, "source_branch": fixSource,
		"worktree_root": h.WtRoot, "repo": fixRepo}
	inputs := map[string]any{"branch_name": fixBranch, "worktree_name": fixWorktree, "pr_title": fixTitle,
		"file_manifest": []any{"pkg/a.go", "foundation/new.go"}}
	merge := func(into, from map[string]any) {
		for k, v := range from {
			if v == nil {
				delete(into, k)
			} else {
				into[k] = v
			}
		}
	}
	merge(woContext, opts.Context)
	merge(inputs, opts.Inputs)
	procedure := opts.Procedure
	if procedure == nil {
		procedure = seedSteps()
	}
	wo := map[string]any{"version": "1.0", "objective": "Put the foundation files up for review",
		"context": woContext, "inputs": inputs, "procedure": procedure}
	if opts.SuccessCriteria != nil {
		wo["success_criteria"] = opts.SuccessCriteria
	}
	if opts.Approval {
		wo["approval"] = map[string]any{"required": true}
	}
	if opts.State != nil {
		wo["state"] = opts.State
	}
	doc := map[string]any{"_key": fixKey, "title": fixTitle, "status": "in_progress", "work_order": wo}
	workorder.ApplyDefaults(doc)
	if err := s.Create(ctx, doc); err != nil {
		t.Fatal(err)
	}
	loaded, task, err := e.Load(ctx, fixKey)
	if err != nil {
		t.Fatalf("the test's work order does not load: %v", err)
	}
	r, err := newRun(e, RunOptions{Key: fixKey}, loaded, task)
	if err != nil {
		t.Fatal(err)
	}
	lease, err := (&store.Leases{Store: s, Now: e.Now}).Acquire(ctx, fixKey, e.Runner, e.LeaseTTL, nil)
	if err != nil {
		t.Fatal(err)
	}
	r.wb = &StateWriteBack{store: s, key: fixKey, rev: lease.Rev, runner: e.Runner, leaseTTL: e.LeaseTTL, now: e.Now, secrets: e.secrets()}
	h.r = r
	return h
}

// engine is the run's engine, for knobs such as Agent and ReviewWait.
func (h *stepHarness) engine() *Engine { return h.r.Engine }

// setenv changes what Getenv answers.
func (h *stepHarness) setenv(k, v string) { h.env[k] = v }

// step is the first step of the procedure with the given action.
func (h *stepHarness) step(action string) workorder.Step {
	h.t.Helper()
	for _, s := range h.r.procedure() {
		if s.Action == action {
			return s
		}
	}
	h.t.Fatalf("the procedure has no %s step", action)
	return workorder.Step{}
}

// sc is the StepContext the engine would give the action's step now.
func (h *stepHarness) sc(action string) *StepContext {
	return &StepContext{run: h.r, Step: h.step(action), Scope: workorder.NewScope(h.r.currentDoc())}
}

func (h *stepHarness) action(name string) Action {
	h.t.Helper()
	spec, ok := h.r.actions().Lookup(name)
	if !ok || spec.New == nil {
		h.t.Fatalf("no runnable action %s", name)
	}
	return spec.New()
}

// run runs the action's step once, changing nothing in the run's state.
func (h *stepHarness) run(action string) (Outcome, error) {
	h.t.Helper()
	return h.action(action).Run(h.ctx, h.sc(action))
}

// must runs the action's step, fails the test on an error, and keeps what
// it records in the run's state and the store, as the engine would.
func (h *stepHarness) must(action string) Outcome {
	h.t.Helper()
	out, err := h.run(action)
	if err != nil {
		h.t.Fatalf("%s: %v", action, err)
	}
	h.keep(out)
	return out
}

// keep takes an outcome's state as the run's and saves it.
func (h *stepHarness) keep(out Outcome) {
	h.t.Helper()
	if out.State != nil {
		h.r.state = out.State.Clone()
	}
	if err := h.r.save(h.ctx, nil); err != nil {
		h.t.Fatal(err)
	}
}

// upTo runs (with must) every step of the procedure before the first step
// of the given action.
func (h *stepHarness) upTo(action string) {
	h.t.Helper()
	for _, s := range h.r.procedure() {
		if s.Action == action {
			return
		}
		h.must(s.Action)
	}
}

// recorded is the state the outcome leaves (the run's, when it changes
// nothing); the run itself is left as it was.
func (h *stepHarness) recorded(out Outcome) workorder.State {
	if out.State != nil {
		return out.State.Clone()
	}
	return h.r.state.Clone()
}

// stored is work_order.state as the store holds it.
func (h *stepHarness) stored() workorder.State {
	h.t.Helper()
	doc, err := h.store.Get(h.ctx, fixKey)
	if err != nil {
		h.t.Fatal(err)
	}
	st, err := workorder.StateOf(doc)
	if err != nil {
		h.t.Fatal(err)
	}
	return st
}

// check runs the action's preflight check.
func (h *stepHarness) check(action string) error {
	h.t.Helper()
	c, ok := h.action(action).(Checker)
	if !ok {
		h.t.Fatalf("%s has no Check", action)
	}
	return c.Check(h.ctx, h.sc(action))
}

// plan is what a dry run shows for the action's step.
func (h *stepHarness) plan(action string) string {
	h.t.Helper()
	p, ok := h.action(action).(Planner)
	if !ok {
		h.t.Fatalf("%s has no Plan", action)
	}
	return p.Plan(h.sc(action))
}

// setState changes the run's state (and the store's), as earlier steps
// would have.
func (h *stepHarness) setState(change func(*workorder.State)) {
	h.t.Helper()
	change(&h.r.state)
	if err := h.r.save(h.ctx, nil); err != nil {
		h.t.Fatal(err)
	}
}

// pushBranch makes the work order's branch on the source commit and
// pushes it, with the git command, as a PR's head needs.
func (h *stepHarness) pushBranch() string {
	h.t.Helper()
	gitIn(h.t, h.Repo, "branch", "-f", fixBranch, fixSource)
	gitIn(h.t, h.Repo, "push", "-q", "origin", fixBranch)
	return gitIn(h.t, h.Repo, "rev-parse", fixBranch)
}

// openPR pushes the branch and opens its pull request through the
// create_pr action, keeping the number in state; it returns the pushed
// commit, which is recorded as pushed_sha.
func (h *stepHarness) openPR() string {
	h.t.Helper()
	sha := h.pushBranch()
	h.setState(func(s *stateT) { s.PushedSHA = sha })
	h.must("create_pr")
	return sha
}

// errContains fails unless err is an error whose message holds every part.
func errContains(t testing.TB, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error; want one saying %q", parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q does not say %q", err, p)
		}
	}
}

// TestHarnessRunsOverARealRepositoryAndStore checks the harness itself:
// the work order loads, the lease is held, and state written through the
// run reaches the store.
func TestHarnessRunsOverARealRepositoryAndStore(t *testing.T) {
	h := newStepContext(t, stepOpts{})
	if got := gitIn(t, h.Remote, "rev-parse", fixBase); got != gitIn(t, h.Repo, "rev-parse", fixBase) {
		t.Errorf("the remote's %s is %s", fixBase, got)
	}
	if sc := h.sc("commit"); sc.Key() != fixKey || sc.Input("branch_name") != fixBranch || sc.Context("base_branch") != fixBase {
		t.Errorf("step context sees key %q branch %q base %q", sc.Key(), sc.Input("branch_name"), sc.Context("base_branch"))
	}
	h.setState(func(s *workorder.State) { s.CommitSHA = "abc" })
	st := h.stored()
	if st.CommitSHA != "abc" || st.Lease == nil || st.Lease.Holder != "tester@host:1" {
		t.Errorf("stored state: commit_sha %q lease %+v", st.CommitSHA, st.Lease)
	}
}

// stateT is the state type, short for setState callbacks.
type stateT = workorder.State
