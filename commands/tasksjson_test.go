package commands

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const tasksExample = "../workorder/testdata/tasks.example.json"

// sameJSON compares two JSON texts as parsed values and says where they
// differ, task by task.
func sameJSON(t *testing.T, want, got []byte) {
	t.Helper()
	var w, g map[string]any
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("export is not JSON: %v\n%s", err, got)
	}
	wt, _ := w["tasks"].(map[string]any)
	gt, _ := g["tasks"].(map[string]any)
	for id := range wt {
		if !reflect.DeepEqual(wt[id], gt[id]) {
			t.Errorf("task %s changed:\n gave %s\n  got %s", id, mustJSON(t, wt[id]), mustJSON(t, gt[id]))
		}
	}
	for id := range gt {
		if _, ok := wt[id]; !ok {
			t.Errorf("task %s appeared", id)
		}
	}
	delete(w, "tasks")
	delete(g, "tasks")
	if !reflect.DeepEqual(w, g) {
		t.Errorf("session fields changed:\n gave %s\n  got %s", mustJSON(t, w), mustJSON(t, g))
	}
}

func exportTasksJSONOf(t *testing.T, db string, data []byte) []byte {
	t.Helper()
	var f struct {
		SessionID string `json:"session_id"`
	}
	json.Unmarshal(data, &f)
	epic := "task_" + strings.ReplaceAll(strings.ToLower(f.SessionID), "-", "_")
	return []byte(mustRun(t, db, "", "export", "--format", "tasks-json", "--epic", epic).stdout)
}

func TestTasksJSONExampleComesBackUnchanged(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(tasksExample)
	if err != nil {
		t.Fatal(err)
	}
	db := newDB(t)
	r := mustRun(t, db, "", "import", "--format", "tasks-json", tasksExample)
	if !strings.Contains(r.stdout, "imported 8 task(s)") {
		t.Errorf("import: %s", r.stdout)
	}
	// "do a" is schema-valid: the 10-character rule of task creation warns.
	if !strings.Contains(r.stderr, "warning: DRAFT-001 work_order.objective: Must be at least 10 characters") {
		t.Errorf("no warning for the short description: %q", r.stderr)
	}
	sameJSON(t, data, exportTasksJSONOf(t, db, data))

	// Through wo's own document format and a second store, too.
	docs := mustRun(t, db, "", "export", "--epic", "task_tlv4_auth_system_20260324").stdout
	db2 := filepath.Join(t.TempDir(), "two.db")
	mustRun(t, db2, docs, "import", "-")
	sameJSON(t, data, exportTasksJSONOf(t, db2, data))
}

func TestTasksJSONSchemaViolationsExit2AndStoreNothing(t *testing.T) {
	t.Parallel()
	var m map[string]any
	data, _ := os.ReadFile(tasksExample)
	json.Unmarshal(data, &m)
	research := m["tasks"].(map[string]any)["RESEARCH-001"].(map[string]any)
	research["findings"], research["quality_score"], research["supervision_verdict"] = strings.Repeat("x", 600), 150, "maybe"
	m["gc_rounds"] = -3
	db := newDB(t)
	r := runWo(t, db, string(mustJSON(t, m)), "import", "--format", "tasks-json", "-")
	if r.code != ExitInvalid {
		t.Fatalf("exit %d, want %d\n%s", r.code, ExitInvalid, r.stderr)
	}
	for _, want := range []string{
		"gc_rounds: is -3; it must be at least 0",
		"tasks.RESEARCH-001.findings: is 600 characters long; at most 500 are allowed",
		"tasks.RESEARCH-001.quality_score: is 150; it must be at most 100",
		`tasks.RESEARCH-001.supervision_verdict: "maybe" is not one of "pass", "warn", "block", null`,
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	if r := runWo(t, db, "", "show", "RESEARCH-001"); r.code == 0 {
		t.Errorf("an invalid file stored RESEARCH-001:\n%s", r.stdout)
	}
	j := runWo(t, db, string(mustJSON(t, m)), "import", "--format", "tasks-json", "-", "--json")
	if !strings.Contains(j.stdout, `"field": "tasks.RESEARCH-001.quality_score"`) {
		t.Errorf("--json does not name the field:\n%s", j.stdout)
	}
}

// generatedTasksFile is a random schema-valid tasks.json that uses every
// field the format has, leaves optional ones out at random, and adds
// fields of its own.
func generatedTasksFile(r *rand.Rand, n int) []byte {
	maybe := func() bool { return r.IntN(2) == 0 }
	text := func(max int) string {
		words := []string{"token", "gateway", "ré", "sumé", "do", "a", "—", "測試", "refresh", "\"quoted\"", "x"}
		var b strings.Builder
		for b.Len() < max && r.IntN(12) != 0 {
			b.WriteString(words[r.IntN(len(words))] + " ")
		}
		s := []rune(strings.TrimSpace(b.String()))
		return string(s[:min(len(s), max)])
	}
	statuses := []string{"pending", "in_progress", "completed", "failed", "skipped"}
	verdicts := []any{"pass", "warn", "block", nil}
	ids := []string{}
	tasks := map[string]any{}
	waves := map[string]int{}
	count := 1 + r.IntN(7)
	for i := 0; i < count; i++ {
		id := fmt.Sprintf("%s-%03d", []string{"PLAN", "IMPL", "QA.v2", "review_x"}[r.IntN(4)], i)
		deps := []any{}
		wave := 1
		for _, d := range ids {
			if r.IntN(3) == 0 {
				deps = append(deps, d)
				wave = max(wave, waves[d]+1)
			}
		}
		if len(deps) > 0 && r.IntN(5) == 0 {
			deps = append(deps, deps[0]) // the schema allows a dep twice
		}
		wave += r.IntN(2) // a wave may leave a gap
		waves[id] = wave
		status := statuses[r.IntN(len(statuses))]
		e := map[string]any{"title": text(40), "description": text(700), "role": text(12), "deps": deps, "wave": wave, "status": status}
		if maybe() {
			e["pipeline_phase"] = text(15)
		}
		if maybe() && len(ids) > 0 {
			e["context_from"] = []any{ids[r.IntN(len(ids))]}
		} else if maybe() {
			e["context_from"] = []any{}
		}
		switch {
		case status == "completed":
			e["findings"] = text(500)
		case maybe():
			e["findings"] = nil
		}
		switch {
		case status == "failed" || status == "skipped":
			e["error"] = text(80)
		case maybe():
			e["error"] = nil
		}
		switch r.IntN(4) {
		case 0:
			e["quality_score"] = nil
		case 1:
			e["quality_score"] = r.IntN(101)
		case 2:
			e["quality_score"] = float64(r.IntN(1001)) / 10
		}
		if maybe() {
			e["supervision_verdict"] = verdicts[r.IntN(len(verdicts))]
		}
		if maybe() {
			e["discoveries"] = map[string]any{"task_id": id, "timestamp": "2026-03-24T10:00:00Z", "status": "completed",
				"findings": text(100), "data": map[string]any{"key_findings": []any{text(20)}, "risks_logged": r.IntN(4)}}
		}
		ids = append(ids, id)
		tasks[id] = e
	}
	f := map[string]any{
		"session_id":  fmt.Sprintf("gen%d-round-trip-%08d", n, 20260101+r.IntN(300)),
		"skill":       text(20),
		"pipeline":    text(20),
		"requirement": text(900),
		"created_at":  []string{"2026-03-24T09:15:00Z", "2026-03-24T09:15:00.123+08:00", "2026-12-31T23:59:59-05:00"}[r.IntN(3)],
		"tasks":       tasks,
	}
	if maybe() {
		f["supervision"] = maybe()
	}
	if maybe() {
		f["completed_waves"] = []any{1 + r.IntN(3)}
	}
	if maybe() {
		f["active_agents"] = map[string]any{ids[0]: "agent-" + text(6)}
	}
	if maybe() {
		f["gc_rounds"] = r.IntN(9)
	}
	if maybe() {
		f["x_team_notes"] = map[string]any{"owner": text(10), "n": []any{1, 2.5, nil, true}}
	}
	b, _ := json.MarshalIndent(f, "", "  ")
	return b
}

func TestGeneratedTasksJSONFilesComeBackUnchanged(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(4, 2))
	for n := 0; n < 25; n++ {
		data := generatedTasksFile(r, n)
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			t.Parallel()
			db := newDB(t)
			res := runWo(t, db, string(data), "import", "--format", "tasks-json", "-")
			if res.code != 0 {
				t.Fatalf("a schema-valid file is refused: exit %d\n%s\n%s", res.code, res.stderr, data)
			}
			sameJSON(t, data, exportTasksJSONOf(t, db, data))
		})
	}
}
