// Package procedure runs a work order's steps: the engine that resumes,
// loops and writes state back, and the table of actions it knows.
package procedure

import "github.com/wo-runner/wo/workorder"

// ActionSpec describes one action a procedure step may name.
type ActionSpec struct {
	Name string
	// Does says in one line what the action does, for wo show and --dry-run.
	Does string
	// New makes the action's runner; nil for an action this build of wo
	// knows by name but cannot run.
	New func() Action
	// Mutates is true for actions that change git or GitHub: they make a
	// work order stateful, and wait behind its approval gate.
	Mutates bool
}

// actions is the one list of what a procedure can do. Validation, wo show
// and the engine all read it.
var actions = []ActionSpec{
	{"create_worktree", "create a linked git worktree at <worktree_root>/<name> from base_branch", newWorktreeCreate, true},
	{"create_branch", "create branch inputs.branch_name in the worktree", newBranchCreate, true},
	{"checkout_files", "copy inputs.file_manifest from source_branch into the worktree and stage it", newFilesCheckout, true},
	{"commit", "commit the staged changes with the templated message", newCommitCreate, true},
	{"push", "push the branch to the remote", newBranchPush, true},
	{"create_pr", "find the open pull request for head→base, else create it", newPullRequestCreate, true},
	{"wait_for_review", "wait up to duration_minutes for a review to arrive", newReviewWait, false},
	{"check_review", "record the review comments that are new since the last check", newReviewCheck, false},
	{"conditional_loop", "if the condition holds, run fix_action and go back to loop_to", newLoopConditional, true},
	{"cleanup_worktree", "remove the worktree and its admin files; the branch stays", newWorktreeCleanup, true},
	{"update_task", "set the task status, PR URL and review result", newTaskUpdate, false},
	{"agent", "run the agent command with the task's prompt and deliver its <deliverable>", newAgentStep, false},
}

// LaterNames lists the placeholders that steps fill in while running, as
// the state registry (workorder.State's wo tags) says.
func LaterNames() []string { return workorder.LaterStateNames() }

// conditions are the conditions a conditional_loop may test.
var conditions = []string{"review_comments_exist"}

// ActionNames lists the known actions in procedure order.
func ActionNames() []string {
	names := make([]string, len(actions))
	for i, a := range actions {
		names[i] = a.Name
	}
	return names
}

// Ephemeral reports whether a procedure changes nothing in git or GitHub
// (only reading, agent and report steps): such a work order never waits at
// the approval gate and never takes a worktree.
func Ephemeral(steps []workorder.Step) bool {
	for _, s := range steps {
		if a, ok := lookupAction(s.Action); !ok || a.Mutates {
			return false
		}
	}
	return true
}

func lookupAction(name string) (ActionSpec, bool) {
	for _, a := range actions {
		if a.Name == name {
			return a, true
		}
	}
	return ActionSpec{}, false
}

// Describe returns what an action does, and whether it is known.
func Describe(name string) (string, bool) {
	for _, a := range actions {
		if a.Name == name {
			return a.Does, true
		}
	}
	return "", false
}

// Conditions lists the known conditional_loop conditions.
func Conditions() []string { return append([]string(nil), conditions...) }
