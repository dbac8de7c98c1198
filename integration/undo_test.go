package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wo-runner/wo/integration/ghstandin"
	"github.com/wo-runner/wo/internal/gittest"
	"github.com/wo-runner/wo/store"
)

const undoBranch = "review/01-foundation"

// undoFixture is a repository, its bare remote and the GitHub stand-in,
// with a reviewer that approves at once, and one work order of the seed's
// procedure that opens a pull request.
func undoFixture(t *testing.T, key string, rollbackHints ...any) (*fixture, *ghstandin.Server, []string) {
	t.Helper()
	f := newFixture(t, 20)
	gh, env := withGitHub(t, f)
	gh.ReviewRounds = nil // approves at once
	gh.ReviewDelay = 20 * time.Millisecond
	doc := f.seedTask(key)
	if len(rollbackHints) > 0 {
		doc["work_order"].(map[string]any)["rollback_hints"] = rollbackHints
	}
	f.importTask(doc)
	return f, gh, env
}

// runToTheEnd runs the work order and returns its pull request's number.
func runToTheEnd(t *testing.T, f *fixture, env []string, key string) int {
	t.Helper()
	if r := f.wo(env, "run", key); r.code != 0 {
		t.Fatalf("run: exit %d\n%s", r.code, r.stderr)
	}
	return prNumberOf(t, f, key)
}

func prNumberOf(t *testing.T, f *fixture, key string) int {
	t.Helper()
	n, _ := stateOf(f.doc(key))["pr_number"].(float64)
	if n == 0 {
		t.Fatalf("%s records no pull request", key)
	}
	return int(n)
}

func prOn(gh *ghstandin.Server, number int) map[string]any {
	for _, p := range gh.PullRequests("acme/hermes") {
		if p["number"] == number {
			return p
		}
	}
	return nil
}

// hasRef reports whether dir's repository has the reference, asking git.
func hasRef(t *testing.T, dir, ref string) bool {
	t.Helper()
	_, err := gittest.Try(dir, "rev-parse", "--verify", "--quiet", ref)
	return err == nil
}

// written is what the store holds of a task that any write changes: its
// revision and the number of its activity-log entries. wo show prints
// no _rev, so the store is read directly.
type written struct {
	Rev  string
	Logs int
}

func writtenOf(t *testing.T, f *fixture, key string) written {
	t.Helper()
	ctx := context.Background()
	s, err := store.OpenSQLiteReadOnly(ctx, f.store)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	doc, err := s.Get(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	logs, err := s.Logs(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	rev, _ := doc["_rev"].(string)
	if rev == "" {
		t.Fatalf("the store gives %s no _rev", key)
	}
	return written{rev, len(logs)}
}

func undoEnvelope(t *testing.T, r woResult) map[string]any {
	t.Helper()
	var env struct {
		Success bool
		Data    map[string]any
	}
	if err := json.Unmarshal([]byte(r.stdout), &env); err != nil {
		t.Fatalf("undo --json printed %q: %v", r.stdout, err)
	}
	return env.Data
}

// assertUndone checks, with git and the stand-in, that nothing of the run
// is left: no local or remote branch, one worktree (the main one), the
// pull request closed (not merged) with exactly one comment saying why,
// and the task at step 0 with status open.
func assertUndone(t *testing.T, f *fixture, gh *ghstandin.Server, key string, pr int) {
	t.Helper()
	if got := gittest.Run(t, f.repo, "branch", "--list", "review/*"); got != "" {
		t.Errorf("local branches left: %q", got)
	}
	if got := gittest.Run(t, f.origin, "branch", "--list", "review/*"); got != "" {
		t.Errorf("remote branches left: %q", got)
	}
	if list := gittest.Run(t, f.repo, "worktree", "list", "--porcelain"); strings.Count(list, "worktree ") != 1 {
		t.Errorf("worktrees left:\n%s", list)
	}
	gittest.Run(t, f.repo, "fsck", "--strict", "--no-progress")
	p := prOn(gh, pr)
	if p == nil || p["state"] != "closed" || p["merged"] == true {
		t.Errorf("pull request #%d: %v, want closed and not merged", pr, p)
	}
	closing := 0
	for _, c := range gh.IssueComments("acme/hermes", pr) {
		if strings.Contains(c.Body, "<!-- wo:"+key+":undo -->") {
			closing++
		}
	}
	if closing != 1 {
		t.Errorf("%d comments closing #%d, want 1", closing, pr)
	}
	doc := f.doc(key)
	st := stateOf(doc)
	if doc["status"] != "open" || fmt.Sprint(st["current_step"]) != "0" || len(st["completed_steps"].([]any)) != 0 ||
		st["pr_number"] != nil || st["pushed_sha"] != nil || st["branch"] != nil || st["undo"] != nil {
		t.Errorf("task after undo: status %v, state %v", doc["status"], st)
	}
}

func TestUndoAfterACompleteRun(t *testing.T) {
	t.Parallel()
	f, gh, env := undoFixture(t, "task_undo", "git revert the foundation commit on code-review-base")
	pr := runToTheEnd(t, f, env, "task_undo")
	pushed := gittest.Run(t, f.origin, "rev-parse", "refs/heads/"+undoBranch)

	// The plan changes nothing and shows the rollback hints.
	before := writtenOf(t, f, "task_undo")
	r := f.wo(env, "undo", "task_undo", "--dry-run")
	if r.code != 0 {
		t.Fatalf("undo --dry-run: exit %d\n%s", r.code, r.stderr)
	}
	for _, want := range []string{"would  pull request #" + fmt.Sprint(pr), "would  branch " + undoBranch + " on origin", "would  branch " + undoBranch + ":",
		"git revert the foundation commit on code-review-base"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("the plan lacks %q:\n%s", want, r.stdout)
		}
	}
	if writtenOf(t, f, "task_undo") != before || prOn(gh, pr)["state"] != "open" || !hasRef(t, f.origin, "refs/heads/"+undoBranch) || !hasRef(t, f.repo, "refs/heads/"+undoBranch) {
		t.Fatal("the dry run changed something")
	}

	r = f.wo(env, "undo", "task_undo", "--reason", "wrong split", "--json")
	if r.code != 0 {
		t.Fatalf("undo: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	data := undoEnvelope(t, r)
	if data["complete"] != true || data["status"] != "open" {
		t.Errorf("undo data: %v", data)
	}
	assertUndone(t, f, gh, "task_undo", pr)
	found := false
	for _, c := range gh.IssueComments("acme/hermes", pr) {
		found = found || (c.Author == "wo-bot" && strings.Contains(c.Body, "Reason: wrong split"))
	}
	if !found {
		t.Error("the closing comment does not give the --reason")
	}
	// The history is in the log: the state before, with the pushed commit.
	log := f.wo(nil, "log", "task_undo", "--json")
	if !strings.Contains(log.stdout, `"undone"`) || !strings.Contains(log.stdout, pushed) {
		t.Errorf("the log lacks the undo and the state before it:\n%s", log.stdout)
	}
	noSecret(t, "undo output", r.stdout+r.stderr+log.stdout)

	// A second undo is a no-op: nothing written.
	undone := writtenOf(t, f, "task_undo")
	requests := len(gh.Requests())
	r = f.wo(env, "undo", "task_undo")
	if r.code != 0 || !strings.Contains(r.stdout, "nothing to undo") {
		t.Fatalf("second undo: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if now := writtenOf(t, f, "task_undo"); now != undone || len(gh.Requests()) != requests {
		t.Errorf("the second undo wrote to the task (%+v, was %+v) or called GitHub (%d requests)", now, undone, len(gh.Requests())-requests)
	}
	// And the work order runs again from the start.
	pr2 := runToTheEnd(t, f, env, "task_undo")
	if pr2 == pr || prOn(gh, pr2)["state"] != "open" {
		t.Errorf("the rerun after undo has PR #%d (first #%d): %v", pr2, pr, prOn(gh, pr2))
	}
}

func TestUndoLeavesABranchSomeoneElsePushed(t *testing.T) {
	t.Parallel()
	f, gh, env := undoFixture(t, "task_undo")
	pr := runToTheEnd(t, f, env, "task_undo")
	// A person clones, commits on the branch and pushes.
	clone := filepath.Join(f.root, "someone")
	gittest.Run(t, f.root, "clone", "-q", "-b", undoBranch, f.origin, clone)
	writeFile(t, filepath.Join(clone, "theirs.txt"), "their work\n")
	gittest.Run(t, clone, "add", "-A")
	gittest.Run(t, clone, "commit", "-q", "-m", "their commit")
	gittest.Run(t, clone, "push", "-q", "origin", undoBranch)
	theirs := gittest.Run(t, clone, "rev-parse", "HEAD")

	r := f.wo(env, "undo", "task_undo", "--json")
	if r.code != 0 {
		t.Fatalf("undo: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if got := gittest.Run(t, f.origin, "rev-parse", "refs/heads/"+undoBranch); got != theirs {
		t.Errorf("the remote branch is at %s, want their commit %s kept", got, theirs)
	}
	data := undoEnvelope(t, r)
	if data["complete"] != false || !strings.Contains(r.stdout, "someone else pushed") {
		t.Errorf("undo does not say why the remote branch stays:\n%s", r.stdout)
	}
	if hasRef(t, f.repo, "refs/heads/"+undoBranch) {
		t.Error("the local branch, at wo's commit, was kept")
	}
	if p := prOn(gh, pr); p["state"] != "closed" {
		t.Errorf("pull request #%d is %v, want closed", pr, p["state"])
	}
	if doc := f.doc("task_undo"); doc["status"] != "open" {
		t.Errorf("status %v, want open", doc["status"])
	}
}

func TestUndoNeverTouchesAMergedPR(t *testing.T) {
	t.Parallel()
	f, gh, env := undoFixture(t, "task_undo")
	pr := runToTheEnd(t, f, env, "task_undo")
	gh.Merge("acme/hermes", pr)
	before := f.doc("task_undo")
	comments := len(gh.IssueComments("acme/hermes", pr))

	r := f.wo(env, "undo", "task_undo", "--comments")
	if r.code != 0 {
		t.Fatalf("undo: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "wo cannot take a merge back") {
		t.Errorf("undo does not say what it cannot take back:\n%s", r.stdout)
	}
	if p := prOn(gh, pr); p["merged"] != true || len(gh.IssueComments("acme/hermes", pr)) != comments {
		t.Errorf("the merged pull request was touched: %v", p)
	}
	for _, req := range gh.Requests() {
		if req.Method != "GET" && strings.Contains(req.Path, fmt.Sprintf("/%d", pr)) {
			t.Errorf("undo sent %s %s to a merged pull request", req.Method, req.Path)
		}
	}
	if !hasRef(t, f.origin, "refs/heads/"+undoBranch) {
		t.Error("the merged branch was deleted on the remote")
	}
	if hasRef(t, f.repo, "refs/heads/"+undoBranch) {
		t.Error("the local branch was kept")
	}
	after := f.doc("task_undo")
	if after["status"] != before["status"] || stateOf(after)["pr_number"] != stateOf(before)["pr_number"] {
		t.Errorf("the task lost its record of the merge: status %v, state %v", after["status"], stateOf(after))
	}
	// Undo again: the same, nothing more: nothing written, nothing sent.
	once := writtenOf(t, f, "task_undo")
	requests := len(gh.Requests())
	r = f.wo(env, "undo", "task_undo")
	if now := writtenOf(t, f, "task_undo"); r.code != 0 || now != once || len(gh.Requests()) != requests {
		t.Errorf("a second undo of a merged task: exit %d, store %+v (was %+v), %d GitHub request(s)\n%s", r.code, now, once, len(gh.Requests())-requests, r.stderr)
	}
	if !strings.Contains(r.stdout, "wo cannot take a merge back") {
		t.Errorf("the second undo does not say again what it could not take back:\n%s", r.stdout)
	}
}

func TestUndoAfterACrashMidRun(t *testing.T) {
	t.Parallel()
	f, gh, env := undoFixture(t, "task_undo")
	r := f.wo(append(env, "WO_FAULT=create_pr:after_writeback"), "run", "task_undo")
	if !r.killed {
		t.Fatalf("the run was not killed: exit %d\n%s", r.code, r.stderr)
	}
	pr := prNumberOf(t, f, "task_undo")
	if list := gittest.Run(t, f.repo, "worktree", "list", "--porcelain"); strings.Count(list, "worktree ") != 2 {
		t.Fatalf("the crashed run left no worktree:\n%s", list)
	}
	// Someone also posted on the PR; wo's delivery-like comment goes with
	// --comments, theirs stays.
	gh.CommentAs("acme/hermes", pr, "alice", "quoting <!-- wo:task_undo:step:6 --> is not wo's")
	if r := f.wo(env, "undo", "task_undo", "--comments"); r.code != 0 {
		t.Fatalf("undo after a crash: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	assertUndone(t, f, gh, "task_undo", pr)
	if cs := gh.IssueComments("acme/hermes", pr); len(cs) != 2 || cs[0].Author != "alice" {
		t.Errorf("comments left on #%d: %v, want alice's and the closing one", pr, cs)
	}
}

// undoCrashPoints are the points inside wo undo where a crash leaves the
// world half taken back.
var undoCrashPoints = []string{
	"undo:comments:after_first_delete", "undo:pull_request:after_comment", "undo:pull_request:before_writeback",
	"undo:remote_branch:after_delete", "undo:remote_branch:after_writeback", "undo:worktree:after_remove",
	"undo:local_branch:before_writeback", "undo:after_status",
}

func TestUndoCrashAtEveryPointThenRerun(t *testing.T) {
	t.Parallel()
	f, gh, env := undoFixture(t, "task_undo")
	for _, point := range undoCrashPoints {
		// A run that stops before cleanup leaves every kind of thing.
		r := f.wo(append(env, "WO_FAULT=check_review:after_writeback"), "run", "task_undo")
		if !r.killed {
			t.Fatalf("%s: the run was not killed: exit %d\n%s", point, r.code, r.stderr)
		}
		pr := prNumberOf(t, f, "task_undo")
		gh.CommentAs("acme/hermes", pr, "wo-bot", "delivered\n\n<!-- wo:task_undo:step:9 -->")
		gh.CommentAs("acme/hermes", pr, "wo-bot", "delivered again\n\n<!-- wo:task_undo:step:10 -->")
		r = f.wo(append(env, "WO_FAULT="+point), "undo", "task_undo", "--comments")
		if !r.killed {
			t.Fatalf("undo was not killed at %s: exit %d\n%s", point, r.code, r.stderr)
		}
		if r := f.wo(env, "undo", "task_undo", "--comments"); r.code != 0 {
			t.Fatalf("undo after a crash at %s: exit %d\n%s\n%s", point, r.code, r.stdout, r.stderr)
		}
		assertUndone(t, f, gh, "task_undo", pr)
		if cs := gh.IssueComments("acme/hermes", pr); len(cs) != 1 {
			t.Errorf("%s: comments left on #%d: %v, want only the closing one", point, pr, cs)
		}
	}
}

func TestUndoSIGKILLAtRandomMomentsThenRerun(t *testing.T) {
	t.Parallel()
	f, gh, env := undoFixture(t, "task_undo")
	pr := runToTheEnd(t, f, env, "task_undo")
	start := time.Now()
	if r := f.wo(env, "undo", "task_undo"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	full := time.Since(start)
	assertUndone(t, f, gh, "task_undo", pr)

	rng := rand.New(rand.NewPCG(7, uint64(time.Now().UnixNano())))
	kills := 0
	for i := 0; i < 8; i++ {
		pr := runToTheEnd(t, f, env, "task_undo")
		cmd := f.cmd(env, "undo", "task_undo")
		var errb bytes.Buffer
		cmd.Stderr = &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rng.Int64N(int64(full))))
		cmd.Process.Signal(syscall.SIGKILL)
		r := result(cmd, cmd.Wait(), "", errb.String())
		if r.killed {
			kills++
		} else if r.code != 0 {
			t.Fatalf("undo %d ended with exit %d before the kill:\n%s", i, r.code, r.stderr)
		}
		if r := f.wo(env, "undo", "task_undo"); r.code != 0 {
			t.Fatalf("undo after a kill: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
		}
		assertUndone(t, f, gh, "task_undo", pr)
	}
	t.Logf("an undo takes %s; %d of 8 were killed mid-way", full.Round(time.Millisecond), kills)
	if kills < 3 {
		t.Errorf("only %d undos killed mid-way, want at least 3", kills)
	}
}

// stackedEpic splits a change into an epic of three stacked PRs
// (task_stack_pr01 at the bottom) and runs it to the end.
func stackedEpic(t *testing.T) (*fixture, *ghstandin.Server, []string) {
	t.Helper()
	f := goModuleFixture(t, 3)
	gh := ghstandin.New(secretToken)
	gh.Remotes["acme/big"] = f.origin
	gh.ReviewDelay = 20 * time.Millisecond
	if err := gh.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(gh.Close)
	env := []string{"GITHUB_TOKEN=" + secretToken, "GITHUB_API_URL=" + gh.URL, "WO_REVIEW_WAIT=20s", "WO_POLL_INTERVAL=50ms"}
	r := f.wo(env, "split", "--repo", f.repo, "--base", "base", "--source", "main", "--mode", "stacked",
		"--github-repo", "acme/big", "--worktree-root", f.wtRoot, "--max-lines", "12", "--epic-key", "task_stack", "--json")
	if r.code != 0 {
		t.Fatalf("split: exit %d\n%s", r.code, r.stderr)
	}
	if r = f.wo(env, "run", "--epic", "task_stack"); r.code != 0 {
		t.Fatalf("run --epic: exit %d\n%s", r.code, r.stderr)
	}
	prs := gh.PullRequests("acme/big")
	if len(prs) != 3 {
		t.Fatalf("%d pull requests, want a stack of 3", len(prs))
	}
	for i, p := range prs {
		if i > 0 && p["base"].(map[string]any)["ref"] != prs[i-1]["head"].(map[string]any)["ref"] {
			t.Fatalf("#%v is not stacked on #%v: %v", p["number"], prs[i-1]["number"], p["base"])
		}
	}
	return f, gh, env
}

// epicUndoData is wo undo --epic --json's data.
type epicUndoData struct {
	Tasks []struct {
		Key, Outcome, Reason string
		Undo                 map[string]any
	}
	Complete bool
}

func epicUndoEnvelope(t *testing.T, r woResult) (epicUndoData, string) {
	t.Helper()
	var env struct {
		Data  epicUndoData
		Error *struct{ Code, Message string }
	}
	if err := json.Unmarshal([]byte(r.stdout), &env); err != nil {
		t.Fatalf("undo --epic --json printed %q: %v", r.stdout, err)
	}
	code := ""
	if env.Error != nil {
		code = env.Error.Code
	}
	return env.Data, code
}

// assertStackUndone checks with git and the stand-in that nothing of the
// epic's runs is left: every PR closed, not merged, with one comment
// saying why; no branch but base on the remote or here; no worktree but
// the main one; every child at step 0, open.
func assertStackUndone(t *testing.T, f *fixture, gh *ghstandin.Server) {
	t.Helper()
	for _, p := range gh.PullRequests("acme/big") {
		if p["state"] != "closed" || p["merged"] == true {
			t.Errorf("pull request #%v is %v (merged %v), want closed", p["number"], p["state"], p["merged"])
		}
		closing := 0
		for _, c := range gh.IssueComments("acme/big", p["number"].(int)) {
			if c.Author == "wo-bot" && strings.Contains(c.Body, "wo undo: closing this pull request") {
				closing++
			}
		}
		if closing != 1 {
			t.Errorf("pull request #%v has %d closing comments, want 1", p["number"], closing)
		}
	}
	if got := gittest.Run(t, f.origin, "branch", "--list"); got != "base" && got != "* base" {
		t.Errorf("remote branches left: %q", got)
	}
	if got := gittest.Run(t, f.repo, "branch", "--list", "review/*"); got != "" {
		t.Errorf("local branches left: %q", got)
	}
	if list := gittest.Run(t, f.repo, "worktree", "list", "--porcelain"); strings.Count(list, "worktree ") != 1 {
		t.Errorf("worktrees left:\n%s", list)
	}
	for _, k := range []string{"task_stack_pr01", "task_stack_pr02", "task_stack_pr03"} {
		if d := f.doc(k); d["status"] != "open" || fmt.Sprint(stateOf(d)["current_step"]) != "0" || stateOf(d)["undo"] != nil {
			t.Errorf("%s after undo: status %v, state %v", k, d["status"], stateOf(d))
		}
	}
}

func TestUndoAnEpicOfThreeStackedPRs(t *testing.T) {
	t.Parallel()
	f, gh, env := stackedEpic(t)
	r := f.wo(env, "undo", "--epic", "task_stack", "--json")
	if r.code != 0 {
		t.Fatalf("undo --epic: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	data, _ := epicUndoEnvelope(t, r)
	if !data.Complete {
		t.Errorf("undo --epic of a stack nobody touched: data.complete false\n%s", r.stdout)
	}
	var order []string
	for _, tk := range data.Tasks {
		order = append(order, tk.Key)
		if tk.Outcome != "done" || tk.Undo["complete"] != true {
			t.Errorf("%s: %s, complete %v", tk.Key, tk.Outcome, tk.Undo["complete"])
		}
	}
	if strings.Join(order, ",") != "task_stack_pr03,task_stack_pr02,task_stack_pr01" {
		t.Errorf("undone in the order %v, want the top of the stack first", order)
	}
	assertStackUndone(t, f, gh)
}

// Undoing the bottom of a stack alone must not delete its branch: the PR
// above is based on it, and GitHub closes a PR whose base is deleted, for
// good. The branch is left, with what to run instead, and the task's
// state kept; the undo of the epic then finishes it.
func TestUndoTheBottomOfAStackAlone(t *testing.T) {
	t.Parallel()
	f, gh, env := stackedEpic(t)
	prs := gh.PullRequests("acme/big")
	bottom := prs[0]["head"].(map[string]any)["ref"].(string)

	r := f.wo(env, "undo", "task_stack_pr01", "--json")
	want := "is the base of task task_stack_pr02"
	assertLeft(t, r, want, "remote_branch", "local_branch")
	for _, s := range []string{"wo undo --epic task_stack", "wo undo task_stack_pr02"} {
		if !strings.Contains(fmt.Sprint(stepsIn(t, r)["remote_branch"]["reason"]), s) {
			t.Errorf("the reason does not say to run %q: %v", s, stepsIn(t, r)["remote_branch"])
		}
	}
	if data := undoEnvelope(t, r); data["pending"] != true {
		t.Errorf("undo data: %v, want pending (the state kept for a rerun)", data)
	}
	if !hasRef(t, f.origin, "refs/heads/"+bottom) {
		t.Fatalf("the base of #2, %s, was deleted on the remote", bottom)
	}
	// The stand-in closes a PR whose base is deleted on its next tick.
	waitFor(t, "the stand-in to close #1", 10*time.Second, func() bool { return gh.PullRequests("acme/big")[0]["state"] == "closed" })
	for i, p := range gh.PullRequests("acme/big") {
		if want := map[bool]string{true: "closed", false: "open"}[i == 0]; p["state"] != want {
			t.Errorf("pull request #%v is %v, want %s", p["number"], p["state"], want)
		}
	}

	r = f.wo(env, "undo", "--epic", "task_stack", "--json")
	if data, _ := epicUndoEnvelope(t, r); r.code != 0 || !data.Complete {
		t.Fatalf("undo --epic after: exit %d, complete %v\n%s\n%s", r.code, data.Complete, r.stdout, r.stderr)
	}
	assertStackUndone(t, f, gh)
}

// A child of the epic that another runner holds is that runner's work:
// undo --epic undoes the others (keeping what the held one builds on), and
// exits 3 with EPIC_RUNNING_ELSEWHERE, as wo run --epic does; once the
// runner lets go, the epic's undo finishes.
func TestUndoAnEpicWithAChildHeldElsewhere(t *testing.T) {
	t.Parallel()
	f, gh, env := stackedEpic(t)
	setState(t, f, "task_stack_pr02", map[string]any{"lease": map[string]any{"holder": "ci@another-host:42",
		"expires_at": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)}})

	r := f.wo(env, "undo", "--epic", "task_stack", "--json")
	data, code := epicUndoEnvelope(t, r)
	if r.code != 3 || code != "EPIC_RUNNING_ELSEWHERE" || data.Complete {
		t.Fatalf("undo --epic with a held child: exit %d, %s, complete %v; want 3, EPIC_RUNNING_ELSEWHERE, false\n%s\n%s", r.code, code, data.Complete, r.stdout, r.stderr)
	}
	got := map[string]string{}
	for _, tk := range data.Tasks {
		got[tk.Key] = tk.Outcome + ": " + tk.Reason
	}
	if !strings.HasPrefix(got["task_stack_pr03"], "done") || !strings.HasPrefix(got["task_stack_pr02"], "running_elsewhere") || !strings.Contains(got["task_stack_pr02"], "ci@another-host:42") ||
		!strings.HasPrefix(got["task_stack_pr01"], "skipped: kept: task_stack_pr02, which depends on it, was not undone") {
		t.Errorf("children: %v", got)
	}
	states := map[any]any{}
	for _, p := range gh.PullRequests("acme/big") {
		states[p["number"]] = p["state"]
	}
	if states[1] != "open" || states[2] != "open" || states[3] != "closed" {
		t.Errorf("pull requests: %v, want #3 closed and the held #2 and #1 under it open", states)
	}
	if got := gittest.Run(t, f.origin, "branch", "--list", "review/*"); strings.Count(got, "review/") != 2 || strings.Contains(got, "review/03") {
		t.Errorf("remote branches: %q, want review/01 and review/02 kept", got)
	}
	human := f.wo(env, "undo", "--epic", "task_stack")
	if human.code != 3 || !strings.Contains(human.stdout, "task_stack_pr02: running_elsewhere") {
		t.Errorf("the human output: exit %d\n%s%s", human.code, human.stdout, human.stderr)
	}

	setState(t, f, "task_stack_pr02", map[string]any{"lease": nil})
	r = f.wo(env, "undo", "--epic", "task_stack", "--json")
	if data, _ := epicUndoEnvelope(t, r); r.code != 0 || !data.Complete {
		t.Fatalf("undo --epic once the runner let go: exit %d, complete %v\n%s\n%s", r.code, data.Complete, r.stdout, r.stderr)
	}
	assertStackUndone(t, f, gh)
}
