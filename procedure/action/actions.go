package action

import (
	"slices"
	"strings"

	"github.com/wo-runner/wo/workorder"
)

// Spec describes one action a procedure step may name.
type Spec struct {
	Name string
	// Does says in one line what the action does, for wo show and --dry-run.
	Does string
	// New makes the action's runner; nil for an action this build of wo
	// knows by name but cannot run.
	New func() Action
	// Mutates is true for actions that change git or GitHub: they make a
	// work order stateful, and wait behind its approval gate.
	Mutates bool
	// Forgets names the work_order.state fields (JSON names) the action
	// records and must resolve afresh when it runs again: wo reset to a
	// step before one of this action clears them.
	Forgets []string
	// Makes lists the kinds of facts the action may record (see Fact):
	// wo undo looks for a thing, and wo status counts a task in a stack,
	// only when the procedure has a step that makes it.
	Makes []FactKind
	// Reads lists the document fields the action reads, as paths under
	// work_order ("context.repo", "procedure[].title"; see
	// workorder.Fields): the reference says who reads a field, and
	// validation warns of a step field the step's action does not read.
	Reads []string
	// PushesBranch marks the step that publishes the work branch (not only
	// a fix onto it): wo undo looks at the remote branch of a task whose
	// procedure has one, or whose runs started any step that pushes.
	PushesBranch bool
	// AwaitsReview marks the step a restacked task goes back to, to wait
	// for a review of its new head.
	AwaitsReview bool
	// WritesWork marks a step that writes the work order's files: run
	// again on a branch with later commits that changed them, it finds
	// its result there or stops before undoing them (branch_work.go), and
	// wo reset --dry-run says so.
	WritesWork bool
}

// MayMake reports whether the action may record facts of the kind.
func (a Spec) MayMake(kind FactKind) bool { return slices.Contains(a.Makes, kind) }

// Actions is a table of the actions a procedure may name. An Engine runs
// its own table (Engine.Actions); validation, wo show and the docs read
// DefaultActions.
type Actions []Spec

// defaultActions is the table of this build of wo. Adding an action is one
// file (its runner) and one line here.
var defaultActions = Actions{
	{Name: "create_worktree", Does: "create a linked git worktree at <worktree_root>/<name> from base_branch", New: newCreateWorktree,
		Mutates: true, Forgets: []string{"base_sha"}, Makes: []FactKind{FactWorktree, FactAdopted},
		Reads: []string{"context.repo_path", "context.base_branch", "context.base_commit", "context.worktree_root", "inputs.worktree_name"}},
	{Name: "create_branch", Does: "create branch inputs.branch_name in the worktree", New: newCreateBranch,
		Mutates: true, Forgets: []string{"branch", "pushed_to"}, Makes: []FactKind{FactBranch},
		Reads: []string{"context.repo_path", "inputs.branch_name"}},
	{Name: "checkout_files", Does: "copy inputs.file_manifest from source_branch into the worktree and stage it", New: newCheckoutFiles, WritesWork: true,
		Mutates: true, Forgets: []string{"source_sha"},
		Reads: []string{"context.repo_path", "context.source_branch", "inputs.file_manifest", "inputs.delete_manifest", "inputs.file_parts"}},
	{Name: "commit", Does: "commit the staged changes with the templated message", New: newCommit,
		Mutates: true, Makes: []FactKind{FactCommit},
		Reads: []string{"context.repo_path", "inputs.pr_title", "procedure[].message"}},
	{Name: "push", Does: "push the branch to the remote", New: newPush,
		Mutates: true, Makes: []FactKind{FactPushed}, PushesBranch: true,
		Reads: []string{"context.repo_path", "context.remote", "inputs.branch_name"}},
	{Name: "create_pr", Does: "find the open pull request for head→base, else create it", New: newCreatePR,
		Mutates: true, Makes: []FactKind{FactPullRequest},
		Reads: []string{"context.repo", "context.base_branch", "inputs.branch_name", "inputs.pr_title", "procedure[].title", "procedure[].body"}},
	{Name: "wait_for_review", Does: "wait up to duration_minutes for a review to arrive", New: newWaitForReview,
		AwaitsReview: true,
		Reads:        []string{"context.repo", "context.reviewers", "procedure[].duration_minutes"}},
	{Name: "check_review", Does: "record the review comments that are new since the last check", New: newCheckReview,
		Forgets: []string{"review_uncounted", "review_comments", "review_threads", "review_verdicts", "changes_requested_by", "review_checked_sha"},
		Reads:   []string{"context.repo", "context.reviewers", "context.review", "context.review.nitpicks", "context.outdated_threads_count"}},
	{Name: "conditional_loop", Does: "if the condition holds, run fix_action and go back to loop_to", New: newConditionalLoop,
		Mutates: true, Forgets: []string{"fix_pushed", "loop_iterations"}, Makes: []FactKind{FactCommit, FactPushed},
		Reads: []string{"context.repo", "context.reviewers", "context.resolve_threads", "context.fix_paths", "context.fix_max_file_bytes", "inputs.file_manifest", "procedure[].condition", "procedure[].loop_to", "procedure[].fix_action", "procedure[].max_iterations"}},
	{Name: "cleanup_worktree", Does: "remove the worktree and its admin files; the branch stays", New: newCleanupWorktree, Mutates: true,
		Reads: []string{"context.repo_path", "context.worktree_root", "inputs.branch_name", "inputs.worktree_name"}},
	{Name: "update_task", Does: "set the task status, PR URL and review result", New: newUpdateTask,
		Reads: []string{"context.repo", "context.base_branch"}},
	{Name: "agent", Does: "run the agent command with the task's prompt and deliver its <deliverable>", New: newAgent,
		Reads: []string{"context.repo_path", "context.repo", "context.target_pr", "procedure[].delivery", "procedure[].delivery[].target", "procedure[].delivery[].content"}},
}

// Options are the validation options of a document this table runs: its
// action names, conditions and placeholders, who reads each field, and
// each action's advice.
func (t Actions) Options() workorder.Options {
	return workorder.Options{Actions: t.Names(), Conditions: Conditions(), LaterNames: LaterNames(), ReadBy: t.ReadBy, Advice: t.Advice}
}

// ReadBy names the actions that read the document field at path (a path
// of workorder.Fields), in table order.
func (t Actions) ReadBy(path string) []string {
	var names []string
	for _, a := range t {
		if slices.Contains(a.Reads, strings.TrimPrefix(path, "work_order.")) {
			names = append(names, a.Name)
		}
	}
	return names
}

// ReadBy names this build's actions that read the document field at path.
func ReadBy(path string) []string { return defaultActions.ReadBy(path) }

// DefaultActions returns a copy of this build's table, for an Engine that
// runs more (or other) actions than wo's own.
func DefaultActions() Actions { return append(Actions(nil), defaultActions...) }

// Lookup finds the named action.
func (t Actions) Lookup(name string) (Spec, bool) {
	for _, a := range t {
		if a.Name == name {
			return a, true
		}
	}
	return Spec{}, false
}

// Names lists the actions in table order.
func (t Actions) Names() []string {
	names := make([]string, len(t))
	for i, a := range t {
		names[i] = a.Name
	}
	return names
}

// Makes reports whether a procedure has a step whose action may record
// facts of the kind.
func (t Actions) Makes(steps []workorder.Step, kind FactKind) bool {
	return slices.ContainsFunc(steps, func(s workorder.Step) bool {
		a, _ := t.Lookup(s.Action)
		return a.MayMake(kind)
	})
}

// AwaitingReview returns the first step a restacked task goes back to, to
// wait for a review of its new head.
func (t Actions) AwaitingReview(steps []workorder.Step) (workorder.Step, bool) {
	for _, s := range steps {
		if a, _ := t.Lookup(s.Action); a.AwaitsReview {
			return s, true
		}
	}
	return workorder.Step{}, false
}

// Ephemeral reports whether a procedure changes nothing in git or GitHub
// (only reading, agent and report steps): such a work order never waits at
// the approval gate and never takes a worktree.
func (t Actions) Ephemeral(steps []workorder.Step) bool {
	for _, s := range steps {
		if a, ok := t.Lookup(s.Action); !ok || a.Mutates {
			return false
		}
	}
	return true
}

// LaterNames lists the placeholders that steps fill in while running, as
// the state registry (workorder.State's wo tags) says.
func LaterNames() []string { return workorder.LaterStateNames() }

// conditions are the conditions a conditional_loop may test.
var conditions = []string{"review_comments_exist"}

// Names lists this build's actions in procedure order.
func Names() []string { return defaultActions.Names() }

// Ephemeral reports whether a procedure of this build's actions changes
// nothing in git or GitHub (see Actions.Ephemeral).
func Ephemeral(steps []workorder.Step) bool { return defaultActions.Ephemeral(steps) }

// Describe returns what one of this build's actions does, and whether it
// is known.
func Describe(name string) (string, bool) {
	a, ok := defaultActions.Lookup(name)
	return a.Does, ok
}

// Conditions lists the known conditional_loop conditions.
func Conditions() []string { return append([]string(nil), conditions...) }
