package action

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/wo-runner/wo/github"
	"github.com/wo-runner/wo/internal/gitname"
	"github.com/wo-runner/wo/reviewer"
	"github.com/wo-runner/wo/workorder"
)

// UpdateTask finishes a work order: it moves the task to in_review, records
// the review result, and checks the success criteria that wo can check.
type UpdateTask struct{}

func newUpdateTask() Action { return UpdateTask{} }

// CriterionResult is one success criterion and what wo found.
type CriterionResult = workorder.CriterionResult

// Run checks the criteria and sets the status.
func (UpdateTask) Run(ctx context.Context, sc *StepContext) (Outcome, error) {
	results := checkCriteria(ctx, sc)
	var failed []string
	checked := 0
	for _, r := range results {
		if r.Checked {
			checked++
			if !r.Passed {
				failed = append(failed, fmt.Sprintf("%q (%s)", r.Criterion, r.How))
			}
		}
	}
	if len(failed) > 0 {
		return Outcome{}, fmt.Errorf("success criteria not met: %s", strings.Join(failed, "; "))
	}
	result := "no review comments at the last check"
	if n := len(sc.State().ReviewComments); n > 0 {
		result = fmt.Sprintf("%d review comment(s) open at the last check", n)
	} else if by := sc.State().ChangesRequestedBy; len(by) > 0 {
		result = "changes requested by " + strings.Join(by, ", ") + " at the last check"
	}
	st := sc.State()
	st.ReviewResult, st.CriteriaResults = result, results
	return Outcome{
		Note:   "task in review: " + result + criteriaNote(checked, len(results)),
		Status: workorder.StatusInReview,
		State:  &st,
	}, nil
}

// criteriaNote says how many of the success criteria wo checked (all of
// them met, or the step would have failed), and nothing when there are none.
func criteriaNote(checked, total int) string {
	switch {
	case total == 0:
		return ""
	case total == 1 && checked == 1:
		return "; its success criterion checked by wo and met"
	case total == 1:
		return "; its success criterion is not one wo can check: a person or reviewer judges it"
	case checked == 0:
		return fmt.Sprintf("; none of the %d success criteria is one wo can check: a person or reviewer judges them", total)
	case checked == total:
		return fmt.Sprintf("; all %d success criteria checked by wo and met", total)
	}
	return fmt.Sprintf("; %d of %d success criteria checked by wo, the rest listed as not machine-checked", checked, total)
}

// Plan says what would be set.
func (UpdateTask) Plan(sc *StepContext) string {
	return "set status in_review, record the PR URL and the review result, check the success criteria"
}

// checkCriteria matches each criterion with a check wo can make; the others
// are reported as not machine-checked, never guessed.
func checkCriteria(ctx context.Context, sc *StepContext) []CriterionResult {
	var out []CriterionResult
	for _, c := range sc.Task().WorkOrder.SuccessCriteria {
		lc := strings.ToLower(c)
		r := CriterionResult{Criterion: c, How: "not machine-checked: a person or reviewer judges it"}
		switch {
		case strings.Contains(lc, "worktree") && (strings.Contains(lc, "clean") || strings.Contains(lc, "remov")):
			r.Checked = true
			path := ""
			if p := sc.State().WorktreePath; p != nil {
				path = *p
			}
			if path == "" {
				if w, err := sc.Worktree(); err == nil {
					path = w.Path
				}
			}
			_, err := os.Stat(path)
			r.Passed = path == "" || os.IsNotExist(err)
			r.How = "the worktree directory is gone"
			if !r.Passed {
				r.How = "the worktree " + path + " still exists"
			}
		case strings.Contains(lc, "pr ") && (strings.Contains(lc, "creat") || strings.Contains(lc, "target") || strings.Contains(lc, "open")):
			r.Checked = true
			r.Passed, r.How = prCheck(ctx, sc)
		case strings.Contains(lc, "status") && strings.Contains(lc, string(workorder.StatusInReview)):
			r.Checked, r.Passed, r.How = true, true, "this step sets status in_review"
		case strings.Contains(lc, "comment") && sc.State().ReviewComments != nil:
			r.Checked = true
			r.Passed, r.How = reviewCriterion(sc.State(), awaitedReviewers(sc))
		}
		out = append(out, r)
	}
	return out
}

// reviewCriterion is "no unresolved comments": a check of the pushed head
// (not of a commit a fix has replaced since), a review of it by the
// awaited reviewers (by anyone, when none is named), and at that check no
// unresolved thread that counts, no new conversation comment, and no
// awaited reviewer asking for changes on the head.
func reviewCriterion(st workorder.State, awaited []string) (bool, string) {
	counted, outdated := 0, 0
	for _, t := range st.ReviewThreads {
		switch {
		case t.Counted:
			counted++
		case t.Outdated:
			outdated++
		}
	}
	n := len(st.ReviewComments)
	how := fmt.Sprintf("%d actionable review comment(s) at the last check", n)
	var more []string
	stale := st.ReviewCheckedSHA == "" || st.ReviewCheckedSHA != st.PushedSHA
	if stale {
		more = append(more, fmt.Sprintf("the last check was not of the pushed head %s", gitname.Short(st.PushedSHA)))
	}
	missing := unreviewed(st, awaited)
	if len(missing) > 0 {
		more = append(more, "no review of the head by "+strings.Join(missing, ", "))
	}
	if counted > 0 {
		more = append(more, fmt.Sprintf("%d unresolved thread(s)", counted))
	}
	if len(st.ChangesRequestedBy) > 0 {
		more = append(more, "changes requested on the head by "+strings.Join(st.ChangesRequestedBy, ", "))
	}
	if outdated > 0 {
		more = append(more, fmt.Sprintf("%d outdated thread(s) open, not counted", outdated))
	}
	if len(more) > 0 {
		how += ": " + strings.Join(more, "; ")
	}
	return !stale && n == 0 && counted == 0 && len(missing) == 0 && len(st.ChangesRequestedBy) == 0, how
}

// unreviewed are the awaited reviewers done with none of the head ("any
// reviewer" when none is named and nobody reviewed it): done is a verdict
// on the head, or a reviewer the wait found done with it without posting a
// review (a clean re-review by CodeRabbit posts none).
func unreviewed(st workorder.State, awaited []string) []string {
	done := func(match func(string) bool) bool {
		for who := range st.ReviewVerdicts {
			if match(who) {
				return true
			}
		}
		for _, s := range st.Reviewers {
			if s.Head == st.PushedSHA && s.Kind == string(reviewer.Reviewed) && match(s.Login) {
				return true
			}
		}
		return false
	}
	if len(awaited) == 0 {
		if !done(func(string) bool { return true }) {
			return []string{"any reviewer"}
		}
		return nil
	}
	var out []string
	for _, name := range awaited {
		if !done(reviewer.For(name).Is) {
			out = append(out, name)
		}
	}
	return out
}

// prCheck verifies that the recorded PR is open against the base branch.
func prCheck(ctx context.Context, sc *StepContext) (bool, string) {
	n := sc.PRNumber()
	if n == 0 {
		return false, "no pull request is recorded in the state"
	}
	client, err := sc.GitHub()
	if err != nil {
		return false, err.Error()
	}
	pr, err := client.GetPR(ctx, n)
	if err != nil {
		return false, err.Error()
	}
	base := sc.BaseBranch()
	if restacked := sc.State().StackBase; restacked != "" {
		base = restacked // wo sync retargeted it when the PR under it merged
	}
	if pr.State != github.PROpen || pr.Base != base {
		return false, fmt.Sprintf("pull request #%d is %s against %s, not open against %s", n, pr.State, pr.Base, base)
	}
	return true, fmt.Sprintf("pull request #%d is open against %s", n, base)
}
