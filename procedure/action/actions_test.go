package action

import (
	"testing"

	"github.com/wo-runner/wo/workorder"
)

// What the table says of each action is what undo, stacks, restacks and
// the approval gate decide by.
func TestTheTableSaysWhatEachActionMakesAndAwaits(t *testing.T) {
	t.Parallel()
	steps := func(actions ...string) []workorder.Step {
		out := make([]workorder.Step, len(actions))
		for i, a := range actions {
			out[i] = workorder.Step{Step: i + 1, Action: a}
		}
		return out
	}
	table := DefaultActions()
	review := steps("create_worktree", "create_branch", "commit", "push", "create_pr", "wait_for_review", "check_review", "conditional_loop")
	for _, kind := range []FactKind{FactWorktree, FactAdopted, FactBranch, FactCommit, FactPushed, FactPullRequest} {
		if !table.Makes(review, kind) {
			t.Errorf("the review procedure makes no %s", kind)
		}
	}
	if table.Makes(steps("agent", "update_task", "check_review"), FactPullRequest) || table.Makes(steps("commit"), FactPushed) ||
		table.Makes(steps("no_such_action"), FactCommit) {
		t.Error("a procedure that opens no pull request, or pushes nothing, is said to")
	}
	if s, ok := table.AwaitingReview(review); !ok || s.Step != 6 {
		t.Errorf("the step a restack goes back to: %+v %v, want step 6", s, ok)
	}
	if _, ok := table.AwaitingReview(steps("create_pr", "check_review")); ok {
		t.Error("a procedure with no review wait has a step to go back to")
	}
	if !Ephemeral(steps("agent", "update_task")) || Ephemeral(steps("agent", "push")) || Ephemeral(steps("no_such_action")) {
		t.Error("ephemeral: only steps that change nothing in git or GitHub")
	}
	if does, ok := Describe("create_pr"); !ok || does == "" {
		t.Errorf("create_pr: %q %v", does, ok)
	}
	if _, ok := Describe("no_such_action"); ok {
		t.Error("an unknown action is described")
	}
}
