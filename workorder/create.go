package workorder

import (
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// CreateParams are the task-creation parameters, by their names.
type CreateParams struct {
	Description          string   `json:"description"`
	Priority             string   `json:"priority"`
	ClientCWD            string   `json:"client_cwd"`
	BackgroundContext    string   `json:"background_context"`
	ExpectedDeliverables []string `json:"expected_deliverables"`
	SuccessCriteria      []string `json:"success_criteria"`
	Constraints          []string `json:"constraints"`
	RelevantFiles        []string `json:"relevant_files"`
	RelatedDocumentation []string `json:"related_documentation"`
	// Title is wo's: Persephone tasks have one. The description's first
	// line stands in when it is empty.
	Title string `json:"title"`
}

// FromCreateParams builds the task that the parameters describe, with its
// task_context in the task registry's shape. It does not judge them: Validate is
// the one place that holds the task-creation rules, so a task made from
// parameters and the same task imported as a document get the same
// messages (ParamPath names them by parameter). Lists are trimmed, emptied
// items dropped and duplicates removed first; fields left empty are not
// stored. Relative files resolve against ClientCWD (else the working
// directory), so that agents find them wherever they run.
func FromCreateParams(p CreateParams, now time.Time) Document {
	desc := strings.TrimSpace(p.Description)
	prio := strings.TrimSpace(p.Priority)
	if prio == "" {
		prio = "P2"
	}
	if word, ok := CanonicalPriority(prio); ok {
		prio = word
	}
	stamp := now.UTC().Format(time.RFC3339Nano)
	tc := taskContextOf(p, stamp)
	doc := Document{"description": desc, "priority": prio, "status": string(StatusOpen), "type": "task",
		"created_at": Timestamp(now), "updated_at": Timestamp(now)}
	// An empty title would be a second complaint about an empty
	// description; without one, readers fall back to the description.
	title := strings.TrimSpace(p.Title)
	if title == "" {
		title = strings.SplitN(desc, "\n", 2)[0]
		if len([]rune(title)) > 80 {
			title = string([]rune(title)[:79]) + "…"
		}
	}
	if title != "" {
		doc["title"] = title
	}
	if len(tc) > 0 {
		tc["validation_performed"] = true
		tc["validation_timestamp"] = stamp
		tc["validation_warnings"] = []any{}
		doc["task_context"] = tc
	}
	return doc
}

// taskContextOf is the task_context of the parameters (stamp: when they
// were validated): the background, the expected deliverables (stamped),
// the success criteria (all required), the constraints (strict) and the
// relevant files; empty when they give none.
func taskContextOf(p CreateParams, stamp string) map[string]any {
	tc := map[string]any{}
	if bg := strings.TrimSpace(p.BackgroundContext); bg != "" {
		tc["background_context"] = bg
	}
	if list := CleanList(p.ExpectedDeliverables); len(list) > 0 {
		tc["expected_deliverables"] = map[string]any{"items": AnyList(list), "validation_added": stamp}
	}
	if list := CleanList(p.SuccessCriteria); len(list) > 0 {
		tc["success_criteria"] = map[string]any{"criteria": AnyList(list), "all_required": true}
	}
	if list := CleanList(p.Constraints); len(list) > 0 {
		tc["constraints"] = map[string]any{"rules": AnyList(list), "enforcement_level": "strict"}
	}
	if files := CleanList(p.RelevantFiles); len(files) > 0 {
		out := make([]any, len(files))
		for i, f := range files {
			path := p.absPath(f)
			if real, err := filepath.EvalSymlinks(path); err == nil {
				path = real
			}
			out[i] = path
		}
		tc["relevant_files"] = out
	}
	if docs := CleanList(p.RelatedDocumentation); len(docs) > 0 {
		out := make([]any, len(docs))
		for i, d := range docs {
			if strings.HasPrefix(d, "http://") || strings.HasPrefix(d, "https://") {
				out[i] = d
			} else {
				out[i] = p.absPath(d)
			}
		}
		tc["related_documentation"] = out
	}
	return tc
}

// absPath is path made absolute against the client's folder (else wo's).
func (p CreateParams) absPath(path string) string {
	if filepath.IsAbs(path) {
		return path
	}
	if p.ClientCWD != "" {
		return filepath.Join(p.ClientCWD, path)
	}
	if a, err := filepath.Abs(path); err == nil {
		return a
	}
	return path
}

// RecordWarnings keeps the warnings of a task's validation in its
// task_context.validation_warnings, where agents and people read them. A
// task without task_context is left as it is.
func RecordWarnings(doc Document, r Report) {
	tc, ok := doc["task_context"].(map[string]any)
	if !ok {
		return
	}
	warnings := []any{}
	for _, p := range r.Warnings() {
		warnings = append(warnings, p.Message)
	}
	tc["validation_warnings"] = warnings
}

// paramPaths map where FromCreateParams stores a parameter to the
// parameter's name, longest prefix first.
var paramPaths = []struct{ doc, param string }{
	{"task_context.expected_deliverables.items", "expected_deliverables"},
	{"task_context.success_criteria.criteria", "success_criteria"},
	{"task_context.constraints.rules", "constraints"},
	{"task_context.", ""},
}

// ParamPath names a problem of a document built by FromCreateParams after
// the parameter it came from: task_context.constraints.rules[1] is
// constraints[1]. Other paths are returned as they are.
func ParamPath(path string) string {
	for _, m := range paramPaths {
		if strings.HasPrefix(path, m.doc) {
			return m.param + path[len(m.doc):]
		}
	}
	return path
}

// ParamProblems renames the problems of a document built by
// FromCreateParams with ParamPath, and names the value each is about.
func ParamProblems(doc Document, probs []Problem) []Problem {
	out := make([]Problem, len(probs))
	for i, p := range probs {
		p.Value = clipValue(ValueAt(doc, p.Path))
		p.Path = ParamPath(p.Path)
		out[i] = p
	}
	return out
}

// ValueAt reads the value at a problem's path (a.b[2].c); nil when there is
// none.
func ValueAt(doc Document, path string) any {
	var cur any = doc
	for _, part := range strings.Split(path, ".") {
		name, rest, _ := strings.Cut(part, "[")
		if name != "" {
			m, ok := cur.(map[string]any)
			if !ok {
				return nil
			}
			cur = m[name]
		}
		for rest != "" {
			idx, after, ok := strings.Cut(rest, "]")
			n, err := strconv.Atoi(idx)
			list, isList := cur.([]any)
			if !ok || err != nil || !isList || n < 0 || n >= len(list) {
				return nil
			}
			cur, rest = list[n], strings.TrimPrefix(after, "[")
		}
	}
	return cur
}

// clipValue keeps a refused value short in messages and output.
func clipValue(v any) any {
	if s, ok := v.(string); ok && len(s) > quoteLimit {
		return s[:quoteLimit] + "…"
	}
	if _, ok := v.(map[string]any); ok {
		return nil // a whole object is not what a person needs repeated
	}
	return v
}
