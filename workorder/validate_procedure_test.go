package workorder

import (
	"slices"
	"strings"
	"testing"
)

func TestDescriptionAndObjectiveLengthsAreInclusive(t *testing.T) {
	text := func(n int) string { return strings.Repeat("d", n) }
	checkFieldCases(t, []fieldCase{
		{`{"description": "` + text(10) + `"}`, nil},
		{`{"description": "` + text(500) + `"}`, nil},
		{`{"description": "` + text(9) + `"}`, []string{"error description: Must be at least 10 characters"}},
		{`{"description": "` + text(501) + `"}`, []string{"error description: Must be at most 500 characters"}},
		{`{"work_order": {"objective": "` + text(9) + `"}}`, []string{"error work_order.objective: Must be at least 10 characters"}},
		{`{"work_order": {"version": "2.0"}}`, []string{`error work_order.version: "2.0" is not a version this wo reads: use "1.0"`}},
		{`{"work_order": {"version": 1}}`, []string{`error work_order.version: 1 is not a version this wo reads: use "1.0"`}},
	}, baseOptions)
}

func TestWorktreeRootMustBeASeparateAbsoluteFolder(t *testing.T) {
	ctx := func(fields string) string { return `{"work_order": {"context": {` + fields + `}}}` }
	checkFieldCases(t, []fieldCase{
		{ctx(`"repo_path": "/srv/repo", "worktree_root": "/srv/worktrees"`), nil},
		{ctx(`"worktree_root": "worktrees"`), []string{`error work_order.context.worktree_root: "worktrees" must be an absolute path`}},
		{ctx(`"worktree_root": "/srv/repo/.git/wt"`), []string{`error work_order.context.worktree_root: "/srv/repo/.git/wt" is inside a .git directory: choose a folder outside the repository's metadata`}},
		{ctx(`"repo_path": "/srv/repo", "worktree_root": "/srv/repo/"`), []string{`error work_order.context.worktree_root: "/srv/repo/" is the repository itself: choose a separate folder`}},
	}, baseOptions)
}

func TestStepsAreNumberedAndNameKnownActionsAndConditions(t *testing.T) {
	known := "commit, push, agent, conditional_loop, wait_for_review"
	checkFieldCases(t, []fieldCase{
		{steps(`{"action": "push"}`), []string{"error work_order.procedure[1].step: required: steps are numbered 1..n in order (this is step 2)"}},
		{steps(`{"step": 3, "action": "push"}`), []string{"error work_order.procedure[1].step: is 3 but steps must be numbered 1..n in order: expected 2"}},
		{steps(`{"step": 2}`), []string{"error work_order.procedure[1].action: required: one of " + known}},
		{steps(`{"step": 2, "action": "deploy"}`), []string{`error work_order.procedure[1].action: unknown action "deploy"; known actions are ` + known}},
		{steps(`{"step": 2, "action": "conditional_loop", "condition": "sunny", "loop_to": 1}`), []string{`error work_order.procedure[1].condition: unknown condition "sunny"; known conditions are has_comments`}},
		// What an action cannot run without is the action's to say
		// (procedure's Advise): the shape alone is valid.
		{steps(`{"step": 2, "action": "conditional_loop"}`), nil},
		{steps(`{"step": 2, "action": "push", "command": "git push origin <nowhere>"}`), []string{
			"error work_order.procedure[1].command: " + errText(func() error { _, err := NewScope(Document{}).Render("git push origin <nowhere>"); return err }())}},
		{steps(`{"step": 2, "action": "agent", "delivery": "pr_body"}`), []string{"error work_order.procedure[1].delivery: must be an array of {target, content}, not a string"}},
	}, baseOptions)
}

func TestStateFieldsAreCheckedAgainstTheProcedure(t *testing.T) {
	state := func(fields string) string { return `{"work_order": {"state": {` + fields + `}}}` }
	checkFieldCases(t, []fieldCase{
		{state(`"version": 1, "completed_steps": [1, 2], "review_iterations": 0, "pr_number": 1`), nil},
		{state(`"version": 2`), []string{"error work_order.state.version: is 2 but this wo reads state versions 1..1: upgrade wo"}},
		{state(`"completed_steps": [0, 3]`), []string{
			"error work_order.state.completed_steps[0]: is 0 but the procedure has steps 1..2",
			"error work_order.state.completed_steps[1]: is 3 but the procedure has steps 1..2"}},
		{state(`"completed_steps": [1, 1]`), []string{"error work_order.state.completed_steps[1]: step 1 is listed twice"}},
		{state(`"review_iterations": -1`), []string{"error work_order.state.review_iterations: must not be negative"}},
		{state(`"pr_number": 0`), []string{"error work_order.state.pr_number: must be a positive integer, not 0"}},
		{state(`"lease": {"holder": "runner-1", "expires_at": "2026-01-02T03:04:05Z"}`), nil},
		{state(`"lease": {"expires_at": "2026-01-02T03:04:05Z"}`), []string{"error work_order.state.lease.holder: must be a string"}},
		{state(`"lease": {"holder": "runner-1", "expires_at": "tomorrow"}`), []string{`error work_order.state.lease.expires_at: "tomorrow" is not an RFC 3339 time`}},
	}, baseOptions)
}

func TestDependenciesOnOtherTasksWarnWhereTheSidesDisagree(t *testing.T) {
	others := map[string]Dependencies{
		"task_agrees":  {Blocks: []string{"task_base"}},
		"task_waits":   {BlockedBy: []string{"task_base"}},
		"task_silent":  {},
		"task_listing": {Blocks: []string{"task_other"}},
	}
	opts := baseOptions
	opts.Lookup = func(k string) (Dependencies, bool) { d, ok := others[k]; return d, ok }
	deps := func(fields string) string { return `{"work_order": {"dependencies": {` + fields + `}}}` }
	checkFieldCases(t, []fieldCase{
		{deps(`"blocked_by": ["task_agrees"]`), nil},
		{deps(`"blocked_by": ["task_silent"]`), nil},
		{deps(`"blocked_by": ["task_listing"]`), []string{`warning work_order.dependencies.blocked_by[0]: task "task_listing" lists what it blocks without "task_base"; wo honours both sides, so this task waits for it`}},
		{deps(`"blocked_by": ["task_none"]`), []string{`error work_order.dependencies.blocked_by[0]: names task "task_none", which does not exist`}},
		{deps(`"blocks": ["task_none"]`), []string{`warning work_order.dependencies.blocks[0]: names task "task_none", which does not exist yet: it will wait for this task once it does`}},
		{deps(`"blocks": ["task_silent"]`), []string{`warning work_order.dependencies.blocks[0]: task "task_silent" does not list "task_base" in its blocked_by and is not in the same epic, so wo will not make it wait: add "task_base" to its blocked_by`}},
		{deps(`"blocks": ["task_waits"]`), nil},
	}, opts)
}

func TestABlockerLetsItsDependentStartWhenDoneOrPushedInAStack(t *testing.T) {
	dependent := patched(t, `{"work_order": {"context": {"split_mode": "stacked"}}}`)
	cases := []struct {
		blocker string
		want    bool
	}{
		{`{"status": "closed"}`, true},
		{`{"work_order": {"state": {"pr_state": "merged"}}}`, true},
		{`{"work_order": {"state": {"pushed_sha": "abc123"}}}`, true},
		{`{"status": "in_review"}`, false},
	}
	for _, tc := range cases {
		if got := BlockerSatisfied(dependent, patched(t, tc.blocker)); got != tc.want {
			t.Errorf("stacked, blocker %s: %v", tc.blocker, got)
		}
	}
	if BlockerSatisfied(patched(t, ""), patched(t, `{"work_order": {"state": {"pushed_sha": "abc123"}}}`)) {
		t.Error("a pushed blocker satisfies a dependent that is not stacked")
	}
	if BlockerSatisfied(dependent, nil) {
		t.Error("a missing blocker is satisfied")
	}
	task, err := Parse(patched(t, ""))
	if err != nil {
		t.Fatal(err)
	}
	if s, ok := task.WorkOrder.StepByNumber(2); !ok || s.Action != "push" {
		t.Errorf("step 2: %+v %v", s, ok)
	}
	if _, ok := task.WorkOrder.StepByNumber(3); ok {
		t.Error("step 3 of two")
	}
}

func TestTasksJSONContextFromMustNameATaskOfTheFile(t *testing.T) {
	m := example(t)
	taskOf(m, "TEST-001")["context_from"] = []any{"IMPL-001", "GHOST-001"}
	_, err := ParseTasksFile("tasks.json", encoded(t, m))
	inv, ok := err.(*InvalidError)
	if !ok {
		t.Fatalf("accepted: %v", err)
	}
	got := []string{}
	for _, p := range inv.Reports[0].Errors() {
		got = append(got, p.String())
	}
	if want := []string{`tasks.TEST-001.context_from: "GHOST-001" is not a task of this file`}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}
