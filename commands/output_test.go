package commands

import (
	"strings"
	"testing"
)

func TestJQFiltersTheEnvelope(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	mustRun(t, db, "", "import", fixture)
	if r := mustRun(t, db, "", "show", "task_cr_01", "--json", "--jq", ".data.task.status"); r.stdout != "open\n" {
		t.Errorf("a string result prints without quotes: %q", r.stdout)
	}
	// --jq alone asks for the envelope too; several results, one a line.
	r := mustRun(t, db, "", "list", "--jq", `.data[] | select(.parent_key == "task_cr_epic") | .key`)
	if r.stdout != "task_cr_01\ntask_cr_04\ntask_cr_05\n" {
		t.Errorf("list --jq: %q", r.stdout)
	}
	if r := mustRun(t, db, "", "show", "task_cr_01", "--jq", ".data.task.work_order.state.completed_steps"); strings.TrimSpace(r.stdout) != "[]" {
		t.Errorf("a JSON result: %q", r.stdout)
	}
	// A failing command's envelope can be filtered too, and its exit code stays.
	if r := runWo(t, db, "", "show", "task_none", "--jq", ".error.code"); r.code != ExitFailed || r.stdout != "NOT_FOUND\n" {
		t.Errorf("an error's code: exit %d %q %q", r.code, r.stdout, r.stderr)
	}
}

func TestABadJQExpressionStopsTheCommandBeforeItRuns(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	r := runWo(t, db, "", "import", fixture, "--jq", ".[")
	if r.code != ExitInvalid || !strings.Contains(r.stderr, `--jq ".[":`) {
		t.Errorf("exit %d %q", r.code, r.stderr)
	}
	if r := runWo(t, db, "", "list"); strings.Contains(r.stdout, "task_cr_01") {
		t.Error("the import ran although its --jq was not an expression")
	}
}

func TestConflictingOutputFlagsAreRefused(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	mustRun(t, db, "", "import", fixture)
	for _, args := range [][]string{
		{"status", "task_cr_epic", "--format", "mermaid", "--json"},
		{"status", "task_cr_epic", "--format", "dot", "--jq", ".data"},
		{"status", "task_cr_epic", "--watch", "--json"},
		{"prompt", "task_cr_01", "--format", "markdown", "--json"},
	} {
		r := runWo(t, db, "", args...)
		if r.code != ExitInvalid || !strings.Contains(r.stdout+r.stderr, "give one of them") || strings.Contains(r.stdout, "graph") {
			t.Errorf("wo %s: exit %d\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
		}
	}
	// The plain form with --json is no conflict.
	mustRun(t, db, "", "status", "task_cr_epic", "--format", "table", "--json")
}
