package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wo-runner/wo/integration/ghstandin"
	"github.com/wo-runner/wo/internal/gittest"
)

const undoBase = "code-review-base"

// assertLocalGone checks with git that the run left nothing in the local
// repository: no branch of its, one worktree (the main one).
func assertLocalGone(t *testing.T, f *fixture) {
	t.Helper()
	if got := gittest.Run(t, f.repo, "branch", "--list", "review/*"); got != "" {
		t.Errorf("local branches left: %q", got)
	}
	if list := gittest.Run(t, f.repo, "worktree", "list", "--porcelain"); strings.Count(list, "worktree ") != 1 {
		t.Errorf("worktrees left:\n%s", list)
	}
}

// theirPush clones the remote branch, commits on it as someone else and
// pushes when the returned function is called; it returns their commit.
func theirPush(t *testing.T, f *fixture, name string) (push func(), commit string) {
	t.Helper()
	clone := filepath.Join(f.root, name)
	gittest.Run(t, f.root, "clone", "-q", "-b", undoBranch, f.origin, clone)
	writeFile(t, filepath.Join(clone, name+".txt"), "their work\n")
	gittest.Run(t, clone, "add", "-A")
	gittest.Run(t, clone, "commit", "-q", "-m", "their commit")
	return func() { gittest.Run(t, clone, "push", "-q", "origin", undoBranch) }, gittest.Run(t, clone, "rev-parse", "HEAD")
}

func TestUndoTakesBackAPROpenedButNotRecorded(t *testing.T) {
	t.Parallel()
	f, gh, env := undoFixture(t, "task_undo")
	r := f.wo(append(env, "WO_FAULT=create_pr:before_writeback"), "run", "task_undo")
	if !r.killed {
		t.Fatalf("the run was not killed: exit %d\n%s", r.code, r.stderr)
	}
	if st := stateOf(f.doc("task_undo")); st["pr_number"] != nil {
		t.Fatalf("the crash came after the pull request was recorded: %v", st)
	}
	if prs := gh.PullRequests("acme/hermes"); len(prs) != 1 || prs[0]["state"] != "open" {
		t.Fatalf("pull requests on the stand-in: %v, want one open", prs)
	}

	plan := f.wo(env, "undo", "task_undo", "--dry-run")
	if plan.code != 0 || !strings.Contains(plan.stdout, "would  pull request #1") || !strings.Contains(plan.stdout, "wo had not recorded it") {
		t.Errorf("the plan does not offer to close the unrecorded pull request: exit %d\n%s%s", plan.code, plan.stdout, plan.stderr)
	}
	r = f.wo(env, "undo", "task_undo", "--json")
	if r.code != 0 {
		t.Fatalf("undo: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if data := undoEnvelope(t, r); data["complete"] != true {
		t.Errorf("undo data: %v", data)
	}
	assertUndone(t, f, gh, "task_undo", 1)
}

// A pull request a run opened without recording it, and that was merged
// since: undo finds it among the closed ones too, and takes nothing back
// that the merge depends on.
func TestUndoNeverTouchesAnUnrecordedPRThatWasMerged(t *testing.T) {
	t.Parallel()
	f, gh, env := undoFixture(t, "task_undo")
	if r := f.wo(append(env, "WO_FAULT=create_pr:before_writeback"), "run", "task_undo"); !r.killed {
		t.Fatalf("the run was not killed: exit %d\n%s", r.code, r.stderr)
	}
	gh.Merge("acme/hermes", 1)
	before := f.doc("task_undo")

	r := f.wo(env, "undo", "task_undo", "--json")
	if r.code != 0 {
		t.Fatalf("undo: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "wo cannot take a merge back") {
		t.Errorf("undo does not say it cannot take the merge back:\n%s", r.stdout)
	}
	for _, req := range gh.Requests() {
		if req.Method != "GET" && (strings.Contains(req.Path, "/pulls/1") || strings.Contains(req.Path, "/issues/1/")) {
			t.Errorf("undo sent %s %s to a merged pull request", req.Method, req.Path)
		}
	}
	if !hasRef(t, f.origin, "refs/heads/"+undoBranch) {
		t.Error("the merged branch was deleted on the remote")
	}
	if after := f.doc("task_undo"); after["status"] != before["status"] || stateOf(after)["branch"] != undoBranch {
		t.Errorf("the task of a merged PR was reset: status %v, state %v", after["status"], stateOf(after))
	}
}

func TestUndoTakesBackAPushLandedButNotRecorded(t *testing.T) {
	t.Parallel()
	f, gh, env := undoFixture(t, "task_undo")
	r := f.wo(append(env, "WO_FAULT=push:after_push"), "run", "task_undo")
	if !r.killed {
		t.Fatalf("the run was not killed: exit %d\n%s", r.code, r.stderr)
	}
	if st := stateOf(f.doc("task_undo")); st["pushed_sha"] != nil || st["branch"] != undoBranch {
		t.Fatalf("want the branch recorded and the push not: %v", st)
	}
	pushed := gittest.Run(t, f.origin, "rev-parse", "refs/heads/"+undoBranch)

	r = f.wo(env, "undo", "task_undo", "--json")
	if r.code != 0 {
		t.Fatalf("undo: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if hasRef(t, f.origin, "refs/heads/"+undoBranch) {
		t.Errorf("the remote branch wo pushed (%s) is still there", pushed)
	}
	if !strings.Contains(r.stdout, "wo had not recorded pushing it") {
		t.Errorf("undo does not say how it knew the push was wo's:\n%s", r.stdout)
	}
	assertLocalGone(t, f)
	if data := undoEnvelope(t, r); data["complete"] != true || data["status"] != "open" {
		t.Errorf("undo data: %v", data)
	}
	if len(gh.PullRequests("acme/hermes")) != 0 {
		t.Error("a pull request appeared")
	}
}

// What wo cannot prove it made stays, with the reason: a push on top of
// wo's unrecorded one, and a pull request someone else opened from wo's
// branch.
func TestUndoKeepsWhatItCannotProveItMade(t *testing.T) {
	t.Parallel()
	t.Run("a commit on top of an unrecorded push", func(t *testing.T) {
		t.Parallel()
		f, _, env := undoFixture(t, "task_undo")
		if r := f.wo(append(env, "WO_FAULT=push:after_push"), "run", "task_undo"); !r.killed {
			t.Fatalf("the run was not killed: exit %d\n%s", r.code, r.stderr)
		}
		push, theirs := theirPush(t, f, "someone")
		push()
		r := f.wo(env, "undo", "task_undo", "--json")
		if r.code != 0 {
			t.Fatalf("undo: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
		}
		if got := gittest.Run(t, f.origin, "rev-parse", "refs/heads/"+undoBranch); got != theirs {
			t.Errorf("the remote branch is at %s, want their commit %s kept", got, theirs)
		}
		if data := undoEnvelope(t, r); data["complete"] != false || !strings.Contains(r.stdout, "which wo did not record making") {
			t.Errorf("undo does not say why the remote branch stays: %v\n%s", data["complete"], r.stdout)
		}
		assertLocalGone(t, f)
	})
	t.Run("a pull request someone else opened", func(t *testing.T) {
		t.Parallel()
		f, gh, env := undoFixture(t, "task_undo")
		if r := f.wo(append(env, "WO_FAULT=push:after_push"), "run", "task_undo"); !r.killed {
			t.Fatalf("the run was not killed: exit %d\n%s", r.code, r.stderr)
		}
		pushed := gittest.Run(t, f.origin, "rev-parse", "refs/heads/"+undoBranch)
		n := gh.OpenPRAs("acme/hermes", undoBranch, undoBase, "alice", "alice's pull request")
		r := f.wo(env, "undo", "task_undo")
		if r.code != 0 {
			t.Fatalf("undo: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
		}
		if p := prOn(gh, n); p["state"] != "open" || len(gh.IssueComments("acme/hermes", n)) != 0 {
			t.Errorf("alice's pull request was touched: %v", p)
		}
		if got := gittest.Run(t, f.origin, "rev-parse", "refs/heads/"+undoBranch); got != pushed {
			t.Errorf("the branch under alice's pull request is at %q, want it kept at %s", got, pushed)
		}
		for _, want := range []string{"was opened by alice, not by wo", "deleting it would close their pull request"} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("undo does not say %q:\n%s", want, r.stdout)
			}
		}
		if !strings.Contains(r.stdout, "undone where wo could") {
			t.Errorf("undo does not say it is incomplete:\n%s", r.stdout)
		}
	})
}

func TestUndoKeepsABranchPushedBetweenCheckAndDelete(t *testing.T) {
	t.Parallel()
	f, gh, env := undoFixture(t, "task_undo")
	pr := runToTheEnd(t, f, env, "task_undo")
	wos := gittest.Run(t, f.origin, "rev-parse", "refs/heads/"+undoBranch)
	push, theirs := theirPush(t, f, "someone")

	signal := filepath.Join(f.root, "paused")
	cmd := f.cmd(append(env, "WO_FAULT_PAUSE=undo:remote_branch:before_delete=2s", "WO_FAULT_SIGNAL="+signal), "undo", "task_undo", "--json")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "undo to check the remote branch", 20*time.Second, func() bool { _, err := os.Stat(signal); return err == nil })
	// Undo has seen the branch at wo's commit and is about to delete it.
	if got := gittest.Run(t, f.origin, "rev-parse", "refs/heads/"+undoBranch); got != wos {
		t.Fatalf("the remote branch moved before the check: %s", got)
	}
	push()
	r := result(cmd, cmd.Wait(), out.String(), errb.String())
	if r.code != 0 {
		t.Fatalf("undo: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if got := gittest.Run(t, f.origin, "rev-parse", "refs/heads/"+undoBranch); got != theirs {
		t.Errorf("the remote branch is at %q, want their commit %s", got, theirs)
	}
	data := undoEnvelope(t, r)
	if data["complete"] != false || !strings.Contains(r.stdout, "someone else pushed") || !strings.Contains(r.stdout, theirs[:12]) {
		t.Errorf("undo does not report their push (complete %v):\n%s", data["complete"], r.stdout)
	}
	if p := prOn(gh, pr); p["state"] != "closed" {
		t.Errorf("pull request #%d is %v, want closed", pr, p["state"])
	}
	assertLocalGone(t, f)
}

func TestUndoWhileARunnerHoldsTheLease(t *testing.T) {
	t.Parallel()
	f, gh, env := undoFixture(t, "task_undo")
	signal := filepath.Join(f.root, "paused")
	run := f.cmd(append(env, "WO_FAULT_PAUSE=create_pr:after_writeback=3s", "WO_FAULT_SIGNAL="+signal), "run", "task_undo")
	var runErr bytes.Buffer
	run.Stderr = &runErr
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the run to open its pull request", 20*time.Second, func() bool { _, err := os.Stat(signal); return err == nil })

	r := f.wo(env, "undo", "task_undo", "--json")
	if r.code != 4 {
		t.Fatalf("undo while a run holds the lease: exit %d, want 4\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	var envl struct {
		Success bool
		Error   struct{ Code, Message string }
	}
	if err := json.Unmarshal([]byte(r.stdout), &envl); err != nil || envl.Success || envl.Error.Code != "LEASE_HELD" || !strings.Contains(envl.Error.Message, "is being run by") {
		t.Errorf("envelope %+v (%v), want LEASE_HELD naming the runner", envl, err)
	}
	// Nothing changed: the task, the pull request, the branches.
	if st := stateOf(f.doc("task_undo")); st["undo"] != nil || st["pr_number"] == nil {
		t.Errorf("undo wrote to the task while the run held the lease: %v", st)
	}
	if p := prOn(gh, 1); p == nil || p["state"] != "open" || len(gh.IssueComments("acme/hermes", 1)) != 0 {
		t.Errorf("the run's pull request was touched: %v", p)
	}
	if !hasRef(t, f.origin, "refs/heads/"+undoBranch) || !hasRef(t, f.repo, "refs/heads/"+undoBranch) {
		t.Error("a branch of the run was deleted")
	}
	if log := f.wo(nil, "log", "task_undo", "--json"); strings.Contains(log.stdout, `"undo_started"`) {
		t.Errorf("the log has an undo that never held the lease:\n%s", log.stdout)
	}

	if rr := result(run, run.Wait(), "", runErr.String()); rr.code != 0 {
		t.Fatalf("the run: exit %d\n%s", rr.code, rr.stderr)
	}
	if r := f.wo(env, "undo", "task_undo"); r.code != 0 {
		t.Fatalf("undo after the run ended: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	assertUndone(t, f, gh, "task_undo", 1)
}

func TestUndoExitCodes(t *testing.T) {
	t.Parallel()
	f, gh, env := undoFixture(t, "task_undo")
	runToTheEnd(t, f, env, "task_undo")
	for _, c := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"a key and --epic", []string{"undo", "task_undo", "--epic", "task_undo"}, 2, "not both"},
		{"no key", []string{"undo"}, 2, "KEY"},
		{"two keys", []string{"undo", "task_undo", "task_other"}, 2, ""},
		{"a key that does not exist", []string{"undo", "task_ghost"}, 1, "task_ghost"},
		{"an epic that does not exist", []string{"undo", "--epic", "task_ghost"}, 1, "task_ghost"},
	} {
		r := f.wo(env, c.args...)
		if r.code != c.code || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%s: exit %d, want %d saying %q\n%s", c.name, r.code, c.code, c.want, r.stderr)
		}
	}
	if !hasRef(t, f.origin, "refs/heads/"+undoBranch) {
		t.Fatal("a refused undo deleted the remote branch")
	}

	// GitHub failing past the client's retries: exit 5, rerun later.
	gh.Inject5xx(4)
	r := f.wo(env, "undo", "task_undo", "--json")
	var envl struct {
		Error struct{ Code, Message string }
	}
	json.Unmarshal([]byte(r.stdout), &envl)
	if r.code != 5 || envl.Error.Code != "RETRY_LATER" {
		t.Fatalf("undo while GitHub answers 502: exit %d (%s), want 5 RETRY_LATER\n%s\n%s", r.code, envl.Error.Code, r.stdout, r.stderr)
	}
	if !hasRef(t, f.origin, "refs/heads/"+undoBranch) || prOn(gh, 1)["state"] != "open" {
		t.Error("undo went on past the pull request it could not read")
	}
	if r := f.wo(env, "undo", "task_undo"); r.code != 0 {
		t.Fatalf("the rerun: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	assertUndone(t, f, gh, "task_undo", 1)
}

func TestUndoCommentsDeletesWosRepliesInReviewThreads(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 20)
	gh, env := withGitHub(t, f) // a reviewer with two comments, then approval
	env = append(env, "WO_AGENT="+fixingAgent(t, f))
	f.importTask(f.seedTask("task_undo"))
	pr := runToTheEnd(t, f, env, "task_undo")
	wos := func() (n int) {
		for _, th := range gh.Threads("acme/hermes", pr) {
			for _, c := range th.Comments {
				if c.Login == "wo-bot" && strings.HasPrefix(c.Body, "Addressed in ") {
					n++
				}
			}
		}
		return n
	}
	if wos() != 2 {
		t.Fatalf("the run left %d replies of wo's in review threads, want 2: %v", wos(), gh.Threads("acme/hermes", pr))
	}
	// A person's reply quoting wo's marker is theirs, and stays.
	quote := "as wo said: Addressed in 0123456789ab.\n\n<!-- wo:addressed 0123456789abcdef0123456789abcdef01234567 -->"
	gh.ReplyAs("acme/hermes", pr, 0, "alice", quote)

	plan := f.wo(env, "undo", "task_undo", "--comments", "--dry-run")
	if !strings.Contains(plan.stdout, "delete 0 comment(s) and 2 review-thread reply(ies)") {
		t.Errorf("the plan does not count wo's replies:\n%s%s", plan.stdout, plan.stderr)
	}
	if wos() != 2 {
		t.Fatal("the dry run deleted replies")
	}
	// Killed after the first reply went: the rerun deletes the other.
	if r := f.wo(append(env, "WO_FAULT=undo:comments:after_first_reply_delete"), "undo", "task_undo", "--comments"); !r.killed || wos() != 1 {
		t.Fatalf("undo was not killed after one reply (exit %d, %d replies left)\n%s", r.code, wos(), r.stderr)
	}
	if r := f.wo(env, "undo", "task_undo", "--comments"); r.code != 0 {
		t.Fatalf("undo --comments: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if wos() != 0 {
		t.Errorf("%d replies of wo's left in review threads", wos())
	}
	threads := gh.Threads("acme/hermes", pr)
	if len(threads) != 2 {
		t.Fatalf("%d review threads, want the reviewer's 2 kept", len(threads))
	}
	for i, th := range threads {
		if len(th.Comments) == 0 || th.Comments[0].Login != "coderabbitai[bot]" {
			t.Errorf("thread %d lost the reviewer's comment: %v", i, th.Comments)
		}
	}
	if cs := threads[0].Comments; cs[len(cs)-1].Login != "alice" || cs[len(cs)-1].Body != quote {
		t.Errorf("alice's reply was not kept: %v", cs)
	}
	for _, v := range gh.Violations() {
		t.Errorf("the stand-in refused what wo sent: %v", v)
	}
	assertUndone(t, f, gh, "task_undo", pr)
}

// A task that no run touched has nothing for undo to take back, whatever
// its status: a person closed it, or Persephone did, and undo is not a way
// to reopen it (as git town undo does nothing after a command that changed
// nothing).
func TestUndoLeavesATaskNoRunTouched(t *testing.T) {
	t.Parallel()
	f, gh, env := undoFixture(t, "task_undo")
	doc := f.seedTask("task_done")
	doc["status"] = "closed"
	f.importTask(doc)
	before := writtenOf(t, f, "task_done")
	for _, args := range [][]string{{"undo", "task_done"}, {"undo", "task_done", "--close"}, {"undo", "task_done", "--dry-run"}} {
		r := f.wo(env, args...)
		if r.code != 0 || !strings.Contains(r.stdout, "task_done: nothing to undo (status closed, no step recorded)") {
			t.Errorf("wo %s: exit %d\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
		}
	}
	if now := writtenOf(t, f, "task_done"); now != before || f.doc("task_done")["status"] != "closed" || len(gh.Requests()) != 0 {
		t.Errorf("undo of an untouched closed task wrote %+v (was %+v), status %v, %d GitHub request(s)", now, before, f.doc("task_done")["status"], len(gh.Requests()))
	}
}

// An undo that GitHub stops is not complete: the data says so (a CI job
// checks jq -e .data.complete), and the human output never says undone.
func TestUndoStoppedByAnErrorIsNotComplete(t *testing.T) {
	t.Parallel()
	f, gh, env := undoFixture(t, "task_undo")
	pr := runToTheEnd(t, f, env, "task_undo")

	gh.Inject5xx(4)
	r := f.wo(env, "undo", "task_undo", "--json")
	if r.code != 5 {
		t.Fatalf("undo while GitHub answers 502: exit %d, want 5\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	data := undoEnvelope(t, r)
	if data["complete"] != false || data["stopped"] != "pull_request" {
		t.Errorf("undo --json stopped by GitHub: complete %v, stopped %v; want false, pull_request\n%s", data["complete"], data["stopped"], r.stdout)
	}

	gh.Inject5xx(4)
	r = f.wo(env, "undo", "task_undo")
	if r.code != 5 {
		t.Fatalf("undo while GitHub answers 502: exit %d, want 5\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if strings.Contains(r.stdout, "task_undo: undone") || !strings.Contains(r.stdout, "task_undo: NOT finished: an error stopped the undo at its pull request step") {
		t.Errorf("the human output of a stopped undo:\n%s", r.stdout)
	}
	if !strings.Contains(r.stderr, "run wo undo task_undo again later") {
		t.Errorf("the error does not say what to do:\n%s", r.stderr)
	}
	if p := prOn(gh, pr); p["state"] != "open" || !hasRef(t, f.origin, "refs/heads/"+undoBranch) {
		t.Error("undo went on past the pull request it could not read")
	}

	r = f.wo(env, "undo", "task_undo", "--json")
	if data := undoEnvelope(t, r); r.code != 0 || data["complete"] != true || data["stopped"] != nil {
		t.Fatalf("the rerun: exit %d, data %v\n%s", r.code, data, r.stderr)
	}
	assertUndone(t, f, gh, "task_undo", pr)
}

// A worktree left for changes not committed keeps the task's state: the
// person discards them and runs undo again, which finishes the job (git
// town's undo, too, can be continued after a conflict is resolved).
func TestUndoLeftForChangesFinishesWhenRunAgain(t *testing.T) {
	t.Parallel()
	f, gh, env := undoFixture(t, "task_undo")
	if r := f.wo(append(env, "WO_FAULT=check_review:after_writeback"), "run", "task_undo"); !r.killed {
		t.Fatalf("the run was not killed: exit %d\n%s", r.code, r.stderr)
	}
	pr := prNumberOf(t, f, "task_undo")
	path, _ := stateOf(f.doc("task_undo"))["worktree_path"].(string)
	writeFile(t, filepath.Join(path, "scratch.txt"), "wip\n")

	r := f.wo(env, "undo", "task_undo", "--json")
	assertLeft(t, r, "scratch.txt", "worktree")
	assertLeft(t, r, "is checked out at "+path, "local_branch")
	if data := undoEnvelope(t, r); data["pending"] != true {
		t.Errorf("undo data: %v, want pending", data)
	}
	if _, err := os.Stat(filepath.Join(path, "scratch.txt")); err != nil {
		t.Errorf("the change not committed: %v", err)
	}
	if !hasRef(t, f.repo, "refs/heads/"+undoBranch) || hasRef(t, f.origin, "refs/heads/"+undoBranch) || prOn(gh, pr)["state"] != "closed" {
		t.Error("undo did not take back what it could, or took the local branch")
	}
	if st := stateOf(f.doc("task_undo")); st["undo"] == nil || st["branch"] != undoBranch {
		t.Errorf("the state was not kept for the rerun: %v", st)
	}
	human := f.wo(env, "undo", "task_undo")
	if human.code != 0 || !strings.Contains(human.stdout, "task_undo: NOT finished: deal with what is LEFT above as it says, then run wo undo task_undo again") {
		t.Errorf("undo before the fix: exit %d\n%s%s", human.code, human.stdout, human.stderr)
	}
	// Meanwhile the task does not run on its closed PR and deleted branch.
	if run := f.wo(env, "run", "task_undo"); run.code != 3 || !strings.Contains(run.stderr, "finish the undo with wo undo task_undo") {
		t.Errorf("wo run of a task partly undone: exit %d, want 3\n%s", run.code, run.stderr)
	}

	os.Remove(filepath.Join(path, "scratch.txt"))
	r = f.wo(env, "undo", "task_undo", "--json")
	if data := undoEnvelope(t, r); r.code != 0 || data["complete"] != true {
		t.Fatalf("undo after the fix: exit %d, %v\n%s", r.code, data, r.stderr)
	}
	assertUndone(t, f, gh, "task_undo", pr)
}

// --close takes everything back as a plain undo does and ends with the
// task closed; an undo after it has nothing to undo and leaves it closed.
// Killed between the status and the state, the rerun ends closed too.
func TestUndoClose(t *testing.T) {
	t.Parallel()
	f, gh, env := undoFixture(t, "task_undo")
	pr := runToTheEnd(t, f, env, "task_undo")
	plan := f.wo(env, "undo", "task_undo", "--close", "--dry-run")
	if plan.code != 0 || !strings.Contains(plan.stdout, "move status in_review → closed") {
		t.Errorf("the plan of --close: exit %d\n%s%s", plan.code, plan.stdout, plan.stderr)
	}
	r := f.wo(env, "undo", "task_undo", "--close", "--json")
	if data := undoEnvelope(t, r); r.code != 0 || data["complete"] != true || data["status"] != "closed" {
		t.Fatalf("undo --close: exit %d, %v\n%s", r.code, data, r.stderr)
	}
	assertClosedUndone(t, f, gh, pr)

	before := writtenOf(t, f, "task_undo")
	for _, args := range [][]string{{"undo", "task_undo"}, {"undo", "task_undo", "--close"}} {
		if r := f.wo(env, args...); r.code != 0 || !strings.Contains(r.stdout, "task_undo: nothing to undo (status closed") {
			t.Errorf("wo %s after --close: exit %d\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
		}
	}
	if now := writtenOf(t, f, "task_undo"); now != before {
		t.Errorf("an undo after --close wrote %+v (was %+v)", now, before)
	}

	// Reopened and run again, then killed between the status and the state.
	if r := f.wo(nil, "reset", "task_undo", "--to-step", "0"); r.code != 0 {
		t.Fatalf("reset: exit %d\n%s", r.code, r.stderr)
	}
	pr = runToTheEnd(t, f, env, "task_undo")
	if r := f.wo(append(env, "WO_FAULT=undo:after_status"), "undo", "task_undo", "--close"); !r.killed {
		t.Fatalf("undo --close was not killed: exit %d\n%s", r.code, r.stderr)
	}
	if r := f.wo(env, "undo", "task_undo", "--close"); r.code != 0 {
		t.Fatalf("the rerun: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	assertClosedUndone(t, f, gh, pr)
}

// assertClosedUndone is assertUndone for --close: the same world, the
// task closed.
func assertClosedUndone(t *testing.T, f *fixture, gh *ghstandin.Server, pr int) {
	t.Helper()
	assertLocalGone(t, f)
	if got := gittest.Run(t, f.origin, "branch", "--list", "review/*"); got != "" {
		t.Errorf("remote branches left: %q", got)
	}
	if p := prOn(gh, pr); p["state"] != "closed" || p["merged"] == true {
		t.Errorf("pull request #%d: %v", pr, p)
	}
	d := f.doc("task_undo")
	if st := stateOf(d); d["status"] != "closed" || fmt.Sprint(st["current_step"]) != "0" || st["pr_number"] != nil || st["undo"] != nil {
		t.Errorf("after undo --close: status %v, state %v", d["status"], st)
	}
}
