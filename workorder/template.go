package workorder

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/wo-runner/wo/termtext"
)

// placeholderPattern matches <name>; a '<' followed by anything else (a
// shell redirection, "a < b") is left alone.
var placeholderPattern = regexp.MustCompile(`<([A-Za-z_][A-Za-z0-9_]*)>`)

// UnknownPlaceholderError lists every placeholder a template names that no
// layer of the scope defines.
type UnknownPlaceholderError struct {
	Template string
	Names    []string
}

func (e *UnknownPlaceholderError) Error() string {
	quoted := make([]string, len(e.Names))
	for i, n := range e.Names {
		quoted[i] = "<" + n + ">"
	}
	names := termtext.Clip(strings.Join(quoted, ", "), 500)
	return fmt.Sprintf("unknown placeholder %s in %s: not found in work_order.state, work_order.inputs, work_order.context, nor among %s",
		names, quote(e.Template), strings.Join(DerivedPlaceholders, ", "))
}

// DerivedPlaceholders are names wo computes from the task when no layer
// defines them.
var DerivedPlaceholders = []string{"task_key", "title", "objective", "body"}

// Scope resolves placeholders: work_order.state first, then inputs, then
// context, then the derived names.
type Scope struct {
	layers  []map[string]any
	derived map[string]string
}

// NewScope builds the lookup scope of a document.
func NewScope(doc Document) Scope {
	var layers []map[string]any
	for _, path := range []string{"work_order.state", "work_order.inputs", "work_order.context"} {
		if v, ok := Lookup(doc, path); ok {
			if m, ok := v.(map[string]any); ok {
				layers = append(layers, m)
			}
		}
	}
	return Scope{layers: layers, derived: derive(doc)}
}

func derive(doc Document) map[string]string {
	objective := String(doc, "work_order.objective")
	body := objective
	if files, ok := Lookup(doc, "work_order.inputs.file_manifest"); ok {
		if list, ok := files.([]any); ok && len(list) > 0 {
			var b strings.Builder
			b.WriteString(objective)
			b.WriteString("\n\nFiles in this PR:\n")
			for _, f := range list {
				fmt.Fprintf(&b, "- %v\n", f)
			}
			body = strings.TrimRight(b.String(), "\n")
		}
	}
	return map[string]string{
		"task_key":  Key(doc),
		"title":     String(doc, "title"),
		"objective": objective,
		"body":      body,
	}
}

// Value returns the rendered value of one name.
func (s Scope) Value(name string) (string, bool) {
	for _, layer := range s.layers {
		v, ok := layer[name]
		if !ok || v == nil {
			continue
		}
		return formatValue(v), true
	}
	if v, ok := s.derived[name]; ok {
		return v, true
	}
	return "", false
}

// Render replaces every <name> in tmpl. Unknown names are an error that
// lists them all.
func (s Scope) Render(tmpl string) (string, error) { return s.RenderLeaving(tmpl, nil) }

// RenderLeaving is Render, except that the names in later (state fields
// that steps fill in as they run) are left as <name> when they have no
// value yet: what a plan shows before the run gets there.
func (s Scope) RenderLeaving(tmpl string, later []string) (string, error) {
	var unknown []string
	out := placeholderPattern.ReplaceAllStringFunc(tmpl, func(m string) string {
		name := m[1 : len(m)-1]
		if v, ok := s.Value(name); ok {
			return v
		}
		if !slices.Contains(later, name) {
			unknown = appendUnique(unknown, name)
		}
		return m
	})
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return "", &UnknownPlaceholderError{Template: tmpl, Names: unknown}
	}
	return out, nil
}

// Text fills in the <names> of prose a person reads (a step's
// description, as wo split writes them: "Create isolated worktree from
// <base_branch>"). A name with no value, not yet or ever, stays as
// written: prose is read, not run, so it is never an error.
func (s Scope) Text(text string) string {
	return placeholderPattern.ReplaceAllStringFunc(text, func(m string) string {
		if v, ok := s.Value(m[1 : len(m)-1]); ok {
			return v
		}
		return m
	})
}

func formatValue(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case []any:
		parts := make([]string, len(t))
		for i, x := range t {
			parts[i] = formatValue(x)
		}
		return strings.Join(parts, " ")
	case map[string]any:
		// An object as its JSON, which a command and a reader both take,
		// not Go's map[…].
		if b, err := json.Marshal(t); err == nil {
			return string(b)
		}
		return fmt.Sprint(t)
	default:
		return fmt.Sprint(t)
	}
}

func appendUnique(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}
