package integration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wo-runner/wo/internal/gittest"
)

// A rerun never drops work that is on the branch: after a finished run
// whose review fix was pushed, starting the work order over (or from a
// step before the fix) leaves the fix on the remote branch.

// fixedTask is a work order whose review fix is pushed: the remote
// branch is wo's commit, then the agent's fix.
func fixedTask(t *testing.T, key string) *fixture {
	t.Helper()
	f, agent := loopTask(t, key)
	writeAgent(t, agent, "")
	if r := f.wo([]string{"WO_AGENT=" + agent}, "run", key); r.code != 0 {
		t.Fatalf("the run with the fix: exit %d\n%s", r.code, r.stderr)
	}
	if got := gittest.Run(t, f.origin, "show", "review/01-foundation:foundation/new0.go"); !strings.Contains(got, "const Named = 1") {
		t.Fatalf("the fix is not on the remote:\n%s", got)
	}
	return f
}

func TestARerunFromTheStartKeepsThePushedFix(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		reset []string
	}{
		{"reset --to-start", []string{"--to-start"}},
		{"reset --to-step 3", []string{"--to-step", "3"}},
		{"reset --to-step 2", []string{"--to-step", "2"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			key := "task_rerun"
			f := fixedTask(t, key)
			tip := gittest.Run(t, f.origin, "rev-parse", "review/01-foundation")
			if r := f.wo(nil, append([]string{"reset", key}, c.reset...)...); r.code != 0 {
				t.Fatalf("reset: exit %d\n%s", r.code, r.stderr)
			}
			r := f.wo(nil, "run", key)
			after := gittest.Run(t, f.origin, "rev-parse", "review/01-foundation")
			t.Logf("exit %d\n%s", r.code, r.stderr)
			if got := gittest.Run(t, f.origin, "show", "review/01-foundation:foundation/new0.go"); !strings.Contains(got, "const Named = 1") {
				t.Errorf("the rerun dropped the fix from the remote (tip %s, was %s):\n%s", after[:12], tip[:12], got)
			}
			if r.code != 0 && r.code != 3 {
				t.Errorf("exit %d, want 0 (nothing to do) or 3 (stopped before losing work)", r.code)
			}
			if r.code == 3 && after != tip {
				t.Errorf("stopped, yet the remote moved from %s to %s", tip[:12], after[:12])
			}
		})
	}
}

func TestTheWaysOnAfterARerunStopsBeforeLosingWork(t *testing.T) {
	t.Parallel()
	key := "task_ways"
	f := fixedTask(t, key)
	tip := gittest.Run(t, f.origin, "rev-parse", "review/01-foundation")
	if r := f.wo(nil, "reset", key, "--to-start"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	r := f.wo(nil, "run", key)
	if r.code != 3 || !strings.Contains(r.stderr, "Fix review comments (iteration 1)") || strings.Contains(r.stderr, `"PR #1: Foundation"`) {
		t.Fatalf("exit %d, want 3 naming the fix commit alone:\n%s", r.code, r.stderr)
	}
	if doc := f.doc(key); doc["status"] != "blocked" {
		t.Errorf("status %v, want blocked with the reason", doc["status"])
	}
	// The way it names: on after the commit step, keeping the commits.
	if !strings.Contains(r.stderr, "wo run "+key+" --from-step 5") {
		t.Errorf("the message does not name the step to go on from:\n%s", r.stderr)
	}
	if r := f.wo(nil, "run", key, "--from-step", "5"); r.code != 0 || gittest.Run(t, f.origin, "rev-parse", "review/01-foundation") != tip {
		t.Fatalf("after reset --to-step 4: exit %d, remote moved\n%s", r.code, r.stderr)
	}
	// --discard-commits does what it says, once: one new commit that
	// takes the fix's change back, pushed; a second run changes nothing.
	if r := f.wo(nil, "reset", key, "--to-start"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	if r := f.wo(nil, "run", key, "--discard-commits"); r.code != 0 {
		t.Fatalf("--discard-commits: exit %d\n%s", r.code, r.stderr)
	}
	after := gittest.Run(t, f.origin, "rev-parse", "review/01-foundation")
	if parent := gittest.Run(t, f.origin, "rev-parse", "review/01-foundation~1"); parent != tip {
		t.Errorf("the discarding commit is not on top of the fix (parent %s, fix %s)", parent[:12], tip[:12])
	}
	if got := gittest.Run(t, f.origin, "show", "review/01-foundation:foundation/new0.go"); strings.Contains(got, "const Named") {
		t.Errorf("--discard-commits kept the fix:\n%s", got)
	}
	if r := f.wo(nil, "reset", key, "--to-start"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	if r := f.wo(nil, "run", key); r.code != 0 || gittest.Run(t, f.origin, "rev-parse", "review/01-foundation") != after {
		t.Errorf("a run after the discard: exit %d, remote %s (was %s)\n%s", r.code, gittest.Run(t, f.origin, "rev-parse", "review/01-foundation")[:12], after[:12], r.stderr)
	}
}

// personCommits is a person's commit on the work branch ("By hand",
// foundation/new1.go), pushed from a clone of their own and fetched into
// the repository, as wo finds it on a rerun.
func personCommits(t *testing.T, f *fixture) {
	t.Helper()
	clone := filepath.Join(t.TempDir(), "clone")
	gittest.Run(t, t.TempDir(), "clone", "-q", "-b", "review/01-foundation", f.origin, clone)
	writeFile(t, filepath.Join(clone, "foundation", "new1.go"), "package foundation\n\n// N1 is by hand.\nconst N1 = 1\n")
	gittest.Run(t, clone, "commit", "-qam", "By hand")
	gittest.Run(t, clone, "push", "-q", "origin", "review/01-foundation")
	gittest.Run(t, f.repo, "fetch", "-q", f.origin, "+review/01-foundation:review/01-foundation")
}

func TestAPersonsCommitOnTheBranchSurvivesARerun(t *testing.T) {
	t.Parallel()
	key := "task_person"
	f, _ := loopTask(t, key)
	setState(t, f, key, map[string]any{"review_comments": []any{}})
	if r := f.wo(nil, "run", key); r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	// A person fixes something on the branch and pushes it.
	personCommits(t, f)
	tip := gittest.Run(t, f.origin, "rev-parse", "review/01-foundation")
	if r := f.wo(nil, "reset", key, "--to-start"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	r := f.wo(nil, "run", key)
	if r.code != 3 || !strings.Contains(r.stderr, `"By hand" (foundation/new1.go)`) {
		t.Errorf("exit %d, want 3 naming the person's commit:\n%s", r.code, r.stderr)
	}
	if got := gittest.Run(t, f.origin, "rev-parse", "review/01-foundation"); got != tip {
		t.Errorf("the remote moved from %s to %s", tip[:12], got[:12])
	}
}

func TestResetDryRunSaysWhichStepsWouldMeetCommitsOnTheBranch(t *testing.T) {
	t.Parallel()
	key := "task_dry"
	f := fixedTask(t, key)
	r := f.wo(nil, "reset", key, "--to-start", "--dry-run")
	if r.code != 0 || !strings.Contains(r.stdout, "step 3 (checkout_files)") || !strings.Contains(r.stdout, "--discard-commits") {
		t.Errorf("exit %d, the dry run does not say that step 3 meets the branch's fix:\n%s", r.code, r.stdout)
	}
}

// After a refused fix, the person's correction is the fix: one rerun
// takes the worktree as they left it, gates, commits and pushes it, and
// does not run the agent again.
func TestOneRerunAfterARefusedFixFinishesWithoutTheAgent(t *testing.T) {
	t.Parallel()
	key := "task_refused"
	f, agent := loopTask(t, key)
	runs := filepath.Join(t.TempDir(), "runs")
	writeFile(t, runs, "")
	writeAgent(t, agent, "echo run >> "+runs+"\necho 'scratch' > notes.txt\n")
	env := []string{"WO_AGENT=" + agent, "WO_AGENT_WRITABLE=" + runs}
	r := f.wo(env, "run", key)
	if r.code != 1 || !strings.Contains(r.stderr, "notes.txt") || !strings.Contains(r.stderr, `add them to context.fix_paths: ["notes.txt"]`) ||
		!strings.Contains(r.stderr, "does not run the agent again") {
		t.Fatalf("exit %d, want 1 saying how to go on with notes.txt:\n%s", r.code, r.stderr)
	}
	// The person takes the scratch file out; the agent's fix stays.
	wt := filepath.Join(f.wtRoot, "pr-01-foundation")
	if err := os.Remove(filepath.Join(wt, "notes.txt")); err != nil {
		t.Fatal(err)
	}
	r = f.wo(env, "run", key)
	if r.code != 0 {
		t.Fatalf("the rerun: exit %d\n%s", r.code, r.stderr)
	}
	if n := strings.Count(readFileOr(runs), "run"); n != 1 {
		t.Errorf("the agent ran %d time(s), want once", n)
	}
	if got := gittest.Run(t, f.origin, "show", "review/01-foundation:foundation/new0.go"); !strings.Contains(got, "const Named = 1") {
		t.Errorf("the fix is not on the remote:\n%s", got)
	}
	if files := gittest.Run(t, f.origin, "ls-tree", "-r", "--name-only", "review/01-foundation"); strings.Contains(files, "notes.txt") {
		t.Error("the scratch file reached the remote")
	}
}

// Without an agent, a change already in the worktree is the person's
// fix: wo commits and pushes it rather than asking for it.
func TestAFixAlreadyInTheWorktreeIsNotAskedFor(t *testing.T) {
	t.Parallel()
	key := "task_byhand"
	f, _ := loopTask(t, key)
	wt := filepath.Join(f.wtRoot, "pr-01-foundation")
	writeFile(t, filepath.Join(wt, "foundation", "new0.go"), "package foundation\n\n// N0 is named.\nconst N0 = 0\n")
	r := f.wo(nil, "run", key)
	if r.code != 0 || strings.Contains(r.stderr, "review comment(s) to address in") {
		t.Fatalf("exit %d, want 0 without asking for the fix:\n%s", r.code, r.stderr)
	}
	if got := gittest.Run(t, f.origin, "show", "review/01-foundation:foundation/new0.go"); !strings.Contains(got, "N0 is named") {
		t.Errorf("the person's fix is not on the remote:\n%s", got)
	}
}

// A review fix and a person's commit on the branch, then a rerun from
// the start: both are named, nothing is pushed, and going on after the
// commit step keeps both on the remote.
func TestAReviewFixAndAPersonsCommitBothSurviveARerun(t *testing.T) {
	t.Parallel()
	key := "task_both"
	f := fixedTask(t, key)
	personCommits(t, f)
	tip := gittest.Run(t, f.origin, "rev-parse", "review/01-foundation")
	if r := f.wo(nil, "reset", key, "--to-start"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	r := f.wo(nil, "run", key)
	for _, want := range []string{`"Fix review comments (iteration 1)" (foundation/new0.go)`, `"By hand" (foundation/new1.go)`, "2 commit(s)"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("the stop does not name %s:\n%s", want, r.stderr)
		}
	}
	if r.code != 3 || gittest.Run(t, f.origin, "rev-parse", "review/01-foundation") != tip {
		t.Fatalf("exit %d, remote %s (was %s): want 3 and the remote unchanged", r.code, gittest.Run(t, f.origin, "rev-parse", "review/01-foundation")[:12], tip[:12])
	}
	if r := f.wo(nil, "run", key, "--from-step", "5"); r.code != 0 {
		t.Fatalf("going on after the commit step: exit %d\n%s", r.code, r.stderr)
	}
	if got := gittest.Run(t, f.origin, "rev-parse", "review/01-foundation"); got != tip {
		t.Errorf("the remote moved from %s to %s", tip[:12], got[:12])
	}
	for path, want := range map[string]string{"foundation/new0.go": "const Named = 1", "foundation/new1.go": "N1 is by hand"} {
		if got := gittest.Run(t, f.origin, "show", "review/01-foundation:"+path); !strings.Contains(got, want) {
			t.Errorf("%s lost %q:\n%s", path, want, got)
		}
	}
}
