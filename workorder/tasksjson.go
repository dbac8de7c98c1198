package workorder

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"
)

// tasks.json is a team's task state: a session with tasks keyed by id,
// each with deps, a wave and a status. The mapping to Persephone:
//
//	open → pending; in_progress → in_progress; in_review and closed →
//	completed (the work order has done its part; findings say where the PR
//	stands); blocked → failed (error: block_reason).
//
// and back: pending → open, in_progress → in_progress, completed → closed,
// failed and skipped → blocked with the error as block_reason.
//
// An import keeps every field of the file as it was given, under
// "tasks_json" of the epic (the session's fields) and of each task (the
// task's entry), so that an export gives the team's file back: wo's own
// state decides status, deps, wave, completed_waves and, where the status
// moved, findings and error; everything else comes back unchanged.

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

	// kept is the session as the file gave it, tasks aside.
	kept map[string]any
}

// TaskEntry is one task of tasks.json.
type TaskEntry struct {
	Title              string   `json:"title"`
	Description        string   `json:"description"`
	Role               string   `json:"role"`
	PipelinePhase      string   `json:"pipeline_phase,omitempty"`
	Deps               []string `json:"deps"`
	ContextFrom        []string `json:"context_from"`
	Wave               int      `json:"wave"`
	Status             string   `json:"status"`
	Findings           *string  `json:"findings"`
	QualityScore       *float64 `json:"quality_score"`
	SupervisionVerdict *string  `json:"supervision_verdict"`
	Error              *string  `json:"error"`

	// kept is the entry as the file gave it, every field.
	kept map[string]any
}

// MarshalJSON writes the file as it was imported, with what wo decides.
func (f TasksFile) MarshalJSON() ([]byte, error) {
	type plain TasksFile
	if f.kept == nil {
		return json.Marshal(plain(f))
	}
	out := maps.Clone(f.kept)
	out["tasks"] = f.Tasks
	if f.CompletedWaves != nil { // nil: as the file had it, or left out
		out["completed_waves"] = f.CompletedWaves
	}
	return json.Marshal(out)
}

// MarshalJSON writes the entry as it was imported, with what wo decides;
// a nullable field the file left out stays out while wo has no value.
func (e TaskEntry) MarshalJSON() ([]byte, error) {
	type plain TaskEntry
	if e.kept == nil {
		return json.Marshal(plain(e))
	}
	out := maps.Clone(e.kept)
	out["status"], out["deps"], out["wave"] = e.Status, e.Deps, e.Wave
	for name, v := range map[string]*string{"findings": e.Findings, "error": e.Error} {
		if _, given := out[name]; v != nil {
			out[name] = *v
		} else if given {
			out[name] = nil
		}
	}
	return json.Marshal(out)
}

// TasksJSONField holds, in the epic and in each task, the fields of the
// tasks.json the documents were imported from.
const TasksJSONField = "tasks_json"

// keptFields reads a document's tasks_json object, if it has one.
func keptFields(doc Document) map[string]any {
	m, _ := doc[TasksJSONField].(map[string]any)
	return m
}

// decodeKept fills a typed value from kept fields.
func decodeKept(kept map[string]any, into any) error {
	b, err := json.Marshal(kept)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, into)
}

var sessionSlug = regexp.MustCompile(`[^a-z0-9]+`)

// ToTasksFile writes an epic and its children as tasks.json.
func ToTasksFile(epic Document, children []Document) (*TasksFile, error) {
	f, err := newTasksFile(epic)
	if err != nil {
		return nil, err
	}
	keys, entries, floor := keptEntries(children)
	deps := NewGraph(children, nil).Within(keys)
	waves, err := wavesAtLeast(deps, keys, floor)
	if err != nil {
		return nil, err
	}
	unchanged := f.kept != nil
	for _, c := range children {
		k := Key(c)
		e, known := entries[k]
		given := e.Status
		e.Deps = sameSetOr(e.Deps, nonNilStrings(deps[k]))
		e.Wave = waves[k]
		if !known {
			e = TaskEntry{Title: String(c, "title"), Description: String(c, "work_order.objective"), Role: "work-order",
				Deps: e.Deps, ContextFrom: []string{}, Wave: e.Wave}
			if e.Description == "" {
				e.Description = String(c, "description")
			}
			if e.Title == "" {
				e.Title = k
			}
		}
		status, findings, errText, err := stateOf(c)
		if err != nil {
			return nil, err
		}
		// A task wo left as the file had it keeps the file's findings and
		// error; a skipped one is blocked in Persephone, so failed there.
		keep := false
		switch {
		case !known:
		case status == "failed" && (given == "failed" || given == "skipped"):
			keep = String(c, "block_reason") == importedReason(e)
		case status == given && status != "skipped":
			keep = true
		}
		if !keep {
			unchanged = false
			e.Status, e.Findings, e.Error = status, findings, errText
		}
		f.Tasks[k] = e
	}
	if !unchanged || len(f.Tasks) != len(entries) {
		f.CompletedWaves = completedWaves(f.Tasks)
	}
	return f, nil
}

// keptEntries are the children's keys, the entries they keep of the file
// they were imported from (by key), and each one's wave there: a floor
// for its wave now.
func keptEntries(children []Document) (map[string]bool, map[string]TaskEntry, map[string]int) {
	keys := map[string]bool{}
	floor := map[string]int{}
	entries := map[string]TaskEntry{}
	for _, c := range children {
		k := Key(c)
		keys[k] = true
		if kept := keptFields(c); kept != nil {
			var e TaskEntry
			if decodeKept(kept, &e) == nil {
				e.kept = kept
				entries[k] = e
				floor[k] = e.Wave
			}
		}
	}
	return keys, entries, floor
}

// newTasksFile starts the file from the epic: as imported, or made up.
func newTasksFile(epic Document) (*TasksFile, error) {
	if kept := keptFields(epic); kept != nil {
		f := &TasksFile{}
		if err := decodeKept(kept, f); err == nil {
			f.kept, f.Tasks = kept, map[string]TaskEntry{}
			return f, nil
		}
	}
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
	return &TasksFile{
		SessionID: "wo-" + slug + "-" + t.UTC().Format("20060102"), Skill: "wo", Pipeline: "work-orders",
		Requirement: requirement, CreatedAt: created, Supervision: false,
		CompletedWaves: []int{}, ActiveAgents: map[string]string{}, Tasks: map[string]TaskEntry{},
	}, nil
}

// stateOf is a work order's tasks.json status, with the findings or the
// error that status needs.
func stateOf(c Document) (status string, findings, errText *string, err error) {
	switch StatusOf(c) {
	case StatusOpen:
		if reason, ok := Get(c, "work_order.state.skipped.reason").(string); ok && reason != "" {
			return "skipped", nil, &reason, nil
		}
		return "pending", nil, nil, nil
	case StatusInProgress:
		return "in_progress", nil, nil, nil
	case StatusInReview, StatusClosed:
		text := fmt.Sprintf("Persephone status %s", String(c, "status"))
		if pr := String(c, "work_order.state.pr_url"); pr != "" {
			text += "; PR " + pr
		}
		if n, ok := Lookup(c, "work_order.state.review_iterations"); ok {
			text += fmt.Sprintf("; %v review iteration(s)", n)
		}
		if r := String(c, "work_order.state.review_result"); r != "" {
			text += "; " + r
		}
		if len(text) > 500 {
			text = text[:497] + "..."
		}
		return "completed", &text, nil, nil
	case StatusBlocked:
		reason := String(c, "block_reason")
		if reason == "" {
			reason = "blocked"
		}
		return "failed", nil, &reason, nil
	default:
		return "", nil, nil, fmt.Errorf("task %s has status %q, which has no tasks.json equivalent", Key(c), String(c, "status"))
	}
}

// importedReason is the block_reason an import gives a failed or skipped
// entry: its error, or its status when the error says nothing.
func importedReason(e TaskEntry) string {
	if e.Error != nil && strings.TrimSpace(*e.Error) != "" {
		return *e.Error
	}
	return "tasks.json status " + e.Status
}

// sameSetOr keeps the file's order of deps while wo's deps are the same.
func sameSetOr(given, current []string) []string {
	if given == nil {
		return current
	}
	a, b := slices.Clone(given), slices.Clone(current)
	slices.Sort(a)
	slices.Sort(b)
	if slices.Equal(slices.Compact(a), b) {
		return given
	}
	return current
}

// completedWaves lists the waves whose every task is completed.
func completedWaves(tasks map[string]TaskEntry) []int {
	done := map[int]bool{}
	for _, e := range tasks {
		if _, seen := done[e.Wave]; !seen {
			done[e.Wave] = true
		}
		if e.Status != "completed" {
			done[e.Wave] = false
		}
	}
	out := []int{}
	for w, d := range done {
		if d {
			out = append(out, w)
		}
	}
	sort.Ints(out)
	return out
}

// CycleError is a dependency cycle, found through Key.
type CycleError struct{ Key string }

func (e *CycleError) Error() string { return "dependency cycle through " + e.Key }

// Waves gives each key its wave (tasks.json's rule): 1 without deps, else one more
// than its deepest dependency. deps maps a key to the keys it depends on.
func Waves(deps map[string][]string, keys map[string]bool) (map[string]int, error) {
	return wavesAtLeast(deps, keys, nil)
}

// wavesAtLeast is Waves where a key may ask for a later wave (the one a
// tasks.json gave it); a task still comes after its deps.
func wavesAtLeast(deps map[string][]string, keys map[string]bool, floor map[string]int) (map[string]int, error) {
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
		w := max(1, floor[k])
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

// ParseTasksFile reads tasks.json: it must satisfy the format's JSON
// Schema and its structural rules (unique ids, deps and context_from that
// exist, no cycle, waves ordered by dependency, findings for a completed
// task, an error for a failed or skipped one). Every problem is listed.
func ParseTasksFile(source string, data []byte) (*TasksFile, error) {
	invalid := func(probs []Problem) error {
		return &InvalidError{Reports: []Report{{Key: source, Problems: probs}}}
	}
	if dup := duplicateTaskIDs(data); len(dup) > 0 {
		return nil, invalid(problemsOf("tasks", dup, "task id %q appears more than once"))
	}
	var raw any
	if err := decodeStrict(data, &raw); err != nil {
		return nil, locate(source, data, err)
	}
	probs, err := schemaProblems(raw)
	if err != nil {
		return nil, err
	}
	if len(probs) > 0 {
		return nil, invalid(probs)
	}
	f, err := tasksFileOf(raw.(map[string]any))
	if err != nil {
		return nil, invalid([]Problem{{Path: "(top level)", Message: err.Error(), Severity: SeverityError}})
	}
	probs = append(probs, tasksProblems(f)...)
	if len(probs) > 0 {
		return nil, invalid(probs)
	}
	return f, nil
}

// tasksProblems are what the schema cannot say about a tasks.json: keys
// wo can use, findings and errors where the status needs them, deps and
// context_from that name tasks of the file, and waves after their deps'.
func tasksProblems(f *TasksFile) []Problem {
	var probs []Problem
	add := func(path, format string, args ...any) {
		probs = append(probs, Problem{Path: path, Message: fmt.Sprintf(format, args...), Severity: SeverityError})
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
	for _, id := range ids {
		if d := checkTask(id, f.Tasks[id], keys, add); len(d) > 0 {
			deps[id] = d
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
	return probs
}

// checkTask checks task id against the file's task ids (keys), and
// returns the deps it names that are tasks of the file.
func checkTask(id string, t TaskEntry, keys map[string]bool, add func(path, format string, args ...any)) []string {
	path := "tasks." + id
	if err := CheckKey(id); err != nil {
		add(path, "%v", err)
	}
	if t.Status == "completed" && t.Findings == nil {
		add(path+".findings", "required when status is completed")
	}
	if (t.Status == "failed" || t.Status == "skipped") && t.Error == nil {
		add(path+".error", "required when status is %s", t.Status)
	}
	var deps []string
	for _, d := range t.Deps {
		if !keys[d] {
			add(path+".deps", "%q is not a task of this file", d)
			continue
		}
		deps = append(deps, d)
	}
	for _, d := range t.ContextFrom {
		if !keys[d] {
			add(path+".context_from", "%q is not a task of this file", d)
		}
	}
	return deps
}

// tasksFileOf types a schema-valid file and keeps every field it has.
func tasksFileOf(top map[string]any) (*TasksFile, error) {
	f := &TasksFile{}
	if err := decodeKept(top, f); err != nil {
		return nil, err
	}
	f.kept = maps.Clone(top)
	delete(f.kept, "tasks")
	given, _ := top["tasks"].(map[string]any)
	for id, e := range f.Tasks {
		e.kept, _ = given[id].(map[string]any)
		f.Tasks[id] = e
	}
	return f, nil
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

// TaskProcedure makes the procedure of an imported task's work order from
// the task's role and description; the caller knows the actions (wo
// import gives each task one agent step).
type TaskProcedure func(role, description string) []any

// FromTasksFile makes an epic and one work order per task, whose procedure
// is procedure's and whose dependencies are the task's deps.
func FromTasksFile(f *TasksFile, procedure TaskProcedure) (Document, []Document) {
	epicKey := "task_" + strings.ReplaceAll(strings.ToLower(f.SessionID), "-", "_")
	now := Timestamp(Now())
	epic := Document{"_key": epicKey, "type": "epic", "status": "open", "priority": "medium",
		"title": fmt.Sprintf("%s: %s (%s)", f.Skill, f.Pipeline, f.SessionID), "description": clip(f.Requirement, 500),
		"created_at": f.CreatedAt, "updated_at": now, "labels": []any{"tasks-json"}}
	if f.kept != nil {
		epic[TasksJSONField] = f.kept
	}
	var docs []Document
	blocks := map[string][]any{}
	for _, id := range sortedTaskIDs(f.Tasks) {
		for _, d := range f.Tasks[id].Deps {
			blocks[d] = append(blocks[d], id)
		}
	}
	for _, id := range sortedTaskIDs(f.Tasks) {
		t := f.Tasks[id]
		status, reason := persephoneStatus(t)
		deps := make([]any, len(t.Deps))
		for i, d := range t.Deps {
			deps[i] = d
		}
		bl := blocks[id]
		if bl == nil {
			bl = []any{}
		}
		title := t.Title
		if strings.TrimSpace(title) == "" {
			title = id
		}
		doc := Document{"_key": id, "title": title, "type": "task", "status": status, "priority": "medium",
			"parent_key": epicKey, "created_at": f.CreatedAt, "updated_at": now,
			"work_order": map[string]any{
				"version": "1.0", "objective": t.Description,
				"inputs":       map[string]any{"role": t.Role, "wave": t.Wave},
				"dependencies": map[string]any{"blocked_by": deps, "blocks": bl},
				"procedure":    procedure(t.Role, t.Description),
				"state":        InitialState(),
			}}
		if reason != "" {
			doc["block_reason"] = reason
		}
		if t.kept != nil {
			doc[TasksJSONField] = t.kept
		}
		if t.Findings != nil {
			doc["work_order"].(map[string]any)["inputs"].(map[string]any)["findings"] = *t.Findings
		}
		docs = append(docs, doc)
	}
	return epic, docs
}

// persephoneStatus is a tasks.json task's status as Persephone has it,
// and the block reason of a failed or skipped one.
func persephoneStatus(t TaskEntry) (string, string) {
	switch t.Status {
	case "in_progress":
		return "in_progress", ""
	case "completed":
		return "closed", ""
	case "failed", "skipped":
		return "blocked", importedReason(t)
	}
	return "open", ""
}

func clip(s string, n int) string {
	if len([]rune(s)) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}
