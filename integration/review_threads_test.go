package integration

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wo-runner/wo/integration/ghstandin"
)

// TestGitHubReviewThreadLeftOpenKeepsThePersonWaiting is issue 13 end to
// end: a person fixes one of two comments; the other's thread is still
// open after the reviewer's approval, so the run waits again, naming it.
// wo answered the thread it addressed once, across the reruns; once both
// are fixed the task goes to review.
func TestGitHubReviewThreadLeftOpenKeepsThePersonWaiting(t *testing.T) {
	f := newFixture(t, 20)
	gh, env := withGitHub(t, f)
	f.importTask(f.seedTask("task_cr_01"))
	if r := f.wo(env, "run", "task_cr_01"); r.code != 3 {
		t.Fatalf("first run: exit %d\n%s", r.code, r.stderr)
	}
	wt := filepath.Join(f.wtRoot, "pr-01-foundation")
	writeFile(t, filepath.Join(wt, "foundation/new0.go"), "package foundation\n\n// N0 is the first.\nconst N0 = 0\n")
	git(t, wt, "commit", "-q", "-am", "Address the first comment")
	r := f.wo(env, "run", "task_cr_01")
	if r.code != 3 || !strings.Contains(r.stderr, "Name N1 after what it counts. (foundation/new1.go:3)") ||
		!strings.Contains(r.stderr, "1 outdated thread(s) left open, not counted: foundation/new0.go") {
		t.Fatalf("after fixing one comment: exit %d, want 3 naming the open thread\n%s", r.code, r.stderr)
	}
	writeFile(t, filepath.Join(wt, "foundation/new1.go"), "package foundation\n\n// Count1 counts.\nconst Count1 = 1\n")
	git(t, wt, "commit", "-q", "-am", "Address the second comment")
	if r := f.wo(env, "run", "task_cr_01"); r.code != 0 {
		t.Fatalf("after fixing both: exit %d\n%s", r.code, r.stderr)
	}
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

// observed is the stand-in's side of the same traffic: requests answered
// since from (an index into gh.Requests()), by kind.
type observed struct {
	all, notModified int
	byKind           map[string]int // "GET /pulls/1/reviews", "POST /graphql", …
}

func observe(reqs []ghstandin.Request) observed {
	o := observed{byKind: map[string]int{}}
	for _, r := range reqs {
		o.all++
		if r.Status == http.StatusNotModified {
			o.notModified++
		}
		o.byKind[r.Method+" "+strings.TrimPrefix(r.Path, "/repos/acme/hermes")]++
	}
	return o
}

// TestRepliesOnceAcrossASIGKILL kills wo run between the replies it posts
// after a fix (after the first reply, and after the first resolution),
// then reruns it: every thread the fix addressed has exactly one
// "Addressed in" reply, naming the one fix commit, and was resolved once.
func TestRepliesOnceAcrossASIGKILL(t *testing.T) {
	for _, point := range []string{"conditional_loop:after_reply", "conditional_loop:after_resolve"} {
		t.Run(point, func(t *testing.T) {
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
			fix := git(t, f.origin, "rev-parse", "refs/heads/review/01-foundation")
			if n := git(t, f.origin, "rev-list", "--count", "code-review-base..refs/heads/review/01-foundation"); n != "2" {
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
			got, seen := reported(t, r), observe(gh.Requests()[before:])
			t.Logf("reported %+v; observed %+v; graphql %+v -> %+v", got, seen, gqlBefore, gql)
			for _, v := range gh.Violations() {
				t.Errorf("the stand-in refused what wo sent: %v", v)
			}
		})
	}
}
