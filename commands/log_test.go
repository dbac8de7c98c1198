package commands

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/wo-runner/wo/store"
)

// logStore is a store with task_cr_01 and a timeline of one run: a step
// that fails once and then passes, a wait, a reset.
func logStore(t *testing.T) string {
	t.Helper()
	db := newDB(t)
	mustRun(t, db, "", "import", fixture)
	s, err := store.OpenSQLite(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	at := time.Date(2100, 11, 23, 9, 0, 0, 0, time.UTC) // after the import's entry, written now
	repo := "/src/hermes"
	for i, e := range []store.LogEntry{
		{Action: "run_started", Details: map[string]any{"from_step": 1}},
		{Action: "step_started", Details: map[string]any{"step": 1, "action": "git_worktree_create"}},
		{Action: "step_completed", Details: map[string]any{"step": 1, "action": "git_worktree_create", "duration_ms": 1234, "outcome": "ok", "note": "review/01-foundation", "repo": repo}},
		{Action: "step_failed", Details: map[string]any{"step": 2, "action": "git_push", "attempt": 1, "error": "push: connection reset"}},
		{Action: "step_completed", Details: map[string]any{"step": 2, "action": "git_push", "duration_ms": 45, "outcome": "ok", "note": "", "repo": repo}},
		{Action: "run_waiting", Details: map[string]any{"step": 3, "action": "wait_for_review", "reason": "no review yet"}},
		{Action: "reset", Details: map[string]any{"to_step": 2, "from_step": 4, "status_from": "blocked", "status_to": "open"}},
		{Action: "run_finished", Details: map[string]any{"status": "done"}},
	} {
		e.TaskKey, e.SessionKey, e.CreatedAt = "task_cr_01", "ci@runner-7", at.Add(time.Duration(i)*time.Minute)
		if err := s.AppendLog(context.Background(), e); err != nil {
			t.Fatal(err)
		}
	}
	return db
}

func TestLogIsOneLinePerEntry(t *testing.T) {
	t.Parallel()
	db := logStore(t)
	got := mustRun(t, db, "", "log", "task_cr_01", "--wide").stdout
	lines := strings.Split(got, "\n")
	// The import's own entry, written now, comes first.
	if len(lines) < 2 || !strings.Contains(lines[1], "  -     task_created         -                   -         command=import source=../fixtures/hermes-review.json") {
		t.Fatalf("the import's entry is not first:\n%s", got)
	}
	want := `TIME                  STEP  ACTION               OUTCOME             DURATION  NOTE
2100-11-23 09:00:00Z  -     run_started          -                   -         from_step=1
2100-11-23 09:01:00Z  1     git_worktree_create  started             -
2100-11-23 09:02:00Z  1     git_worktree_create  ok                  1.2s      review/01-foundation
2100-11-23 09:03:00Z  2     git_push             failed (attempt 1)  -         push: connection reset
2100-11-23 09:04:00Z  2     git_push             ok                  45ms
2100-11-23 09:05:00Z  3     wait_for_review      waiting             -         no review yet
2100-11-23 09:06:00Z  -     reset                -                   -         from_step=4 status_from=blocked status_to=open to_step=2
2100-11-23 09:07:00Z  -     run_finished         done                -
`
	gotRest := lines[0] + "\n" + strings.Join(lines[2:], "\n")
	if gotRest != want {
		t.Errorf("wo log:\n%s\nwant (after the task_created line):\n%s", got, want)
	}
	if strings.Contains(got, "repo=") || strings.Contains(got, "ci@runner-7") {
		t.Errorf("the compact log repeats the repository or the runner:\n%s", got)
	}
}

func TestLogVerboseShowsEveryDetail(t *testing.T) {
	t.Parallel()
	db := logStore(t)
	got := mustRun(t, db, "", "log", "task_cr_01", "--verbose", "--wide").stdout
	// The runner column is as wide as the import's runner (host:pid), so
	// compare with the columns' padding collapsed.
	collapsed := regexp.MustCompile(` {2,}`).ReplaceAllString(got, "  ")
	for _, want := range []string{
		"TIME  ACTION  BY  DETAILS\n",
		"2100-11-23 09:02:00Z  step_completed  ci@runner-7  step=1 action=git_worktree_create duration_ms=1234 note=review/01-foundation outcome=ok repo=/src/hermes\n",
		"2100-11-23 09:03:00Z  step_failed  ci@runner-7  step=2 action=git_push attempt=1 error=push: connection reset\n",
	} {
		if !strings.Contains(collapsed, want) {
			t.Errorf("wo log --verbose lacks %q:\n%s", want, got)
		}
	}
}

func TestLogJSONKeepsEveryDetail(t *testing.T) {
	t.Parallel()
	db := logStore(t)
	var env struct {
		Success bool
		Data    []store.LogEntry
	}
	out := mustRun(t, db, "", "log", "task_cr_01", "--json").stdout
	if err := json.Unmarshal([]byte(out), &env); err != nil || !env.Success || len(env.Data) != 9 {
		t.Fatalf("wo log --json: %v\n%s", err, out)
	}
	e := env.Data[3] // after task_created, run_started, step_started
	if e.Action != "step_completed" || e.SessionKey != "ci@runner-7" || e.Details["repo"] != "/src/hermes" || e.Details["duration_ms"] != float64(1234) {
		t.Errorf("wo log --json entry 3: %+v", e)
	}
}

// An agent's run says how it ended: its exit status, or who stopped it.
func TestAgentLogNoteSaysHowTheRunEnded(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		d    map[string]any
		want string
	}{
		{map[string]any{"agent": "claude", "exit_code": 2, "message": "no credits"}, "claude, exit 2: no credits"},
		{map[string]any{"agent": "command", "signal": "interrupt", "stopped_by": "Ctrl-C (SIGINT) to wo", "error": "agent command x was stopped"},
			"command, stopped by Ctrl-C (SIGINT) to wo: agent command x was stopped"},
		{map[string]any{"agent": "codex", "exit_code": 0}, "codex"},
	} {
		if got := agentLogNote(c.d); got != c.want {
			t.Errorf("agentLogNote(%v) = %q, want %q", c.d, got, c.want)
		}
	}
}
