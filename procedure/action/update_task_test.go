package action

import (
	"fmt"
	"strings"
	"testing"

	"github.com/wo-runner/wo/procedure/internal/fixture"
	"github.com/wo-runner/wo/workorder"
)

var criteria = []any{"Worktree cleaned up", "PR created targeting code-review-base", "Task status updated to in_review",
	"All review comments addressed", "Code is readable"}

func criteriaLines(rs []workorder.CriterionResult) string {
	var out []string
	for _, r := range rs {
		out = append(out, fmt.Sprintf("%s|%v|%v|%s", r.Criterion, r.Checked, r.Passed, r.How))
	}
	return strings.Join(out, "\n")
}

func TestTaskUpdatePutsTheTaskInReview(t *testing.T) {
	h := newStepContext(t, stepOpts{GitHub: true, SuccessCriteria: criteria})
	h.upTo("push")
	h.must("push")
	h.must("create_pr")
	h.setState(func(s *stateT) {
		s.ReviewComments, s.ReviewVerdicts = []workorder.ReviewComment{}, map[string]string{"coderabbitai[bot]": "APPROVED"}
		s.ReviewCheckedSHA = s.PushedSHA
	})
	h.must("cleanup_worktree")
	out, err := h.run("update_task")
	if err != nil {
		t.Fatal(err)
	}
	st := h.recorded(out)
	want := strings.Join([]string{
		"Worktree cleaned up|true|true|the worktree directory is gone",
		"PR created targeting code-review-base|true|true|pull request #1 is open against code-review-base",
		"Task status updated to in_review|true|true|this step sets status in_review",
		"All review comments addressed|true|true|0 actionable review comment(s) at the last check",
		"Code is readable|false|false|not machine-checked: a person or reviewer judges it",
	}, "\n")
	if got := criteriaLines(st.CriteriaResults); got != want {
		t.Errorf("criteria results:\n%s\nwant:\n%s", got, want)
	}
	if st.ReviewResult != "no review comments at the last check" || out.Status != workorder.StatusInReview {
		t.Errorf("review_result %q status %q", st.ReviewResult, out.Status)
	}
	if want := "task in review: no review comments at the last check; 4 of 5 success criteria checked by wo, the rest listed as not machine-checked"; out.Note != want {
		t.Errorf("note %q, want %q", out.Note, want)
	}

	// Again: the same result.
	again, err := h.run("update_task")
	if err != nil || again.Note != out.Note {
		t.Errorf("rerun: %v, %q", err, again.Note)
	}
}

// The note a run ends with counts the success criteria only when there
// are some, and in words that are true of them.
func TestTaskUpdateSaysWhatItCheckedOfTheCriteria(t *testing.T) {
	for _, c := range []struct {
		name     string
		criteria []any
		want     string
	}{
		{"none", nil, "task in review: no review comments at the last check"},
		{"one wo cannot check", []any{"Code is readable"},
			"task in review: no review comments at the last check; its success criterion is not one wo can check: a person or reviewer judges it"},
		{"all checked", []any{"Worktree removed", "Task status updated to in_review"},
			"task in review: no review comments at the last check; all 2 success criteria checked by wo and met"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newStepContext(t, stepOpts{SuccessCriteria: c.criteria})
			out, err := h.run("update_task")
			if err != nil {
				t.Fatal(err)
			}
			if out.Note != c.want {
				t.Errorf("note %q, want %q", out.Note, c.want)
			}
		})
	}
}

func TestTaskUpdateRefusesUnmetCriteria(t *testing.T) {
	t.Run("the worktree is still there", func(t *testing.T) {
		h := newStepContext(t, stepOpts{SuccessCriteria: []any{"Worktree removed"}})
		h.must("create_worktree")
		_, err := h.run("update_task")
		fixture.ErrContains(t, err, `success criteria not met: "Worktree removed" (the worktree `+h.Worktree+` still exists)`)
	})
	t.Run("the PR was merged", func(t *testing.T) {
		h := newStepContext(t, stepOpts{GitHub: true, SuccessCriteria: []any{"PR open against the base"}})
		h.openPR()
		h.GH.Merge(fixture.Repo, 1)
		_, err := h.run("update_task")
		fixture.ErrContains(t, err, `"PR open against the base" (pull request #1 is closed against code-review-base, not open against code-review-base)`)
	})
	t.Run("no PR recorded", func(t *testing.T) {
		h := newStepContext(t, stepOpts{GitHub: true, SuccessCriteria: []any{"PR created"}})
		_, err := h.run("update_task")
		fixture.ErrContains(t, err, `"PR created" (no pull request is recorded in the state)`)
	})
	t.Run("no GitHub token", func(t *testing.T) {
		h := newStepContext(t, stepOpts{SuccessCriteria: []any{"PR created"}, State: map[string]any{"pr_number": 3}})
		_, err := h.run("update_task")
		fixture.ErrContains(t, err, `"PR created" (no GitHub token`)
	})
	t.Run("comments still open", func(t *testing.T) {
		h := newStepContext(t, stepOpts{SuccessCriteria: []any{"Review comments resolved"}})
		h.setState(func(s *stateT) {
			s.ReviewComments, s.PushedSHA, s.ReviewCheckedSHA = fixture.OpenComments(), "c0ffee", "c0ffee"
		})
		_, err := h.run("update_task")
		fixture.ErrContains(t, err, `"Review comments resolved" (2 actionable review comment(s) at the last check: no review of the head by any reviewer)`)
	})
	t.Run("threads open: counted, outdated, resolved", func(t *testing.T) {
		h := newStepContext(t, stepOpts{SuccessCriteria: []any{"Review comments resolved"}})
		h.setState(func(s *stateT) {
			s.ReviewComments, s.PushedSHA, s.ReviewCheckedSHA = []workorder.ReviewComment{}, "c0ffee", "c0ffee"
			s.ReviewVerdicts = map[string]string{"coderabbitai[bot]": "APPROVED"}
			s.ReviewThreads = []workorder.ReviewThread{{Path: "a.go", Counted: true}, {Path: "a.go", Outdated: true},
				{Path: "b.go", Outdated: true}, {Path: "c.go", Outdated: true, Counted: true}, {Path: "d.go"}}
		})
		_, err := h.run("update_task")
		fixture.ErrContains(t, err, `"Review comments resolved" (0 actionable review comment(s) at the last check: 2 unresolved thread(s); 2 outdated thread(s) open, not counted)`)
	})
	// No comment is not a clean review: the review must be there.
	noComments := func(s *stateT) {
		s.ReviewComments, s.PushedSHA, s.ReviewCheckedSHA = []workorder.ReviewComment{}, "c0ffee", "c0ffee"
	}
	approved := func(s *stateT) { noComments(s); s.ReviewVerdicts = map[string]string{"coderabbitai[bot]": "APPROVED"} }
	t.Run("a fix pushed since the last check", func(t *testing.T) {
		h := newStepContext(t, stepOpts{SuccessCriteria: []any{"Review comments resolved"}})
		h.setState(func(s *stateT) { approved(s); s.PushedSHA = "f1x0000000000" })
		_, err := h.run("update_task")
		fixture.ErrContains(t, err, `the last check was not of the pushed head f1x000000000)`)
	})
	t.Run("a thread still open", func(t *testing.T) {
		h := newStepContext(t, stepOpts{SuccessCriteria: []any{"Review comments resolved"}})
		h.setState(func(s *stateT) {
			approved(s)
			s.ReviewThreads = []workorder.ReviewThread{{ID: "T1", Path: "a.go", Line: 3, Counted: true}}
		})
		_, err := h.run("update_task")
		fixture.ErrContains(t, err, `(0 actionable review comment(s) at the last check: 1 unresolved thread(s))`)
	})
	t.Run("nobody reviewed the head", func(t *testing.T) {
		h := newStepContext(t, stepOpts{SuccessCriteria: []any{"Review comments resolved"}})
		h.setState(noComments)
		_, err := h.run("update_task")
		fixture.ErrContains(t, err, `"Review comments resolved" (0 actionable review comment(s) at the last check: no review of the head by any reviewer)`)
	})
	t.Run("a person reviewed, the awaited bot did not", func(t *testing.T) {
		h := newStepContext(t, stepOpts{SuccessCriteria: []any{"Review comments resolved"},
			Context: map[string]any{"reviewers": []any{"coderabbitai[bot]"}}})
		h.setState(func(s *stateT) { noComments(s); s.ReviewVerdicts = map[string]string{"alice": "APPROVED"} })
		_, err := h.run("update_task")
		fixture.ErrContains(t, err, `no review of the head by coderabbitai[bot])`)
	})
	t.Run("the bot named without [bot] and in other case reviewed", func(t *testing.T) {
		h := newStepContext(t, stepOpts{SuccessCriteria: []any{"Review comments resolved"},
			Context: map[string]any{"reviewers": []any{"CodeRabbitAI"}}})
		h.setState(func(s *stateT) { noComments(s); s.ReviewVerdicts = map[string]string{"coderabbitai[bot]": "APPROVED"} })
		if _, err := h.run("update_task"); err != nil {
			t.Errorf("the named reviewer's review did not count: %v", err)
		}
	})
}

func TestTaskUpdateReportsOpenCommentsWhenNotACriterion(t *testing.T) {
	h := newStepContext(t, stepOpts{})
	h.setState(func(s *stateT) { s.ReviewComments = fixture.OpenComments() })
	out, err := h.run("update_task")
	if err != nil {
		t.Fatal(err)
	}
	if got := h.recorded(out).ReviewResult; got != "2 review comment(s) open at the last check" {
		t.Errorf("review_result %q", got)
	}
}

func TestTaskUpdatePlan(t *testing.T) {
	h := newStepContext(t, stepOpts{})
	if got, want := h.plan("update_task"), "set status in_review, record the PR URL and the review result, check the success criteria"; got != want {
		t.Errorf("plan %q, want %q", got, want)
	}
}
