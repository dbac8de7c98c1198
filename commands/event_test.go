package commands

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestFormationEventsGoOnTheTimeline(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	mustRun(t, db, "", "import", fixture)
	mustRun(t, db, "", "event", "task_cr_01", "clarify", "--message", "Which branch is the base: main or code-review-base?")
	mustRun(t, db, "", "event", "task_cr_01", "plan_progress", "-m", "Routed to hermes; sizing the split")
	log := mustRun(t, db, "", "log", "task_cr_01").stdout
	ask, progress := strings.Index(log, "clarify"), strings.Index(log, "plan_progress")
	if ask < 0 || progress < ask || !strings.Contains(log, "Which branch is the base") {
		t.Errorf("the timeline lacks the events in order:\n%s", log)
	}
	for _, bad := range [][]string{
		{"event", "task_cr_01", "approve", "-m", "x"},
		{"event", "task_cr_01", "clarify", "-m", "  "},
		{"event", "task_cr_01", "-m", "x"},
	} {
		if r := runWo(t, db, "", bad...); r.code != 2 {
			t.Errorf("wo %v: exit %d, want 2 (usage)\n%s", bad, r.code, r.stderr)
		}
	}
	var env struct{ Data []StatusRow }
	json.Unmarshal([]byte(mustRun(t, db, "", "status", "task_cr_01", "--json").stdout), &env)
	if len(env.Data) == 0 || env.Data[0].LastEvent == nil || env.Data[0].LastEvent.Kind != "plan_progress" {
		t.Errorf("wo status does not show the latest formation event: %+v", env.Data)
	}
	mustRun(t, db, "", "event", "task_cr_01", "clarify", "-m", "Which base?")
	if table := mustRun(t, db, "", "status", "task_cr_01", "--wide").stdout; !strings.Contains(table, "an answer to: Which base?") {
		t.Errorf("wo status does not say the task waits for an answer:\n%s", table)
	}
	if r := runWo(t, db, "", "event", "task_nope", "clarify", "-m", "x"); r.code != 1 || !strings.Contains(r.stderr, "task_nope") {
		t.Errorf("an event for a task that does not exist: exit %d %s", r.code, r.stderr)
	}
}

func TestNegativeTimesAndCountsAreUsageErrors(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	for _, args := range [][]string{
		{"run", "task_x", "--agent-timeout", "-1s"},
		{"run", "task_x", "--review-wait", "-5m"},
		{"run", "task_x", "--max-iterations", "-1"},
		{"run", "--epic", "task_e", "--wait-timeout", "-1m"},
	} {
		if r := runWo(t, db, "", args...); r.code != ExitInvalid || !strings.Contains(r.stderr, "negative") {
			t.Errorf("wo %v: exit %d, want 2 saying it cannot be negative\n%s", args, r.code, r.stderr)
		}
	}
}

func TestShowDisplaysFormationApprovalAndRollback(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	doc := `[{"_key": "task_f", "title": "A formed task", "status": "open", "description": "Formed from a chat message",
		"source_event_id": "chat-4711", "task_type": "stateful", "project_id": "hermes", "systems_affected": ["api", "db"],
		"artifact_ref": "sheets/1", "patch_ref": "patches/1", "formation_confidence": 0.9,
		"evidence": [{"claim": "the API retries", "status": "validated", "sources": [{"title": "API docs", "url": "https://example.com/a", "retrieved_at": "2026-11-01T00:00:00Z"}]}],
		"work_order": {"version": "1.0", "objective": "Do what the message asked", "procedure": [{"step": 1, "action": "commit"}],
		"approval": {"required": true, "summary": "Adds retries", "confidence": 0.75},
		"rollback_hints": ["revert the merge commit"]}}]`
	mustRun(t, db, doc, "import", "-")
	out := mustRun(t, db, "", "show", "task_f").stdout
	for _, want := range []string{"event       chat-4711", "type        stateful", "systems     api, db", "confidence  90%",
		"evidence    (validated) the API retries — 1 source(s)", "API docs <https://example.com/a>", "summary     Adds retries",
		"confidence  75%", "To roll back:\n  - revert the merge commit"} {
		if !strings.Contains(out, want) {
			t.Errorf("wo show lacks %q:\n%s", want, out)
		}
	}
}
