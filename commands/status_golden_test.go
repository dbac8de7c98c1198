package commands

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wo-runner/wo/procedure"
	"github.com/wo-runner/wo/workorder"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files of the status renderers")

// goldenEpic is an epic whose children use every part of every status
// format: a runner, a rate-limited reviewer, a restacked PR, a blocked task
// with hostile text in its title and key, an interrupted run, a closed task
// whose PR URL must not become a link, and dependencies a longer path implies.
func goldenEpic() []StatusRow {
	hostile := "Fix \"quotes\" <b>bold</b> & | pipes `tick` [x]{y};#\n\x1b[31mred\x1b[0m \\N"
	return []StatusRow{
		{Key: "task_cr_epic", Title: "Code review of Hermes", Type: "epic", Status: workorder.StatusInProgress,
			Estimate:       &procedure.Estimate{Known: true, Remaining: 95 * time.Minute, Basis: "12 past steps"},
			ReviewEstimate: "about 4 reviews at 2 an hour: 2.0 hours of the reviewer's time"},
		{Key: "task_cr_01", Title: "PR #1: Foundation", Status: workorder.StatusInReview, Phase: workorder.PhaseWaitingForReview,
			Step: 7, Steps: 11, NextAction: "wait_for_review", PRNumber: 3, PRURL: "https://github.com/acme/hermes/pull/3",
			ReviewIterations: 2, OpenComments: 1, HeldBy: "ci@runner-7:42", LimitedUntil: "2030-01-01T00:00:00Z",
			WaitingFor: []string{"a review since 2026-01-01T00:00:00Z"}, Stack: "restacked at abc1234 onto main",
			Review:   &ReviewOutcome{OpenThreads: []ThreadView{{Path: "a.go", Line: 3, Outdated: true}, {Path: "b.go"}}},
			Estimate: &procedure.Estimate{Known: false}},
		{Key: "task.cr 02", Title: hostile, Status: workorder.StatusBlocked, Steps: 11, NextAction: "create_worktree",
			BlockedBy: []string{"task_cr_01"}, WaitingFor: []string{"task_cr_01"}, Stack: "blocked by a conflict in go.mod"},
		{Key: "task_cr_03", Title: "PR #3: Adapters", Status: workorder.StatusOpen, Phase: workorder.PhaseInterrupted,
			Step: 2, Steps: 11, NextAction: "push", BlockedBy: []string{"task_cr_01", "task.cr 02"},
			WaitingFor: []string{"task_cr_01", "task.cr 02"}, Stack: "merged"},
		{Key: "task_cr_04", Title: "PR #4: Done", Status: workorder.StatusClosed, Step: 11, Steps: 11,
			PRURL: "javascript:alert(1)", BlockedBy: []string{"task_cr_03"}},
	}
}

// goldenTask is one task with the review section the table prints below it.
func goldenTask() []StatusRow {
	return []StatusRow{{Key: "task_cr_01", Title: "PR #1: Foundation", Status: workorder.StatusInReview, Step: 7, Steps: 11,
		NextAction: "wait_for_review", PRNumber: 3, ReviewIterations: 1, OpenComments: 2,
		Review: &ReviewOutcome{Counted: 1, Verdicts: map[string]string{"coderabbitai": "CHANGES_REQUESTED"},
			ChangesRequestedBy: []string{"coderabbitai"},
			OpenThreads: []ThreadView{{Path: "internal/a.go", Line: 12, Counted: true, Author: "coderabbitai", Excerpt: "check the error", Comments: 2},
				{Path: "b.go", Outdated: true, Author: "octocat", Excerpt: "nit", Comments: 1}},
			Reviewers: []workorder.ReviewerStand{{Login: "coderabbitai", Head: "0123456789abcdef0123", Kind: "rate_limited", Said: "in 5 minutes"}},
			NotBefore: "2030-01-01T00:05:00Z",
			Uncounted: []workorder.UncountedComment{{Author: "bot", Kind: "comment", Path: "c.go", Line: 4, Why: "a bot's summary"}}}}}
}

// Every renderer of wo status, byte for byte: the table plain and coloured,
// whole (--wide) and fitted to 80 and 120 columns, Markdown, Mermaid and
// Graphviz (reduced and with every edge), and one task's table with its
// review. Run with -update after a deliberate change
// and read the diff of testdata/status.
func TestStatusRenderersMatchTheirGoldenFiles(t *testing.T) {
	t.Parallel()
	plain := textView{}
	for _, tc := range []struct {
		name string
		out  string
	}{
		{"table", renderString(plain, "table", false, goldenEpic())},
		{"table-colour", tableStatus(goldenEpic(), textView{colour: true})},
		{"table-one-task", renderString(plain, "table", false, goldenTask())},
		{"table-80", renderString(textView{width: 80}, "table", false, goldenEpic())},
		{"table-120", renderString(textView{width: 120}, "table", false, goldenEpic())},
		{"table-colour-80", renderString(textView{width: 80, colour: true}, "table", false, goldenEpic())},
		{"table-one-task-80", renderString(textView{width: 80}, "table", false, goldenTask())},
		{"markdown", renderString(plain, "markdown", false, goldenEpic())},
		{"mermaid", renderString(plain, "mermaid", false, goldenEpic())},
		{"mermaid-all-edges", renderString(plain, "mermaid", true, goldenEpic())},
		{"dot", renderString(plain, "dot", false, goldenEpic())},
		{"dot-all-edges", renderString(plain, "dot", true, goldenEpic())},
	} {
		path := filepath.Join("testdata", "status", tc.name+".golden")
		if *updateGolden {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(tc.out), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (go test -run %s -update writes it)", err, t.Name())
		}
		if tc.out != string(want) {
			t.Errorf("wo status --format %s differs from %s:\n got:\n%s\nwant:\n%s", tc.name, path, tc.out, want)
		}
	}
	if strings.Contains(renderString(plain, "table", false, goldenEpic()), "\x1b[31m") {
		t.Error("a title's escape sequence reached the table")
	}
}
