package workorder

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func doc(t *testing.T, raw string) Document {
	t.Helper()
	d, err := DecodeDocument("test", []byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestRenderLooksUpStateThenInputsThenContext(t *testing.T) {
	d := doc(t, `{"_key": "task_t", "title": "T", "work_order": {
		"objective": "Review the foundation",
		"context": {"branch": "from-context", "base_branch": "main", "only_ctx": "c"},
		"inputs":  {"branch": "from-inputs", "file_manifest": ["a.go", "b/c.go"], "pr_number": 7, "pr_title": "PR #7"},
		"state":   {"branch": "from-state", "worktree_path": null, "pr_number": 12, "loop_iterations": {"9": 2},
		            "review_threads": [{"path": "a.go", "comments": [{"author": "bot"}]}]}}}`)
	s := NewScope(d)
	cases := map[string]string{
		"<loop_iterations>":                 `{"9":2}`, // JSON, never Go's map[9:2]
		"<review_threads>":                  `{"comments":[{"author":"bot"}],"path":"a.go"}`,
		"<branch>":                          "from-state",
		"<only_ctx>":                        "c",
		"git checkout x -- <file_manifest>": "git checkout x -- a.go b/c.go",
		"pulls/<pr_number>/comments":        "pulls/12/comments",
		"<task_key>: <title>":               "task_t: T",
		"a < b and <pr_title>":              "a < b and PR #7",
		"<objective>":                       "Review the foundation",
	}
	for tmpl, want := range cases {
		got, err := s.Render(tmpl)
		if err != nil || got != want {
			t.Errorf("Render(%q) = %q, %v; want %q", tmpl, got, err, want)
		}
	}
	body, _ := s.Render("<body>")
	if !strings.HasPrefix(body, "Review the foundation") || !strings.Contains(body, "- b/c.go") {
		t.Errorf("body = %q", body)
	}
}

func TestRenderNullFallsThroughAndUnknownNamesAreListed(t *testing.T) {
	d := doc(t, `{"_key": "k", "work_order": {"inputs": {"worktree_path": "/tmp/w"}, "state": {"worktree_path": null}}}`)
	s := NewScope(d)
	if got, _ := s.Render("<worktree_path>"); got != "/tmp/w" {
		t.Errorf("a null in state must fall through to inputs, got %q", got)
	}
	_, err := s.Render("gh pr create --title '<pr_titel>' --body '<bdy>' <pr_titel>")
	var unknown *UnknownPlaceholderError
	if !errors.As(err, &unknown) {
		t.Fatalf("want UnknownPlaceholderError, got %v", err)
	}
	if strings.Join(unknown.Names, ",") != "bdy,pr_titel" {
		t.Errorf("names = %v", unknown.Names)
	}
	if !strings.Contains(err.Error(), "<bdy>, <pr_titel>") || !strings.Contains(err.Error(), "work_order.state") {
		t.Errorf("message = %v", err)
	}
}

func TestDecodeLocatesSyntaxErrors(t *testing.T) {
	_, err := DecodeDocuments("tasks.json", []byte("[\n {\"_key\": \"a\"},\n {\"_key\": }\n]"))
	var se *SyntaxError
	if !errors.As(err, &se) || se.Line != 3 || se.Column < 10 {
		t.Fatalf("got %v", err)
	}
	if !strings.HasPrefix(err.Error(), "tasks.json: malformed JSON at line 3, column") {
		t.Errorf("message %q", err)
	}
	if _, err := DecodeDocuments("f", []byte(`{"a": 1} {"b": 2}`)); !errors.As(err, &se) {
		t.Errorf("trailing data: %v", err)
	}
	if _, err := DecodeDocuments("f", []byte(`{"a": 1`)); !errors.As(err, &se) || se.Line != 1 {
		t.Errorf("truncated input: %v", err)
	}
	var shape *ShapeError
	if _, err := DecodeDocuments("f", []byte(`"x"`)); !errors.As(err, &shape) {
		t.Errorf("a string: %v", err)
	}
}

func TestCheckRefName(t *testing.T) {
	for _, ok := range []string{"review/01-foundation", "main", "feature/a.b", "v1.2"} {
		if err := CheckRefName(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "a..b", "a b", "-x", "a/", "/a", "a.lock", "a/.hidden", "a@{1}", "a~1", "a:b", "a\\b", "a//b", "@", "a."} {
		if err := CheckRefName(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestCheckRelativePath(t *testing.T) {
	for _, ok := range []string{"a.go", "internal/x/y.go", ".github/workflows/ci.yml"} {
		if err := CheckRelativePath(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "/etc/passwd", "../x", "a/../../b", "a/./b", "a//b", ".git/config", "a\\b", "C:/x"} {
		if err := CheckRelativePath(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestApplyDefaults(t *testing.T) {
	d := doc(t, `{"title": "x", "priority": "P0", "work_order": {"objective": "o"}}`)
	ApplyDefaults(d)
	if err := CheckKey(Key(d)); err != nil || !strings.HasPrefix(Key(d), "task_") || len(Key(d)) != 11 {
		t.Errorf("key %q", Key(d))
	}
	if d["priority"] != "critical" || d["status"] != "open" || d["type"] != "task" {
		t.Errorf("defaults: %v %v %v", d["priority"], d["status"], d["type"])
	}
	if v, ok := Lookup(d, "work_order.state.current_step"); !ok || fmt.Sprint(v) != "0" {
		t.Errorf("initial state missing: %v", d["work_order"])
	}
	kept := doc(t, `{"_key": "mine", "status": "blocked", "priority": "low"}`)
	ApplyDefaults(kept)
	if kept["_key"] != "mine" || kept["status"] != "blocked" || kept["priority"] != "low" {
		t.Errorf("ApplyDefaults overwrote fields: %v", kept)
	}
}

func TestTransitionsArePersephones(t *testing.T) {
	allowed := [][2]Status{{"open", "in_progress"}, {"in_progress", "in_review"}, {"in_progress", "blocked"}, {"in_progress", "open"},
		{"blocked", "in_progress"}, {"blocked", "open"}, {"in_review", "closed"}, {"in_review", "in_progress"}, {"closed", "open"}}
	for _, a := range allowed {
		if !CanTransition(a[0], a[1]) {
			t.Errorf("%s→%s refused", a[0], a[1])
		}
	}
	for _, r := range [][2]Status{{"open", "closed"}, {"open", "in_review"}, {"closed", "in_progress"}, {"blocked", "closed"}} {
		if CanTransition(r[0], r[1]) {
			t.Errorf("%s→%s allowed", r[0], r[1])
		}
	}
}

func TestSeed000Rules(t *testing.T) {
	opts := Options{Actions: []string{"update_task"}, Conditions: nil}
	d := doc(t, `{"_key": "task_s", "status": "open", "description": "Implement JWT token authentication",
	  "task_context": {
	    "background_context": "Too short.",
	    "expected_deliverables": {"items": ["Fix it", "Fix it", "", "Updated handler in src/auth/handler.py"]},
	    "success_criteria": {"criteria": ["It works", "All integration tests pass"]},
	    "constraints": {"rules": ["Do it fast", "Do not modify src/auth/legacy.py"]},
	    "related_documentation": ["https://example.com/a b"]}}`)
	r := Validate(d, opts)
	if !r.Valid() {
		t.Fatalf("errors: %v", r.Errors())
	}
	var msgs []string
	for _, p := range r.Warnings() {
		msgs = append(msgs, p.String())
	}
	all := strings.Join(msgs, "\n")
	for _, want := range []string{
		"task_context.background_context: Background context is very short",
		`task_context.expected_deliverables.items[0]: Deliverable is very short: "Fix it"`,
		`task_context.success_criteria.criteria[0]: Criterion may not be measurable: "It works"`,
		`task_context.constraints.rules[0]: Constraint should start with imperative: "Do it fast"`,
		`URL contains spaces`,
	} {
		if !strings.Contains(all, want) {
			t.Errorf("warnings lack %q:\n%s", want, all)
		}
	}
	if strings.Count(all, "Fix it") != 1 {
		t.Errorf("duplicates must be removed before checking:\n%s", all)
	}
	if strings.Contains(all, "criteria[1]") || strings.Contains(all, "rules[1]") {
		t.Errorf("good items were flagged:\n%s", all)
	}

	long := doc(t, `{"_key": "task_s", "status": "open", "description": "`+strings.Repeat("x", 501)+`"}`)
	if r := Validate(long, opts); r.Valid() || r.Errors()[0].Path != "description" {
		t.Errorf("a 501-character description must be an error: %v", r.Problems)
	}
}

func TestStatusPathFollowsPersephone(t *testing.T) {
	cases := map[[2]Status]string{
		{"in_review", "open"}:     "[in_progress open]",
		{"closed", "open"}:        "[open]",
		{"blocked", "open"}:       "[open]",
		{"closed", "in_progress"}: "[open in_progress]",
		{"open", "open"}:          "[]",
	}
	for c, want := range cases {
		if got := fmt.Sprint(StatusPath(c[0], c[1])); got != want {
			t.Errorf("%s→%s: %s, want %s", c[0], c[1], got, want)
		}
	}
}
