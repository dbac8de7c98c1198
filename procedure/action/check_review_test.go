package action

import (
	"fmt"
	"strings"
	"testing"

	"github.com/wo-runner/wo/integration/ghstandin"
	"github.com/wo-runner/wo/procedure/internal/fixture"
	"github.com/wo-runner/wo/reviewer"
	"github.com/wo-runner/wo/workorder"
)

var twoComments = [][]ghstandin.Comment{{
	{Path: "foundation/new.go", Line: 3, Body: "Export a comment on N."},
	{Path: "pkg/a.go", Line: 4, Body: "Name A after what it counts."},
}}

func commentLines(cs []workorder.ReviewComment) string {
	var out []string
	for _, c := range cs {
		out = append(out, fmt.Sprintf("%s %s:%d %s", c.Author, c.Path, c.Line, c.Body))
	}
	return strings.Join(out, "\n")
}

func TestReviewCheckRecordsTheNewComments(t *testing.T) {
	h := newStepContext(t, stepOpts{GitHub: true, Reviews: twoComments})
	h.openPR()
	// wo's own comment on the conversation never counts.
	gh, err := h.sc("check_review").GitHub()
	if err != nil {
		t.Fatal(err)
	}
	if err := gh.CommentOnce(h.ctx, 1, "wo's status note <!-- m -->", "<!-- m -->"); err != nil {
		t.Fatal(err)
	}
	out, err := h.run("check_review")
	if err != nil {
		t.Fatal(err)
	}
	st := h.recorded(out)
	want := "coderabbitai[bot] foundation/new.go:3 Export a comment on N.\ncoderabbitai[bot] pkg/a.go:4 Name A after what it counts."
	if got := commentLines(st.ReviewComments); got != want {
		t.Errorf("recorded comments:\n%s\nwant:\n%s", got, want)
	}
	for _, c := range st.ReviewComments {
		if c.ID == 0 || !strings.HasPrefix(c.URL, "https://github.example/comment/") {
			t.Errorf("comment without its ID or URL: %+v", c)
		}
	}
	if want := "2 actionable review comment(s) on #1"; out.Note != want {
		t.Errorf("note %q, want %q", out.Note, want)
	}
	// What was seen: the newest of each kind, wo's own comment included;
	// the watermark itself moves only once the comments are fixed.
	seen := st.ReviewSeen
	if seen.Review == 0 || seen.ReviewComment < st.ReviewComments[1].ID || seen.IssueComment == 0 {
		t.Errorf("review_seen %+v", seen)
	}
	if st.ReviewWatermark != (workorder.Watermark{}) {
		t.Errorf("the watermark moved at the check: %+v", st.ReviewWatermark)
	}

	// Checked again: the same comments, since none was handled yet.
	h.keep(out)
	again, err := h.run("check_review")
	if err != nil {
		t.Fatal(err)
	}
	if got := commentLines(h.recorded(again).ReviewComments); got != want {
		t.Errorf("second check:\n%s", got)
	}

	// Behind the watermark, the comments still count while their threads
	// are unresolved (issue 13: the watermark alone passed them).
	h.setState(func(s *stateT) { s.ReviewWatermark = s.ReviewSeen })
	after, err := h.run("check_review")
	if err != nil {
		t.Fatal(err)
	}
	if got := commentLines(h.recorded(after).ReviewComments); got != want {
		t.Errorf("unresolved threads behind the watermark:\n%s", got)
	}
	// Resolved, they no longer count; the reviewer's request for changes
	// on the head still does, with its summary.
	for _, th := range h.GH.Threads(fixture.Repo, 1) {
		h.GH.ResolveThread(fixture.Repo, 1, th.ID)
	}
	resolved, err := h.run("check_review")
	if err != nil {
		t.Fatal(err)
	}
	st = h.recorded(resolved)
	if got := commentLines(st.ReviewComments); got != "coderabbitai[bot] :0 2 actionable comment(s)." || len(st.ReviewThreads) != 0 {
		t.Errorf("after resolving: %q, threads %v", got, st.ReviewThreads)
	}
	if want := "1 actionable review comment(s) on #1; changes requested by coderabbitai[bot]"; resolved.Note != want {
		t.Errorf("note %q, want %q", resolved.Note, want)
	}
}

func TestReviewCheckIgnoresApprovalsAndWosOwnReviews(t *testing.T) {
	t.Run("an approval", func(t *testing.T) {
		h := newStepContext(t, stepOpts{GitHub: true})
		h.openPR()
		out, err := h.run("check_review")
		if err != nil {
			t.Fatal(err)
		}
		st := h.recorded(out)
		if len(st.ReviewComments) != 0 || st.ReviewSeen.Review == 0 {
			t.Errorf("after an approval: comments %v seen %+v", st.ReviewComments, st.ReviewSeen)
		}
	})
	t.Run("wo reviewing itself", func(t *testing.T) {
		h := newStepContext(t, stepOpts{GitHub: true, Reviews: twoComments, ReviewerLogin: "wo-bot"})
		h.openPR()
		out, err := h.run("check_review")
		if err != nil {
			t.Fatal(err)
		}
		if st := h.recorded(out); len(st.ReviewComments) != 0 {
			t.Errorf("wo's own comments were recorded:\n%s", commentLines(st.ReviewComments))
		}
	})
}

func TestReviewCheckBoundsLongComments(t *testing.T) {
	long := strings.Repeat("x", 5000)
	h := newStepContext(t, stepOpts{GitHub: true, Reviews: [][]ghstandin.Comment{{{Path: "pkg/a.go", Line: 1, Body: long}}}})
	h.openPR()
	out, err := h.run("check_review")
	if err != nil {
		t.Fatal(err)
	}
	cs := h.recorded(out).ReviewComments
	if len(cs) != 1 || cs[0].Body != long[:reviewer.MaxCommentBody]+" […]" {
		t.Errorf("a 5000-byte comment was kept as %d bytes", len(cs[0].Body))
	}
}

func TestReviewCheckErrors(t *testing.T) {
	h := newStepContext(t, stepOpts{GitHub: true})
	_, err := h.run("check_review")
	fixture.ErrContains(t, err, "task "+fixture.Key+" has no pull request yet: the create_pr step comes first")

	h.openPR()
	h.GH.BreakToken()
	h.r.gh = nil // a new client, as a new run would make
	_, err = h.run("check_review")
	fixture.ErrContains(t, err, "GitHub refused the token (401")
	if strings.Contains(err.Error(), fixture.Token) {
		t.Errorf("the error shows the token: %v", err)
	}
}

func TestReviewCheckPlan(t *testing.T) {
	h := newStepContext(t, stepOpts{})
	if got, want := h.plan("check_review"), "read the review threads, the reviewers' verdicts and review bodies on the pushed head and the conversation of the pull request; keep the unresolved threads and the new comments by awaited reviewers and repository writers"; got != want {
		t.Errorf("plan %q, want %q", got, want)
	}
}
