package integration

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wo-runner/wo/integration/ghstandin"
)

// eventFile writes an event payload shaped as GitHub's documented
// webhook payloads (only the fields wo reads need be right).
func eventFile(t *testing.T, f *fixture, name string, payload map[string]any) string {
	t.Helper()
	b, _ := json.Marshal(payload)
	path := filepath.Join(f.root, name+".json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func prPayload(action string, number int, repo, head string, merged bool) map[string]any {
	return map[string]any{"action": action, "number": number,
		"pull_request": map[string]any{"number": number, "merged": merged, "head": map[string]any{"ref": head, "sha": "0000000000000000000000000000000000000000",
			"repo": map[string]any{"full_name": repo}}},
		"repository": map[string]any{"full_name": repo}, "sender": map[string]any{"login": "someone"}}
}

// fromFork makes a payload's pull request come from another repository
// (none: a fork since deleted, whose head.repo GitHub sends as null).
func fromFork(payload map[string]any, repo string) map[string]any {
	head := payload["pull_request"].(map[string]any)["head"].(map[string]any)
	head["repo"] = nil
	if repo != "" {
		head["repo"] = map[string]any{"full_name": repo}
	}
	return payload
}

func TestReviewEventsResumeInsteadOfPolling(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 5)
	gh, env := withGitHub(t, f)
	gh.ReviewRounds = nil // the reviewer approves
	gh.HoldReviews(true)  // until the run has stopped, however long it takes
	f.importTask(f.seedTask("task_ev"))
	noWait := append(env, "WO_REVIEW_WAIT=0")

	start := time.Now()
	r := f.wo(noWait, "run", "task_ev")
	if r.code != 3 || !strings.Contains(r.stderr, "a review event resumes it") {
		t.Fatalf("--review-wait 0 with no review yet: exit %d, want 3 at once\n%s", r.code, r.stderr)
	}
	if waited := time.Since(start); waited > 20*time.Second {
		t.Errorf("the run held the runner for %s", waited)
	}
	if st := stateOf(f.doc("task_ev")); st["phase"] != "waiting_for_review" || st["lease"] != nil {
		t.Errorf("state after stopping: phase %v lease %v", st["phase"], st["lease"])
	}
	if s := f.wo(nil, "status", "task_ev", "--wide").stdout; !strings.Contains(s, "a review since") {
		t.Errorf("wo status does not say it waits for a review:\n%s", s)
	}
	gh.HoldReviews(false)
	waitFor(t, "the stand-in's review", 20*time.Second, func() bool {
		rv, _ := ghClient(t, gh).Reviews(testContext(), 1)
		return len(rv) > 0
	})

	// An event for another pull request or repository changes nothing.
	for what, p := range map[string]map[string]any{
		"another PR":         prPayload("submitted", 42, "acme/hermes", "other", false),
		"another repository": prPayload("submitted", 1, "acme/other", "review/01-foundation", false),
		"a fork's PR":        fromFork(prPayload("submitted", 1, "acme/hermes", "review/01-foundation", false), "mallory/hermes"),
		"a deleted fork's":   fromFork(prPayload("submitted", 1, "acme/hermes", "review/01-foundation", false), ""),
	} {
		path := eventFile(t, f, "review-"+strings.ReplaceAll(what, " ", "-"), p)
		r := f.wo(append(noWait, "GITHUB_EVENT_NAME=pull_request_review"), "run", "--github-event", path)
		want := "no work order records pull request"
		if strings.Contains(what, "fork") {
			want = "not from acme/hermes itself: wo resumes only its own pull requests"
		}
		if r.code != 0 || !strings.Contains(r.stdout, want) {
			t.Errorf("%s: exit %d\n%s%s", what, r.code, r.stdout, r.stderr)
		}
	}
	// The review event resumes the right task, to the end.
	review := eventFile(t, f, "review", prPayload("submitted", 1, "acme/hermes", "review/01-foundation", false))
	r = f.wo(append(noWait, "GITHUB_EVENT_NAME=pull_request_review", "GITHUB_EVENT_PATH="+review), "run")
	if r.code != 0 {
		t.Fatalf("the review event: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if doc := f.doc("task_ev"); doc["status"] != "in_review" {
		t.Errorf("after the review event the task is %v, want in_review", doc["status"])
	}
	// The merge event closes it.
	gh.Merge("acme/hermes", 1)
	merged := eventFile(t, f, "merged", prPayload("closed", 1, "acme/hermes", "review/01-foundation", true))
	r = f.wo(append(env, "GITHUB_EVENT_NAME=pull_request"), "run", "--github-event", merged)
	if r.code != 0 || f.doc("task_ev")["status"] != "closed" {
		t.Errorf("the merge event: exit %d, status %v\n%s%s", r.code, f.doc("task_ev")["status"], r.stdout, r.stderr)
	}
	// Payloads wo cannot use are refused, saying why.
	junk := filepath.Join(f.root, "junk.json")
	os.WriteFile(junk, []byte(`{"action": `), 0o644)
	big := filepath.Join(f.root, "big.json")
	os.WriteFile(big, []byte(`{"x": "`+strings.Repeat("a", 5<<20)+`"}`), 0o644)
	for what, path := range map[string]string{"malformed": junk, "oversized": big} {
		r := f.wo(append(env, "GITHUB_EVENT_NAME=pull_request_review"), "run", "--github-event", path)
		if r.code != 2 || !strings.Contains(r.stderr, "payload") {
			t.Errorf("%s payload: exit %d, want 2 naming the payload\n%s", what, r.code, r.stderr)
		}
	}
	if r := f.wo(env, "run", "--github-event", review); r.code != 2 || !strings.Contains(r.stderr, "GITHUB_EVENT_NAME") {
		t.Errorf("no event name: exit %d\n%s", r.code, r.stderr)
	}
}

// Independent mode, as a team runs it: the first wave's PRs open, the
// dependents wait; a merge closes its task (wo sync, or the merge event)
// and rerunning the epic starts what waited for it.
func TestIndependentEpicGoesOnAfterMerges(t *testing.T) {
	t.Parallel()
	f := goModuleFixture(t, 6)
	gh := ghstandin.New(secretToken)
	gh.Remotes["acme/big"] = f.origin
	gh.ReviewDelay = 50 * time.Millisecond // approves at once
	if err := gh.Start(); err != nil {
		t.Fatal(err)
	}
	defer gh.Close()
	env := []string{"GITHUB_TOKEN=" + secretToken, "GITHUB_API_URL=" + gh.URL, "WO_REVIEW_WAIT=20s", "WO_POLL_INTERVAL=50ms"}
	if r := f.wo(env, "split", "--repo", f.repo, "--base", "base", "--source", "main", "--github-repo", "acme/big",
		"--worktree-root", f.wtRoot, "--max-lines", "12", "--epic-key", "task_ind"); r.code != 0 {
		t.Fatalf("split: %s", r.stderr)
	}
	statusOf := func() map[string]string {
		var s struct{ Data []StatusRowJSON }
		json.Unmarshal([]byte(f.wo(nil, "status", "task_ind", "--json").stdout), &s)
		out := map[string]string{}
		for _, row := range s.Data[1:] {
			out[row.Key] = row.Status
		}
		return out
	}
	r := f.wo(env, "run", "--epic", "task_ind", "--parallel", "2")
	if r.code != 3 || strings.Contains(r.stdout, "failed") {
		t.Fatalf("first round: exit %d, want 3 (dependents wait for merges)\n%s%s", r.code, r.stdout, r.stderr)
	}
	first := statusOf()
	if first["task_ind_pr01"] != "in_review" || first["task_ind_pr02"] != "open" {
		t.Fatalf("after the first round: %v", first)
	}
	// PR 1 merges; wo sync closes its task; the rerun starts its dependents.
	gh.Merge("acme/big", 1)
	if r := f.wo(env, "sync", "task_ind"); r.code != 0 {
		t.Fatalf("sync: %s", r.stderr)
	}
	r = f.wo(env, "run", "--epic", "task_ind", "--parallel", "2")
	if strings.Contains(r.stdout, "failed") || r.code == 1 {
		t.Fatalf("rerun after a merge: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	second := statusOf()
	if second["task_ind_pr01"] != "closed" || second["task_ind_pr02"] != "in_review" {
		t.Errorf("after the merge and the rerun: %v, want pr01 closed and its dependent pr02 in review", second)
	}
	// The next merge arrives as an event: it closes its task and, with
	// --continue-epic, starts what waited for it in the same job.
	var prs []map[string]any
	for _, pr := range gh.PullRequests("acme/big") {
		if pr["state"] == "open" {
			prs = append(prs, pr)
		}
	}
	if len(prs) == 0 {
		t.Fatal("no open pull request left to merge")
	}
	n, _ := strconv.Atoi(fmt.Sprint(prs[0]["number"]))
	gh.Merge("acme/big", n)
	head, _ := prs[0]["head"].(map[string]any)
	ref, _ := head["ref"].(string)
	merged := eventFile(t, f, "merged-epic", prPayload("closed", n, "acme/big", ref, true))
	r = f.wo(append(env, "GITHUB_EVENT_NAME=pull_request"), "run", "--github-event", merged, "--continue-epic", "--parallel", "2")
	if r.code == 1 || r.code == 2 || !strings.Contains(r.stdout, "WAVE") {
		t.Errorf("the merge event with --continue-epic: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	closed := 0
	for _, s := range statusOf() {
		if s == "closed" {
			closed++
		}
	}
	if closed < 2 {
		t.Errorf("after the merge event %d tasks are closed, want at least 2: %v", closed, statusOf())
	}
}
