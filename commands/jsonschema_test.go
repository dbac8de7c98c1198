package commands

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Every command's --json output, from a store with the example epic, holds
// to its published schema, and has data for the schema to check.
func TestEveryCommandsJSONOutputHoldsToItsSchema(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	gated := `[{"_key": "task_gate", "title": "A gated task", "status": "open",
		"work_order": {"version": "1.0", "objective": "Wait for a person", "procedure": [{"step": 1, "action": "commit"}],
		"approval": {"required": true, "summary": "Adds retries"}}},
		{"_key": "task_gate_2", "title": "Another", "status": "open",
		"work_order": {"version": "1.0", "objective": "Wait for a person", "procedure": [{"step": 1, "action": "commit"}],
		"approval": {"required": true, "summary": "Adds retries"}}},
		{"_key": "task_gate_3", "title": "A third", "status": "open",
		"work_order": {"version": "1.0", "objective": "Wait for a person", "procedure": [{"step": 1, "action": "commit"}],
		"approval": {"required": true, "summary": "Adds retries"}}}]`
	seen := map[string]bool{}
	for _, tc := range []struct {
		stdin string
		args  []string
	}{
		{"", []string{"init"}},
		{"", []string{"import", fixture}},
		{gated, []string{"import", "-"}},
		{"", []string{"create", "--title", "Scratch", "--description", "A task made to be deleted", "--priority", "P2"}},
		{"", []string{"create", "--title", "Bad", "--description", "x", "--priority", "P9"}},
		{"", []string{"export"}},
		{"", []string{"export", "--epic", "task_cr_epic", "--format", "tasks-json"}},
		{"", []string{"show", "task_cr_01"}},
		{"", []string{"list"}},
		{"", []string{"validate", "task_cr_01"}},
		{"", []string{"validate", "-f", fixture}},
		{"", []string{"run", "task_cr_01", "--dry-run"}},
		{"", []string{"reset", "task_cr_01", "--to-start", "--dry-run"}},
		{"", []string{"log", "task_cr_01"}},
		{"", []string{"status", "task_cr_epic"}},
		{"", []string{"event", "task_cr_04", "plan_progress", "-m", "half way"}},
		{"", []string{"prompt", "task_cr_01"}},
		{"", []string{"approve", "task_gate"}},
		{"", []string{"revise", "task_gate_2", "--note", "smaller, please"}},
		{"", []string{"cancel", "task_gate_3", "--reason", "not now"}},
		{"", []string{"undo", "task_cr_05", "--dry-run"}},
		{"", []string{"delete", "task_cr_05", "--dry-run"}},
	} {
		args := append(slices.Clone(tc.args), "--json")
		r := runWo(t, db, tc.stdin, args...) // runWo checks the output against the schema
		var env Envelope
		if err := json.Unmarshal([]byte(r.stdout), &env); err != nil {
			t.Errorf("wo %s: stdout is not one envelope: %v\n%s", strings.Join(args, " "), err, r.stdout)
			continue
		}
		if env.Data == nil {
			t.Errorf("wo %s: exit %d with no data for the schema to check\n%s", strings.Join(args, " "), r.code, r.stderr)
		}
		seen[env.Command] = true
	}
	for _, c := range JSONCommands() {
		if !seen[c] && !slices.Contains([]string{"split", "sync", "land"}, c) { // their outputs need git and GitHub: integration/
			t.Errorf("wo %s --json is not checked against its schema here", c)
		}
	}
}

// The checker finds what a changed type would break: a field the schema
// does not know, a wrong type, a missing field, null where a value must
// be, a line of progress that is not an event, and stdout that is not JSON.
func TestTheSchemaCheckRefusesOutputThatDrifted(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	mustRun(t, db, "", "import", fixture)
	good := runWo(t, db, "", "list", "--json").stdout
	if err := CheckOutput([]byte(good)); err != nil {
		t.Fatalf("wo list --json does not hold to its schema: %v", err)
	}
	var env map[string]any
	if err := json.Unmarshal([]byte(good), &env); err != nil {
		t.Fatal(err)
	}
	row := func() map[string]any { return env["data"].([]any)[0].(map[string]any) }
	for _, tc := range []struct {
		name   string
		change func()
		want   string
	}{
		{"a field no type has", func() { row()["colour"] = "red" }, "colour"},
		{"a number for a string", func() { row()["key"] = 7 }, "/data/0/key"},
		{"a field gone", func() { delete(row(), "key") }, "key"},
		{"null for a string", func() { row()["status"] = nil }, "/data/0/status"},
		{"another command's name", func() { env["command"] = "show" }, "show.schema.json"},
		{"metadata without its exit code", func() { delete(env["metadata"].(map[string]any), "exit_code") }, "exit_code"},
	} {
		if err := json.Unmarshal([]byte(good), &env); err != nil {
			t.Fatal(err)
		}
		tc.change()
		b, _ := json.Marshal(env)
		err := CheckOutput(b)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: the check says %v, want an error naming %q", tc.name, err, tc.want)
		}
	}
	for _, tc := range []struct{ name, stdout, want string }{
		{"not JSON", "listed 4 tasks\n", "not JSON"},
		{"nothing", "", "nothing on stdout"},
		{"no command", `{"success": true, "data": []}`, "names no command"},
		{"data from a command without a schema", `{"success": true, "command": "version", "data": {"v": 1}}`, "no published schema"},
		{"a progress line that is no event", `{"event": 7}` + "\n" + strings.TrimSpace(good), "value 1 on stdout is not a progress event"},
	} {
		if err := CheckOutput([]byte(tc.stdout)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: the check says %v, want %q", tc.name, err, tc.want)
		}
	}
	// wo export --format tasks-json is held to the team's own schema.
	var tasks map[string]any
	if err := json.Unmarshal([]byte(runWo(t, db, "", "export", "--epic", "task_cr_epic", "--format", "tasks-json", "--json").stdout), &tasks); err != nil {
		t.Fatal(err)
	}
	delete(tasks["data"].(map[string]any), "tasks")
	if b, _ := json.Marshal(tasks); CheckOutput(b) == nil {
		t.Error("a tasks.json without its tasks passes the check")
	}
	usage := runWo(t, db, "", "--json", "nosuchcommand")
	if err := CheckOutput([]byte(usage.stdout)); err != nil || usage.code != ExitInvalid {
		t.Errorf("a usage error's envelope (exit %d): %v\n%s", usage.code, err, usage.stdout)
	}
}

// docs/json/ is what the types say today, file for file.
func TestPublishedSchemasAreCurrent(t *testing.T) {
	t.Parallel()
	want := PublishedSchemas()
	files, err := filepath.Glob("../docs/json/*.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if _, ok := want[filepath.Base(f)]; !ok {
			t.Errorf("%s is no schema wo publishes; remove it", f)
		}
	}
	for name, text := range want {
		onDisk, err := os.ReadFile(filepath.Join("../docs/json", name))
		if err != nil || string(onDisk) != string(text) {
			t.Errorf("docs/json/%s is not what wo's types say (%v); regenerate it with: make docs", name, err)
		}
	}
}

// Every command that prints an envelope has a schema; wo help json prints
// it, says which commands have one, and suggests the one meant.
func TestHelpJSONPrintsEachCommandsSchema(t *testing.T) {
	t.Parallel()
	for _, c := range NewApp(NewFactory(nil, nil, nil)).VisibleCommands() {
		if _, ok := dataShapes[c.Name]; !ok && !slices.Contains([]string{"completion", "version", "help"}, c.Name) {
			t.Errorf("wo %s prints an envelope with --json but has no schema in dataShapes", c.Name)
		}
	}
	r := mustRun(t, "", "", "help", "json", "show")
	var schema map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &schema); err != nil || schema["$id"] != schemaBase+"show.schema.json" {
		t.Errorf("wo help json show: %v, $id %v", err, schema["$id"])
	}
	if published, _ := EnvelopeSchema("show"); r.stdout != string(published) {
		t.Error("wo help json show differs from the published schema")
	}
	index := mustRun(t, "", "", "help", "json").stdout
	for _, want := range []string{`"command"`, "wo help json COMMAND", "validate", "events"} {
		if !strings.Contains(index, want) {
			t.Errorf("wo help json does not say %q:\n%s", want, index)
		}
	}
	events := mustRun(t, "", "", "help", "json", "events").stdout
	if !strings.Contains(events, `"duration_ms"`) {
		t.Errorf("wo help json events is not the events' schema:\n%s", events)
	}
	bad := runWo(t, "", "", "help", "json", "shw")
	if bad.code != ExitInvalid || !strings.Contains(bad.stderr, `"shw" has no --json output: did you mean "show"?`) {
		t.Errorf("wo help json shw: exit %d, %s", bad.code, bad.stderr)
	}
	if r := runWo(t, "", "", "help", "nosuch"); r.code != ExitInvalid || !strings.Contains(r.stderr, `unknown command "nosuch"`) {
		t.Errorf("wo help nosuch: exit %d, %s", r.code, r.stderr)
	}
}

// wo help's own help, and arguments it does not take.
func TestHelpHelpsWithItself(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"help", "--help"}, {"help", "-h"}, {"help", "json", "--help"}} {
		if r := runWo(t, "", "", args...); r.code != 0 || !strings.Contains(r.stdout, "wo help [command options] [COMMAND | json [COMMAND]]") {
			t.Errorf("wo %s: exit %d\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
		}
	}
	if r := runWo(t, "", "", "help", "json", "run", "extra"); r.code != ExitInvalid || !strings.Contains(r.stderr, `not "json run extra"`) {
		t.Errorf("wo help json run extra: exit %d, %s", r.code, r.stderr)
	}
}
