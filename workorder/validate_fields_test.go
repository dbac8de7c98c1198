package workorder

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// baseTask is a valid work order with two steps; each case below changes
// one field of it and expects exactly the problems that field deserves.
const baseTask = `{"_key": "task_base", "title": "Base task", "status": "open",
	"description": "A task to hang the cases on",
	"work_order": {"version": "1.0", "objective": "Check one field at a time",
		"procedure": [{"step": 1, "action": "commit", "message": "m"}, {"step": 2, "action": "push"}]}}`

var baseOptions = Options{
	Actions:    []string{"commit", "push", "agent", "conditional_loop", "wait_for_review"},
	Conditions: []string{"has_comments"},
	// The engine says which actions read a field; two of its answers.
	ReadBy: func(path string) []string {
		return map[string][]string{"work_order.procedure[].duration_minutes": {"wait_for_review"},
			"work_order.procedure[].message": {"commit"}}[path]
	},
}

// patched is baseTask with patch merged in: objects merge field by field,
// anything else replaces what was there.
func patched(t *testing.T, patch string) Document {
	t.Helper()
	d := doc(t, baseTask)
	if patch != "" {
		mergeJSON(d, doc(t, patch))
	}
	return d
}

func mergeJSON(dst, patch map[string]any) {
	for k, v := range patch {
		if pm, ok := v.(map[string]any); ok {
			if dm, ok := dst[k].(map[string]any); ok {
				mergeJSON(dm, pm)
				continue
			}
		}
		dst[k] = v
	}
}

// findings lists a report's problems as "severity path: message", sorted.
func findings(r Report) []string {
	out := []string{}
	for _, p := range r.Problems {
		out = append(out, string(p.Severity)+" "+p.Path+": "+p.Message)
	}
	slices.Sort(out)
	return out
}

type fieldCase struct {
	patch string
	want  []string // every problem, as findings lists them
}

func checkFieldCases(t *testing.T, cases []fieldCase, opts Options) {
	t.Helper()
	for _, tc := range cases {
		got := findings(Validate(patched(t, tc.patch), opts))
		want := append([]string{}, tc.want...)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s:\n got  %q\n want %q", tc.patch, got, want)
		}
	}
}

func TestBaseTaskHasNoProblems(t *testing.T) {
	if got := findings(Validate(patched(t, ""), baseOptions)); len(got) != 0 {
		t.Fatalf("the base task of these tests: %q", got)
	}
}

func TestTopLevelFieldsEachGetTheirOwnProblem(t *testing.T) {
	checkFieldCases(t, []fieldCase{
		{`{"title": 5}`, []string{"error title: must be a string, not a number"}},
		{`{"labels": null}`, nil},
		{`{"labels": ["ui", "auth"]}`, nil},
		{`{"labels": ["ui", 7]}`, []string{"error labels[1]: must be a string, not a number"}},
		{`{"parent_key": ""}`, nil},
		{`{"parent_key": "task_epic"}`, nil},
		{`{"parent_key": "task_base"}`, []string{"error parent_key: a task cannot be its own parent"}},
	}, baseOptions)
}

func TestContextFieldsAreCheckedOneByOne(t *testing.T) {
	checkFieldCases(t, []fieldCase{
		{`{"work_order": {"context": {"repo": "octo/hello"}}}`, nil},
		{`{"work_order": {"context": {"repo": "hello"}}}`, []string{`error work_order.context.repo: "hello" is not a GitHub repository: use owner/name`}},
		{`{"work_order": {"context": {"repo": 5}}}`, []string{"error work_order.context.repo: must be a string, not a number"}},
		{`{"work_order": {"context": {"target_pr": null}}}`, nil},
		{`{"work_order": {"context": {"target_pr": 1}}}`, nil},
		{`{"work_order": {"context": {"target_pr": 0}}}`, []string{"error work_order.context.target_pr: must be a pull request number (a positive integer), not 0"}},
		{`{"work_order": {"context": {"repo_path": "/srv/repo"}}}`, nil},
		{`{"work_order": {"context": {"repo_path": "srv/repo"}}}`, []string{`error work_order.context.repo_path: "srv/repo" must be an absolute path`}},
		{`{"work_order": {"context": {"base_branch": "main", "source_branch": "feature/x"}}}`, nil},
		{`{"work_order": {"context": {"base_branch": "a..b"}}}`, []string{`error work_order.context.base_branch: "a..b" is not a branch name git accepts: it contains '..'`}},
		{`{"work_order": {"context": {"source_branch": "a b"}}}`, []string{`error work_order.context.source_branch: "a b" is not a branch name git accepts: it contains ' '`}},
		{`{"work_order": {"context": {"remote": "upstream"}}}`, nil},
		{`{"work_order": {"context": {"remote": "  "}}}`, []string{"error work_order.context.remote: must not be empty: omit it to use origin"}},
		{`{"work_order": {"context": {"reviewers": "coderabbitai[bot]"}}}`, nil},
		{`{"work_order": {"context": {"reviewers": ["coderabbitai[bot]", "alice"]}}}`, nil},
		{`{"work_order": {"context": {"reviewers": ["alice", ""]}}}`, []string{`error work_order.context.reviewers[1]: "" is not a GitHub login: name the reviewer as GitHub does (coderabbitai[bot], alice)`}},
		{`{"work_order": {"context": {"reviewers": ["@alice"]}}}`, []string{`error work_order.context.reviewers[0]: "@alice" is not a GitHub login: name the reviewer as GitHub does (coderabbitai[bot], alice)`}},
		{`{"work_order": {"context": {"reviewers": ["alice", 7]}}}`, []string{"error work_order.context.reviewers[1]: must be a string, not a number"}},
		{`{"work_order": {"context": {"reviewers": 7}}}`, []string{"error work_order.context.reviewers: must be an array of strings, not a number"}},
		{`{"work_order": {"context": {"resolve_threads": true, "outdated_threads_count": false}}}`, nil},
		{`{"work_order": {"context": {"resolve_threads": "yes"}}}`, []string{"error work_order.context.resolve_threads: must be true or false, not a string"}},
	}, baseOptions)
}

func TestInputFieldsAreCheckedOneByOne(t *testing.T) {
	checkFieldCases(t, []fieldCase{
		{`{"work_order": {"inputs": {"branch_name": "review/01-x"}}}`, nil},
		{`{"work_order": {"inputs": {"branch_name": "-x"}}}`, []string{`error work_order.inputs.branch_name: "-x" is not a branch name git accepts: it starts with '-'`}},
		{`{"work_order": {"inputs": {"pr_number": null}}}`, nil},
		{`{"work_order": {"inputs": {"pr_number": 1}}}`, nil},
		{`{"work_order": {"inputs": {"pr_number": 0}}}`, []string{"error work_order.inputs.pr_number: must be a positive integer, not 0"}},
		{`{"work_order": {"inputs": {"delete_manifest": ["old/a.go"]}}}`, nil},
		{`{"work_order": {"inputs": {"delete_manifest": ["old/a.go", "../b.go"]}}}`, []string{"error work_order.inputs.delete_manifest[1]: " + errText(CheckRelativePath("../b.go"))}},
		{`{"work_order": {"inputs": {"file_manifest": ["a.go", "b.go"], "file_count": 2}}}`, nil},
		{`{"work_order": {"inputs": {"file_manifest": ["a.go", "b.go"], "file_count": 3}}}`, []string{"warning work_order.inputs.file_count: says 3 but file_manifest lists 2 files"}},
		{`{"work_order": {"inputs": {"file_count": 3}}}`, nil},
		{`{"work_order": {"inputs": {"file_manifest": ["a.go", "b.go"], "file_parts": {"a.go": "1-3,7-12"}}}}`, nil},
		{`{"work_order": {"inputs": {"file_manifest": ["a.go"], "file_parts": {"c.go": "1-3"}}}}`, []string{`error work_order.inputs.file_parts["c.go"]: "c.go" is not in file_manifest: a part is of a file the task brings`}},
		{`{"work_order": {"inputs": {"file_manifest": ["a.go"], "file_parts": {"a.go": "3-1"}}}}`, []string{`error work_order.inputs.file_parts["a.go"]: line range "3-1" is not first-last, after the range before it`}},
		{`{"work_order": {"inputs": {"file_manifest": ["a.go"], "file_parts": {"a.go": 3}}}}`, []string{`error work_order.inputs.file_parts["a.go"]: must be line ranges such as "1-12,30-41"`}},
		{`{"work_order": {"inputs": {"line_count": 0}}}`, nil},
		{`{"work_order": {"inputs": {"line_count": -1}}}`, []string{"error work_order.inputs.line_count: must not be negative"}},
		// The worktree is <worktree_root>/<worktree_name>: a name that is
		// not one folder would leave the root, and wo run refuses it; a
		// document problem that wo validate --offline must see.
		{`{"work_order": {"inputs": {"worktree_name": "pr-01-x"}}}`, nil},
		{`{"work_order": {"inputs": {"worktree_name": "../elsewhere"}}}`, []string{`error work_order.inputs.worktree_name: "../elsewhere" must be one folder's name, such as pr-01-foundation: the worktree is <worktree_root>/<worktree_name>`}},
		{`{"work_order": {"inputs": {"worktree_name": ".."}}}`, []string{`error work_order.inputs.worktree_name: ".." must be one folder's name, such as pr-01-foundation: the worktree is <worktree_root>/<worktree_name>`}},
		{`{"work_order": {"inputs": {"worktree_name": "a\\b"}}}`, []string{`error work_order.inputs.worktree_name: "a\\b" must be one folder's name, such as pr-01-foundation: the worktree is <worktree_root>/<worktree_name>`}},
	}, baseOptions)
}

func errText(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

func TestDependencyListsAreChecked(t *testing.T) {
	checkFieldCases(t, []fieldCase{
		{`{"work_order": {"dependencies": {"blocked_by": null, "blocks": null}}}`, nil},
		{`{"work_order": {"dependencies": {"blocked_by": ["task_a"], "blocks": ["task_b"]}}}`, nil},
		{`{"work_order": {"dependencies": {"blocked_by": ["task_base"]}}}`, []string{"error work_order.dependencies.blocked_by[0]: a task cannot depend on itself"}},
		{`{"work_order": {"dependencies": {"blocks": ["task_a", "task_base"]}}}`, []string{"error work_order.dependencies.blocks[1]: a task cannot depend on itself"}},
	}, baseOptions)
}

func TestADependencyCycleThroughOtherTasksIsAnError(t *testing.T) {
	// task_base waits for task_a, which waits for task_base.
	others := map[string]Dependencies{"task_a": {BlockedBy: []string{"task_base"}}}
	opts := baseOptions
	opts.Lookup = func(k string) (Dependencies, bool) { d, ok := others[k]; return d, ok }
	got := findings(Validate(patched(t, `{"work_order": {"dependencies": {"blocked_by": ["task_a"]}}}`), opts))
	want := []string{"error work_order.dependencies.blocked_by: dependency cycle: task_base → task_a → task_base"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	// The same dependency without the way back is fine.
	others["task_a"] = Dependencies{}
	if got := findings(Validate(patched(t, `{"work_order": {"dependencies": {"blocked_by": ["task_a"]}}}`), opts)); len(got) != 0 {
		t.Errorf("no cycle, yet: %q", got)
	}
}

// steps replaces the base procedure with step 1 (commit) and the given
// second step.
func steps(second string) string {
	return `{"work_order": {"procedure": [{"step": 1, "action": "commit", "message": "m"}, ` + second + `]}}`
}

func TestStepFieldsAtTheirLimits(t *testing.T) {
	loop := func(extra string) string {
		return steps(`{"step": 2, "action": "conditional_loop", "condition": "has_comments"` + extra + `}`)
	}
	checkFieldCases(t, []fieldCase{
		{loop(`, "loop_to": 1`), nil},
		{loop(`, "loop_to": 0`), []string{"error work_order.procedure[1].loop_to: is 0 but must point to an earlier existing step (1..1)"}},
		{loop(`, "loop_to": 2`), []string{"error work_order.procedure[1].loop_to: is 2 but must point to an earlier existing step (1..1)"}},
		{steps(`{"step": 2, "action": "push", "duration_minutes": null}`), nil},
		{steps(`{"step": 2, "action": "wait_for_review", "duration_minutes": 0.5}`), nil},
		{steps(`{"step": 2, "action": "wait_for_review", "duration_minutes": 0}`), []string{"error work_order.procedure[1].duration_minutes: must be a positive number of minutes, not 0"}},
		{steps(`{"step": 2, "action": "wait_for_review", "duration_minutes": "5"}`), []string{`error work_order.procedure[1].duration_minutes: must be a positive number of minutes, not "5"`}},
		// A field the step's action does not read is pointed out.
		{steps(`{"step": 2, "action": "push", "duration_minutes": 5}`), []string{"warning work_order.procedure[1].duration_minutes: a push step does not read duration_minutes (only wait_for_review steps do): it is ignored"}},
		{steps(`{"step": 2, "action": "wait_for_review", "duration_minutes": 5}`), nil},
		{steps(`{"step": 2, "action": "wait_for_review", "duration_minutes": 10080}`), nil},
		{steps(`{"step": 2, "action": "wait_for_review", "duration_minutes": 10080.5}`), []string{"error work_order.procedure[1].duration_minutes: is 10080.5 minutes, more than a week (10080): wait that long with wo run --review-wait 0 and a review event instead"}},
		{steps(`{"step": 2, "action": "wait_for_review", "duration_minutes": 1e12}`), []string{"error work_order.procedure[1].duration_minutes: is 1e+12 minutes, more than a week (10080): wait that long with wo run --review-wait 0 and a review event instead"}},
		// A field no action is said to read may be on any step.
		{steps(`{"step": 2, "action": "push", "description": "the push"}`), nil},
		{steps(`{"step": 2, "action": "agent", "delivery": null}`), nil},
		{steps(`{"step": 2, "action": "agent", "delivery": [{"target": "pr_comment", "content": "done"}]}`), nil},
		{steps(`{"step": 2, "action": "agent", "delivery": [{"target": "slack"}]}`), []string{`error work_order.procedure[1].delivery[0].target: "slack" is not a delivery target: use pr_body, pr_comment, task_note`}},
		{steps(`{"step": 2, "action": "push", "max_iterations": null}`), nil},
		{loop(`, "loop_to": 1, "max_iterations": 1`), nil},
		{loop(`, "loop_to": 1, "max_iterations": 0`), []string{"error work_order.procedure[1].max_iterations: must be at least 1"}},
		// A whole number written with a fraction is still that number.
		{steps(`{"step": 2.0, "action": "push"}`), nil},
		{steps(`{"step": 2.5, "action": "push"}`), []string{"error work_order.procedure[1].step: must be a whole number, not 2.5"}},
	}, baseOptions)
}

func TestCurrentStepRunsFromZeroToTheLastStep(t *testing.T) {
	checkFieldCases(t, []fieldCase{
		{`{"work_order": {"state": {"current_step": 0}}}`, nil},
		{`{"work_order": {"state": {"current_step": 2}}}`, nil},
		{`{"work_order": {"state": {"current_step": 3}}}`, []string{"error work_order.state.current_step: is 3 but must be 0 (not started) to 2 (the last step)"}},
		// Large numbers are repeated as written, not rounded through a float.
		{`{"work_order": {"state": {"current_step": 9007199254740993}}}`, []string{"error work_order.state.current_step: is 9007199254740993 but must be 0 (not started) to 2 (the last step)"}},
	}, baseOptions)
}

func TestApprovalFieldsAreChecked(t *testing.T) {
	checkFieldCases(t, []fieldCase{
		{`{"work_order": {"approval": null}}`, nil},
		{`{"work_order": {"approval": {"required": true, "confidence": 0}}}`, nil},
		{`{"work_order": {"approval": {"required": false, "confidence": 1}}}`, nil},
		{`{"work_order": {"approval": {"required": "yes"}}}`, []string{`error work_order.approval.required: must be true or false, not "yes"`}},
		{`{"work_order": {"approval": {"confidence": 1.5}}}`, []string{"error work_order.approval.confidence: is 1.5 but a confidence is from 0 to 1"}},
		{`{"work_order": {"approval": {"confidence": -0.1}}}`, []string{"error work_order.approval.confidence: is -0.1 but a confidence is from 0 to 1"}},
	}, baseOptions)
}

func TestStepTextMayUseNamesThatStepsFillInLater(t *testing.T) {
	d := patched(t, steps(`{"step": 2, "action": "commit", "message": "pushed <pr_number>"}`))
	if got := findings(Validate(d, baseOptions)); len(got) != 1 || !strings.Contains(got[0], "<pr_number>") {
		t.Errorf("an unknown name without LaterNames: %q", got)
	}
	opts := baseOptions
	opts.LaterNames = []string{"pr_number"}
	if got := findings(Validate(d, opts)); len(got) != 0 {
		t.Errorf("pr_number is filled in later, yet: %q", got)
	}
}

func TestTaskContextLimitsAreInclusive(t *testing.T) {
	tc := func(fields string) string { return `{"task_context": {` + fields + `}}` }
	list := func(n, length int, prefix string) string {
		items := make([]string, n)
		for i := range items {
			s := fmt.Sprintf("%s%02d", prefix, i)
			items[i] = s + strings.Repeat("x", length-len(s))
		}
		b, _ := json.Marshal(items)
		return string(b)
	}
	checkFieldCases(t, []fieldCase{
		{tc(`"background_context": "` + strings.Repeat("b", 5000) + `"`), nil},
		{tc(`"background_context": "` + strings.Repeat("b", 50) + `"`), nil},
		{tc(`"background_context": "` + strings.Repeat("b", 49) + `"`), []string{"warning task_context.background_context: Background context is very short (<50 chars). Consider adding more detail."}},
		{tc(`"expected_deliverables": {"items": ` + list(20, 10, "Deliver") + `}`), nil},
		{tc(`"expected_deliverables": {"items": ` + list(1, 200, "Deliver") + `}`), nil},
		{tc(`"expected_deliverables": {"items": ["Ship it ok"]}`), nil},
		{tc(`"expected_deliverables": {"items": ["Ship it!"]}`), []string{`warning task_context.expected_deliverables.items[0]: Deliverable is very short: "Ship it!". Consider being more specific.`}},
		{tc(`"success_criteria": {"criteria": ` + list(15, 10, "pass") + `}`), nil},
		{tc(`"constraints": {"rules": ` + list(15, 10, "never") + `}`), nil},
		{tc(`"relevant_files": ` + list(50, 8, "f")), nil},
		{tc(`"related_documentation": ` + list(20, 30, "https://example.com/")), nil},
	}, baseOptions)
}

func TestRelevantFilesResolveAgainstTheRepository(t *testing.T) {
	repo := t.TempDir()
	if err := os.WriteFile(filepath.Join(repo, "here.go"), []byte("package x"), 0o644); err != nil {
		t.Fatal(err)
	}
	d := patched(t, `{"work_order": {"context": {"repo_path": "`+repo+`"}},
		"task_context": {"relevant_files": ["here.go", "gone.go"]}}`)
	want := []string{`warning task_context.relevant_files: File not found: "` + filepath.Join(repo, "gone.go") + `" - will be skipped by agents`}
	if got := findings(Validate(d, baseOptions)); !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestInvalidErrorNamesDocumentsWithoutAKey(t *testing.T) {
	d := patched(t, "")
	delete(d, "_key")
	err := error(&InvalidError{Reports: []Report{Validate(d, baseOptions)}})
	var inv *InvalidError
	if !errors.As(err, &inv) || err.Error() != "invalid document: 1 problem(s)\n  (no _key) _key: required" {
		t.Errorf("message %q", err)
	}
}
