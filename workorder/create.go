package workorder

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// CreateParams are seed 000's task-creation parameters, by their names.
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

// FromCreateParams validates the parameters with seed 000's rules, errors
// and warnings alike, and builds the task with its task_context in the
// seed's registry shape. Lists are trimmed, emptied items dropped and
// duplicates removed first; fields left empty are not stored.
func FromCreateParams(p CreateParams, now time.Time) (Document, []Problem) {
	var probs []Problem
	errorf := func(field, format string, args ...any) {
		probs = append(probs, Problem{Path: field, Message: fmt.Sprintf(format, args...), Severity: SeverityError})
	}
	warnf := func(field, format string, args ...any) {
		probs = append(probs, Problem{Path: field, Message: fmt.Sprintf(format, args...), Severity: SeverityWarning})
	}
	desc := strings.TrimSpace(p.Description)
	switch n := len([]rune(desc)); {
	case n < 10:
		errorf("description", "Must be at least 10 characters")
	case n > 500:
		errorf("description", "Must be at most 500 characters")
	}
	prio := strings.ToUpper(strings.TrimSpace(p.Priority))
	if prio == "" {
		prio = "P2"
	}
	word, ok := priorityAliases[prio]
	if !ok {
		errorf("priority", "Must be P0, P1, P2, or P3")
	}
	tc := map[string]any{}
	if bg := strings.TrimSpace(p.BackgroundContext); bg != "" {
		if len([]rune(bg)) < 50 {
			warnf("background_context", "Background context is very short (<50 chars). Consider adding more detail.")
		}
		if len([]rune(bg)) > 5000 {
			errorf("background_context", "Must be at most 5000 characters")
		}
		tc["background_context"] = bg
	}
	items := func(field string, list []string, maxItems int, noun string) []string {
		clean := CleanList(list)
		if len(clean) > maxItems {
			errorf(field, "Maximum %d items allowed", maxItems)
		}
		for i, it := range clean {
			if len([]rune(it)) < 10 {
				warnf(fmt.Sprintf("%s[%d]", field, i), "%s is very short: '%s'. Consider being more specific.", noun, it)
			}
			if len([]rune(it)) > 200 {
				errorf(fmt.Sprintf("%s[%d]", field, i), "Each item must be at most 200 characters")
			}
		}
		return clean
	}
	stamp := now.UTC().Format(time.RFC3339Nano)
	if list := items("expected_deliverables", p.ExpectedDeliverables, 20, "Deliverable"); len(list) > 0 {
		tc["expected_deliverables"] = map[string]any{"items": AnyList(list), "validation_added": stamp}
	}
	if list := items("success_criteria", p.SuccessCriteria, 15, "Criterion"); len(list) > 0 {
		for i, it := range list {
			if !containsAny(strings.ToLower(it), measurableWords) {
				warnf(fmt.Sprintf("success_criteria[%d]", i), "Criterion may not be measurable: '%s'. Consider adding quantifiable metrics.", it)
			}
		}
		tc["success_criteria"] = map[string]any{"criteria": AnyList(list), "all_required": true}
	}
	if list := items("constraints", p.Constraints, 15, "Constraint"); len(list) > 0 {
		for i, it := range list {
			if !containsAny(strings.ToLower(it), constraintWords) {
				warnf(fmt.Sprintf("constraints[%d]", i), "Constraint should start with imperative: '%s'", it)
			}
		}
		tc["constraints"] = map[string]any{"rules": AnyList(list), "enforcement_level": "strict"}
	}
	resolve := func(path string) string {
		if !filepath.IsAbs(path) {
			if p.ClientCWD != "" {
				path = filepath.Join(p.ClientCWD, path)
			} else if abs, err := filepath.Abs(path); err == nil {
				path = abs
			}
		}
		if real, err := filepath.EvalSymlinks(path); err == nil {
			path = real
		}
		return path
	}
	if files := CleanList(p.RelevantFiles); len(files) > 0 {
		if len(files) > 50 {
			errorf("relevant_files", "Maximum 50 files allowed")
		}
		var out []any
		for _, f := range files {
			path := resolve(f)
			if _, err := os.Stat(path); err != nil {
				warnf("relevant_files", "File not found: '%s' - will be skipped by agents", path)
			}
			out = append(out, path)
		}
		tc["relevant_files"] = out
	}
	if docs := CleanList(p.RelatedDocumentation); len(docs) > 0 {
		if len(docs) > 20 {
			errorf("related_documentation", "Maximum 20 items allowed")
		}
		var out []any
		for _, d := range docs {
			if strings.HasPrefix(d, "http://") || strings.HasPrefix(d, "https://") {
				if strings.Contains(d, " ") {
					warnf("related_documentation", "URL contains spaces: '%s'", d)
				}
				out = append(out, d)
				continue
			}
			path := d
			if !filepath.IsAbs(path) {
				if p.ClientCWD != "" {
					path = filepath.Join(p.ClientCWD, path)
				} else if abs, err := filepath.Abs(path); err == nil {
					path = abs
				}
			}
			if _, err := os.Stat(path); err != nil {
				warnf("related_documentation", "Documentation file not found: '%s'", path)
			}
			out = append(out, path)
		}
		tc["related_documentation"] = out
	}
	title := strings.TrimSpace(p.Title)
	if title == "" {
		title = strings.SplitN(desc, "\n", 2)[0]
		if len([]rune(title)) > 80 {
			title = string([]rune(title)[:79]) + "…"
		}
	}
	doc := Document{"title": title, "description": desc, "priority": word, "status": "open", "type": "task",
		"created_at": Timestamp(now), "updated_at": Timestamp(now)}
	if len(tc) > 0 {
		var warnings []any
		for _, pr := range probs {
			if pr.Severity == SeverityWarning {
				warnings = append(warnings, pr.Message)
			}
		}
		tc["validation_performed"] = true
		tc["validation_timestamp"] = stamp
		tc["validation_warnings"] = AnyList(warnings)
		doc["task_context"] = tc
	}
	return doc, probs
}
