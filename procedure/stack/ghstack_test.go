package stack

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wo-runner/wo/github"
	"github.com/wo-runner/wo/integration/ghstandin"
	"github.com/wo-runner/wo/procedure"
	"github.com/wo-runner/wo/procedure/internal/fixture"
	"github.com/wo-runner/wo/store"
	"github.com/wo-runner/wo/workorder"
)

// nativeStack is stackOnStandin with n parts split in stacked mode, on a
// stand-in (a test double of GitHub) whose repository has GitHub's stacks
// when stacks is set.
func nativeStack(t *testing.T, n int, stacks bool) (*stepHarness, *github.Client) {
	t.Helper()
	h := stackOnStandinWith(t, n, func(gh *ghstandin.Server) {
		gh.Stacks = stacks
		gh.MergeDelay = time.Millisecond
		gh.Writers = map[string]bool{"alice": true}
	})
	for i := 1; i <= n; i++ {
		h.patch(fmt.Sprintf("task_ep_pr%02d", i), map[string]any{"work_order": map[string]any{"context": map[string]any{"split_mode": "stacked"}}})
	}
	client, err := github.New(github.Config{BaseURL: h.GH.URL, Token: fixture.Token, Repo: fixture.Repo})
	if err != nil {
		t.Fatal(err)
	}
	return h, client
}

// stackRequests counts the Stacks API requests since from, as "METHOD
// path-after-the-repository".
func stackRequests(h *stepHarness, from int) map[string]int {
	out := map[string]int{}
	for _, r := range h.GH.Requests()[from:] {
		if i := strings.Index(r.Path, "/stacks"); i >= 0 {
			q := ""
			if r.Query != "" {
				q = "?" + strings.SplitN(r.Query, "=", 2)[0]
			}
			out[r.Method+" "+r.Path[i:]+q]++
		}
	}
	return out
}

func TestAStackedEpicBecomesOneGitHubStackAsItsPullRequestsOpen(t *testing.T) {
	h, _ := nativeStack(t, 4, true)
	e := h.engine()
	ctx := context.Background()
	// Only the bottom part has its pull request recorded yet.
	for i := 2; i <= 4; i++ {
		h.patch(fmt.Sprintf("task_ep_pr%02d", i), map[string]any{"work_order": map[string]any{"state": map[string]any{"pr_number": nil, "pr_url": nil}}})
	}
	from := len(h.GH.Requests())
	if _, _, err := e.RefreshStack(ctx, "task_ep"); err != nil {
		t.Fatal(err)
	}
	rec := h.epicState().GitHubStacks
	if rec == nil || !rec.Enabled || rec.CheckedAt == "" || len(rec.Stacks) != 0 {
		t.Fatalf("after one pull request: the epic records %+v, want stacks enabled and none made", rec)
	}
	if got := stackRequests(h, from); len(got) != 1 || got["GET /stacks?per_page"] != 1 {
		t.Errorf("with one pull request wo asked %v, want the one question whether stacks exist", got)
	}
	// The second pull request: a stack of two, from the bottom.
	h.patch("task_ep_pr02", map[string]any{"work_order": map[string]any{"state": map[string]any{"pr_number": 2}}})
	from = len(h.GH.Requests())
	if _, _, err := e.RefreshStack(ctx, "task_ep"); err != nil {
		t.Fatal(err)
	}
	if got := h.GH.StacksOf(fixture.Repo); fmt.Sprint(got) != "[[1 2]]" {
		t.Fatalf("GitHub's stacks: %v, want [[1 2]]", got)
	}
	if got := h.epicState().GitHubStacks.Stacks; fmt.Sprint(got) != "[1]" {
		t.Errorf("the epic records stacks %v, want [1]", got)
	}
	if got := stackRequests(h, from); got["GET /stacks?per_page"] != 0 || got["POST /stacks"] != 1 {
		t.Errorf("making the stack: %v (asked again whether stacks exist, or did not create it once)", got)
	}
	// The others join it on top, with add; nothing is made again.
	h.patch("task_ep_pr03", map[string]any{"work_order": map[string]any{"state": map[string]any{"pr_number": 3}}})
	h.patch("task_ep_pr04", map[string]any{"work_order": map[string]any{"state": map[string]any{"pr_number": 4}}})
	from = len(h.GH.Requests())
	if _, _, err := e.RefreshStack(ctx, "task_ep"); err != nil {
		t.Fatal(err)
	}
	if got := h.GH.StacksOf(fixture.Repo); fmt.Sprint(got) != "[[1 2 3 4]]" {
		t.Fatalf("GitHub's stacks: %v, want [[1 2 3 4]]", got)
	}
	if got := stackRequests(h, from); got["POST /stacks/1/add"] != 1 || got["POST /stacks"] != 0 || got["POST /stacks/1/unstack"] != 0 {
		t.Errorf("adding the last two: %v, want one add", got)
	}
	// In order: a refresh changes nothing on GitHub.
	from = len(h.GH.Requests())
	if _, _, err := e.RefreshStack(ctx, "task_ep"); err != nil {
		t.Fatal(err)
	}
	for req := range stackRequests(h, from) {
		if !strings.HasPrefix(req, "GET ") {
			t.Errorf("a refresh of a stack in order sent %s", req)
		}
	}
	if v := h.GH.Violations(); len(v) > 0 {
		t.Errorf("requests GitHub's OpenAPI description does not allow: %v", v)
	}
}

func TestAGitHubStackThatNoLongerMatchesIsMadeAgain(t *testing.T) {
	h, client := nativeStack(t, 4, true)
	e := h.engine()
	ctx := context.Background()
	if _, _, err := e.RefreshStack(ctx, "task_ep"); err != nil {
		t.Fatal(err)
	}
	// A person takes the stack apart on GitHub: the next refresh makes it
	// again and records the new number.
	if err := client.Unstack(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.RefreshStack(ctx, "task_ep"); err != nil {
		t.Fatal(err)
	}
	if got := h.GH.StacksOf(fixture.Repo); fmt.Sprint(got) != "[[1 2 3 4]]" {
		t.Fatalf("after the unstack: %v", got)
	}
	if got := h.epicState().GitHubStacks.Stacks; fmt.Sprint(got) != "[2]" {
		t.Errorf("the epic records %v, want the new stack 2", got)
	}
	// A person makes a stack of the bottom two under another number (the
	// one recorded is gone): wo finds it and adds the rest.
	if err := client.Unstack(ctx, 2); err != nil {
		t.Fatal(err)
	}
	n, err := h.GH.StackAs(fixture.Repo, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.RefreshStack(ctx, "task_ep"); err != nil {
		t.Fatal(err)
	}
	if got := h.GH.Stack(fixture.Repo, n); fmt.Sprint(got) != "[1 2 3 4]" {
		t.Errorf("the person's stack %d holds %v, want the epic's four", n, got)
	}
	if got := h.epicState().GitHubStacks.Stacks; fmt.Sprint(got) != fmt.Sprintf("[%d]", n) {
		t.Errorf("the epic records %v, want [%d]", got, n)
	}
	// The top pull request is retargeted so that the chain breaks: GitHub
	// cannot stack it; wo takes the stack apart, says why and what to do.
	if err := client.EditPRBase(ctx, 4, fixture.Base); err != nil {
		t.Fatal(err)
	}
	if err := client.Unstack(ctx, n); err != nil {
		t.Fatal(err)
	}
	if _, err := h.GH.StackAs(fixture.Repo, 1, 2, 3); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.RefreshStack(ctx, "task_ep"); err != nil {
		t.Fatal(err)
	}
	rec := h.epicState().GitHubStacks
	if !strings.Contains(rec.Note, "GitHub would not stack [1 2 3 4]") || !strings.Contains(rec.Note, "wo sync") {
		t.Errorf("the epic's note: %q, want GitHub's refusal and the way on", rec.Note)
	}
	if len(rec.Stacks) != 0 || len(h.GH.StacksOf(fixture.Repo)) != 0 {
		t.Errorf("after the refusal: recorded %v, on GitHub %v; want none", rec.Stacks, h.GH.StacksOf(fixture.Repo))
	}
}

func TestAnEpicOnARepositoryWithoutStacksAsksOnce(t *testing.T) {
	h, _ := nativeStack(t, 3, false)
	e := h.engine()
	ctx := context.Background()
	for i := 0; i < 2; i++ {
		if _, _, err := e.RefreshStack(ctx, "task_ep"); err != nil {
			t.Fatal(err)
		}
	}
	if got := stackRequests(h, 0); fmt.Sprint(got) != "map[GET /stacks?per_page:1]" {
		t.Errorf("wo sent %v to a repository without stacks, want the one question", got)
	}
	if rec := h.epicState().GitHubStacks; rec == nil || rec.Enabled {
		t.Errorf("the epic records %+v, want stacks not enabled", rec)
	}
	// An epic not split in stacked mode never asks.
	h2 := stackOnStandin(t)
	if _, _, err := h2.engine().RefreshStack(ctx, "task_ep"); err != nil {
		t.Fatal(err)
	}
	if got := stackRequests(h2, 0); len(got) != 0 {
		t.Errorf("an epic of independent parts asked %v", got)
	}
}

func TestUnstackEpicTakesApartWhatWoMade(t *testing.T) {
	h, _ := nativeStack(t, 3, true)
	e := h.engine()
	ctx := context.Background()
	if out, err := e.UnstackEpic(ctx, "task_ep", false); err != nil || len(out) != 0 {
		t.Errorf("before any stack: %v %v", out, err)
	}
	if _, _, err := e.RefreshStack(ctx, "task_ep"); err != nil {
		t.Fatal(err)
	}
	out, err := e.UnstackEpic(ctx, "task_ep", true)
	if err != nil || fmt.Sprint(out) != "[would unstack GitHub stack 1]" || len(h.GH.StacksOf(fixture.Repo)) != 1 {
		t.Errorf("dry run: %v %v, stacks %v", out, err, h.GH.StacksOf(fixture.Repo))
	}
	out, err = e.UnstackEpic(ctx, "task_ep", false)
	if err != nil || fmt.Sprint(out) != "[unstacked GitHub stack 1]" || len(h.GH.StacksOf(fixture.Repo)) != 0 {
		t.Errorf("unstack: %v %v, stacks %v", out, err, h.GH.StacksOf(fixture.Repo))
	}
	if got := h.epicState().GitHubStacks.Stacks; len(got) != 0 {
		t.Errorf("the epic still records %v", got)
	}
}

// landReadyStack is nativeStack with every part's run ended in review at
// the head it pushed, and each pull request approved by alice, who can
// push to the repository.
func landReadyStack(t *testing.T, n int, stacks bool) (*stepHarness, *github.Client) {
	t.Helper()
	h, client := nativeStack(t, n, stacks)
	ctx := context.Background()
	for i := 1; i <= n; i++ {
		pr, err := client.GetPR(ctx, i)
		if err != nil {
			t.Fatal(err)
		}
		// Each part is its own: no restack between merges here.
		h.patch(fmt.Sprintf("task_ep_pr%02d", i), map[string]any{"status": "in_review", "work_order": map[string]any{
			"context": map[string]any{"split_mode": "independent", "base_branch": fixture.Base},
			"state":   map[string]any{"pushed_sha": pr.HeadSHA}}})
		h.GH.AddReview(fixture.Repo, i, "alice", "APPROVED", "Looks right.")
		if err := client.EditPRBase(ctx, i, fixture.Base); err != nil {
			t.Fatal(err)
		}
	}
	return h, client
}

func TestLandMergesBottomUpOnlyWhatIsReadyAndNeverTwice(t *testing.T) {
	h, client := landReadyStack(t, 3, true)
	e := h.engine()
	ctx := context.Background()
	o := LandOptions{Epic: "task_ep", PollEvery: time.Millisecond, Timeout: 10 * time.Second}

	// Part 2's run has not finished: nothing merges, and wo says how to
	// land the ready one under it.
	h.patch("task_ep_pr02", map[string]any{"status": "in_progress", "work_order": map[string]any{"state": map[string]any{"current_step": 1}}})
	res, err := e.Land(ctx, o)
	var stop *LandError
	if !errors.As(err, &stop) || len(h.GH.MergeRecords(fixture.Repo)) != 0 {
		t.Fatalf("with part 2 unfinished: %v, %d merges", err, len(h.GH.MergeRecords(fixture.Repo)))
	}
	if res.Steps[1].Outcome != "not_ready" || !strings.Contains(res.Steps[1].Reason, "run wo run task_ep_pr02") ||
		!strings.Contains(res.Stopped, "wo land task_ep --through 1") || res.Steps[2].Outcome != "later" {
		t.Errorf("the stop: %+v", res)
	}
	h.patch("task_ep_pr02", map[string]any{"status": "in_review"})
	// Review comments still open on part 3.
	h.patch("task_ep_pr03", map[string]any{"work_order": map[string]any{"state": map[string]any{"review_comments": []any{map[string]any{"id": 1, "body": "fix", "author": "r"}}}}})
	if res, err = e.Land(ctx, o); !errors.As(err, &stop) || !strings.Contains(res.Steps[2].Reason, "1 review comment(s) open") {
		t.Errorf("with a comment open on part 3: %v %+v", err, res.Steps)
	}
	h.patch("task_ep_pr03", map[string]any{"work_order": map[string]any{"state": map[string]any{"review_comments": []any{}}}})
	// A failing check on part 3's head.
	pr3, err := client.GetPR(ctx, 3)
	if err != nil {
		t.Fatal(err)
	}
	h.GH.SetStatus(fixture.Repo, pr3.HeadSHA, "failure", "tests failed")
	if res, err = e.Land(ctx, o); !errors.As(err, &stop) || !strings.Contains(res.Steps[2].Reason, "failed") || len(h.GH.MergeRecords(fixture.Repo)) != 0 {
		t.Errorf("with a failing check: %v %+v", err, res.Steps)
	}
	h.GH.SetStatus(fixture.Repo, pr3.HeadSHA, "success", "tests passed")

	// GitHub refuses part 2 by a rule: part 1 merges, the land stops at
	// part 2 with GitHub's words.
	h.GH.RefuseMerge(fixture.Repo, 2, "Repository rule violations found")
	res, err = e.Land(ctx, o)
	if !errors.As(err, &stop) || res.Steps[0].Outcome != "merged" || res.Steps[1].Outcome != "refused" ||
		!strings.Contains(res.Stopped, "GitHub did not merge #2: Repository rule violations found") || res.Steps[2].Outcome != "later" {
		t.Fatalf("the refusal: %v %+v", err, res)
	}
	if st := h.epicState().Land; st == nil || fmt.Sprint(st.Merged) != "[1]" || st.Pending != nil || !strings.Contains(st.Stopped, "rule") {
		t.Errorf("the epic's land record after the refusal: %+v", st)
	}
	h.GH.RefuseMerge(fixture.Repo, 2, "")
	res, err = e.Land(ctx, o)
	if err != nil || !res.Complete || !res.GitHubStacks || res.Steps[0].Outcome != "already_merged" || res.Steps[1].Outcome != "merged" || res.Steps[2].Outcome != "merged" {
		t.Fatalf("the land after the rule was lifted: %v %+v", err, res)
	}
	records := h.GH.MergeRecords(fixture.Repo)
	if len(records) != 3 {
		t.Fatalf("merges: %+v, want each of three once", records)
	}
	for i, r := range records {
		want := fmt.Sprintf("[%d/3] part %d (#%d)\n\nAuthor's text of part %d.", i+1, i+1, i+1, i+1)
		if r.Number != i+1 || !r.Async || r.Method != github.MergeSquash || r.Message != want {
			t.Errorf("merge %d: %+v, want #%d's squash through the asynchronous merge, message %q", i+1, r, i+1, want)
		}
	}
	if st := h.epicState().Land; st.Finished == "" || fmt.Sprint(st.Merged) != "[1 2 3]" || st.Stopped != "" {
		t.Errorf("the finished land record: %+v", st)
	}
	for i := 1; i <= 3; i++ {
		if doc, _ := h.store.Get(ctx, fmt.Sprintf("task_ep_pr%02d", i)); workorder.StatusOf(doc) != workorder.StatusClosed {
			t.Errorf("part %d is %s after its merge, want closed", i, workorder.StatusOf(doc))
		}
	}
	// Again: nothing merges twice.
	if res, err = e.Land(ctx, o); err != nil || !res.Complete || len(h.GH.MergeRecords(fixture.Repo)) != 3 {
		t.Errorf("a second land: %v %+v, %d merges", err, res, len(h.GH.MergeRecords(fixture.Repo)))
	}
	if v := h.GH.Violations(); len(v) > 0 {
		t.Errorf("requests GitHub's OpenAPI description does not allow: %v", v)
	}
}

func TestLandWithoutStacksUsesTheOrdinaryMergeThroughTheOneAskedFor(t *testing.T) {
	h, _ := landReadyStack(t, 3, false)
	e := h.engine()
	ctx := context.Background()
	res, err := e.Land(ctx, LandOptions{Epic: "task_ep", Through: "#2", Method: github.MergeRebase})
	if err != nil || !res.Complete || res.GitHubStacks || res.Steps[2].Outcome != "later" {
		t.Fatalf("land through #2: %v %+v", err, res)
	}
	records := h.GH.MergeRecords(fixture.Repo)
	if len(records) != 2 || records[0].Async || records[1].Number != 2 || records[1].Method != github.MergeRebase {
		t.Errorf("merges: %+v, want #1 and #2 rebased with the ordinary merge", records)
	}
	// --through by task key; then the rest.
	if res, err = e.Land(ctx, LandOptions{Epic: "task_ep", Through: "task_ep_pr03"}); err != nil || !res.Complete || len(h.GH.MergeRecords(fixture.Repo)) != 3 {
		t.Errorf("land through task_ep_pr03: %v %+v", err, res)
	}
}

func TestLandRefusesWhatItCannotDo(t *testing.T) {
	h, _ := nativeStack(t, 2, true)
	e := h.engine()
	ctx := context.Background()
	var pf *procedure.PreflightError
	for _, o := range []LandOptions{
		{Epic: "task_ep", Method: "fast-forward"},
		{Epic: "task_ep", Through: "#9"},
		{Epic: "task_ep", Through: "task_nope"},
	} {
		if _, err := e.Land(ctx, o); !errors.As(err, &pf) {
			t.Errorf("%+v: %v, want a refusal before anything", o, err)
		}
	}
	if _, err := e.Land(ctx, LandOptions{Epic: "task_nothing"}); err == nil {
		t.Error("land of an epic that does not exist succeeded")
	}
	// A pull request closed without merging stops it.
	client, _ := github.New(github.Config{BaseURL: h.GH.URL, Token: fixture.Token, Repo: fixture.Repo})
	if _, err := client.ClosePR(ctx, 1); err != nil {
		t.Fatal(err)
	}
	res, err := e.Land(ctx, LandOptions{Epic: "task_ep"})
	var stop *LandError
	if !errors.As(err, &stop) || !strings.Contains(res.Steps[0].Reason, "closed without merging") {
		t.Errorf("with #1 closed: %v %+v", err, res)
	}
	if procedure.Classify(err).Code != "LAND_STOPPED" || procedure.Classify(err).Outcome != procedure.OutcomeWaiting {
		t.Errorf("a stopped land classifies as %+v, want waiting, LAND_STOPPED", procedure.Classify(err))
	}
	if n := len(h.GH.MergeRecords(fixture.Repo)); n != 0 {
		t.Errorf("%d merges", n)
	}
	for _, r := range h.GH.Requests() {
		if r.Method == http.MethodPut {
			t.Errorf("a refused land sent %s %s", r.Method, r.Path)
		}
	}
}

func TestLandCountsOnlyAWritersApprovalOfTheHeadWoPushed(t *testing.T) {
	h, client := landReadyStack(t, 1, false)
	e := h.engine()
	ctx := context.Background()
	reason := func() string {
		t.Helper()
		res, err := e.Land(ctx, LandOptions{Epic: "task_ep"})
		var stop *LandError
		if !errors.As(err, &stop) || len(h.GH.MergeRecords(fixture.Repo)) != 0 {
			t.Fatalf("land: %v, %d merges; want a stop and nothing merged", err, len(h.GH.MergeRecords(fixture.Repo)))
		}
		return res.Steps[0].Reason
	}
	// alice asks for changes after approving: her latest review counts.
	h.GH.AddReview(fixture.Repo, 1, "alice", "CHANGES_REQUESTED", "One more thing.")
	if got := reason(); got != "GitHub shows changes requested by alice" {
		t.Errorf("after alice's request for changes: %q", got)
	}
	// An outsider's or a bot's approval is no approval.
	h.GH.AddReview(fixture.Repo, 1, "alice", "DISMISSED", "")
	h.GH.AddReview(fixture.Repo, 1, "mallory", "APPROVED", "ship it")
	h.GH.AddReview(fixture.Repo, 1, "coderabbitai[bot]", "APPROVED", "LGTM")
	if got := reason(); !strings.Contains(got, "no approving review from someone who can push") {
		t.Errorf("with only an outsider's and a bot's approval: %q", got)
	}
	h.GH.AddReview(fixture.Repo, 1, "alice", "APPROVED", "Now it is.")
	// Someone pushed to the pull request after wo's review loop ended.
	pr, err := client.GetPR(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	h.patch("task_ep_pr01", map[string]any{"work_order": map[string]any{"state": map[string]any{"pushed_sha": strings.Repeat("0", 40)}}})
	if got := reason(); !strings.Contains(got, "is not 000000000000, which wo pushed and its review loop saw") {
		t.Errorf("with a head wo did not push: %q", got)
	}
	h.patch("task_ep_pr01", map[string]any{"work_order": map[string]any{"state": map[string]any{"pushed_sha": pr.HeadSHA}}})
	if res, err := e.Land(ctx, LandOptions{Epic: "task_ep"}); err != nil || !res.Complete {
		t.Errorf("once ready: %v %+v", err, res)
	}
}

func TestALandThatGitHubCannotAnswerIsOneToRetry(t *testing.T) {
	err := transient(fmt.Errorf("reading #1: %w", &github.ServerError{Err: errors.New("502 bad gateway")}))
	var retry *LandRetryError
	if !errors.As(err, &retry) || procedure.Classify(err).Outcome != procedure.OutcomeRetryLater || !strings.Contains(err.Error(), "run wo land again later") {
		t.Errorf("a 502: %v (%+v), want a land to retry later", err, procedure.Classify(err))
	}
	if err := transient(&LandError{Reason: "stopped"}); procedure.Classify(err).Code != "LAND_STOPPED" {
		t.Errorf("a stop is classified %+v", procedure.Classify(err))
	}
	if transient(nil) != nil {
		t.Error("no error became one")
	}
}

func TestTwoLandsOfOneEpicTakeTurns(t *testing.T) {
	h, _ := landReadyStack(t, 1, false)
	ctx := context.Background()
	leases := &store.Leases{Store: h.store, Now: time.Now}
	if _, err := leases.Acquire(ctx, "task_ep", "another-runner@elsewhere:1", time.Minute, nil); err != nil {
		t.Fatal(err)
	}
	_, err := h.engine().Land(ctx, LandOptions{Epic: "task_ep"})
	var held *store.LeaseHeldError
	if !errors.As(err, &held) || len(h.GH.MergeRecords(fixture.Repo)) != 0 {
		t.Fatalf("a land while another holds the epic: %v, %d merges; want LeaseHeldError and nothing merged", err, len(h.GH.MergeRecords(fixture.Repo)))
	}
	if err := leases.Release(ctx, "task_ep", "another-runner@elsewhere:1"); err != nil {
		t.Fatal(err)
	}
	if res, err := h.engine().Land(ctx, LandOptions{Epic: "task_ep"}); err != nil || !res.Complete {
		t.Errorf("the land after the other released the epic: %v %+v", err, res)
	}
	doc, _ := h.store.Get(ctx, "task_ep")
	if store.Current(doc) != nil && store.Current(doc).Holder != "" {
		t.Errorf("the land left its lease on the epic: %+v", store.Current(doc))
	}
}

func TestARefreshThatFindsTheGitHubStackInOrderClearsTheNote(t *testing.T) {
	h, _ := nativeStack(t, 3, true)
	e := h.engine()
	ctx := context.Background()
	if _, _, err := e.RefreshStack(ctx, "task_ep"); err != nil {
		t.Fatal(err)
	}
	// A note of an earlier repair, the stack as it was made.
	h.patch("task_ep", map[string]any{"work_order": map[string]any{"state": map[string]any{"github_stacks": map[string]any{"note": "an old repair"}}}})
	if _, _, err := e.RefreshStack(ctx, "task_ep"); err != nil {
		t.Fatal(err)
	}
	if rec := h.epicState().GitHubStacks; rec.Note != "" || fmt.Sprint(rec.Stacks) != "[1]" {
		t.Errorf("after a refresh in order: note %q, stacks %v; want no note and stack 1", rec.Note, rec.Stacks)
	}
}

func TestAGitHubStackMadeAfterTheBottomMergedStartsAboveIt(t *testing.T) {
	h, client := nativeStack(t, 3, true)
	e := h.engine()
	ctx := context.Background()
	// #1 merged before GitHub's stack was made; the epic records none.
	h.GH.Merge(fixture.Repo, 1)
	h.patch("task_ep_pr01", map[string]any{"work_order": map[string]any{"state": map[string]any{"pr_state": "merged"}}})
	if _, _, err := e.RefreshStack(ctx, "task_ep"); err != nil {
		t.Fatal(err)
	}
	if got := h.GH.StacksOf(fixture.Repo); fmt.Sprint(got) != "[[2 3]]" {
		t.Fatalf("GitHub's stacks: %v, want the open two, [[2 3]]", got)
	}
	// Everything merged and the stack gone: nothing left to stack, and
	// the epic records none.
	n := h.epicState().GitHubStacks.Stacks[0]
	if err := client.Unstack(ctx, n); err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{2, 3} {
		h.GH.Merge(fixture.Repo, i)
		h.patch(fmt.Sprintf("task_ep_pr%02d", i), map[string]any{"work_order": map[string]any{"state": map[string]any{"pr_state": "merged"}}})
	}
	if _, _, err := e.RefreshStack(ctx, "task_ep"); err != nil {
		t.Fatal(err)
	}
	if rec := h.epicState().GitHubStacks; len(rec.Stacks) != 0 || len(h.GH.StacksOf(fixture.Repo)) != 0 {
		t.Errorf("with every pull request merged: recorded %v, on GitHub %v; want none", rec.Stacks, h.GH.StacksOf(fixture.Repo))
	}
}
