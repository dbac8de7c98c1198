package workorder

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"
)

// tasks.json is seed 004's team task state: a session with tasks keyed by
// id, each with deps, a wave and a status. The mapping to Persephone:
//
//	open → pending; in_progress → in_progress; in_review and closed →
//	completed (the work order has done its part; findings say where the PR
//	stands); blocked → failed (error: block_reason).
//
// and back: pending → open, in_progress → in_progress, completed → closed,
// failed and skipped → blocked with the error as block_reason.

// TasksFile is the tasks.json document.
type TasksFile struct {
	SessionID      string               `json:"session_id"`
	Skill          string               `json:"skill"`
	Pipeline       string               `json:"pipeline"`
	Requirement    string               `json:"requirement"`
	CreatedAt      string               `json:"created_at"`
	Supervision    bool                 `json:"supervision"`
	CompletedWaves []int                `json:"completed_waves"`
	ActiveAgents   map[string]string    `json:"active_agents"`
	GCRounds       int                  `json:"gc_rounds"`
	Tasks          map[string]TaskEntry `json:"tasks"`
}

// TaskEntry is one task of tasks.json.
type TaskEntry struct {
	Title              string   `json:"title"`
	Description        string   `json:"description"`
	Role               string   `json:"role"`
	Deps               []string `json:"deps"`
	ContextFrom        []string `json:"context_from"`
	Wave               int      `json:"wave"`
	Status             string   `json:"status"`
	Findings           *string  `json:"findings"`
	QualityScore       *float64 `json:"quality_score"`
	SupervisionVerdict *string  `json:"supervision_verdict"`
	Error              *string  `json:"error"`
}

var sessionSlug = regexp.MustCompile(`[^a-z0-9]+`)

// ToTasksFile writes an epic and its children as tasks.json.
func ToTasksFile(epic Document, children []Document) (*TasksFile, error) {
	created := String(epic, "created_at")
	t, err := time.Parse(time.RFC3339Nano, created)
	if err != nil {
		t = Now()
		created = Timestamp(t)
	}
	slug := strings.Trim(sessionSlug.ReplaceAllString(strings.ToLower(Key(epic)), "-"), "-")
	if slug == "" {
		slug = "epic"
	}
	requirement := String(epic, "description")
	if requirement == "" {
		requirement = String(epic, "title")
	}
	f := &TasksFile{
		SessionID: "wo-" + slug + "-" + t.UTC().Format("20060102"), Skill: "wo", Pipeline: "work-orders",
		Requirement: requirement, CreatedAt: created, Supervision: false,
		CompletedWaves: []int{}, ActiveAgents: map[string]string{}, Tasks: map[string]TaskEntry{},
	}
	keys := map[string]bool{}
	for _, c := range children {
		keys[Key(c)] = true
	}
	deps := NewGraph(children, nil).Within(keys)
	waves, err := Waves(deps, keys)
	if err != nil {
		return nil, err
	}
	waveDone := map[int]bool{}
	for _, c := range children {
		k := Key(c)
		e := TaskEntry{Title: String(c, "title"), Description: String(c, "work_order.objective"), Role: "work-order",
			Deps: nonNilStrings(deps[k]), ContextFrom: []string{}, Wave: waves[k]}
		if e.Description == "" {
			e.Description = String(c, "description")
		}
		if e.Title == "" {
			e.Title = k
		}
		skip := Get(c, "work_order.state.skipped.reason")
		switch StatusOf(c) {
		case StatusOpen:
			e.Status = "pending"
			if reason, ok := skip.(string); ok && reason != "" {
				e.Status, e.Error = "skipped", &reason
			}
		case StatusInProgress:
			e.Status = "in_progress"
		case StatusInReview, StatusClosed:
			e.Status = "completed"
			findings := fmt.Sprintf("Persephone status %s", String(c, "status"))
			if pr := String(c, "work_order.state.pr_url"); pr != "" {
				findings += "; PR " + pr
			}
			if n, ok := Lookup(c, "work_order.state.review_iterations"); ok {
				findings += fmt.Sprintf("; %v review iteration(s)", n)
			}
			if r := String(c, "work_order.state.review_result"); r != "" {
				findings += "; " + r
			}
			if len(findings) > 500 {
				findings = findings[:497] + "..."
			}
			e.Findings = &findings
		case StatusBlocked:
			e.Status = "failed"
			reason := String(c, "block_reason")
			if reason == "" {
				reason = "blocked"
			}
			e.Error = &reason
		default:
			return nil, fmt.Errorf("task %s has status %q, which has no tasks.json equivalent", k, String(c, "status"))
		}
		f.Tasks[k] = e
		if _, seen := waveDone[e.Wave]; !seen {
			waveDone[e.Wave] = true
		}
		if e.Status != "completed" {
			waveDone[e.Wave] = false
		}
	}
	for w, done := range waveDone {
		if done {
			f.CompletedWaves = append(f.CompletedWaves, w)
		}
	}
	sort.Ints(f.CompletedWaves)
	return f, nil
}

// CycleError is a dependency cycle, found through Key.
type CycleError struct{ Key string }

func (e *CycleError) Error() string { return "dependency cycle through " + e.Key }

// Waves gives each key its wave (seed 004): 1 without deps, else one more
// than its deepest dependency. deps maps a key to the keys it depends on.
func Waves(deps map[string][]string, keys map[string]bool) (map[string]int, error) {
	waves := map[string]int{}
	visiting := map[string]bool{}
	var visit func(k string) (int, error)
	visit = func(k string) (int, error) {
		if w, ok := waves[k]; ok {
			return w, nil
		}
		if visiting[k] {
			return 0, &CycleError{Key: k}
		}
		visiting[k] = true
		w := 1
		for _, d := range deps[k] {
			dw, err := visit(d)
			if err != nil {
				return 0, err
			}
			w = max(w, dw+1)
		}
		visiting[k] = false
		waves[k] = w
		return w, nil
	}
	for k := range keys {
		if _, err := visit(k); err != nil {
			return nil, err
		}
	}
	return waves, nil
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// ParseTasksFile reads tasks.json and enforces seed 004's structural rules:
// required fields, unique ids, deps and context_from that exist, no cycle,
// waves ordered by dependency; every problem is listed.
func ParseTasksFile(source string, data []byte) (*TasksFile, error) {
	if dup := duplicateTaskIDs(data); len(dup) > 0 {
		return nil, &InvalidError{Reports: []Report{{Key: source, Problems: problemsOf("tasks", dup, "task id %q appears more than once")}}}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	var f TasksFile
	if err := dec.Decode(&f); err != nil {
		return nil, locate(source, data, err)
	}
	var probs []Problem
	add := func(path, format string, args ...any) {
		probs = append(probs, Problem{Path: path, Message: fmt.Sprintf(format, args...), Severity: SeverityError})
	}
	if !regexp.MustCompile(`^[a-zA-Z0-9]+-[a-z0-9-]+-\d{8}$`).MatchString(f.SessionID) {
		add("session_id", "%q does not match <prefix>-<slug>-YYYYMMDD", f.SessionID)
	}
	for _, field := range []struct{ name, value string }{{"skill", f.Skill}, {"pipeline", f.Pipeline}, {"requirement", f.Requirement}, {"created_at", f.CreatedAt}} {
		if field.value == "" {
			add(field.name, "required")
		}
	}
	if len(f.Tasks) == 0 {
		add("tasks", "required: at least one task")
	}
	ids := sortedTaskIDs(f.Tasks)
	deps := map[string][]string{}
	keys := map[string]bool{}
	for _, id := range ids {
		keys[id] = true
	}
	statuses := []string{"pending", "in_progress", "completed", "failed", "skipped"}
	for _, id := range ids {
		t := f.Tasks[id]
		path := "tasks." + id
		if err := CheckKey(id); err != nil {
			add(path, "%v", err)
		}
		if t.Title == "" {
			add(path+".title", "required")
		}
		if t.Description == "" {
			add(path+".description", "required")
		}
		if t.Role == "" {
			add(path+".role", "required")
		}
		if t.Wave < 1 {
			add(path+".wave", "must be 1 or more")
		}
		if !contains(statuses, t.Status) {
			add(path+".status", "%q is not one of %s", t.Status, strings.Join(statuses, ", "))
		}
		if t.Status == "completed" && t.Findings == nil {
			add(path+".findings", "required when status is completed")
		}
		if (t.Status == "failed" || t.Status == "skipped") && t.Error == nil {
			add(path+".error", "required when status is %s", t.Status)
		}
		for _, d := range t.Deps {
			if !keys[d] {
				add(path+".deps", "%q is not a task of this file", d)
				continue
			}
			deps[id] = append(deps[id], d)
		}
		for _, d := range t.ContextFrom {
			if !keys[d] {
				add(path+".context_from", "%q is not a task of this file", d)
			}
		}
	}
	if _, err := Waves(deps, keys); err != nil {
		add("tasks", "%v", err)
	} else {
		for _, id := range ids {
			for _, d := range deps[id] {
				if f.Tasks[id].Wave <= f.Tasks[d].Wave {
					add("tasks."+id+".wave", "is %d but it depends on %s in wave %d: a task's wave must be later than its deps'", f.Tasks[id].Wave, d, f.Tasks[d].Wave)
				}
			}
		}
	}
	if len(probs) > 0 {
		return nil, &InvalidError{Reports: []Report{{Key: source, Problems: probs}}}
	}
	return &f, nil
}

func problemsOf(path string, items []string, format string) []Problem {
	var out []Problem
	for _, it := range items {
		out = append(out, Problem{Path: path, Message: fmt.Sprintf(format, it), Severity: SeverityError})
	}
	return out
}

func sortedTaskIDs(m map[string]TaskEntry) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// duplicateTaskIDs finds ids that appear twice in the tasks object, which
// a map decode would silently merge.
func duplicateTaskIDs(data []byte) []string {
	var top map[string]json.RawMessage
	if json.Unmarshal(data, &top) != nil {
		return nil
	}
	raw, ok := top["tasks"]
	if !ok {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	seen := map[string]bool{}
	var dup []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return dup
		}
		key, _ := tok.(string)
		if seen[key] {
			dup = append(dup, key)
		}
		seen[key] = true
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return dup
		}
	}
	return dup
}

// FromTasksFile makes an epic and one work order per task. Each work order
// runs an agent with the task's description and role; its dependencies are
// the task's deps.
func FromTasksFile(f *TasksFile) (Document, []Document) {
	epicKey := "task_" + strings.ReplaceAll(strings.ToLower(f.SessionID), "-", "_")
	now := Timestamp(Now())
	epic := Document{"_key": epicKey, "type": "epic", "status": "open", "priority": "medium",
		"title": fmt.Sprintf("%s: %s (%s)", f.Skill, f.Pipeline, f.SessionID), "description": clip(f.Requirement, 500),
		"created_at": f.CreatedAt, "updated_at": now, "labels": []any{"tasks-json"}}
	var docs []Document
	blocks := map[string][]any{}
	for _, id := range sortedTaskIDs(f.Tasks) {
		for _, d := range f.Tasks[id].Deps {
			blocks[d] = append(blocks[d], id)
		}
	}
	for _, id := range sortedTaskIDs(f.Tasks) {
		t := f.Tasks[id]
		status, reason := "open", ""
		switch t.Status {
		case "in_progress":
			status = "in_progress"
		case "completed":
			status = "closed"
		case "failed", "skipped":
			status = "blocked"
			if t.Error != nil {
				reason = *t.Error
			}
		}
		deps := make([]any, len(t.Deps))
		for i, d := range t.Deps {
			deps[i] = d
		}
		bl := blocks[id]
		if bl == nil {
			bl = []any{}
		}
		doc := Document{"_key": id, "title": t.Title, "type": "task", "status": status, "priority": "medium",
			"parent_key": epicKey, "created_at": f.CreatedAt, "updated_at": now,
			"work_order": map[string]any{
				"version": "1.0", "objective": t.Description,
				"inputs":       map[string]any{"role": t.Role, "wave": t.Wave},
				"dependencies": map[string]any{"blocked_by": deps, "blocks": bl},
				"procedure": []any{map[string]any{"step": 1, "action": "agent",
					"description": fmt.Sprintf("As %s: %s", t.Role, t.Description)}},
				"state": InitialState(),
			}}
		if reason != "" {
			doc["block_reason"] = reason
		}
		if t.Findings != nil {
			doc["work_order"].(map[string]any)["inputs"].(map[string]any)["findings"] = *t.Findings
		}
		docs = append(docs, doc)
	}
	return epic, docs
}

func clip(s string, n int) string {
	if len([]rune(s)) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}
