package workorder

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// generic decodes JSON the way encoding/json does by default, for
// comparing a file with its export.
func generic(t *testing.T, data []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestAnUnchangedRoundTripGivesTheTeamsFileBack(t *testing.T) {
	m := example(t)
	// The team has not yet marked wave 2 done although all of it is: the
	// export must not decide that for them while wo changed nothing.
	m["completed_waves"] = []any{1}
	data := encoded(t, m)
	out := roundTrip(t, data, nil)
	if want := generic(t, data); !reflect.DeepEqual(out, want) {
		got, _ := json.MarshalIndent(out, "", " ")
		t.Errorf("export differs from the imported file:\n%s", got)
	}
	// Once wo moves a task, completed_waves is wo's to say.
	out = roundTrip(t, data, func(_ Document, docs []Document) {
		for _, d := range docs {
			if Key(d) == "IMPL-001" {
				d["status"] = "closed"
			}
		}
	})
	if !reflect.DeepEqual(out["completed_waves"], []any{1.0, 2.0}) {
		t.Errorf("completed_waves after IMPL-001 closed: %v", out["completed_waves"])
	}
}

func TestImportedTasksKeepTheirErrorAsBlockReasonAndListWhatTheyBlock(t *testing.T) {
	m := example(t)
	taskOf(m, "DOCS-001")["error"] = "   "
	f, err := ParseTasksFile("tasks.json", encoded(t, m))
	if err != nil {
		t.Fatal(err)
	}
	_, docs := FromTasksFile(f, agentTask)
	byKey := map[string]Document{}
	for _, d := range docs {
		byKey[Key(d)] = d
	}
	reasons := map[string]string{
		"DOCS-001":   "tasks.json status failed", // an error that says nothing
		"REVIEW-001": "Skipped: dependency DOCS-001 failed",
	}
	for k, want := range reasons {
		if got := byKey[k]["block_reason"]; got != want {
			t.Errorf("%s: block_reason %q, want %q", k, got, want)
		}
	}
	blocks := map[string][]any{
		"CHECKPOINT-001": {"DOCS-001", "IMPL-001"},
		"TEST-001":       {}, // an empty array, not null
	}
	for k, want := range blocks {
		if got := Get(byKey[k], "work_order.dependencies.blocks"); !reflect.DeepEqual(got, want) {
			t.Errorf("%s blocks %#v, want %#v", k, got, want)
		}
	}
}

func TestARequirementOfExactly500CharactersIsKeptWhole(t *testing.T) {
	for n, want := range map[int]string{
		500: strings.Repeat("é", 500),
		501: strings.Repeat("é", 499) + "…",
	} {
		m := example(t)
		m["requirement"] = strings.Repeat("é", n)
		f, err := ParseTasksFile("tasks.json", encoded(t, m))
		if err != nil {
			t.Fatal(err)
		}
		if epic, _ := FromTasksFile(f, agentTask); epic["description"] != want {
			t.Errorf("%d characters: description has %d", n, len([]rune(epic["description"].(string))))
		}
	}
}

// woTask is a work order made in wo, not imported.
func woTask(key, status string, fields map[string]any, state map[string]any) Document {
	d := Document{"_key": key, "status": status, "work_order": map[string]any{
		"version": "1.0", "procedure": []any{}, "state": state}}
	for k, v := range fields {
		if k == "objective" {
			d["work_order"].(map[string]any)["objective"] = v
			continue
		}
		d[k] = v
	}
	return d
}

func TestExportingTasksMadeInWo(t *testing.T) {
	epic := Document{"_key": "task_Auth_Epic", "title": "Auth", "description": "Add OAuth2 login",
		"created_at": "2026-03-24T09:15:00Z"}
	long := strings.Repeat("r", 474) // "Persephone status closed; " + long is 500 bytes
	children := []Document{
		woTask("task_a", "open", map[string]any{"title": "Plan", "objective": "Plan the work", "description": "A longer description"}, map[string]any{}),
		woTask("task_b", "open", map[string]any{"description": "Only a description"}, map[string]any{"skipped": map[string]any{"reason": "not needed"}}),
		woTask("task_c", "closed", nil, map[string]any{"pr_url": "https://github.com/o/r/pull/3", "review_iterations": 2, "review_result": "approved"}),
		woTask("task_d", "closed", nil, map[string]any{"review_result": long}),
		woTask("task_e", "closed", nil, map[string]any{"review_result": long + "x"}),
	}
	f, err := ToTasksFile(epic, children)
	if err != nil {
		t.Fatal(err)
	}
	if f.SessionID != "wo-task-auth-epic-20260324" || f.CreatedAt != "2026-03-24T09:15:00Z" || f.Requirement != "Add OAuth2 login" {
		t.Errorf("session: %q %q %q", f.SessionID, f.CreatedAt, f.Requirement)
	}
	str := func(p *string) string {
		if p == nil {
			return "<nil>"
		}
		return *p
	}
	want := map[string][4]string{ // title, description, status, findings or error
		"task_a": {"Plan", "Plan the work", "pending", "<nil>"},
		"task_b": {"task_b", "Only a description", "skipped", "not needed"},
		"task_c": {"task_c", "", "completed", "Persephone status closed; PR https://github.com/o/r/pull/3; 2 review iteration(s); approved"},
		"task_d": {"task_d", "", "completed", "Persephone status closed; " + long},
		"task_e": {"task_e", "", "completed", "Persephone status closed; " + long[:471] + "..."},
	}
	for k, w := range want {
		e := f.Tasks[k]
		said := str(e.Findings)
		if e.Findings == nil {
			said = str(e.Error)
		}
		if got := [4]string{e.Title, e.Description, e.Status, said}; got != w {
			t.Errorf("%s: %q, want %q", k, got, w)
		}
	}
	// An epic whose key gives no slug and whose description is empty.
	f, err = ToTasksFile(Document{"_key": "__", "title": "Only a title", "created_at": "2026-01-02T03:04:05Z"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if f.SessionID != "wo-epic-20260102" || f.Requirement != "Only a title" {
		t.Errorf("session %q requirement %q", f.SessionID, f.Requirement)
	}
}
