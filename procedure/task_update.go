package procedure

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/wo-runner/wo/github"
	"github.com/wo-runner/wo/workorder"
)

// TaskUpdate finishes a work order: it moves the task to in_review, records
// the review result, and checks the success criteria that wo can check.
type TaskUpdate struct{}

func newTaskUpdate() Action { return TaskUpdate{} }

// CriterionResult is one success criterion and what wo found.
type CriterionResult = workorder.CriterionResult

// Run checks the criteria and sets the status.
func (TaskUpdate) Run(ctx context.Context, sc *StepContext) (Outcome, error) {
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
	}
	return Outcome{
		Note:   fmt.Sprintf("task in review: %s; %d of %d success criteria checked by wo, the rest listed as not machine-checked", result, checked, len(results)),
		Status: workorder.StatusInReview,
		Record: func(s *workorder.State) { s.ReviewResult, s.CriteriaResults = result, results },
	}, nil
}

// Plan says what would be set.
func (TaskUpdate) Plan(sc *StepContext) string {
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
			n := len(sc.State().ReviewComments)
			r.Checked, r.Passed = true, n == 0
			r.How = fmt.Sprintf("%d actionable review comment(s) at the last check", n)
		}
		out = append(out, r)
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
	if pr.State != github.PROpen || pr.Base != base {
		return false, fmt.Sprintf("pull request #%d is %s against %s, not open against %s", n, pr.State, pr.Base, base)
	}
	return true, fmt.Sprintf("pull request #%d is open against %s", n, base)
}
