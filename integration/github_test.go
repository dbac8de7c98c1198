package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wo-runner/wo/github"
	"github.com/wo-runner/wo/integration/ghstandin"
	"github.com/wo-runner/wo/internal/gittest"
	"github.com/wo-runner/wo/split"
)

// The token the stand-in accepts. It must never show up in any output,
// document or log.
const secretToken = "ghs_STANDIN_SECRET_9f8e7d6c5b4a"

// seedProcedure is the seed's eleven steps, as wo split writes them.
func seedProcedure() []any { return split.ReviewProcedure(true) }

// withGitHub starts the stand-in for the fixture's remote and returns it
// with the environment wo needs to reach it.
// configure, when given, sets the stand-in up before it starts (its mode,
// its rounds).
func withGitHub(t *testing.T, f *fixture, configure ...func(*ghstandin.Server)) (*ghstandin.Server, []string) {
	t.Helper()
	gh := ghstandin.New(secretToken)
	gh.Remotes["acme/hermes"] = f.origin
	gh.ReviewDelay = 150 * time.Millisecond
	gh.ReviewRounds = [][]ghstandin.Comment{{
		{Path: "foundation/new0.go", Line: 3, Body: "Export a comment on N0."},
		{Path: "foundation/new1.go", Line: 3, Body: "Name N1 after what it counts."},
	}}
	for _, c := range configure {
		c(gh)
	}
	if err := gh.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(gh.Close)
	env := []string{"GITHUB_TOKEN=" + secretToken, "GITHUB_API_URL=" + gh.URL, "WO_REVIEW_WAIT=20s", "WO_POLL_INTERVAL=50ms"}
	return gh, env
}

func (f *fixture) seedTask(key string) map[string]any {
	return f.task(key, seedProcedure(), func(d map[string]any) {
		contextOf(d)["repo"] = "acme/hermes"
		d["work_order"].(map[string]any)["success_criteria"] = []any{
			"PR created and targeting code-review-base", "Automated review passes with no unresolved comments",
			"Worktree cleaned up", "Task status updated to in_review"}
	})
}

// fixingAgent appends a line to each file a comment names.
func fixingAgent(t *testing.T, f *fixture) string {
	path := filepath.Join(f.root, "fix-agent.sh")
	writeFile(t, path, "#!/bin/sh\nset -e\nprompt=$(cat)\necho \"$prompt\" | grep -q 'Export a comment on N0.'\n"+
		"echo '// N0 is the first constant.' >> foundation/new0.go\necho '// N1 counts.' >> foundation/new1.go\n")
	os.Chmod(path, 0o755)
	return path
}

func noSecret(t *testing.T, where, text string) {
	t.Helper()
	if strings.Contains(text, secretToken) {
		t.Errorf("the GitHub token appears in %s", where)
	}
}

func TestSeedProcedureWithReviewerAndAgent(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 20)
	gh, env := withGitHub(t, f)
	f.importTask(f.seedTask("task_cr_01"))
	env = append(env, "WO_AGENT="+fixingAgent(t, f))
	r := f.wo(env, "run", "task_cr_01", "--json")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if prs := gh.PullRequests("acme/hermes"); len(prs) != 1 || prs[0]["state"] != "open" || prs[0]["base"].(map[string]any)["ref"] != "code-review-base" {
		t.Fatalf("pull requests on the stand-in: %v", prs)
	}
	if n := gittest.Run(t, f.origin, "rev-list", "--count", "code-review-base..refs/heads/review/01-foundation"); n != "2" {
		t.Errorf("%s commits pushed, want 2 (the files, then the fixes)", n)
	}
	if msg := gittest.Run(t, f.origin, "log", "-1", "--format=%s", "refs/heads/review/01-foundation"); msg != "Fix review comments (iteration 1)" {
		t.Errorf("remote tip: %q", msg)
	}
	doc := f.doc("task_cr_01")
	st := stateOf(doc)
	if doc["status"] != "in_review" || fmt.Sprint(st["review_iterations"]) != "1" || st["worktree_path"] != nil {
		t.Errorf("status %v, review_iterations %v, worktree_path %v", doc["status"], st["review_iterations"], st["worktree_path"])
	}
	if !strings.HasSuffix(fmt.Sprint(st["pr_url"]), "/acme/hermes/pull/1") || fmt.Sprint(st["pr_number"]) != "1" {
		t.Errorf("pr recorded: %v #%v", st["pr_url"], st["pr_number"])
	}
	for _, c := range st["criteria_results"].([]any) {
		if m := c.(map[string]any); m["checked"] != true || m["passed"] != true {
			t.Errorf("criterion not checked and passed: %v", m)
		}
	}
	if list := gittest.Run(t, f.repo, "worktree", "list", "--porcelain"); strings.Count(list, "worktree ") != 1 {
		t.Errorf("worktree left:\n%s", list)
	}
	// NDJSON: one event per line, the envelope last with the request counts.
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	var env2 struct {
		Success bool
		Data    struct {
			GitHub struct{ Requests, NotModified int } `json:"github_requests"`
		}
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &env2); err != nil || !env2.Success || env2.Data.GitHub.Requests == 0 {
		t.Errorf("last line is not the envelope with request counts: %v %s", err, lines[len(lines)-1])
	}
	logs := f.wo(nil, "log", "task_cr_01", "--verbose", "--wide").stdout
	for step := 1; step <= 11; step++ {
		if !strings.Contains(logs, fmt.Sprintf("step=%d ", step)) {
			t.Errorf("the log lacks step %d:\n%s", step, logs)
		}
	}
	noSecret(t, "stdout", r.stdout)
	noSecret(t, "stderr", r.stderr)
	noSecret(t, "the log", logs)
	noSecret(t, "the document", f.wo(nil, "export").stdout)
}

func TestSeedProcedureWithAPerson(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 20)
	gh, env := withGitHub(t, f)
	f.importTask(f.seedTask("task_cr_01"))
	r := f.wo(env, "run", "task_cr_01")
	if r.code != 3 || !strings.Contains(r.stderr, "Export a comment on N0.") || !strings.Contains(r.stderr, "Name N1 after what it counts.") {
		t.Fatalf("exit %d, want 3 listing both comments:\n%s", r.code, r.stderr)
	}
	// The person fixes both comments and commits in the worktree. (A fix
	// of one only leaves the other's thread open: issue 13.)
	wt := filepath.Join(f.wtRoot, "pr-01-foundation")
	writeFile(t, filepath.Join(wt, "foundation/new0.go"), "package foundation\n\n// N0 is the first.\nconst N0 = 0\n")
	writeFile(t, filepath.Join(wt, "foundation/new1.go"), "package foundation\n\n// Count1 counts.\nconst Count1 = 1\n")
	gittest.Run(t, wt, "commit", "-q", "-am", "Address the review")
	r = f.wo(env, "run", "task_cr_01")
	if r.code != 0 {
		t.Fatalf("rerun after the fix: exit %d\n%s", r.code, r.stderr)
	}
	if len(gh.PullRequests("acme/hermes")) != 1 {
		t.Error("more than one pull request")
	}
	if got := gittest.Run(t, f.origin, "show", "refs/heads/review/01-foundation:foundation/new0.go"); !strings.Contains(got, "N0 is the first") {
		t.Errorf("the person's fix is not on the remote: %s", got)
	}
	if doc := f.doc("task_cr_01"); doc["status"] != "in_review" {
		t.Errorf("status %v", doc["status"])
	}
}

func TestCrashAcrossGitHubStepsNeverMakesTwoPRs(t *testing.T) {
	t.Parallel()
	for _, point := range []string{"create_pr:after_create", "create_pr:before_writeback", "create_pr:after_writeback",
		"wait_for_review:after_checkpoint", "wait_for_review:before_writeback", "check_review:before_writeback",
		"conditional_loop:before_writeback", "update_task:before_writeback"} {
		t.Run(point, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, 10)
			gh, env := withGitHub(t, f)
			f.importTask(f.seedTask("task_cr_01"))
			env = append(env, "WO_AGENT="+fixingAgent(t, f))
			if r := f.wo(append(env, "WO_FAULT="+point), "run", "task_cr_01"); !r.killed {
				t.Fatalf("not killed at %s: exit %d\n%s", point, r.code, r.stderr)
			}
			if r := f.wo(env, "run", "task_cr_01"); r.code != 0 {
				t.Fatalf("rerun: exit %d\n%s", r.code, r.stderr)
			}
			if prs := gh.PullRequests("acme/hermes"); len(prs) != 1 {
				t.Fatalf("%d pull requests after a crash at %s", len(prs), point)
			}
			if doc := f.doc("task_cr_01"); doc["status"] != "in_review" {
				t.Errorf("status %v", doc["status"])
			}
		})
	}
}

// seedWithAgent is a repository, the stand-in, the seed's task stored, and
// the environment for a run with the fixing agent.
func seedWithAgent(t *testing.T) (*fixture, *ghstandin.Server, []string) {
	t.Helper()
	f := newFixture(t, 10)
	gh, env := withGitHub(t, f)
	f.importTask(f.seedTask("task_cr_01"))
	return f, gh, append(env, "WO_AGENT="+fixingAgent(t, f))
}

func TestGitHubFaults(t *testing.T) {
	t.Parallel()
	t.Run("5xx burst is retried", func(t *testing.T) {
		t.Parallel()
		f, gh, env := seedWithAgent(t)
		gh.Inject5xx(3)
		if r := f.wo(env, "run", "task_cr_01"); r.code != 0 {
			t.Fatalf("exit %d\n%s", r.code, r.stderr)
		}
		if len(gh.PullRequests("acme/hermes")) != 1 {
			t.Error("not exactly one PR")
		}
	})
	t.Run("secondary limit is waited out", func(t *testing.T) {
		t.Parallel()
		f, gh, env := seedWithAgent(t)
		gh.InjectSecondaryLimit(2, time.Second)
		start := time.Now()
		if r := f.wo(env, "run", "task_cr_01"); r.code != 0 {
			t.Fatalf("exit %d\n%s", r.code, r.stderr)
		}
		if time.Since(start) < 2*time.Second {
			t.Error("Retry-After was not honoured")
		}
		if len(gh.PullRequests("acme/hermes")) != 1 {
			t.Error("not exactly one PR")
		}
	})
	t.Run("primary limit resetting soon is waited out", func(t *testing.T) {
		t.Parallel()
		f, gh, env := seedWithAgent(t)
		gh.ExhaustPrimaryLimit(2 * time.Second)
		if r := f.wo(env, "run", "task_cr_01"); r.code != 0 {
			t.Fatalf("exit %d\n%s", r.code, r.stderr)
		}
	})
	t.Run("primary limit resetting late exits 5, rerun completes", func(t *testing.T) {
		t.Parallel()
		f, gh, env := seedWithAgent(t)
		gh.ExhaustPrimaryLimit(time.Hour)
		r := f.wo(env, "run", "task_cr_01")
		if r.code != 5 || !strings.Contains(r.stderr, "GitHub rate limit used up until") {
			t.Fatalf("exit %d, want 5 naming the reset:\n%s", r.code, r.stderr)
		}
		doc := f.doc("task_cr_01")
		if doc["status"] == "blocked" || !strings.Contains(fmt.Sprint(stateOf(doc)["last_error"]), "rate limit used up until") {
			t.Errorf("status %v, last_error %v", doc["status"], stateOf(doc)["last_error"])
		}
		gh.RestoreLimit()
		if r := f.wo(env, "run", "task_cr_01"); r.code != 0 {
			t.Fatalf("rerun: exit %d\n%s", r.code, r.stderr)
		}
		if len(gh.PullRequests("acme/hermes")) != 1 {
			t.Error("not exactly one PR")
		}
	})
	t.Run("401 names the variable, rerun completes", func(t *testing.T) {
		t.Parallel()
		f, gh, env := seedWithAgent(t)
		gh.BreakToken()
		r := f.wo(env, "run", "task_cr_01")
		if r.code != 1 || !strings.Contains(r.stderr, "set GITHUB_TOKEN (or GH_TOKEN)") {
			t.Fatalf("exit %d, want 1 saying which variable to set:\n%s", r.code, r.stderr)
		}
		noSecret(t, "stderr", r.stderr)
		noSecret(t, "the document", f.wo(nil, "export").stdout)
		gh.FixToken()
		if r := f.wo(env, "run", "task_cr_01"); r.code != 0 {
			t.Fatalf("rerun: exit %d\n%s", r.code, r.stderr)
		}
	})
	t.Run("no token", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, 10)
		_, env := withGitHub(t, f)
		f.importTask(f.seedTask("task_cr_01"))
		env = append(env, "GITHUB_TOKEN=")
		r := f.wo(env, "run", "task_cr_01")
		if r.code != 2 || !strings.Contains(r.stderr, "no GitHub token: set GITHUB_TOKEN (or GH_TOKEN)") {
			t.Fatalf("exit %d:\n%s", r.code, r.stderr)
		}
		if doc := f.doc("task_cr_01"); doc["status"] != "open" {
			t.Errorf("a run refused up front changed the status to %v", doc["status"])
		}
	})
}

func TestMergedPRClosesTaskAndFreesDependents(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 10)
	gh, env := withGitHub(t, f)
	gh.ReviewRounds = nil // the reviewer approves at once
	f.importTask(f.seedTask("task_cr_01"))
	if r := f.wo(env, "run", "task_cr_01"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	dependent := f.task("task_cr_02", gitProcedure(), func(d map[string]any) {
		d["work_order"].(map[string]any)["dependencies"] = map[string]any{"blocked_by": []any{"task_cr_01"}}
		inputs(d)["branch_name"], inputs(d)["worktree_name"] = "review/02-next", "pr-02-next"
	})
	f.importTask(dependent)
	if r := f.wo(env, "run", "task_cr_02"); r.code != 3 || !strings.Contains(r.stderr, "task_cr_01 (in_review)") {
		t.Fatalf("before the merge: exit %d %s", r.code, r.stderr)
	}
	if r := f.wo(env, "sync", "task_cr_01"); r.code != 0 || !strings.Contains(r.stdout, "pull request #1 is open; task unchanged") {
		t.Fatalf("sync of an open PR: exit %d %s %s", r.code, r.stdout, r.stderr)
	}
	gh.Merge("acme/hermes", 1)
	r := f.wo(env, "status", "task_cr_01", "--refresh")
	if r.code != 0 || !strings.Contains(r.stdout, "closed") {
		t.Fatalf("status --refresh: exit %d %s %s", r.code, r.stdout, r.stderr)
	}
	if doc := f.doc("task_cr_01"); doc["status"] != "closed" || stateOf(doc)["pr_state"] != "merged" {
		t.Errorf("status %v pr_state %v", doc["status"], stateOf(doc)["pr_state"])
	}
	if r := f.wo(env, "run", "task_cr_02"); r.code != 0 {
		t.Fatalf("the dependent after the merge: exit %d %s", r.code, r.stderr)
	}
}

func ghClient(t *testing.T, gh *ghstandin.Server) *github.Client {
	t.Helper()
	c, err := github.New(github.Config{BaseURL: gh.URL, Token: secretToken, Repo: "acme/hermes"})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func testContext() context.Context { return context.Background() }
