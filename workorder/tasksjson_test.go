package workorder

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// schema compiles seed 004's JSON Schema (a copy in fixtures/).
func schema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open("../fixtures/tasks-json.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("team-tasks-schema.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("team-tasks-schema.json")
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
	// The schema can fail: a completed task without findings is rejected.
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
	e2, docs := FromTasksFile(back)
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
