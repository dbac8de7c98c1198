package procedure

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wo-runner/wo/procedure/action"
	"github.com/wo-runner/wo/store"
	"github.com/wo-runner/wo/workorder"
)

func TestExtractAndValidateDeliverable(t *testing.T) {
	cases := []struct {
		name, output, deliverable, invalid string
	}{
		{"research with a deliverable", "I searched three sources.\nNotes...\n<deliverable>\nThree beaches: A, B, C.\n</deliverable>\n", "Three beaches: A, B, C.", ""},
		{"refusal", "Not enough information.\n<deliverable>NONE</deliverable>", "NONE", "declined"},
		{"no tags", "Here is everything I did and the answer.", "", "deliverable tags missing"},
		{"empty tags", "work\n<deliverable>  \n </deliverable>", "", "deliverable is empty"},
		{"two blocks", "<deliverable>one</deliverable> and <deliverable>two</deliverable>", "one", "2 <deliverable> blocks"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ex := action.ExtractDeliverable(tc.output)
			if ex.Deliverable != tc.deliverable {
				t.Errorf("deliverable %q, want %q", ex.Deliverable, tc.deliverable)
			}
			if got := ex.Invalid(); (tc.invalid == "") != (got == "") || !strings.Contains(got, tc.invalid) {
				t.Errorf("invalid %q, want %q", got, tc.invalid)
			}
			if ex.Found && strings.Contains(ex.Work, "<deliverable>") && ex.Blocks == 1 {
				t.Errorf("the work log still holds the deliverable: %q", ex.Work)
			}
		})
	}
}

// agentEngine stores a one-step agent work order delivering to task_note
// and returns an engine whose agent is the given shell script.
func agentEngine(t *testing.T, script string, delivery []any) (*Engine, store.Store) {
	t.Helper()
	s, err := store.OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "wo.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	doc := map[string]any{"_key": "task_e", "title": "Research beaches", "status": "open",
		"task_context": map[string]any{"background_context": "A family trip to Bali with two small children, in the dry season."},
		"work_order": map[string]any{"version": "1.0", "objective": "Research family-friendly beaches in Bali",
			"procedure": []any{map[string]any{"step": 1, "action": "agent", "description": "Research the best beaches", "delivery": delivery}}}}
	workorder.ApplyDefaults(doc)
	if err := s.Create(context.Background(), doc); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "agent.sh")
	os.WriteFile(path, []byte("#!/bin/sh\n"+script), 0o755)
	return &Engine{Store: s, Runner: "tester@host:1", Settings: action.Settings{Agent: path}, Attempts: 1}, s
}

func TestAgentStepDeliversOnlyTheDeliverable(t *testing.T) {
	note := []any{map[string]any{"target": "task_note"}}
	e, s := agentEngine(t, `grep -q 'BACKGROUND CONTEXT' || exit 9
echo "Searched three guides. Kuta is crowded."
echo "<deliverable>Nusa Dua and Sanur: calm water, shade.</deliverable>"
`, note)
	if _, err := e.Run(context.Background(), RunOptions{Key: "task_e"}); err != nil {
		t.Fatal(err)
	}
	doc, st := get(t, s)
	notes := fmt.Sprint(st["notes"])
	if !strings.Contains(notes, "Nusa Dua and Sanur") || strings.Contains(notes, "Kuta is crowded") {
		t.Errorf("notes %s: the deliverable only, never the work log", notes)
	}
	logs, _ := s.Logs(context.Background(), "task_e")
	var workLog string
	for _, l := range logs {
		if l.Action == "agent_finished" {
			workLog = fmt.Sprint(l.Details["work_log"])
		}
	}
	if !strings.Contains(workLog, "Kuta is crowded") || strings.Contains(workLog, "Nusa Dua") {
		t.Errorf("work log %q", workLog)
	}
	// Nothing is left to merge, so the work order is done: closed, with
	// the reason in its notes, and whatever waits for it can run.
	if doc["status"] != "closed" || !strings.Contains(notes, "no pull request or pushed branch to merge") {
		t.Errorf("status %v notes %s, want closed with the reason", doc["status"], notes)
	}
}

func TestInvalidDeliverablesAreHeldForReview(t *testing.T) {
	note := []any{map[string]any{"target": "task_note"}}
	for name, script := range map[string]string{
		"refusal":    "echo 'cannot'; echo '<deliverable>NONE</deliverable>'",
		"no tags":    "echo 'just text'",
		"empty":      "echo '<deliverable></deliverable>'",
		"two blocks": "echo '<deliverable>a</deliverable><deliverable>b</deliverable>'",
	} {
		t.Run(name, func(t *testing.T) {
			e, s := agentEngine(t, script, note)
			_, err := e.Run(context.Background(), RunOptions{Key: "task_e"})
			var waiting *action.WaitingError
			if !errors.As(err, &waiting) || !strings.Contains(err.Error(), "needs review") {
				t.Fatalf("err %v", err)
			}
			doc, st := get(t, s)
			if doc["status"] != "blocked" || !strings.HasPrefix(fmt.Sprint(doc["block_reason"]), "needs review:") || st["phase"] != "needs_review" {
				t.Errorf("status %v reason %v phase %v", doc["status"], doc["block_reason"], st["phase"])
			}
			if notes := fmt.Sprint(st["notes"]); strings.Contains(notes, "deliverable") {
				t.Errorf("something was delivered: %s", notes)
			}
		})
	}
}

func TestHugeAgentOutputIsBounded(t *testing.T) {
	e, s := agentEngine(t, `i=0; while [ $i -lt 12000 ]; do echo "line $i of a very long research log that goes on and on"; i=$((i+1)); done
echo "<deliverable>The short answer.</deliverable>"`, []any{map[string]any{"target": "task_note"}})
	if _, err := e.Run(context.Background(), RunOptions{Key: "task_e"}); err != nil {
		t.Fatal(err)
	}
	_, st := get(t, s)
	if !strings.Contains(fmt.Sprint(st["notes"]), "The short answer.") {
		t.Errorf("notes %v", st["notes"])
	}
	logs, _ := s.Logs(context.Background(), "task_e")
	for _, l := range logs {
		if w, ok := l.Details["work_log"].(string); ok && len(w) > 8<<10+100 {
			t.Errorf("the work log kept %d bytes", len(w))
		}
	}
}

func TestPrecomposedContentSkipsTheAgent(t *testing.T) {
	e, s := agentEngine(t, "exit 1", []any{map[string]any{"target": "task_note", "content": "Don't forget to call mom"}})
	e.Agent = "" // no agent at all
	if _, err := e.Run(context.Background(), RunOptions{Key: "task_e"}); err != nil {
		t.Fatal(err)
	}
	if _, st := get(t, s); !strings.Contains(fmt.Sprint(st["notes"]), "Don't forget to call mom") {
		t.Errorf("notes %v", st["notes"])
	}
}
