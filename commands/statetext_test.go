package commands

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/wo-runner/wo/workorder"
)

// fullState is a work_order.state with every field set, at every level:
// what the text views must word for a person. TestFullStateSetsEveryField
// fails when the state gains a field this does not set, so that a new
// field is seen in every view before it ships.
func fullState() workorder.State {
	pr := "https://github.com/acme/hermes/pull/12"
	wt := "/tmp/hermes-review/task_hermes_review_pipeline_01_foundation"
	sha := func(c string) string { return strings.Repeat(c, 40) }
	return workorder.State{
		RunState: workorder.RunState{
			Version:         workorder.StateVersion,
			CurrentStep:     9,
			CompletedSteps:  []int{1, 2, 3, 4, 5, 6, 7, 8, 9},
			Notes:           []string{"worktree created", "pushed after the second fix round"},
			Phase:           workorder.PhaseNeedsFix,
			Lease:           &workorder.Lease{Holder: "ci@runner-7:4242", ExpiresAt: time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC)},
			LastError:       &workorder.StepError{Step: 6, Action: "create_pr", Message: "GitHub answered 502", Attempt: 2, At: "2026-03-01T10:00:00Z"},
			Approval:        &workorder.Approval{Decision: workorder.DecisionApproved, By: "alice", At: "2026-03-01T09:00:00Z", Note: "go ahead"},
			StepDurationsMS: map[string]int64{"1": 1200, "10": 61000, "2": 45},
			CriteriaResults: []workorder.CriterionResult{{Criterion: "PR created and targeting code-review-base", Checked: true, Passed: true, How: "the PR's base"},
				{Criterion: "Automated review passes", Checked: true, Passed: false, How: "open threads"}, {Criterion: "Docs read well", How: "a person"}},
			Skipped: &workorder.Skip{Reason: "blocker task_hermes_review_pipeline_00_base failed", By: "ci@runner-7:4242", At: "2026-03-01T08:00:00Z"},
			Undo: &workorder.UndoRecord{By: "alice", Started: "2026-03-02T09:00:00Z",
				Steps: []workorder.UndoStep{{Step: "pull_request", Target: "#12", Outcome: "left", Reason: "someone else commented on it"}}},
		},
		GitState: workorder.GitState{
			WorktreePath: &wt,
			WorktreeName: "task_hermes_review_pipeline_01_foundation",
			Branch:       "review/01-foundation",
			BaseSHA:      sha("a"),
			SourceSHA:    sha("b"),
			CommitSHA:    sha("c"),
			PushedSHA:    sha("d"),
			PushedAt:     "2026-03-01T10:05:00Z",
			PushedTo:     "https://github.com/acme/hermes.git",
		},
		PullRequestState: workorder.PullRequestState{
			PRURL:    &pr,
			PRNumber: 12,
			PRState:  "closed", // not merged: the children still wait for it
		},
		ReviewState: workorder.ReviewState{
			ReviewIterations:   2,
			ReviewDeadline:     "2026-03-01T11:00:00Z",
			ReviewWaitingSince: "2026-03-01T10:06:00Z",
			ReviewNotBefore:    "2099-01-01T00:05:00Z",
			Reviewers: []workorder.ReviewerStand{{Login: "coderabbitai[bot]", Head: sha("d"), Kind: "rate_limited", Said: "in 5 minutes", At: "2026-03-01T10:07:00Z"},
				{Login: "alice", Head: sha("d"), Kind: "reviewed"}},
			ReviewAsks: []workorder.ReviewAsk{{Reviewer: "coderabbitai[bot]", Head: sha("d"), Kind: "skipped", How: "@coderabbitai review",
				Signal: "2026-03-01T10:06:30Z", At: "2026-03-01T10:06:31Z"}},
			ReviewUncounted: []workorder.UncountedComment{{Author: "mallory", Association: "NONE", Kind: "comment", Path: "c.go", Line: 4,
				URL: "https://github.com/acme/hermes/pull/12#issuecomment-9", Why: "an outsider wrote it"}},
			ReviewComments: []workorder.ReviewComment{{ID: 77, Author: "coderabbitai[bot]", Path: "internal/a.go", Line: 14, StartLine: 12,
				Body: "Check the error\nreturned by Open.", URL: "https://github.com/acme/hermes/pull/12#discussion_r77", Section: "outside_diff"}},
			ReviewWatermark: workorder.Watermark{Review: 5, ReviewComment: 70, IssueComment: 9},
			ReviewSeen:      workorder.Watermark{Review: 6, ReviewComment: 77, IssueComment: 10},
			ReviewThreads: []workorder.ReviewThread{{ID: "PRRT_kwDOA", Path: "internal/a.go", Line: 14, StartLine: 12, Deleted: true, Outdated: true, Counted: true,
				Comments: []workorder.ThreadComment{{ID: 77, Author: "coderabbitai[bot]", Body: "Check the error returned by Open.", URL: "https://github.com/acme/hermes/pull/12#discussion_r77"}},
				Omitted:  3}, {ID: "PRRT_kwDOB", Path: "b.go", Line: 2, Counted: false}},
			ReviewVerdicts:     map[string]string{"coderabbitai[bot]": "APPROVED", "alice": "CHANGES_REQUESTED"},
			ChangesRequestedBy: []string{"alice"},
			ReviewCheckedSHA:   sha("d"),
			FixPushed:          &workorder.FixPush{From: sha("c"), To: sha("d")},
			FixRequested:       true,
			LoopIterations:     map[string]int{"9": 2},
			ReviewResult:       "changes_requested",
		},
		StackState: workorder.StackState{
			StackParent: sha("e"),
			StackBase:   "review/00-base",
			Restack: &workorder.Restack{At: "2026-03-02T08:00:00Z", Outcome: "conflict", From: sha("d"), To: sha("f"), Onto: sha("e"),
				Conflicts: []string{"go.mod", "internal/a.go"}, Reason: "a person pushed to the base"},
			PRStack: &workorder.PRStack{Number: 7, Position: 2, Size: 6},
			GitHubStacks: &workorder.GitHubStacks{Enabled: true, CheckedAt: "2026-03-01T10:05:30Z", Stacks: []int{7},
				Note: "stack 6 held [12 11], not the epic's order [11 12]: unstacked it and made stack 7"},
			Land: &workorder.Land{Started: "2026-03-03T09:00:00Z", Method: "squash", Merged: []int{11}, Checked: []int{11, 12},
				Pending: &workorder.PendingMerge{PR: 12, UUID: "3f2c9a", At: "2026-03-03T09:01:00Z"},
				Stopped: "GitHub did not merge #12: Required status check \"build\" is expected.", Finished: "2026-03-03T09:30:00Z"},
		},
		AgentState: workorder.AgentState{
			Agent: &workorder.AgentProcess{PID: 4242, Host: "runner-7", StartTicks: 99, StartedAt: "2026-03-01T10:10:00Z", Step: 9},
			AgentUsage: &workorder.AgentUsage{Runs: 3, Rounds: 2, CostUSD: 1.25, Tokens: 120000,
				Last: &workorder.AgentRunRecord{Agent: "claude", Step: 9, Outcome: "failed", Failure: "rate_limited", Message: "try again in an hour",
					CostUSD: 0.4, Tokens: 30000, DurationMS: 61000, At: "2026-03-01T10:11:00Z", NotBefore: "2099-01-01T00:00:00Z", Comments: "77"}},
			Deliverables: map[string]string{"4": "The adapter now returns its errors.\nNONE of the callers change."},
		},
	}
}

// unset lists the fields of v, at every level, that hold their zero
// value: of a list or a map, its first entry is looked into.
func unset(v reflect.Value, path string) []string {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return []string{path}
		}
		return unset(v.Elem(), path)
	case reflect.Slice, reflect.Map:
		if v.Len() == 0 {
			return []string{path}
		}
		if v.Kind() == reflect.Slice {
			return unset(v.Index(0), path+"[0]")
		}
		return unset(v.MapIndex(v.MapKeys()[0]), path+"[…]")
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			break
		}
		var out []string
		for i := range v.NumField() {
			if f := v.Type().Field(i); f.IsExported() {
				out = append(out, unset(v.Field(i), path+"."+f.Name)...)
			}
		}
		return out
	}
	if v.IsZero() {
		return []string{path}
	}
	return nil
}

func TestFullStateSetsEveryField(t *testing.T) {
	t.Parallel()
	if missing := unset(reflect.ValueOf(fullState()), "State"); len(missing) > 0 {
		t.Errorf("fullState leaves these fields unset; give each a value a person would meet, so that every text view shows it: %s",
			strings.Join(missing, ", "))
	}
}

// goSyntax is what Go prints for values that were never worded for a
// person: a map, a slice of maps, a struct, a pointer, nil.
var goSyntax = []string{"map[", "[map", "&{", "0x", "<nil>", "{{", "%!", "[]"}

func hasGoSyntax(s string) string {
	for _, g := range goSyntax {
		if strings.Contains(s, g) {
			return g
		}
	}
	return ""
}

// Every field of the state, worded: never Go's syntax, never empty, and
// the ones a person met as Go values read as the issue asked.
func TestEveryStateFieldReadsInWords(t *testing.T) {
	t.Parallel()
	st := fullState()
	for _, f := range workorder.StateFields() {
		got := stateText(st, f.Name)
		if got == "" || got == "-" || hasGoSyntax(got) != "" {
			t.Errorf("%s reads %q", f.Name, got)
		}
	}
	for name, want := range map[string]string{
		"loop_iterations":   "step 9 ×2",
		"review_verdicts":   "alice changes requested, coderabbitai[bot] approved",
		"review_threads":    "2 open threads, 1 counted: internal/a.go (outdated) by coderabbitai[bot]: Check the error returned by Open., b.go:2",
		"completed_steps":   "steps 1–9",
		"step_durations_ms": "step 1 1.2s, step 2 45ms, step 10 1m1s",
		"fix_pushed":        "cccccccccccc → dddddddddddd",
		"criteria_results":  "1 of 3 passed, 1 not checked, failed: Automated review passes",
		"review_comments":   "1 comment, the first: coderabbitai[bot] on internal/a.go:14: Check the error returned by Open.",
		"lease":             "ci@runner-7:4242 until 2099-01-01T00:00:00Z",
		"restack":           "conflict at ffffffffffff onto eeeeeeeeeeee, conflicts in go.mod, internal/a.go: a person pushed to the base (2026-03-02T08:00:00Z)",
		"review_watermark":  "review 5, review comment 70, issue comment 9",
		"phase":             "needs_fix",
	} {
		if got := stateText(st, name); got != want {
			t.Errorf("%s reads %q, want %q", name, got, want)
		}
	}
	// What a reset plan holds: the stored JSON of each field, and a field
	// of another tool's.
	plan := workorder.StateMap(st)
	plan["x_other_tool"] = map[string]any{"runs": []any{map[string]any{"id": 1.0}, 2.0}, "ok": true}
	for name, got := range stateTexts(plan) {
		if got == "" || hasGoSyntax(got) != "" {
			t.Errorf("reset plan: %s reads %q", name, got)
		}
	}
	if got := stateTexts(plan)["x_other_tool"]; got != "{ok: yes, runs: (2) {id: 1}, 2}" {
		t.Errorf("another tool's field reads %q", got)
	}
}
