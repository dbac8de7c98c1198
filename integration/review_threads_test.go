package integration

import (
	"encoding/json"
	"maps"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wo-runner/wo/integration/ghstandin"
	"github.com/wo-runner/wo/internal/gittest"
)

// TestGitHubReviewThreadLeftOpenKeepsThePersonWaiting is issue 13 end to
// end: a person fixes one of two comments; the other's thread is still
// open after the reviewer's approval, so the run waits again, naming it.
// wo answered the thread it addressed once, across the reruns; once both
// are fixed the task goes to review.
func TestGitHubReviewThreadLeftOpenKeepsThePersonWaiting(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 20)
	gh, env := withGitHub(t, f)
	f.importTask(f.seedTask("task_cr_01"))
	r := f.wo(env, "run", "task_cr_01", "--json")
	if r.code != 3 {
		t.Fatalf("first run: exit %d\n%s", r.code, r.stderr)
	}
	// The first run: create_pr looks for an open PR, opens one and learns
	// wo's login; the wait polls; the check reads the reviews, comments
	// and conversation (REST) and the threads (GraphQL, 1 point).
	runTraffic(t, gh, 0, ghstandin.GraphQLCalls{}, r, map[string]int{"GET /pulls": 1, "POST /pulls": 1, "GET /user": 1,
		"GET /pulls/1/comments": 1, "GET /issues/1/comments": 1, "POST /graphql": 1}, 2, 1, 0)
	wt := filepath.Join(f.wtRoot, "pr-01-foundation")
	writeFile(t, filepath.Join(wt, "foundation/new0.go"), "package foundation\n\n// N0 is the first.\nconst N0 = 0\n")
	gittest.Run(t, wt, "commit", "-q", "-am", "Address the first comment")
	before, gqlBefore := len(gh.Requests()), gh.GraphQL()
	r = f.wo(env, "run", "task_cr_01", "--json")
	if out := r.stdout + r.stderr; r.code != 3 || !strings.Contains(out, "Name N1 after what it counts. (foundation/new1.go:3)") ||
		!strings.Contains(out, "1 outdated thread(s) left open, not counted: foundation/new0.go") {
		t.Fatalf("after fixing one comment: exit %d, want 3 naming the open thread\n%s", r.code, r.stderr)
	}
	writeFile(t, filepath.Join(wt, "foundation/new1.go"), "package foundation\n\n// Count1 counts.\nconst Count1 = 1\n")
	gittest.Run(t, wt, "commit", "-q", "-am", "Address the second comment")
	// Each rerun: the fix pass reads the conversation and the head's
	// statuses and check runs before it pushes (no review in progress), reads the threads
	// afresh (1 point) and replies in the one its commit addressed; the
	// wait looks; the check reads the reviews, comments and conversation
	// and the threads (1 point). wo's login is learnt once a process; the
	// last run also reads the PR for the criterion "PR created and
	// targeting code-review-base".
	fixRun := map[string]int{"GET /user": 1, "GET /pulls/1/comments": 1, "GET /issues/1/comments": 2, "GET /commits/{sha}/statuses": 1,
		"GET /commits/{sha}/check-runs": 1, "POST /graphql": 3}
	runTraffic(t, gh, before, gqlBefore, r, maps.Clone(fixRun), 2, 2, 1)
	before, gqlBefore = len(gh.Requests()), gh.GraphQL()
	if r = f.wo(env, "run", "task_cr_01", "--json"); r.code != 0 {
		t.Fatalf("after fixing both: exit %d\n%s", r.code, r.stderr)
	}
	fixRun["GET /pulls/1"] = 1
	runTraffic(t, gh, before, gqlBefore, r, fixRun, 2, 2, 1)
	replies := map[string]int{}
	for _, th := range gh.Threads("acme/hermes", 1) {
		for _, c := range th.Comments[1:] {
			if c.Login == "wo-bot" && strings.HasPrefix(c.Body, "Addressed in ") {
				replies[th.Path]++
			}
		}
	}
	if replies["foundation/new0.go"] != 1 || replies["foundation/new1.go"] != 1 {
		t.Errorf("wo's replies by thread: %v, want one in each", replies)
	}
	for _, v := range gh.Violations() {
		t.Errorf("the stand-in refused what wo sent: %v", v)
	}
	if doc := f.doc("task_cr_01"); doc["status"] != "in_review" {
		t.Errorf("status %v", doc["status"])
	}
}

// ghReport is what wo's --json envelope reports of a run's GitHub traffic.
type ghReport struct {
	Requests         int `json:"requests"`
	NotModified      int `json:"not_modified"`
	Retries          int `json:"retries"`
	GraphQLCost      int `json:"graphql_cost"`
	GraphQLMutations int `json:"graphql_mutations"`
}

// reported reads the GitHub counts from the envelope, the last line of
// wo run --json.
func reported(t *testing.T, r woResult) ghReport {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	var env struct {
		Data struct {
			GitHub *ghReport `json:"github_requests"`
		}
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &env); err != nil || env.Data.GitHub == nil {
		t.Fatalf("no GitHub counts in the envelope (%v): %s", err, lines[len(lines)-1])
	}
	return *env.Data.GitHub
}

// runTraffic checks one wo run's GitHub figures: what its --json envelope
// reports is what the stand-in answered since before (an index into its
// requests), request for request and 304 for 304; the GraphQL points and
// mutations are exact; so are the requests of each kind but the polls of
// the reviews, whose number depends on when the scripted reviewer answers
// (at least minPolls); and no GraphQL call follows a poll that showed
// nothing new.
func runTraffic(t *testing.T, gh *ghstandin.Server, before int, gqlBefore ghstandin.GraphQLCalls, r woResult, kinds map[string]int, minPolls, points, mutations int) {
	t.Helper()
	got, seen := reported(t, r), ghstandin.Summarize(gh.Requests()[before:])
	gql := gh.GraphQL()
	ran := 0
	for k, n := range gql.Mutations {
		ran += n - gqlBefore.Mutations[k]
	}
	if got.Requests != seen.Requests || got.NotModified != seen.NotModified || got.GraphQLCost != gql.Points-gqlBefore.Points || got.GraphQLMutations != ran {
		t.Errorf("wo reported %+v; the stand-in answered %d request(s), %d of them 304, %d GraphQL point(s), %d mutation(s)",
			got, seen.Requests, seen.NotModified, gql.Points-gqlBefore.Points, ran)
	}
	if got.GraphQLCost != points || got.GraphQLMutations != mutations {
		t.Errorf("GraphQL: %d point(s), %d mutation(s); want %d, %d", got.GraphQLCost, got.GraphQLMutations, points, mutations)
	}
	polls := seen.ByKind["GET /pulls/1/reviews"]
	kinds["GET /pulls/1/reviews"] = polls
	// Each look of a wait reads the reviews, the conversation and the
	// head's statuses and check runs; each check reads the reviews once
	// (and the review comments once), so the looks are the rest.
	looks := polls - kinds["GET /pulls/1/comments"]
	kinds["GET /issues/1/comments"] += looks
	kinds["GET /commits/{sha}/statuses"] += looks
	kinds["GET /commits/{sha}/check-runs"] += looks
	if polls < minPolls || !maps.Equal(seen.ByKind, kinds) {
		t.Errorf("requests by kind: %v; want %v with at least %d read(s) of the reviews", seen.ByKind, kinds, minPolls)
	}
	if seen.GraphQLBetweenPolls != 0 {
		t.Errorf("%d GraphQL call(s) in the middle of a wait, between polls of the reviews", seen.GraphQLBetweenPolls)
	}
}

// TestRepliesOnceAcrossASIGKILL kills wo run between the replies it posts
// after a fix (after the first reply, and after the first resolution),
// then reruns it: every thread the fix addressed has exactly one
// "Addressed in" reply, naming the one fix commit, and was resolved once.
func TestRepliesOnceAcrossASIGKILL(t *testing.T) {
	t.Parallel()
	for _, point := range []string{"conditional_loop:after_commit", "conditional_loop:after_push",
		"conditional_loop:after_reply", "conditional_loop:after_resolve"} {
		t.Run(point, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, 20)
			gh, env := withGitHub(t, f)
			f.importTask(f.seedTask("task_cr_01"))
			env = append(env, "WO_AGENT="+fixingAgent(t, f))
			if r := f.wo(append(env, "WO_FAULT="+point), "run", "task_cr_01", "--resolve-threads"); !r.killed {
				t.Fatalf("not killed at %s: exit %d\n%s", point, r.code, r.stderr)
			}
			before := len(gh.Requests())
			gqlBefore := gh.GraphQL()
			r := f.wo(env, "run", "task_cr_01", "--resolve-threads", "--json")
			if r.code != 0 {
				t.Fatalf("rerun: exit %d\n%s", r.code, r.stderr)
			}
			fix := gittest.Run(t, f.origin, "rev-parse", "refs/heads/review/01-foundation")
			if n := gittest.Run(t, f.origin, "rev-list", "--count", "code-review-base..refs/heads/review/01-foundation"); n != "2" {
				t.Errorf("%s commits pushed, want 2: the rerun must not run the agent again", n)
			}
			for _, th := range gh.Threads("acme/hermes", 1) {
				var replies []string
				for _, c := range th.Comments[1:] {
					if c.Login == "wo-bot" {
						replies = append(replies, c.Body)
					}
				}
				if len(replies) != 1 || !strings.HasPrefix(replies[0], "Addressed in "+fix[:12]+".") || !th.Resolved {
					t.Errorf("thread on %s: resolved %v, wo's replies %q; want one naming %s", th.Path, th.Resolved, replies, fix[:12])
				}
			}
			gql := gh.GraphQL()
			if m := gql.Mutations; m["addPullRequestReviewThreadReply"] != 2 || m["resolveReviewThread"] != 2 {
				t.Errorf("mutations the stand-in ran across both runs: %v, want 2 replies and 2 resolutions", m)
			}
			// The rerun: the rest of the fix pass (a fresh read of the
			// threads, then what the killed run had not sent), the wait
			// (polls), the check (three REST reads, one GraphQL query) and
			// update_task's read of the PR. A GraphQL query costs 1 point.
			// A rerun that pushes (the killed run had not recorded its
			// push) first reads the conversation and the head's statuses.
			mutations := map[string]int{"conditional_loop:after_commit": 4, "conditional_loop:after_push": 4,
				"conditional_loop:after_reply": 3, "conditional_loop:after_resolve": 2}[point]
			pushes := map[string]int{"conditional_loop:after_commit": 1, "conditional_loop:after_push": 1}[point]
			runTraffic(t, gh, before, gqlBefore, r, map[string]int{"GET /user": 1, "GET /pulls/1": 1, "GET /pulls/1/comments": 1,
				"GET /issues/1/comments": 1 + pushes, "GET /commits/{sha}/statuses": pushes, "GET /commits/{sha}/check-runs": pushes,
				"POST /graphql": 2 + mutations}, 2, 2, mutations)
			for _, v := range gh.Violations() {
				t.Errorf("the stand-in refused what wo sent: %v", v)
			}
		})
	}
}
