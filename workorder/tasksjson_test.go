package workorder

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// schema is the compiled tasks.json schema that import enforces.
func schema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	sch, err := tasksJSONSchema()
	if err != nil {
		t.Fatal(err)
	}
	return sch
}

func epicFixture(t *testing.T) (Document, []Document) {
	t.Helper()
	data, err := os.ReadFile("../fixtures/hermes-review.json")
	if err != nil {
		t.Fatal(err)
	}
	docs, err := DecodeDocuments("fixture", data)
	if err != nil {
		t.Fatal(err)
	}
	// One child of each interesting status.
	docs[1]["status"] = "in_review"
	store := docs[1]["work_order"].(map[string]any)["state"].(map[string]any)
	store["pr_url"] = "https://github.com/toddwbucy/Hermes/pull/1"
	docs[2]["status"], docs[2]["block_reason"] = "blocked", "step 3 (checkout_files) failed: missing files"
	return docs[0], docs[1:]
}

func TestTasksJSONExportValidatesAgainstTheSeedSchema(t *testing.T) {
	epic, children := epicFixture(t)
	tf, err := ToTasksFile(epic, children)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(tf)
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if err := schema(t).Validate(v); err != nil {
		t.Fatalf("export does not validate: %v\n%s", err, b)
	}
	if tf.Tasks["task_cr_01"].Status != "completed" || tf.Tasks["task_cr_01"].Findings == nil ||
		!strings.Contains(*tf.Tasks["task_cr_01"].Findings, "pull/1") {
		t.Errorf("in_review child: %+v", tf.Tasks["task_cr_01"])
	}
	if e := tf.Tasks["task_cr_04"]; e.Status != "failed" || e.Error == nil || e.Wave != 2 || e.Deps[0] != "task_cr_01" {
		t.Errorf("blocked child: %+v", e)
	}
	if tf.Tasks["task_cr_05"].Status != "pending" || tf.Tasks["task_cr_05"].Wave != 2 {
		t.Errorf("open child: %+v", tf.Tasks["task_cr_05"])
	}
	// The schema can fail: a bad task without findings is rejected.
	bad := strings.Replace(string(b), `"status":"pending"`, `"status":"done"`, 1)
	v2, _ := jsonschema.UnmarshalJSON(strings.NewReader(bad))
	if err := schema(t).Validate(v2); err == nil {
		t.Error("the schema validator accepted a bad status")
	}

	// Round trip: what wo exports, wo imports.
	back, err := ParseTasksFile("export", b)
	if err != nil {
		t.Fatal(err)
	}
	e2, docs := FromTasksFile(back, agentTask)
	if Key(e2) == "" || len(docs) != 3 || docs[1]["status"] != "blocked" || docs[0]["status"] != "closed" {
		t.Errorf("import: %v %v", e2, docs)
	}
}

func TestTasksJSONStructuralRules(t *testing.T) {
	base := `{"session_id": "tlv4-auth-system-20260324", "skill": "team-lifecycle-v4", "pipeline": "p", "requirement": "r", "created_at": "2026-03-24T10:00:00Z", "tasks": {%s}}`
	task := func(id, deps string, wave int, status string) string {
		return `"` + id + `": {"title": "T", "description": "D", "role": "dev", "deps": [` + deps + `], "wave": ` + string(rune('0'+wave)) + `, "status": "` + status + `"}`
	}
	cases := []struct{ name, tasks, want string }{
		{"duplicate id", task("A", "", 1, "pending") + "," + task("A", "", 1, "pending"), `task id "A" appears more than once`},
		{"missing dep", task("A", `"Z"`, 2, "pending"), `"Z" is not a task of this file`},
		{"cycle", task("A", `"B"`, 2, "pending") + "," + task("B", `"A"`, 3, "pending"), "dependency cycle"},
		{"wave order", task("A", "", 2, "pending") + "," + task("B", `"A"`, 2, "pending"), "a task's wave must be later than its deps'"},
		{"completed without findings", task("A", "", 1, "completed"), "findings: required when status is completed"},
		{"failed without error", task("A", "", 1, "failed"), "error: required when status is failed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseTasksFile("tasks.json", []byte(strings.Replace(base, "%s", tc.tasks, 1)))
			var inv *InvalidError
			if !errors.As(err, &inv) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want %q", err, tc.want)
			}
		})
	}
	ok := strings.Replace(base, "%s", task("A", "", 1, "pending")+","+task("B", `"A"`, 2, "pending"), 1)
	if _, err := ParseTasksFile("tasks.json", []byte(ok)); err != nil {
		t.Errorf("a good file: %v", err)
	}
}

func TestEmbeddedSchemaIsTheFixturesCopy(t *testing.T) {
	fixture, err := os.ReadFile("../fixtures/tasks-json.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(fixture, tasksJSONSchemaText) {
		t.Error("workorder/tasks-json.schema.json and fixtures/tasks-json.schema.json differ: import enforces the first")
	}
}

// example is the team's example tasks.json, decoded for editing.
func example(t *testing.T) map[string]any {
	t.Helper()
	data, err := os.ReadFile("testdata/tasks.example.json")
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func taskOf(m map[string]any, id string) map[string]any {
	return m["tasks"].(map[string]any)[id].(map[string]any)
}

func encoded(t *testing.T, m map[string]any) []byte {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestTasksJSONSchemaViolationsNameTheFieldAndTheReason(t *testing.T) {
	cases := []struct {
		name, path, reason string
		edit               func(m map[string]any)
	}{
		{"maxLength", "tasks.RESEARCH-001.findings", "is 600 characters long; at most 500 are allowed",
			func(m map[string]any) { taskOf(m, "RESEARCH-001")["findings"] = strings.Repeat("é", 600) }},
		{"maximum", "tasks.RESEARCH-001.quality_score", "is 150; it must be at most 100",
			func(m map[string]any) { taskOf(m, "RESEARCH-001")["quality_score"] = 150 }},
		{"minimum", "gc_rounds", "is -3; it must be at least 0",
			func(m map[string]any) { m["gc_rounds"] = -3 }},
		{"minimum of an array item", "completed_waves[1]", "is 0; it must be at least 1",
			func(m map[string]any) { m["completed_waves"] = []any{1, 0} }},
		{"enum", "tasks.CHECKPOINT-001.supervision_verdict", `"maybe" is not one of "pass", "warn", "block", null`,
			func(m map[string]any) { taskOf(m, "CHECKPOINT-001")["supervision_verdict"] = "maybe" }},
		{"enum of status", "tasks.TEST-001.status", `"done" is not one of "pending", "in_progress", "completed", "failed", "skipped"`,
			func(m map[string]any) { taskOf(m, "TEST-001")["status"] = "done" }},
		{"type", "tasks.IMPL-001.wave", "must be integer, not string",
			func(m map[string]any) { taskOf(m, "IMPL-001")["wave"] = "3" }},
		{"type of a fraction", "tasks.IMPL-001.wave", "must be integer, not number",
			func(m map[string]any) { taskOf(m, "IMPL-001")["wave"] = 3.5 }},
		{"type of a nullable field", "tasks.DOCS-001.error", "must be null or string, not boolean",
			func(m map[string]any) { taskOf(m, "DOCS-001")["error"] = true }},
		{"required at the top", "skill", "required",
			func(m map[string]any) { delete(m, "skill") }},
		{"required in a task", "tasks.DRAFT-001.role", "required",
			func(m map[string]any) { delete(taskOf(m, "DRAFT-001"), "role") }},
		{"additionalProperties of active_agents", "active_agents.IMPL-001", "must be string, not number",
			func(m map[string]any) { m["active_agents"] = map[string]any{"IMPL-001": 7} }},
		{"additionalProperties of tasks", `tasks["QA 1"]`, "must be object, not string",
			func(m map[string]any) { m["tasks"].(map[string]any)["QA 1"] = "later" }},
		{"pattern", "session_id", `"tlv4_auth_20260324" does not match the pattern ^[a-zA-Z0-9]+-[a-z0-9-]+-\d{8}$`,
			func(m map[string]any) { m["session_id"] = "tlv4_auth_20260324" }},
		{"format", "created_at", `"24/03/2026 09:15" is not a date-time`,
			func(m map[string]any) { m["created_at"] = "24/03/2026 09:15" }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := example(t)
			tc.edit(m)
			_, err := ParseTasksFile("tasks.json", encoded(t, m))
			var inv *InvalidError
			if !errors.As(err, &inv) {
				t.Fatalf("accepted, or not as invalid: %v", err)
			}
			probs := inv.Reports[0].Errors()
			if len(probs) != 1 || probs[0].Path != tc.path || !strings.HasPrefix(probs[0].Message, tc.reason) {
				t.Errorf("problems %v, want exactly %s: %s", probs, tc.path, tc.reason)
			}
		})
	}
}

func TestEverySchemaViolationIsListed(t *testing.T) {
	m := example(t)
	r := taskOf(m, "RESEARCH-001")
	r["findings"], r["quality_score"] = strings.Repeat("x", 600), 150
	taskOf(m, "CHECKPOINT-001")["supervision_verdict"] = "maybe"
	m["gc_rounds"] = -3
	_, err := ParseTasksFile("tasks.json", encoded(t, m))
	var inv *InvalidError
	if !errors.As(err, &inv) {
		t.Fatalf("accepted: %v", err)
	}
	var got []string
	for _, p := range inv.Reports[0].Errors() {
		got = append(got, p.Path)
	}
	want := []string{"gc_rounds", "tasks.CHECKPOINT-001.supervision_verdict", "tasks.RESEARCH-001.findings", "tasks.RESEARCH-001.quality_score"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("problems at %v, want %v", got, want)
	}
}

func TestSchemaValidFilesWithShortTextsImportWithWarnings(t *testing.T) {
	m := example(t)
	taskOf(m, "TEST-001")["title"] = ""
	taskOf(m, "TEST-001")["description"] = ""
	m["requirement"] = "auth"
	f, err := ParseTasksFile("tasks.json", encoded(t, m))
	if err != nil {
		t.Fatalf("a schema-valid file is rejected: %v", err)
	}
	epic, docs := FromTasksFile(f, agentTask)
	opts := Options{Actions: []string{"agent"}}
	for _, d := range append([]Document{epic}, docs...) {
		r := Validate(d, opts)
		if !r.Valid() {
			t.Errorf("%s: %v", Key(d), r.Errors())
		}
		short := Key(d) == "DRAFT-001" || Key(d) == "TEST-001" || Key(d) == Key(epic)
		if short && !slices.ContainsFunc(r.Warnings(), func(p Problem) bool { return strings.Contains(p.Message, "at least 10 characters") }) {
			t.Errorf("%s: the 10-character rule should warn: %v", Key(d), r.Problems)
		}
		if Key(d) == "TEST-001" && d["title"] != "TEST-001" {
			t.Errorf("an empty title should show as the task id, not %q", d["title"])
		}
		// The same document written by hand is held to the creation rules.
		delete(d, TasksJSONField)
		if short && Validate(d, opts).Valid() {
			t.Errorf("%s without tasks_json: the 10-character rule is no longer an error", Key(d))
		}
	}
}

// roundTrip imports and exports a file without a store, returning the
// parsed export.
func roundTrip(t *testing.T, data []byte, change func(epic Document, docs []Document)) map[string]any {
	t.Helper()
	f, err := ParseTasksFile("tasks.json", data)
	if err != nil {
		t.Fatal(err)
	}
	epic, docs := FromTasksFile(f, agentTask)
	if change != nil {
		change(epic, docs)
	}
	back, err := ToTasksFile(epic, docs)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(encoded(t, map[string]any{"f": back}), &out); err != nil {
		t.Fatal(err)
	}
	return out["f"].(map[string]any)
}

func TestTasksJSONExportFollowsWoState(t *testing.T) {
	m := example(t)
	byKey := func(docs []Document, k string) Document {
		for _, d := range docs {
			if Key(d) == k {
				return d
			}
		}
		t.Fatalf("no %s", k)
		return nil
	}
	out := roundTrip(t, encoded(t, m), func(_ Document, docs []Document) {
		impl := byKey(docs, "IMPL-001")
		impl["status"] = "closed"
		impl["work_order"].(map[string]any)["state"].(map[string]any)["pr_url"] = "https://github.com/o/r/pull/7"
		reopened := byKey(docs, "DOCS-001")
		reopened["status"] = "open"
		delete(reopened, "block_reason")
		test := byKey(docs, "TEST-001")
		test["status"], test["block_reason"] = "blocked", "runner lost"
		// TEST-001 now also waits for DOCS-001 (wave 3).
		test["work_order"].(map[string]any)["dependencies"].(map[string]any)["blocked_by"] = []any{"IMPL-001", "DOCS-001"}
	})
	tasks := out["tasks"].(map[string]any)
	impl := tasks["IMPL-001"].(map[string]any)
	if impl["status"] != "completed" || !strings.Contains(fmt.Sprint(impl["findings"]), "pull/7") ||
		impl["role"] != "developer" || impl["pipeline_phase"] != "implementation" || !reflect.DeepEqual(impl["context_from"], []any{"RESEARCH-001"}) {
		t.Errorf("IMPL-001 closed in wo: %v", impl)
	}
	docs := tasks["DOCS-001"].(map[string]any)
	if docs["status"] != "pending" || docs["error"] != nil {
		t.Errorf("DOCS-001 reopened in wo: %v", docs)
	}
	test := tasks["TEST-001"].(map[string]any)
	if test["status"] != "failed" || test["error"] != "runner lost" || !reflect.DeepEqual(test["deps"], []any{"DOCS-001", "IMPL-001"}) ||
		test["wave"] != 5.0 || test["pipeline_phase"] != "verification" {
		t.Errorf("TEST-001 blocked in wo: %v", test)
	}
	if _, added := test["findings"]; added {
		t.Errorf("TEST-001 gained a findings field it never had: %v", test)
	}
	// Wave 3 is now all completed? No: DOCS-001 is pending again.
	if !reflect.DeepEqual(out["completed_waves"], []any{1.0, 2.0}) {
		t.Errorf("completed_waves %v", out["completed_waves"])
	}
	if out["gc_rounds"] != 2.0 || out["skill"] != "team-lifecycle-v4" || out["session_id"] != "tlv4-auth-system-20260324" {
		t.Errorf("session fields: %v", out)
	}
}

func TestTasksJSONWavesMoveLaterWhenWoAddsADependency(t *testing.T) {
	m := example(t)
	out := roundTrip(t, encoded(t, m), func(_ Document, docs []Document) {
		for _, d := range docs {
			if Key(d) == "REVIEW-001" { // wave 4; now also after TEST-001 in wave 5
				d["work_order"].(map[string]any)["dependencies"].(map[string]any)["blocked_by"] = []any{"DOCS-001", "TEST-001"}
			}
		}
	})
	if w := out["tasks"].(map[string]any)["REVIEW-001"].(map[string]any)["wave"]; w != 6.0 {
		t.Errorf("REVIEW-001 is in wave %v, want 6: after TEST-001", w)
	}
	if w := out["tasks"].(map[string]any)["TEST-001"].(map[string]any)["wave"]; w != 5.0 {
		t.Errorf("TEST-001 moved from the file's wave 5 to %v", w)
	}
}

// agentTask is the procedure wo import gives a task: one agent step.
func agentTask(role, description string) []any {
	return []any{map[string]any{"step": 1, "action": "agent", "description": fmt.Sprintf("As %s: %s", role, description)}}
}
