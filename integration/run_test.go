package integration

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wo-runner/wo/internal/gittest"
	"github.com/wo-runner/wo/store"
)

func TestGitStepsEndToEnd(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 40)
	f.importTask(f.task("task_git", gitProcedure(), nil))

	// Stop after the push, while the worktree exists, and check it is a real
	// linked worktree for git.
	if r := f.wo(nil, "run", "task_git", "--until-step", "5"); r.code != 0 {
		t.Fatalf("run --until-step 5: exit %d\n%s", r.code, r.stderr)
	}
	wt := filepath.Join(f.wtRoot, "pr-01-foundation")
	list := gittest.Run(t, f.repo, "worktree", "list", "--porcelain")
	if !strings.Contains(list, "worktree "+wt+"\n") || !strings.Contains(list, "branch refs/heads/review/01-foundation") {
		t.Fatalf("git worktree list --porcelain:\n%s", list)
	}
	if st := gittest.Run(t, wt, "status", "--porcelain"); st != "" {
		t.Fatalf("git status in the worktree after the commit:\n%s", st)
	}
	gittest.Run(t, f.repo, "fsck", "--strict", "--no-progress")
	doc := f.doc("task_git")
	if doc["status"] != "in_progress" || fmt.Sprint(stateOf(doc)["current_step"]) != "5" {
		t.Fatalf("after step 5: status %v, state %v", doc["status"], stateOf(doc))
	}

	// The rest: cleanup and update_task.
	r := f.wo(nil, "run", "task_git")
	if r.code != 0 {
		t.Fatalf("run: exit %d\n%s", r.code, r.stderr)
	}
	for _, want := range []string{"6/7 cleanup_worktree  ok", "7/7 update_task  ok", "task_git: complete"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("progress lacks %q:\n%s", want, r.stderr)
		}
	}
	f.assertGitDone("task_git")
	doc = f.doc("task_git")
	if doc["status"] != "in_review" || doc["x_owner"] != "platform-team" {
		t.Errorf("status %v, unknown field %v", doc["status"], doc["x_owner"])
	}
	if ctx := doc["work_order"].(map[string]any)["context"].(map[string]any); ctx["x_ci"] != "kept" {
		t.Errorf("unknown context field lost: %v", ctx)
	}
	// A rerun of a finished work order changes nothing.
	before := gittest.Run(t, f.origin, "rev-parse", "refs/heads/review/01-foundation")
	if r := f.wo(nil, "run", "task_git"); r.code != 0 || !strings.Contains(r.stderr, "already complete") {
		t.Errorf("rerun: exit %d %s", r.code, r.stderr)
	}
	if after := gittest.Run(t, f.origin, "rev-parse", "refs/heads/review/01-foundation"); after != before {
		t.Error("a rerun moved the remote branch")
	}

	logs := f.wo(nil, "log", "task_git", "--verbose", "--wide")
	for _, want := range []string{"task_created", "run_started", "step_completed", "step=5 action=push", "run_finished"} {
		if !strings.Contains(logs.stdout, want) {
			t.Errorf("wo log lacks %q:\n%s", want, logs.stdout)
		}
	}
}

func TestGitWorktreeRemoveAcceptsOurWorktree(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 10)
	f.importTask(f.task("task_rm", gitProcedure(), nil))
	if r := f.wo(nil, "run", "task_rm", "--until-step", "4"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	wt := filepath.Join(f.wtRoot, "pr-01-foundation")
	gittest.Run(t, f.repo, "worktree", "remove", wt)
	if _, err := os.Stat(wt); !os.IsNotExist(err) {
		t.Errorf("git worktree remove left %s", wt)
	}
}

// crashPoints are where a run is killed: at each step boundary (before and
// after its state write) and inside each step.
var crashPoints = []string{
	"create_worktree:after_checkpoint", "create_worktree:before_create", "create_worktree:files_written",
	"create_worktree:before_writeback", "create_worktree:after_writeback",
	"create_branch:before_switch", "create_branch:before_writeback", "create_branch:after_writeback",
	"checkout_files:after_checkpoint", "checkout_files:files_written", "checkout_files:before_writeback", "checkout_files:after_writeback",
	"commit:after_commit", "commit:before_writeback", "commit:after_writeback",
	"push:after_push", "push:before_writeback", "push:after_writeback",
	"cleanup_worktree:after_remove", "cleanup_worktree:before_writeback", "cleanup_worktree:after_writeback",
	"update_task:before_writeback",
}

func TestCrashAtEveryPointThenRerun(t *testing.T) {
	t.Parallel()
	for _, point := range crashPoints {
		t.Run(point, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, 30)
			f.importTask(f.task("task_crash", gitProcedure(), nil))
			r := f.wo([]string{"WO_FAULT=" + point}, "run", "task_crash")
			if !r.killed {
				t.Fatalf("the run was not killed at %s: exit %d\n%s", point, r.code, r.stderr)
			}
			// The dead process's lease must not stop the rerun.
			r = f.wo(nil, "run", "task_crash")
			if r.code != 0 {
				t.Fatalf("rerun after a crash at %s: exit %d\n%s", point, r.code, r.stderr)
			}
			f.assertGitDone("task_crash")
		})
	}
}

func TestSIGKILLAtRandomMoments(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 300)
	f.importTask(f.task("task_kill", gitProcedure(), nil))
	// Time one clean run, so that the kills spread over a whole run.
	start := time.Now()
	if r := f.wo(nil, "run", "task_kill"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	full := time.Since(start)
	f.assertGitDone("task_kill")
	f.wo(nil, "reset", "task_kill", "--to-start")

	rng := rand.New(rand.NewPCG(42, uint64(time.Now().UnixNano())))
	kills := 0
	var killedAt []string // steps completed when each kill landed
	for i := 0; i < 50; i++ {
		cmd := f.cmd(nil, "run", "task_kill")
		var errb bytes.Buffer
		cmd.Stderr = &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		began := time.Now()
		time.Sleep(time.Duration(rng.Int64N(int64(full))))
		cmd.Process.Signal(syscall.SIGKILL)
		r := result(cmd, cmd.Wait(), "", errb.String())
		switch {
		case r.killed:
			kills++
			killedAt = append(killedAt, fmt.Sprint(stateOf(f.doc("task_kill"))["current_step"]))
		case r.code == 0:
			// It finished first: check, and start over so later kills land
			// mid-run. A busy machine can make the first clean run slower
			// than the rest, so a run that beat the kill sets the span.
			f.assertGitDone("task_kill")
			f.wo(nil, "reset", "task_kill", "--to-start")
			full = min(full, time.Since(began))
		default:
			t.Fatalf("run %d ended with exit %d before the kill:\n%s", i, r.code, r.stderr)
		}
	}
	t.Logf("a clean run takes %s; %d of 50 runs were killed mid-run, with these steps done: %s",
		full.Round(time.Millisecond), kills, strings.Join(killedAt, " "))
	if r := f.wo(nil, "run", "task_kill"); r.code != 0 {
		t.Fatalf("final run: exit %d\n%s", r.code, r.stderr)
	}
	f.assertGitDone("task_kill")
	if kills < 20 {
		t.Errorf("%d runs killed mid-run, want at least 20", kills)
	}
}

func TestTwoRunnersOnOneKey(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 20)
	f.importTask(f.task("task_two", gitProcedure(), nil))
	pause := []string{"WO_FAULT_PAUSE=create_worktree:before_create=1500ms"}
	a, b := f.cmd(pause, "run", "task_two"), f.cmd(pause, "run", "task_two")
	var aout, bout bytes.Buffer
	a.Stderr, b.Stderr = &aout, &bout
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	ra := result(a, a.Wait(), "", aout.String())
	rb := result(b, b.Wait(), "", bout.String())
	codes := []int{ra.code, rb.code}
	if !(codes[0] == 0 && codes[1] == 4) && !(codes[0] == 4 && codes[1] == 0) {
		t.Fatalf("exit codes %v, want one 0 and one 4\nA: %s\nB: %s", codes, ra.stderr, rb.stderr)
	}
	loser := ra.stderr
	if rb.code == 4 {
		loser = rb.stderr
	}
	if !strings.Contains(loser, "is being run by") || !strings.Contains(loser, "lease until") {
		t.Errorf("the refused runner must name the holder and expiry:\n%s", loser)
	}
	f.assertGitDone("task_two")
}

func TestBadInputFailsBeforeAnythingChanges(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		change func(f *fixture, doc map[string]any)
		code   int
		want   string
	}{
		{"manifest climbing out", func(f *fixture, d map[string]any) { inputs(d)["file_manifest"] = []any{"../../etc/passwd"} }, 2, "climbs out of the repository"},
		{"absolute manifest path", func(f *fixture, d map[string]any) { inputs(d)["file_manifest"] = []any{"/etc/passwd"} }, 2, "is absolute"},
		{"file missing at the source", func(f *fixture, d map[string]any) {
			inputs(d)["file_manifest"] = append(inputs(d)["file_manifest"].([]any), "foundation/ghost.go")
		}, 2, "foundation/ghost.go"},
		{"branch name git refuses", func(f *fixture, d map[string]any) { inputs(d)["branch_name"] = "review/bad..name" }, 2, "not a branch name git accepts"},
		{"worktree root inside .git", func(f *fixture, d map[string]any) {
			contextOf(d)["worktree_root"] = filepath.Join(f.repo, ".git", "wt")
		}, 2, "inside a .git directory"},
		{"worktree root reaching .git through a symlink", func(f *fixture, d map[string]any) {
			link := filepath.Join(f.root, "sneaky")
			os.Symlink(filepath.Join(f.repo, ".git"), link)
			contextOf(d)["worktree_root"] = link
		}, 2, "inside the repository's .git directory"},
		{"unknown placeholder", func(f *fixture, d map[string]any) {
			d["work_order"].(map[string]any)["procedure"].([]any)[3].(map[string]any)["command"] = "git commit -m '<pr_titel>'"
		}, 2, "unknown placeholder <pr_titel>"},
		{"base branch that does not exist", func(f *fixture, d map[string]any) { contextOf(d)["base_branch"] = "no-such-base" }, 2, "no branch, tag or commit \"no-such-base\""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, 10)
			f.wo(nil, "init")
			doc := f.task("task_bad", gitProcedure(), nil)
			tc.change(f, doc)
			b, _ := json.Marshal([]any{doc})
			path := filepath.Join(f.root, "bad.json")
			os.WriteFile(path, b, 0o644)
			before := snapshot(t, f)
			// Through import where validation catches it, else through run.
			r := f.wo(nil, "import", path)
			if r.code == 0 {
				r = f.wo(nil, "run", "task_bad")
				before = snapshotAfterImport(f, before)
			}
			if r.code != tc.code || !strings.Contains(r.stderr, tc.want) {
				t.Fatalf("exit %d, want %d with %q:\n%s", r.code, tc.code, tc.want, r.stderr)
			}
			if after := snapshot(t, f); after.repo != before.repo || after.tasks != before.tasks {
				t.Errorf("the failed run changed something:\nrepo before %s after %s\ntasks before %s\nafter %s", before.repo, after.repo, before.tasks, after.tasks)
			}
		})
	}
}

func inputs(d map[string]any) map[string]any {
	return d["work_order"].(map[string]any)["inputs"].(map[string]any)
}

func contextOf(d map[string]any) map[string]any {
	return d["work_order"].(map[string]any)["context"].(map[string]any)
}

// state is a fingerprint of everything a run could change.
type state struct {
	repo  string // hash of every file under the repository, .git included
	tasks string // wo export
}

func snapshot(t *testing.T, f *fixture) state {
	t.Helper()
	var s state
	s.repo = treeHash(t, f.repo) + treeHash(t, f.origin)
	if _, err := os.Stat(f.wtRoot); err == nil {
		s.repo += "+worktrees:" + treeHash(t, f.wtRoot)
	}
	if _, err := os.Stat(f.store); err == nil {
		s.tasks = f.wo(nil, "export").stdout
	}
	return s
}

// snapshotAfterImport takes the fingerprint again once the import stored
// the task, so that only the run is judged.
func snapshotAfterImport(f *fixture, before state) state {
	before.tasks = f.wo(nil, "export").stdout
	return before
}

func treeHash(t *testing.T, root string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		fmt.Fprintf(h, "%s\x00", rel)
		if d.Type().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h.Write(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", h.Sum(nil))[:16]
}

func TestDryRunChangesNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 30)
	f.importTask(f.task("task_dry", gitProcedure(), nil))
	// Half-way, so the plan starts in the middle.
	if r := f.wo(nil, "run", "task_dry", "--until-step", "2"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	before := snapshot(t, f)
	dbBefore, _ := os.ReadFile(f.store)
	r := f.wo(nil, "run", "task_dry", "--dry-run")
	if r.code != 0 {
		t.Fatalf("dry run: exit %d\n%s", r.code, r.stderr)
	}
	for _, want := range []string{"from step 3", "3 checkout_files", "command: git checkout main -- pkg00/file0000.go", "7 update_task", "would: push review/01-foundation to origin"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("plan lacks %q:\n%s", want, r.stdout)
		}
	}
	dbAfter, _ := os.ReadFile(f.store)
	if after := snapshot(t, f); after != before || !bytes.Equal(dbBefore, dbAfter) {
		t.Error("--dry-run changed the store or the repository")
	}
}

func TestResetRewindsAndKeepsHistory(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 10)
	f.importTask(f.task("task_reset", gitProcedure(), nil))
	if r := f.wo(nil, "run", "task_reset"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	r := f.wo(nil, "reset", "task_reset", "--to-step", "5")
	if r.code != 0 || !strings.Contains(r.stdout, "reset to step 5/7, status in_progress") {
		t.Fatalf("reset: exit %d %s %s", r.code, r.stdout, r.stderr)
	}
	st := stateOf(f.doc("task_reset"))
	if fmt.Sprint(st["completed_steps"]) != "[1 2 3 4 5]" {
		t.Errorf("completed_steps after reset: %v", st["completed_steps"])
	}
	// The machine output names a real phase, in the envelope and the store.
	r = f.wo(nil, "reset", "task_reset", "--to-step", "5", "--json")
	var env struct {
		Data struct {
			Phase       string `json:"phase"`
			CurrentStep int    `json:"current_step"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &env); err != nil || env.Data.Phase != "ready" || env.Data.CurrentStep != 5 {
		t.Errorf("reset --json: phase %q step %d (%v), want phase ready at step 5:\n%s", env.Data.Phase, env.Data.CurrentStep, err, r.stdout)
	}
	if st := stateOf(f.doc("task_reset")); st["phase"] != "ready" {
		t.Errorf("stored phase after reset: %v", st["phase"])
	}
	if r := f.wo(nil, "run", "task_reset"); r.code != 0 {
		t.Fatalf("run after reset: %s", r.stderr)
	}
	f.assertGitDone("task_reset")
	if logs := f.wo(nil, "log", "task_reset").stdout; !strings.Contains(logs, "reset") || strings.Count(logs, "run_finished") != 2 {
		t.Errorf("log must keep both runs and the reset:\n%s", logs)
	}
}

func TestBlockerNotClosedStopsRun(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 10)
	blocker := map[string]any{"_key": "task_first", "title": "First", "status": "in_review",
		"description": "A task that must be closed first"}
	b, _ := json.Marshal([]any{blocker})
	path := filepath.Join(f.root, "blocker.json")
	os.WriteFile(path, b, 0o644)
	f.wo(nil, "import", path)
	f.importTask(f.task("task_after", gitProcedure(), func(d map[string]any) {
		d["work_order"].(map[string]any)["dependencies"] = map[string]any{"blocked_by": []any{"task_first"}}
	}))
	before := snapshot(t, f)
	r := f.wo(nil, "run", "task_after")
	if r.code != 3 || !strings.Contains(r.stderr, "task_first (in_review)") {
		t.Fatalf("exit %d, want 3 naming the blocker:\n%s", r.code, r.stderr)
	}
	if after := snapshot(t, f); after != before {
		t.Error("a blocked run changed something")
	}
}

func TestReviewLoopWithAgentAndWithoutOne(t *testing.T) {
	t.Parallel()
	procedure := []any{
		map[string]any{"step": 1, "action": "create_worktree"},
		map[string]any{"step": 2, "action": "create_branch"},
		map[string]any{"step": 3, "action": "checkout_files"},
		map[string]any{"step": 4, "action": "commit", "command": "git commit -m '<pr_title>'"},
		map[string]any{"step": 5, "action": "push"},
		map[string]any{"step": 6, "action": "conditional_loop", "condition": "review_comments_exist", "loop_to": 5,
			"fix_action": "Read comments, fix issues"},
		map[string]any{"step": 7, "action": "cleanup_worktree"},
	}
	comments := []any{map[string]any{"id": 11, "author": "coderabbitai", "path": "foundation/new0.go", "line": 3, "body": "Name this constant."}}
	// pushedWithComments runs up to the push and records a review comment.
	pushedWithComments := func(t *testing.T, key string) *fixture {
		f := newFixture(t, 10)
		f.importTask(f.task(key, procedure, nil))
		if r := f.wo(nil, "run", key, "--until-step", "5"); r.code != 0 {
			t.Fatal(r.stderr)
		}
		seedComments(t, f, key, comments)
		return f
	}

	t.Run("agent", func(t *testing.T) {
		t.Parallel()
		f := pushedWithComments(t, "task_loop")
		agent := filepath.Join(f.root, "agent.sh")
		// The agent checks what wo promised it: the prompt on stdin and in
		// a file, the task key, and the worktree as its working directory.
		writeFile(t, agent, "#!/bin/sh\ngrep -q 'Name this constant' || exit 6\ngrep -q 'Name this constant' \"$WO_PROMPT_FILE\" || exit 7\n"+
			"[ \"$WO_TASK_KEY\" = task_loop ] && [ \"$(pwd)\" = \"$WO_WORKTREE\" ] || exit 8\necho 'const Named = 1' >> foundation/new0.go\n")
		os.Chmod(agent, 0o755)
		r := f.wo([]string{"WO_AGENT=" + agent}, "run", "task_loop")
		if r.code != 0 {
			t.Fatalf("exit %d\n%s", r.code, r.stderr)
		}
		if msg := gittest.Run(t, f.origin, "log", "-1", "--format=%s", "refs/heads/review/01-foundation"); msg != "Fix review comments (iteration 1)" {
			t.Errorf("remote tip: %q", msg)
		}
		st := stateOf(f.doc("task_loop"))
		if fmt.Sprint(st["review_iterations"]) != "1" {
			t.Errorf("review_iterations %v", st["review_iterations"])
		}
	})

	t.Run("person", func(t *testing.T) {
		t.Parallel()
		f := pushedWithComments(t, "task_person")
		r := f.wo(nil, "run", "task_person")
		if r.code != 3 || !strings.Contains(r.stderr, "Name this constant.") {
			t.Fatalf("without an agent: exit %d, want 3 listing the comment:\n%s", r.code, r.stderr)
		}
		doc := f.doc("task_person")
		if doc["status"] != "blocked" || !strings.Contains(fmt.Sprint(doc["block_reason"]), "Name this constant.") {
			t.Errorf("status %v reason %v", doc["status"], doc["block_reason"])
		}
		// Nothing changed yet: still waiting.
		if r := f.wo(nil, "run", "task_person"); r.code != 3 || !strings.Contains(r.stderr, "no changes yet") {
			t.Fatalf("rerun without a fix: exit %d %s", r.code, r.stderr)
		}
		wt := filepath.Join(f.wtRoot, "pr-01-foundation")
		writeFile(t, filepath.Join(wt, "foundation/new0.go"), "package foundation\n\nconst Named0 = 0\n")
		if r := f.wo(nil, "run", "task_person"); r.code != 0 {
			t.Fatalf("rerun after the fix: exit %d\n%s", r.code, r.stderr)
		}
		if msg := gittest.Run(t, f.origin, "log", "-1", "--format=%s", "refs/heads/review/01-foundation"); msg != "Fix review comments (iteration 1)" {
			t.Errorf("remote tip: %q", msg)
		}
		if got := gittest.Run(t, f.origin, "show", "refs/heads/review/01-foundation:foundation/new0.go"); !strings.Contains(got, "Named0") {
			t.Errorf("the person's fix was not pushed: %s", got)
		}
	})

	t.Run("bound", func(t *testing.T) {
		t.Parallel()
		f := pushedWithComments(t, "task_bound")
		setState(t, f, "task_bound", map[string]any{"loop_iterations": map[string]any{"6": 2}})
		r := f.wo(nil, "run", "task_bound", "--max-iterations", "2")
		if r.code != 3 || !strings.Contains(r.stderr, "reached its bound of 2") {
			t.Fatalf("exit %d\n%s", r.code, r.stderr)
		}
		if doc := f.doc("task_bound"); doc["status"] != "blocked" {
			t.Errorf("status %v", doc["status"])
		}
	})
}

// seedComments stands in for check_review (the GitHub part): it records
// actionable comments in the state as check_review does.
func seedComments(t *testing.T, f *fixture, key string, comments []any) {
	setState(t, f, key, map[string]any{"review_comments": comments})
}

// setState merges fields into work_order.state directly in the store, as
// another Persephone tool could.
func setState(t *testing.T, f *fixture, key string, fields map[string]any) {
	t.Helper()
	ctx := context.Background()
	s, err := store.OpenSQLite(ctx, f.store)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	doc, err := s.Get(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Update(ctx, key, doc["_rev"].(string), store.Nest("work_order.state", fields)); err != nil {
		t.Fatal(err)
	}
}

func TestCtrlCReleasesTheLease(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 20)
	f.importTask(f.task("task_int", gitProcedure(), nil))
	cmd := f.cmd([]string{"WO_FAULT_PAUSE=create_worktree:before_create=1500ms"}, "run", "task_int")
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the run to take its lease", 5*time.Second, func() bool {
		return stateOf(f.doc("task_int"))["lease"] != nil
	})
	cmd.Process.Signal(syscall.SIGINT)
	r := result(cmd, cmd.Wait(), "", errb.String())
	if r.code != 130 || !strings.Contains(r.stderr, "interrupted during step 1") {
		t.Fatalf("exit %d, want 130 (interrupted):\n%s", r.code, r.stderr)
	}
	doc := f.doc("task_int")
	if st := stateOf(doc); st["lease"] != nil {
		t.Errorf("the lease was not released: %v", st["lease"])
	}
	if doc["status"] == "blocked" {
		t.Error("an interruption must not block the task")
	}
	if r := f.wo(nil, "run", "task_int"); r.code != 0 {
		t.Fatalf("rerun: exit %d\n%s", r.code, r.stderr)
	}
	f.assertGitDone("task_int")
}
