package integration

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wo-runner/wo/github"
	"github.com/wo-runner/wo/integration/ghstandin"
	"github.com/wo-runner/wo/internal/gittest"
)

// contractPath is the vendored subset of GitHub's OpenAPI description
// (see testdata/openapi/README.md).
var contractPath = filepath.Join("testdata", "openapi", "github-subset.json")

func loadContract(t testing.TB) *ghstandin.Contract {
	t.Helper()
	c, err := ghstandin.LoadContract(contractPath)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestOpenAPIVendoredSubsetCoversWo makes sure the vendored description
// is GitHub's, loads, and holds the operations wo sends and no others.
func TestOpenAPIVendoredSubsetCoversWo(t *testing.T) {
	t.Parallel()
	doc := loadContract(t).Doc()
	if doc.Info == nil || !strings.Contains(doc.Info.Title, "GitHub") {
		t.Fatalf("not GitHub's description: %+v", doc.Info)
	}
	want := []string{
		"checks/list-for-ref", "issues/create-comment", "issues/delete-comment", "issues/list-comments",
		"pull-request-stacks/add", "pull-request-stacks/create", "pull-request-stacks/get", "pull-request-stacks/list", "pull-request-stacks/unstack",
		"pulls/create", "pulls/get", "pulls/get-merge-async-result", "pulls/list",
		"pulls/list-review-comments", "pulls/list-reviews", "pulls/merge", "pulls/merge-async", "pulls/request-reviewers", "pulls/update",
		"repos/list-commit-statuses-for-ref", "users/get-authenticated",
	}
	var got []string
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			got = append(got, op.OperationID)
		}
	}
	if fmt.Sprint(sorted(got)) != fmt.Sprint(want) {
		t.Errorf("operations vendored:\n%v\nwant (the calls in github/client.go):\n%v", sorted(got), want)
	}
}

// TestOpenAPIContractThroughWosClient drives every operation wo uses
// through wo's own github.Client against the stand-in, the errors wo
// handles included, and checks each request and each answer against
// GitHub's OpenAPI description with kin-openapi.
func TestOpenAPIContractThroughWosClient(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 4)
	gittest.Run(t, f.repo, "push", "-q", "origin", "HEAD:refs/heads/review/01-openapi")
	contract := loadContract(t)
	gh := ghstandin.New(secretToken)
	gh.Contract = contract
	gh.Remotes["acme/hermes"] = f.origin
	gh.Stacks = true
	// One round of more comments than a page holds, so that wo follows
	// GitHub's Link header.
	var round []ghstandin.Comment
	for i := 0; i < 101; i++ {
		round = append(round, ghstandin.Comment{Path: "foundation/new0.go", Line: 3, Body: fmt.Sprintf("Comment %d.", i)})
	}
	gh.ReviewRounds = [][]ghstandin.Comment{round}
	if err := gh.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(gh.Close)
	c, err := github.New(github.Config{BaseURL: gh.URL, Token: secretToken, Repo: "acme/hermes", MaxWait: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx := testContext()
	check := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Errorf("%s: %v", what, err)
		}
	}

	login, err := c.Login(ctx)
	check("Login", err)
	if err == nil && login != gh.Login {
		t.Errorf("login %q, want %q", login, gh.Login)
	}
	none, err := c.FindOpenPR(ctx, "review/01-openapi", "code-review-base")
	check("FindOpenPR before", err)
	if none != nil {
		t.Errorf("an open pull request before one was created: %+v", none)
	}
	pr, err := c.CreatePR(ctx, "review/01-openapi", "code-review-base", "Foundation", "The first of the series.")
	check("CreatePR", err)
	// Again: GitHub answers 422 "already exists", wo finds the open one.
	again, err := c.CreatePR(ctx, "review/01-openapi", "code-review-base", "Foundation", "The first of the series.")
	check("CreatePR again", err)
	if pr != nil && again != nil && again.Number != pr.Number {
		t.Errorf("a second pull request #%d", again.Number)
	}
	_, err = c.FindOpenPR(ctx, "review/01-openapi", "code-review-base")
	check("FindOpenPR after", err)
	got, err := c.GetPR(ctx, 1)
	check("GetPR", err)
	if got != nil && (got.State != "open" || got.Head != "review/01-openapi" || got.HeadSHA == "") {
		t.Errorf("GetPR: %+v", got)
	}
	_, err = c.GetPR(ctx, 1) // unchanged: If-None-Match, 304
	check("GetPR again", err)
	check("EditPRBody", c.EditPRBody(ctx, 1, "The first of the series, edited."))

	var comments []github.Comment
	waitFor(t, "the scripted review", 10*time.Second, func() bool {
		reviews, err := c.Reviews(ctx, 1)
		if err != nil {
			t.Errorf("Reviews: %v", err)
			return true
		}
		if len(reviews) == 0 {
			return false
		}
		comments, err = c.ReviewComments(ctx, 1)
		check("ReviewComments", err)
		return true
	})
	if len(comments) != 101 {
		t.Errorf("%d review comments read, want 101 over two pages", len(comments))
	}
	check("CommentOnce", c.CommentOnce(ctx, 1, "Addressed. <!-- wo:1 -->", "<!-- wo:1 -->"))
	check("CommentOnce again", c.CommentOnce(ctx, 1, "Addressed. <!-- wo:1 -->", "<!-- wo:1 -->"))
	issueComments, err := c.IssueComments(ctx, 1)
	check("IssueComments", err)
	if err == nil && len(issueComments) != 1 {
		t.Errorf("%d conversation comments, want 1", len(issueComments))
	}
	if err == nil && len(issueComments) == 1 {
		check("DeleteIssueComment", c.DeleteIssueComment(ctx, issueComments[0].ID))
		check("DeleteIssueComment of one gone (404)", c.DeleteIssueComment(ctx, issueComments[0].ID))
		check("CommentOnce after the delete", c.CommentOnce(ctx, 1, "Addressed. <!-- wo:1 -->", "<!-- wo:1 -->"))
	}
	// What the review loop reads of a head and how it asks for a review.
	head := gittest.Run(t, f.origin, "rev-parse", "refs/heads/review/01-openapi")
	gh.SetStatus("acme/hermes", head, "success", "Review skipped")
	commitStatuses, err := c.Statuses(ctx, head)
	check("Statuses", err)
	if len(commitStatuses) != 1 || commitStatuses[0].Context != "CodeRabbit" || commitStatuses[0].Description != "Review skipped" || commitStatuses[0].UpdatedAt.IsZero() {
		t.Errorf("Statuses: %+v", commitStatuses)
	}
	_, err = c.Statuses(ctx, head) // unchanged: 304
	check("Statuses again", err)
	runs, err := c.CheckRuns(ctx, head)
	check("CheckRuns", err)
	if len(runs) != 0 {
		t.Errorf("CheckRuns: %+v", runs)
	}
	check("RequestReviewers", c.RequestReviewers(ctx, 1, []string{"copilot-pull-request-reviewer[bot]"}))
	made, err := c.Comment(ctx, 1, "@coderabbitai review\n\n<!-- wo:ask -->")
	check("Comment", err)
	if made.ID == 0 || made.CreatedAt.IsZero() || made.Association != "MEMBER" {
		t.Errorf("Comment: %+v", made)
	}
	check("DeleteIssueComment of the request", c.DeleteIssueComment(ctx, made.ID))
	closed, err := c.ClosePR(ctx, 1)
	check("ClosePR", err)
	if closed != nil && (closed.State != "closed" || closed.Merged) {
		t.Errorf("ClosePR: %+v", closed)
	}
	gh.Merge("acme/hermes", 1)
	merged, err := c.GetPR(ctx, 1)
	check("GetPR merged", err)
	if merged != nil && merged.Lifecycle() != github.PRMerged {
		t.Errorf("after the merge: %+v", merged)
	}

	checkStacksThroughClient(t, ctx, c, f)

	// The answers wo handles when things go wrong.
	if _, err := c.GetPR(ctx, 99); err == nil {
		t.Error("GetPR of a pull request that does not exist succeeded")
	}
	gh.Inject5xx(1)
	_, err = c.IssueComments(ctx, 1) // 502, then retried
	check("IssueComments after a 502", err)
	gh.InjectSecondaryLimit(1, 0)
	_, err = c.Reviews(ctx, 1) // 429 with Retry-After, then retried
	check("Reviews after a secondary limit", err)
	gh.ExhaustPrimaryLimit(time.Second)
	_, err = c.ReviewComments(ctx, 1) // 403 rate limit, waited out
	check("ReviewComments after the primary limit", err)
	gh.BreakToken()
	fresh, err := github.New(github.Config{BaseURL: gh.URL, Token: secretToken, Repo: "acme/hermes"})
	check("a second client", err)
	if _, err := fresh.Login(ctx); err == nil { // 401 Bad credentials
		t.Error("Login with a revoked token succeeded")
	}
	gh.FixToken()

	for _, v := range gh.Violations() {
		t.Errorf("not as GitHub documents it:\n%v", v)
	}
	if un := contract.Uncovered(); len(un) > 0 {
		t.Errorf("operations of the description that no 2xx answer exercised: %v", un)
	}
	statuses := map[int]bool{}
	for _, r := range gh.Requests() {
		statuses[r.Status] = true
	}
	for _, s := range []int{http.StatusOK, http.StatusCreated, http.StatusNotModified, http.StatusUnauthorized,
		http.StatusForbidden, http.StatusNotFound, http.StatusUnprocessableEntity, http.StatusTooManyRequests, http.StatusBadGateway} {
		if !statuses[s] {
			t.Errorf("no answer with status %d was checked", s)
		}
	}
	t.Logf("checked against GitHub's description: %v", contract.Covered())
}

// TestOpenAPIContractCatchesDrift shows that the check can fail: requests
// GitHub does not document are refused, and an answer that lacks what
// GitHub documents is reported.
func TestOpenAPIContractCatchesDrift(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1)
	gh, _ := withGitHub(t, f)
	if gh.Contract == nil {
		t.Fatal("the stand-in the integration tests start is not strict")
	}
	gh.ExpectViolations = true // asserted below, not printed
	for _, tc := range []struct{ method, path, body, want string }{
		{"GET", "repos/acme/hermes/pulls?state=merged", "", `parameter "state" in query`},
		{"GET", "repos/acme/hermes/branches", "", "not an operation in GitHub's description"},
		{"POST", "repos/acme/hermes/issues/1/comments", `{"text":"no body"}`, `property "body" is missing`},
	} {
		req, _ := http.NewRequest(tc.method, gh.URL+tc.path, strings.NewReader(tc.body))
		req.Header.Set("Authorization", "Bearer "+secretToken)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnprocessableEntity {
			t.Errorf("%s %s: %d, want 422", tc.method, tc.path, resp.StatusCode)
		}
	}
	violations := gh.Violations()
	if len(violations) != 3 {
		t.Fatalf("%d violations recorded, want 3: %v", len(violations), violations)
	}
	for i, want := range []string{`parameter "state" in query`, "not an operation in GitHub's description", `property "body" is missing`} {
		if !strings.Contains(violations[i].Error(), want) {
			t.Errorf("violation %d: %v\nwant it to say %q", i, violations[i], want)
		}
	}

	// An answer as the stand-in gave it before it followed the description.
	req, _ := http.NewRequest("GET", gh.URL+"repos/acme/hermes/pulls/1", nil)
	old := `{"number":1,"state":"open","title":"t","body":"","html_url":"https://github.example/acme/hermes/pull/1",` +
		`"url":"http://127.0.0.1/repos/acme/hermes/pulls/1","user":{"login":"wo-bot"},` +
		`"head":{"ref":"review/01","sha":"abc"},"base":{"ref":"main","sha":"def"},"merged":false,` +
		`"created_at":"2026-01-02T03:04:05Z","updated_at":"2026-01-02T03:04:05Z"}`
	err := gh.Contract.CheckResponse(req, nil, http.StatusOK, http.Header{"Content-Type": {"application/json"}}, []byte(old))
	for _, want := range []string{`"/id": property "id" is missing`, `"/_links"`, `"/head/repo"`, `"/user/avatar_url"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("the old pull request passed, or without %s: %v", want, err)
		}
	}
}

// checkStacksThroughClient drives GitHub's stacked pull requests and its
// merges through wo's client: a chain of three pull requests above
// review/01-openapi becomes a stack of two, then three; the bottom merges
// asynchronously; the rest is unstacked and merged the ordinary way.
func checkStacksThroughClient(t *testing.T, ctx context.Context, c *github.Client, f *fixture) {
	t.Helper()
	below := "review/01-openapi"
	var prs []int
	for i := 2; i <= 4; i++ {
		branch := fmt.Sprintf("review/%02d-openapi", i)
		gittest.Run(t, f.repo, "checkout", "-q", "-B", branch, "origin/"+below)
		writeFile(t, filepath.Join(f.repo, fmt.Sprintf("stacked%d.txt", i)), "part\n")
		gittest.Run(t, f.repo, "add", ".")
		gittest.Run(t, f.repo, "commit", "-q", "-m", "part "+branch)
		gittest.Run(t, f.repo, "push", "-q", "origin", "HEAD:refs/heads/"+branch)
		gittest.Run(t, f.repo, "fetch", "-q", "origin")
		pr, err := c.CreatePR(ctx, branch, below, "Part "+branch, "Part of a stack.")
		if err != nil {
			t.Fatalf("CreatePR %s: %v", branch, err)
		}
		prs = append(prs, pr.Number)
		below = branch
	}
	if on, err := c.StacksEnabled(ctx); err != nil || !on {
		t.Fatalf("StacksEnabled: %v %v", on, err)
	}
	s, err := c.CreateStack(ctx, prs[:2])
	if err != nil {
		t.Fatalf("CreateStack: %v", err)
	}
	if _, err := c.AddToStack(ctx, s.Number, prs[2:]); err != nil {
		t.Errorf("AddToStack: %v", err)
	}
	if got, err := c.GetStack(ctx, s.Number); err != nil || fmt.Sprint(got.Numbers()) != fmt.Sprint(prs) {
		t.Errorf("GetStack: %+v %v, want %v", got, err, prs)
	}
	if of, err := c.StackOf(ctx, prs[1]); err != nil || of == nil || of.Number != s.Number {
		t.Errorf("StackOf #%d: %+v %v", prs[1], of, err)
	}
	if pr, err := c.GetPR(ctx, prs[1]); err != nil || pr.Stack == nil || pr.Stack.Position != 2 || pr.Stack.Size != 3 || pr.Stack.Number != s.Number {
		t.Errorf("GetPR #%d's stack: %+v %v", prs[1], pr, err)
	}
	r, err := c.MergeAsync(ctx, prs[0], github.MergeRequest{Title: "Part 2", Message: "Its summary.", Method: github.MergeSquash})
	if err != nil || r.UUID == "" {
		t.Fatalf("MergeAsync: %+v %v", r, err)
	}
	waitFor(t, "the asynchronous merge", 10*time.Second, func() bool {
		r, err = c.MergeAsyncResult(ctx, prs[0], r.UUID)
		return err != nil || r.Done()
	})
	if err != nil || r.Status != github.MergeMerged || r.SHA == "" {
		t.Errorf("MergeAsyncResult: %+v %v", r, err)
	}
	if err := c.Unstack(ctx, s.Number); err != nil {
		t.Errorf("Unstack: %v", err)
	}
	if sha, err := c.Merge(ctx, prs[1], github.MergeRequest{Title: "Part 3", Method: github.MergeSquash}); err != nil || sha == "" {
		t.Errorf("Merge #%d: %q %v", prs[1], sha, err)
	}
}
