package integration

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wo-runner/wo/integration/ghstandin"
	"github.com/wo-runner/wo/workorder"
)

// reviewScenario is one way a scripted reviewer answers: what it says in
// each round, whether it resolves the threads a push changed, what the
// agent fixes, where the first run is SIGKILLed, and what must hold once
// the rerun is over.
type reviewScenario struct {
	name     string
	rounds   [][]ghstandin.Comment
	resolves bool           // the reviewer resolves the threads whose lines a push changed
	agent    string         // the fix: shell lines run in the worktree
	context  map[string]any // added to the work order's context
	loops    int            // the loop's max_iterations (0: the default)
	delay    time.Duration  // the reviewer's delay (0: the fixture's)
	kill     string         // WO_FAULT of the first run
	between  func(*ghstandin.Server)
	env      []string         // added to the rerun's environment
	exit     int              // the rerun's exit code
	status   workorder.Status // the task's status at the end
	replies  map[string]int   // wo's "Addressed in" replies by file, over both runs
	resolved map[string]bool  // which threads are resolved at the end, by file
	points   int              // GraphQL points the rerun cost
	mutation map[string]int   // GraphQL mutations over both runs
	check    func(*testing.T, workorder.State, woResult)
}

// TestReviewScenariosAcrossASIGKILL runs the review loop end to end (wo
// run processes, real git, the GitHub stand-in) against a reviewer that
// leaves a thread unaddressed, requests changes with no inline comment,
// resolves its own threads, sees threads made outdated, or has not
// answered while a person approved. Each first run is killed at a point of
// its own; the rerun must reach the same end as an uninterrupted run: the
// state, wo's replies on GitHub (each exactly once) and what the rerun
// cost in requests and GraphQL points, as its --json envelope reports
// them and the stand-in counted them.
func TestReviewScenariosAcrossASIGKILL(t *testing.T) {
	t.Parallel()
	twoComments := []ghstandin.Comment{
		{Path: "foundation/new0.go", Line: 3, Body: "Export a comment on N0."},
		{Path: "foundation/new1.go", Line: 3, Body: "Name N1 after what it counts."},
	}
	appendTo0 := "echo '// N0 is the first constant.' >> foundation/new0.go\n"
	appendTo1 := "echo '// N1 counts.' >> foundation/new1.go\n"
	scenarios := []reviewScenario{{
		// (a) The fix addresses one thread of two; the reviewer resolves
		// that one and approves, but the other stays open: the loop goes
		// on until its bound, and the task is not reported as passing.
		name: "a thread the fix does not address", rounds: [][]ghstandin.Comment{twoComments}, resolves: true,
		agent: appendTo0, loops: 2, kill: "conditional_loop:after_reply",
		exit: 3, status: workorder.StatusBlocked,
		replies: map[string]int{"foundation/new0.go": 1}, resolved: map[string]bool{"foundation/new0.go": true},
		// The rerun: the rest of the first pass (a fresh read of the
		// threads), a check, the second pass (no thread addressed: no
		// read), a check.
		points: 3, mutation: map[string]int{"addPullRequestReviewThreadReply": 1},
		check: func(t *testing.T, st workorder.State, r woResult) {
			if len(st.ReviewThreads) != 1 || st.ReviewThreads[0].Path != "foundation/new1.go" || !st.ReviewThreads[0].Counted {
				t.Errorf("open threads %+v, want the one on new1.go, counted", st.ReviewThreads)
			}
			if st.Phase != workorder.PhaseNeedsFix || st.ReviewResult != "" || len(st.CriteriaResults) != 0 {
				t.Errorf("phase %q, review result %q, criteria %v: the task must not look reviewed", st.Phase, st.ReviewResult, st.CriteriaResults)
			}
			if !strings.Contains(r.stdout+r.stderr, "the review loop reached its bound of 2 iteration(s) with 1 comment(s) still open") {
				t.Errorf("the rerun does not say why it stopped:\n%s", r.stderr)
			}
		},
	}, {
		// (b) Every round asks for changes in the review's summary, with
		// no inline comment: the summary is what the agent gets, and the
		// task never passes.
		name:   "changes requested without inline comments",
		rounds: [][]ghstandin.Comment{{{Body: "Add a changelog entry."}}, {{Body: "Still no changelog entry."}}},
		agent:  "echo 'entry' >> CHANGELOG.md\n", loops: 1, kill: "check_review:after_writeback",
		exit: 3, status: workorder.StatusBlocked, replies: map[string]int{},
		// The rerun: the pass has no thread to answer; one check.
		points: 1, mutation: map[string]int{},
		// A changelog entry is not in the manifest: the work order allows it.
		context: map[string]any{"fix_paths": []any{"CHANGELOG.md"}},
		check: func(t *testing.T, st workorder.State, r woResult) {
			if len(st.ChangesRequestedBy) != 1 || st.ChangesRequestedBy[0] != "coderabbitai[bot]" {
				t.Errorf("changes requested by %v", st.ChangesRequestedBy)
			}
			if len(st.ReviewComments) != 1 || st.ReviewComments[0].Body != "Still no changelog entry." {
				t.Errorf("comments %+v, want the latest summary", st.ReviewComments)
			}
			if st.ReviewVerdicts["coderabbitai[bot]"] != "CHANGES_REQUESTED" || len(st.CriteriaResults) != 0 {
				t.Errorf("verdicts %v, criteria %v", st.ReviewVerdicts, st.CriteriaResults)
			}
		},
	}, {
		// (c) The fix addresses both threads and the reviewer resolves
		// them itself (wo is not asked to): the task passes.
		name: "the reviewer resolves its threads", rounds: [][]ghstandin.Comment{twoComments}, resolves: true,
		agent: appendTo0 + appendTo1, kill: "conditional_loop:after_push",
		exit: 0, status: workorder.StatusInReview,
		replies:  map[string]int{"foundation/new0.go": 1, "foundation/new1.go": 1},
		resolved: map[string]bool{"foundation/new0.go": true, "foundation/new1.go": true},
		// The rerun: the pass's fresh read of the threads, then a check.
		points: 2, mutation: map[string]int{"addPullRequestReviewThreadReply": 2},
		check: func(t *testing.T, st workorder.State, r woResult) {
			passed(t, st, true, "0 actionable review comment(s) at the last check")
			if len(st.ReviewThreads) != 0 || st.ReviewVerdicts["coderabbitai[bot]"] != "APPROVED" {
				t.Errorf("threads %+v, verdicts %v", st.ReviewThreads, st.ReviewVerdicts)
			}
		},
	}, {
		// (d) The fix rewrites the lines both threads are on, which makes
		// them outdated; the reviewer neither resolves them nor comments
		// again. Outdated threads are reported, and by default not
		// counted.
		name: "threads made outdated by a push", rounds: [][]ghstandin.Comment{twoComments},
		agent: "printf 'package foundation\\n\\n// N0 is the first.\\nconst N0 = 0\\n' > foundation/new0.go\n" +
			"printf 'package foundation\\n\\n// N1 counts.\\nconst N1 = 1\\n' > foundation/new1.go\n",
		kill: "wait_for_review:after_checkpoint", exit: 0, status: workorder.StatusInReview,
		replies:  map[string]int{"foundation/new0.go": 1, "foundation/new1.go": 1},
		resolved: map[string]bool{},
		// The rerun: a check, the pass's fresh read of the threads, a
		// check.
		points: 3, mutation: map[string]int{"addPullRequestReviewThreadReply": 2},
		check: func(t *testing.T, st workorder.State, r woResult) {
			passed(t, st, true, "2 outdated thread(s) open, not counted")
			if len(st.ReviewThreads) != 2 || !st.ReviewThreads[0].Outdated || st.ReviewThreads[0].Counted {
				t.Errorf("threads %+v, want both outdated and not counted", st.ReviewThreads)
			}
			if !strings.Contains(r.stdout+r.stderr, "2 outdated thread(s) left open, not counted: foundation/new0.go, foundation/new1.go") {
				t.Errorf("the check does not report the outdated threads:\n%s", r.stderr)
			}
		},
	}, {
		// (e) The work order waits for the bot; a person approves first.
		// The wait does not end, and no check runs: the task waits.
		name: "a person approves while the awaited bot has not answered", rounds: [][]ghstandin.Comment{twoComments},
		context: map[string]any{"reviewers": []any{"coderabbitai[bot]"}}, agent: appendTo0 + appendTo1,
		kill:  "create_pr:after_writeback",
		delay: time.Hour,
		between: func(gh *ghstandin.Server) {
			gh.AddReview("acme/hermes", 1, "alice", "APPROVED", "Looks good to me.")
		},
		env:  []string{"WO_REVIEW_WAIT=1s"},
		exit: 3, status: workorder.StatusInProgress, replies: map[string]int{}, resolved: map[string]bool{},
		points: 0, mutation: map[string]int{},
		check: func(t *testing.T, st workorder.State, r woResult) {
			if st.Phase != workorder.PhaseWaitingForReview || st.ReviewComments != nil || st.ReviewVerdicts != nil {
				t.Errorf("phase %q, comments %v, verdicts %v: alice's approval ended the wait", st.Phase, st.ReviewComments, st.ReviewVerdicts)
			}
			if !strings.Contains(r.stdout+r.stderr, "by coderabbitai[bot] arrived by ") || !strings.Contains(r.stdout+r.stderr, "to wait again") {
				t.Errorf("the rerun does not say what it waits for:\n%s", r.stderr)
			}
		},
	}}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, 20)
			gh, env := withGitHub(t, f)
			gh.ReviewRounds, gh.ResolveFixed = sc.rounds, sc.resolves
			if sc.delay > 0 {
				gh.ReviewDelay = sc.delay
			}
			f.importTask(f.task("task_cr_01", seedProcedure(), func(d map[string]any) {
				contextOf(d)["repo"] = "acme/hermes"
				for k, v := range sc.context {
					contextOf(d)[k] = v
				}
				wo := d["work_order"].(map[string]any)
				wo["success_criteria"] = []any{"Automated review passes with no unresolved comments"}
				for _, s := range wo["procedure"].([]any) {
					if step := s.(map[string]any); step["action"] == "conditional_loop" && sc.loops > 0 {
						step["max_iterations"] = sc.loops
					}
				}
			}))
			agent := filepath.Join(f.root, "agent.sh")
			writeFile(t, agent, "#!/bin/sh\nset -e\ncat > /dev/null\n"+sc.agent)
			os.Chmod(agent, 0o755)
			env = append(env, "WO_AGENT="+agent)
			if r := f.wo(append(env, "WO_FAULT="+sc.kill), "run", "task_cr_01"); !r.killed {
				t.Fatalf("not killed at %s: exit %d\n%s", sc.kill, r.code, r.stderr)
			}
			if sc.between != nil {
				sc.between(gh)
			}
			before, gqlBefore := len(gh.Requests()), gh.GraphQL()
			r := f.wo(append(env, sc.env...), "run", "task_cr_01", "--json")
			if r.code != sc.exit {
				t.Fatalf("rerun: exit %d, want %d\n%s", r.code, sc.exit, r.stderr)
			}
			doc := f.doc("task_cr_01")
			if doc["status"] != string(sc.status) {
				t.Errorf("status %v, want %s", doc["status"], sc.status)
			}
			st, err := workorder.StateOf(doc)
			if err != nil {
				t.Fatal(err)
			}
			sc.check(t, st, r)

			replies, resolved := map[string]int{}, map[string]bool{}
			for _, th := range gh.Threads("acme/hermes", 1) {
				for _, c := range th.Comments[1:] {
					if c.Login == "wo-bot" && strings.HasPrefix(c.Body, "Addressed in ") {
						replies[th.Path]++
					}
				}
				if th.Resolved {
					resolved[th.Path] = true
				}
			}
			if !maps.Equal(replies, sc.replies) {
				t.Errorf("wo's replies by thread: %v, want %v", replies, sc.replies)
			}
			if !maps.Equal(resolved, sc.resolved) {
				t.Errorf("resolved threads: %v, want %v", resolved, sc.resolved)
			}
			gql := gh.GraphQL()
			if !maps.Equal(gql.Mutations, sc.mutation) {
				t.Errorf("GraphQL mutations over both runs: %v, want %v", gql.Mutations, sc.mutation)
			}
			got, seen := reported(t, r), ghstandin.Summarize(gh.Requests()[before:])
			if got.Requests != seen.Requests || got.NotModified != seen.NotModified || got.GraphQLCost != gql.Points-gqlBefore.Points {
				t.Errorf("the rerun reported %+v; the stand-in answered %d request(s), %d of them 304, %d GraphQL point(s)",
					got, seen.Requests, seen.NotModified, gql.Points-gqlBefore.Points)
			}
			if got.GraphQLCost != sc.points || seen.ByKind["POST /graphql"]-got.GraphQLMutations != sc.points {
				t.Errorf("the rerun cost %d GraphQL point(s) in %d queries, want %d", got.GraphQLCost, seen.ByKind["POST /graphql"]-got.GraphQLMutations, sc.points)
			}
			if seen.GraphQLBetweenPolls != 0 {
				t.Errorf("%d GraphQL call(s) in the middle of a wait", seen.GraphQLBetweenPolls)
			}
			for _, v := range gh.Violations() {
				t.Errorf("the stand-in refused what wo sent: %v", v)
			}
			noSecret(t, "the document", f.wo(nil, "show", "task_cr_01", "--json").stdout)
		})
	}
}

// passed checks the review criterion's result as update_task recorded it.
func passed(t *testing.T, st workorder.State, want bool, how string) {
	t.Helper()
	for _, c := range st.CriteriaResults {
		if c.Criterion == "Automated review passes with no unresolved comments" {
			if !c.Checked || c.Passed != want || !strings.Contains(c.How, how) {
				t.Errorf("the review criterion: checked %v, passed %v (%s); want passed %v saying %q", c.Checked, c.Passed, c.How, want, how)
			}
			return
		}
	}
	t.Errorf("the review criterion was not checked: %+v", st.CriteriaResults)
}
