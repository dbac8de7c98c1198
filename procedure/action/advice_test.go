package action

import (
	"strings"
	"testing"

	"github.com/wo-runner/wo/workorder"
)

func TestAdviceWarnsOfAWaitShorterThanTheReviewerTakes(t *testing.T) {
	doc := func(reviewers any, minutes float64) workorder.Document {
		ctx := map[string]any{"repo": "acme/x"}
		if reviewers != nil {
			ctx["reviewers"] = reviewers
		}
		return workorder.Document{"_key": "task_a", "title": "A", "status": "open", "type": "task", "priority": "high",
			"work_order": map[string]any{"version": "1.0", "objective": "Open the pull request", "context": ctx, "procedure": []any{
				map[string]any{"step": 1, "action": "create_pr"},
				map[string]any{"step": 2, "action": "wait_for_review", "duration_minutes": minutes},
			}}}
	}
	warned := Advice(doc([]any{"alice", "coderabbitai"}, 10))
	if len(warned) != 1 || warned[0].Severity != workorder.SeverityWarning || warned[0].Path != "work_order.procedure[1].duration_minutes" ||
		!strings.Contains(warned[0].Message, "step 2 waits 10m0s, shorter than coderabbitai[bot] usually takes to review a push (up to 14m0s)") {
		t.Fatalf("advice %+v", warned)
	}
	for name, d := range map[string]workorder.Document{
		"long enough":        doc("coderabbitai[bot]", 20),
		"exactly as long":    doc("coderabbitai[bot]", 14),
		"no wait of its own": doc("coderabbitai[bot]", 0),
		"a person":           doc("alice", 1),
		"no reviewer named":  doc(nil, 1),
		"Copilot, no record": doc("copilot-pull-request-reviewer[bot]", 1),
	} {
		if got := Advice(d); len(got) != 0 {
			t.Errorf("%s: advice %+v", name, got)
		}
	}
	// The warning reaches wo validate's report, as a warning: the document
	// stays valid.
	r := workorder.Validate(doc("coderabbitai", 10), workorder.Options{Actions: Names(), Conditions: Conditions(), LaterNames: LaterNames(), Advice: Advice})
	if !r.Valid() || len(r.Warnings()) == 0 {
		t.Errorf("report %+v", r)
	}
}
