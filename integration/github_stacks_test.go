package integration

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wo-runner/wo/integration/ghstandin"
	"github.com/wo-runner/wo/internal/gittest"
)

// GitHub's own stacked pull requests, through the GitHub stand-in (a test
// double of GitHub whose stacks and asynchronous merge answer as GitHub's
// OpenAPI description documents them).

// nativeStack is a stacked epic split from a Go module, on a stand-in that
// approves every pull request at once; stacks says whether the repository
// has GitHub's stacks.
type nativeStack struct {
	t     *testing.T
	f     *fixture
	gh    *ghstandin.Server
	env   []string
	parts []stackPart
}

func newNativeStack(t *testing.T, stacks bool, files int) *nativeStack {
	t.Helper()
	f := goModuleFixture(t, files)
	gh := ghstandin.New(secretToken)
	gh.Remotes["acme/big"] = f.origin
	gh.ReviewDelay = 50 * time.Millisecond
	gh.Stacks = stacks
	gh.MergeDelay = 20 * time.Millisecond
	gh.SquashMessageFromBody = true // the repository takes a squash's message from the description
	gh.Writers = map[string]bool{"alice": true}
	if err := gh.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(gh.Close)
	env := []string{"GITHUB_TOKEN=" + secretToken, "GITHUB_API_URL=" + gh.URL, "WO_REVIEW_WAIT=20s", "WO_POLL_INTERVAL=50ms"}
	if r := f.wo(env, "split", "--repo", f.repo, "--base", "base", "--source", "main", "--mode", "stacked",
		"--github-repo", "acme/big", "--worktree-root", f.wtRoot, "--max-lines", "40", "--epic-key", "task_big"); r.code != 0 {
		t.Fatalf("split: exit %d\n%s", r.code, r.stderr)
	}
	x := &nativeStack{t: t, f: f, gh: gh, env: env}
	for i := 1; ; i++ {
		key := fmt.Sprintf("task_big_pr%02d", i)
		if r := f.wo(nil, "show", key, "--json"); r.code != 0 {
			break
		}
		inputs := f.doc(key)["work_order"].(map[string]any)["inputs"].(map[string]any)
		x.parts = append(x.parts, stackPart{key: key, branch: inputs["branch_name"].(string)})
	}
	return x
}

// run runs one part's work order, which must finish, and reads its PR.
func (x *nativeStack) run(i int) {
	x.t.Helper()
	if r := x.f.wo(x.env, "run", x.parts[i].key); r.code != 0 {
		x.t.Fatalf("wo run %s: exit %d\n%s\n%s", x.parts[i].key, r.code, r.stdout, r.stderr)
	}
	n, _ := stateOf(x.f.doc(x.parts[i].key))["pr_number"].(float64)
	x.parts[i].pr = int(n)
}

// runEpic runs the whole epic, which must finish, and reads each part's PR.
func (x *nativeStack) runEpic() {
	x.t.Helper()
	if r := x.f.wo(x.env, "run", "--epic", "task_big"); r.code != 0 {
		x.t.Fatalf("run --epic: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for i := range x.parts {
		n, _ := stateOf(x.f.doc(x.parts[i].key))["pr_number"].(float64)
		x.parts[i].pr = int(n)
	}
}

// prs are the parts' pull request numbers, bottom first.
func (x *nativeStack) prs(upTo int) []int {
	var out []int
	for _, p := range x.parts[:upTo] {
		out = append(out, p.pr)
	}
	return out
}

// approve has alice, who can push to the repository, approve every part's
// pull request (the review bot's approval does not count for landing).
func (x *nativeStack) approve() {
	for _, p := range x.parts {
		x.gh.AddReview("acme/big", p.pr, "alice", "APPROVED", "Ready to land.")
	}
}

// land runs wo land and decodes its JSON.
func (x *nativeStack) land(env []string, want int, args ...string) landJSON {
	x.t.Helper()
	r := x.f.wo(append(x.env, env...), append([]string{"land", "task_big", "--poll-every", "100ms", "--json"}, args...)...)
	if r.code != want {
		x.t.Fatalf("wo land %v: exit %d, want %d\n%s\n%s", args, r.code, want, r.stdout, r.stderr)
	}
	var out struct{ Data landJSON }
	if r.code >= 0 && !r.killed {
		if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
			x.t.Fatalf("wo land --json: %v\n%s", err, r.stdout)
		}
	}
	return out.Data
}

type landJSON struct {
	GitHubStacks bool `json:"github_stacks"`
	Complete     bool `json:"complete"`
	Stopped      string
	Steps        []struct {
		Key, Outcome, Reason string
		PR                   int `json:"pr_number"`
	} `json:"pull_requests"`
}

// checkLanded asserts what a finished land leaves: each pull request merged
// exactly once, as one commit on the base in stack order whose message is
// its own title and summary, not the stack table; no commit of a branch
// replayed; the base's tree the source's; every task closed.
func (x *nativeStack) checkLanded(async bool, mergedBefore int) {
	t := x.t
	t.Helper()
	records := x.gh.MergeRecords("acme/big")
	count := map[int]int{}
	for _, r := range records {
		count[r.Number]++
		if r.Number == x.parts[0].pr && mergedBefore > 0 {
			continue // merged by a person on GitHub, with GitHub's own message
		}
		if r.Async != async {
			t.Errorf("#%d was merged with async %v, want %v", r.Number, r.Async, async)
		}
		if strings.Contains(r.Message, stackBegin) || strings.Contains(r.Message, "Stack: part") {
			t.Errorf("the merge commit of #%d carries wo's stack table:\n%s", r.Number, r.Message)
		}
		if !strings.Contains(r.Message, fmt.Sprintf("(#%d)", r.Number)) {
			t.Errorf("the merge commit of #%d is not titled after its pull request:\n%s", r.Number, r.Message)
		}
	}
	for _, p := range x.parts {
		if count[p.pr] != 1 {
			t.Errorf("#%d was merged %d times, want once", p.pr, count[p.pr])
		}
	}
	// One commit a pull request on the base, each with one parent: no
	// branch commit replayed above a squashed one.
	log := strings.Fields(gittest.Run(t, x.f.origin, "log", "--format=%p", "base"))
	if got := len(strings.Fields(gittest.Run(t, x.f.origin, "rev-list", "base"))); got != len(x.parts)+1 {
		t.Errorf("the base has %d commits, want %d: the start and one a pull request\n%s", got, len(x.parts)+1, gittest.Run(t, x.f.origin, "log", "--oneline", "base"))
	}
	for _, parents := range log[:len(log)-1] {
		if strings.Contains(parents, " ") {
			t.Errorf("a merge commit with several parents on the base: %s", parents)
		}
	}
	subjects := strings.Split(gittest.Run(t, x.f.origin, "log", "--reverse", "--format=%s", "base"), "\n")[1:]
	for i, p := range x.parts {
		if i < len(subjects) && !strings.HasSuffix(subjects[i], fmt.Sprintf("(#%d)", p.pr)) {
			t.Errorf("commit %d on the base is %q, want #%d's", i+1, subjects[i], p.pr)
		}
	}
	if got, want := gittest.Run(t, x.f.origin, "rev-parse", "base^{tree}"), gittest.Run(t, x.f.repo, "rev-parse", "main^{tree}"); got != want {
		t.Errorf("the landed base's tree is %s, the source's %s:\n%s", got, want, gittest.Run(t, x.f.repo, "diff", "--stat", "main", got))
	}
	for _, p := range x.parts {
		if s := x.f.doc(p.key)["status"]; s != "closed" {
			t.Errorf("%s is %v after its pull request merged, want closed", p.key, s)
		}
	}
}

// TestAStackedEpicIsOneGitHubStackAndLandsThroughTheAsyncMerge: on a
// repository with GitHub's stacks, the epic's pull requests become one
// stack in order as they open (made at the second, extended at each one
// after); a squash merge of the bottom through GitHub and wo sync leave it
// consistent; wo status shows each pull request's place; wo land merges
// the rest through the asynchronous merge API.
func TestAStackedEpicIsOneGitHubStackAndLandsThroughTheAsyncMerge(t *testing.T) {
	t.Parallel()
	x := newNativeStack(t, true, 24)
	n := len(x.parts)
	if n < 6 {
		t.Fatalf("%d PRs: a stack of at least six is needed", n)
	}
	for i := 0; i < n-1; i++ {
		x.run(i)
	}
	stacks := x.gh.StacksOf("acme/big")
	if len(stacks) != 1 || fmt.Sprint(stacks[0]) != fmt.Sprint(x.prs(n-1)) {
		t.Fatalf("GitHub's stacks after %d parts ran: %v, want one of %v", n-1, stacks, x.prs(n-1))
	}
	epic := stateOf(x.f.doc("task_big"))
	rec, _ := epic["github_stacks"].(map[string]any)
	if rec["enabled"] != true || fmt.Sprint(rec["stacks"]) != "[1]" {
		t.Errorf("the epic's state records %v, want GitHub's stacks enabled and stack 1", rec)
	}
	// A pull request opened later joins it.
	x.run(n - 1)
	if stacks = x.gh.StacksOf("acme/big"); len(stacks) != 1 || fmt.Sprint(stacks[0]) != fmt.Sprint(x.prs(n)) {
		t.Fatalf("after the last part: %v, want one stack of %v", stacks, x.prs(n))
	}
	detections := 0
	for _, q := range x.gh.Requests() {
		if q.Method == http.MethodGet && strings.HasSuffix(q.Path, "/stacks") && !strings.Contains(q.Query, "pull_request=") {
			detections++
		}
	}
	if detections != 1 {
		t.Errorf("wo asked GitHub %d times whether the repository has stacks, want once", detections)
	}

	// wo status reads each pull request's place from GitHub's stack object.
	r := x.f.wo(x.env, "status", "task_big", "--refresh", "--json")
	var status struct {
		Data []struct {
			Key   string
			Stack *struct{ Number, Position, Size int } `json:"github_stack"`
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &status); err != nil {
		t.Fatalf("wo status --json: %v\n%s", err, r.stdout)
	}
	places := map[string]string{}
	for _, row := range status.Data {
		if row.Stack != nil {
			places[row.Key] = fmt.Sprintf("%d:%d/%d", row.Stack.Number, row.Stack.Position, row.Stack.Size)
		}
	}
	for i, p := range x.parts {
		if want := fmt.Sprintf("1:%d/%d", i+1, n); places[p.key] != want {
			t.Errorf("wo status gives %s's place as %q, want %q", p.key, places[p.key], want)
		}
	}
	if text := x.f.wo(x.env, "status", "task_big"); !strings.Contains(text.stdout, fmt.Sprintf("GitHub stack 1: #%d 1/%d, #%d 2/%d", x.parts[0].pr, n, x.parts[1].pr, n)) {
		t.Errorf("wo status does not show GitHub's stack:\n%s", text.stdout)
	}

	// The bottom is squash-merged on GitHub; wo sync restacks the rest
	// and GitHub's stack still holds the epic in order: nothing unstacked.
	if _, err := x.gh.MergeAs("acme/big", x.parts[0].pr, ghstandin.MergeSquash, false); err != nil {
		t.Fatal(err)
	}
	if r := x.f.wo(x.env, "sync", "task_big"); r.code != 0 {
		t.Fatalf("wo sync after the merge: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if stacks = x.gh.StacksOf("acme/big"); len(stacks) != 1 || fmt.Sprint(stacks[0]) != fmt.Sprint(x.prs(n)) {
		t.Errorf("after the merge and wo sync: %v, want stack 1 of %v still", stacks, x.prs(n))
	}
	for _, q := range x.gh.Requests() {
		if strings.HasSuffix(q.Path, "/unstack") {
			t.Errorf("wo unstacked a stack that still held the epic: %s %s", q.Method, q.Path)
		}
	}
	// The restacked pull requests went back to their review wait; the
	// epic's run finishes their reviews.
	if r := x.f.wo(x.env, "run", "--epic", "task_big"); r.code != 0 {
		t.Fatalf("the epic run after the restack: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}

	// wo land merges the rest, bottom up, through the asynchronous merge.
	x.approve()
	out := x.land(nil, 0)
	if !out.GitHubStacks || !out.Complete {
		t.Errorf("wo land: %+v", out)
	}
	for _, s := range out.Steps {
		want := "merged"
		if s.PR == x.parts[0].pr {
			want = "already_merged"
		}
		if s.Outcome != want {
			t.Errorf("wo land says #%d %s, want %s", s.PR, s.Outcome, want)
		}
	}
	x.checkLanded(true, 1)
	// Run again, it merges nothing.
	before := len(x.gh.MergeRecords("acme/big"))
	again := x.land(nil, 0)
	if len(x.gh.MergeRecords("acme/big")) != before || !again.Complete {
		t.Errorf("a second wo land merged again, or did not say the epic is landed: %+v", again)
	}
}

// TestALandKilledAndRefusedMergesNothingTwice: a land killed right after
// asking GitHub for a merge, one killed right after a merge, and a rule
// that refuses one pull request: each rerun goes on from where the last
// stopped, GitHub's reason is said as GitHub gave it, and in the end every
// pull request merged exactly once.
func TestALandKilledAndRefusedMergesNothingTwice(t *testing.T) {
	t.Parallel()
	x := newNativeStack(t, true, 16)
	x.runEpic()
	if stacks := x.gh.StacksOf("acme/big"); len(stacks) != 1 || len(stacks[0]) != len(x.parts) {
		t.Fatalf("GitHub's stacks after the epic run: %v, want one of %d", stacks, len(x.parts))
	}
	x.approve()
	x.land([]string{"WO_FAULT=land:after_request"}, -1)
	x.land([]string{"WO_FAULT=land:after_merge"}, -1)
	const rule = "Repository rule violations found\n\nRequired status check \"build\" is expected."
	refused := x.parts[2].pr
	x.gh.RefuseMerge("acme/big", refused, rule)
	out := x.land(nil, 3)
	if !strings.Contains(out.Stopped, "Required status check \"build\" is expected") || !strings.Contains(out.Stopped, fmt.Sprintf("#%d", refused)) {
		t.Errorf("the refusal is not said with GitHub's reason: %q", out.Stopped)
	}
	for _, r := range x.gh.MergeRecords("acme/big") {
		if r.Number == refused || r.Number == x.parts[3].pr {
			t.Errorf("#%d merged although the land stopped at #%d", r.Number, refused)
		}
	}
	x.gh.RefuseMerge("acme/big", refused, "")
	if out := x.land(nil, 0); !out.Complete {
		t.Errorf("the land after the rule was lifted: %+v", out)
	}
	x.checkLanded(true, 0)
}

// TestAnEpicWithoutGitHubStacksBehavesAsBeforeAndLands: on a repository
// without GitHub's stacks, one question (a 404) and nothing else of the
// Stacks API; wo land will not merge while a check fails, then merges with
// the ordinary merge, restacking between, and a land killed after a merge
// goes on from there.
func TestAnEpicWithoutGitHubStacksBehavesAsBeforeAndLands(t *testing.T) {
	t.Parallel()
	x := newNativeStack(t, false, 12)
	x.runEpic()
	asked := 0
	for _, q := range x.gh.Requests() {
		if strings.Contains(q.Path, "/stacks") {
			asked++
			if q.Method != http.MethodGet || q.Status != http.StatusNotFound {
				t.Errorf("wo sent %s %s (%d) to a repository without stacks", q.Method, q.Path, q.Status)
			}
		}
	}
	if asked != 1 {
		t.Errorf("wo asked about stacks %d times, want once", asked)
	}
	if !strings.Contains(x.f.wo(x.env, "status", "task_big").stdout, "GitHub stacks: not on this repository") {
		t.Error("wo status does not say the repository has no GitHub stacks")
	}
	x.approve()
	second := x.gh.PullRequests("acme/big")[1]
	head := second["head"].(map[string]any)["sha"].(string)
	x.gh.SetStatus("acme/big", head, "failure", "build failed")
	out := x.land(nil, 3)
	if len(x.gh.MergeRecords("acme/big")) != 0 || !strings.Contains(out.Stopped, "nothing merged") || !strings.Contains(out.Stopped, "failed") {
		t.Errorf("wo land with a failing check: %q, %d merges", out.Stopped, len(x.gh.MergeRecords("acme/big")))
	}
	if !strings.Contains(out.Stopped, fmt.Sprintf("--through %d", x.parts[0].pr)) {
		t.Errorf("the stop does not name the --through that lands the ready one under it: %q", out.Stopped)
	}
	x.gh.SetStatus("acme/big", head, "success", "build passed")
	// Killed right after its first merge: the rerun restacks the next
	// onto what merged before it merges it (the ordinary merge would take
	// a pull request into a branch that merged already).
	x.land([]string{"WO_FAULT=land:after_merge"}, -1)
	if out := x.land(nil, 0); out.GitHubStacks || !out.Complete {
		t.Errorf("wo land: %+v", out)
	}
	x.checkLanded(false, 0)
}

// TestUndoOfAStackedEpicUnstacksIt: wo undo --epic takes apart the GitHub
// stack wo made, before the children's own undo.
func TestUndoOfAStackedEpicUnstacksIt(t *testing.T) {
	t.Parallel()
	x := newNativeStack(t, true, 8)
	x.runEpic()
	if len(x.gh.StacksOf("acme/big")) != 1 {
		t.Fatalf("no GitHub stack after the epic run: %v", x.gh.StacksOf("acme/big"))
	}
	if r := x.f.wo(x.env, "undo", "--epic", "task_big", "--dry-run"); !strings.Contains(r.stdout, "would unstack GitHub stack 1") || len(x.gh.StacksOf("acme/big")) != 1 {
		t.Errorf("undo --dry-run: %s\n%s", r.stdout, r.stderr)
	}
	r := x.f.wo(x.env, "undo", "--epic", "task_big")
	if !strings.Contains(r.stdout, "unstacked GitHub stack 1") {
		t.Errorf("undo does not say it unstacked: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if s := x.gh.StacksOf("acme/big"); len(s) != 0 {
		t.Errorf("GitHub's stacks after wo undo --epic: %v", s)
	}
	if rec, _ := stateOf(x.f.doc("task_big"))["github_stacks"].(map[string]any); rec["stacks"] != nil {
		t.Errorf("the epic still records stacks %v", rec["stacks"])
	}
}
