package workorder

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func many(n int, item string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = item + strings.Repeat("x", i)
	}
	return out
}

// judge builds the task from p and validates it as wo create does, naming
// problems by parameter.
func judge(p CreateParams) []Problem {
	doc := FromCreateParams(p, time.Now())
	doc["_key"] = "task_new"
	return ParamProblems(doc, Validate(doc, Options{}).Problems)
}

// asDocument writes p as someone would write the task for wo import: the
// lists as given, in task_context's registry shape.
func asDocument(p CreateParams) Document {
	tc := map[string]any{}
	if p.BackgroundContext != "" {
		tc["background_context"] = p.BackgroundContext
	}
	if p.ExpectedDeliverables != nil {
		tc["expected_deliverables"] = map[string]any{"items": AnyList(p.ExpectedDeliverables)}
	}
	if p.SuccessCriteria != nil {
		tc["success_criteria"] = map[string]any{"criteria": AnyList(p.SuccessCriteria)}
	}
	if p.Constraints != nil {
		tc["constraints"] = map[string]any{"rules": AnyList(p.Constraints)}
	}
	if p.RelevantFiles != nil {
		tc["relevant_files"] = AnyList(p.RelevantFiles)
	}
	if p.RelatedDocumentation != nil {
		tc["related_documentation"] = AnyList(p.RelatedDocumentation)
	}
	tc["client_cwd"] = p.ClientCWD
	doc := Document{"_key": "task_doc", "status": "open", "title": "A task", "description": p.Description, "task_context": tc}
	if p.Priority != "" {
		doc["priority"] = p.Priority
	}
	return doc
}

type ruleCase struct {
	name     string
	change   func(p *CreateParams)
	severity Severity
	field    string
	message  string
}

// ruleCases has one case per error and per warning of the task-creation
// rules.
func ruleCases(dir string) []ruleCase {
	long := strings.Repeat("y", 201)
	return []ruleCase{
		{"description too short", func(p *CreateParams) { p.Description = "Fix bug" }, SeverityError, "description", "Must be at least 10 characters"},
		{"description only spaces", func(p *CreateParams) { p.Description = "          " }, SeverityError, "description", "Must be at least 10 characters"},
		{"description too long", func(p *CreateParams) { p.Description = strings.Repeat("d", 501) }, SeverityError, "description", "Must be at most 500 characters"},
		{"priority unknown", func(p *CreateParams) { p.Priority = "P7" }, SeverityError, "priority", `Must be P0, P1, P2, or P3 (or critical, high, medium, low), not "P7"`},
		{"background too long", func(p *CreateParams) { p.BackgroundContext = strings.Repeat("b", 5001) }, SeverityError, "background_context", "Must be at most 5000 characters"},
		{"background short", func(p *CreateParams) { p.BackgroundContext = "Login breaks." }, SeverityWarning, "background_context", "Background context is very short"},
		{"too many deliverables", func(p *CreateParams) { p.ExpectedDeliverables = many(21, "Deliverable number ") }, SeverityError, "expected_deliverables", "Maximum 20 items allowed"},
		{"deliverable too long", func(p *CreateParams) { p.ExpectedDeliverables = []string{long} }, SeverityError, "expected_deliverables[0]", "at most 200 characters"},
		{"deliverable short", func(p *CreateParams) { p.ExpectedDeliverables = []string{"Fix it"} }, SeverityWarning, "expected_deliverables[0]", `Deliverable is very short: "Fix it". Consider being more specific.`},
		{"too many criteria", func(p *CreateParams) { p.SuccessCriteria = many(16, "All tests pass ") }, SeverityError, "success_criteria", "Maximum 15 items allowed"},
		{"criterion too long", func(p *CreateParams) { p.SuccessCriteria = []string{long} }, SeverityError, "success_criteria[0]", "at most 200 characters"},
		{"criterion short", func(p *CreateParams) { p.SuccessCriteria = []string{"No errors"} }, SeverityWarning, "success_criteria[0]", "Criterion is very short"},
		{"criterion not measurable", func(p *CreateParams) { p.SuccessCriteria = []string{"It looks great to me"} }, SeverityWarning, "success_criteria[0]", "may not be measurable"},
		{"too many constraints", func(p *CreateParams) { p.Constraints = many(16, "Do not touch file ") }, SeverityError, "constraints", "Maximum 15 items allowed"},
		{"constraint too long", func(p *CreateParams) { p.Constraints = []string{"Do not " + long} }, SeverityError, "constraints[0]", "at most 200 characters"},
		{"constraint short", func(p *CreateParams) { p.Constraints = []string{"Never X"} }, SeverityWarning, "constraints[0]", "Constraint is very short"},
		{"constraint not imperative", func(p *CreateParams) { p.Constraints = []string{"Be quick about the change"} }, SeverityWarning, "constraints[0]", "Constraint should start with imperative"},
		{"too many files", func(p *CreateParams) { p.RelevantFiles = many(51, "f") }, SeverityError, "relevant_files", "Maximum 50 files allowed"},
		{"file not found", func(p *CreateParams) { p.RelevantFiles = []string{"src/missing.py"} }, SeverityWarning, "relevant_files", `File not found: "` + filepath.Join(dir, "src/missing.py") + `" - will be skipped by agents`},
		{"too many docs", func(p *CreateParams) { p.RelatedDocumentation = many(21, "https://example.com/") }, SeverityError, "related_documentation", "Maximum 20 items allowed"},
		{"URL with spaces", func(p *CreateParams) { p.RelatedDocumentation = []string{"https://wiki/auth standards"} }, SeverityWarning, "related_documentation", "URL contains spaces"},
		{"doc file not found", func(p *CreateParams) { p.RelatedDocumentation = []string{"docs/guide.md"} }, SeverityWarning, "related_documentation", "Documentation file not found: \"" + filepath.Join(dir, "docs/guide.md")},
	}
}

// One case per error and per warning of the task-creation rules.
func TestSeed000RulesOneByOne(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "handler.py"), []byte("x"), 0o644)
	good := CreateParams{Description: "Implement JWT token authentication", Priority: "P1", ClientCWD: dir}
	for _, tc := range ruleCases(dir) {
		t.Run(tc.name, func(t *testing.T) {
			p := good
			tc.change(&p)
			probs := judge(p)
			found := false
			for _, pr := range probs {
				if pr.Path == tc.field && pr.Severity == tc.severity && strings.Contains(pr.Message, tc.message) {
					found = true
				}
			}
			if !found {
				t.Errorf("want %s %s: %q; got %v", tc.severity, tc.field, tc.message, probs)
			}
		})
	}
	// The good parameters: no problem at all.
	if probs := judge(good); len(probs) != 0 {
		t.Errorf("good parameters: %v", probs)
	}
}

func TestCreateParamsBuildTheRegistryShape(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "handler.py"), []byte("x"), 0o644)
	now := time.Date(2025, 10, 29, 12, 34, 56, 0, time.UTC)
	p := CreateParams{
		Description: "  Implement JWT token authentication  ", Priority: "p1", ClientCWD: dir,
		ExpectedDeliverables: []string{"Updated authentication handler", "", "Updated authentication handler", "  JWT validation function  "},
		SuccessCriteria:      []string{"All existing integration tests pass"},
		Constraints:          []string{"Do not modify src/auth/legacy.py"},
		RelevantFiles:        []string{"handler.py", "handler.py"},
	}
	doc := FromCreateParams(p, now)
	if probs := judge(p); len(probs) != 0 {
		t.Fatalf("problems: %v", probs)
	}
	if doc["description"] != "Implement JWT token authentication" || doc["priority"] != "high" {
		t.Errorf("doc %v", doc)
	}
	tc := doc["task_context"].(map[string]any)
	items := tc["expected_deliverables"].(map[string]any)["items"].([]any)
	if len(items) != 2 || items[1] != "JWT validation function" {
		t.Errorf("deliverables not cleaned: %v", items)
	}
	if tc["success_criteria"].(map[string]any)["all_required"] != true || tc["constraints"].(map[string]any)["enforcement_level"] != "strict" {
		t.Errorf("shape: %v", tc)
	}
	if files := tc["relevant_files"].([]any); len(files) != 1 || !filepath.IsAbs(files[0].(string)) {
		t.Errorf("files: %v", files)
	}
	if tc["validation_performed"] != true || tc["validation_timestamp"] != "2025-10-29T12:34:56Z" {
		t.Errorf("validation fields: %v", tc)
	}
}

// The rules live in the validator only: parameters given to wo create and
// the same task written as a document for wo import or wo validate get
// the same message, and the same field once named by parameter.
func TestCreateParamsAndDocumentsGetTheSameMessages(t *testing.T) {
	dir := t.TempDir()
	good := CreateParams{Description: "Implement JWT token authentication", Priority: "P1", ClientCWD: dir}
	for _, tc := range ruleCases(dir) {
		t.Run(tc.name, func(t *testing.T) {
			p := good
			tc.change(&p)
			fromParams := judge(p)
			fromDoc := Validate(asDocument(p), Options{}).Problems
			if len(fromParams) == 0 {
				t.Fatal("no problem found: the case does not test anything")
			}
			var a, b []string
			for _, pr := range fromParams {
				a = append(a, fmt.Sprintf("%s %s: %s", pr.Severity, pr.Path, pr.Message))
			}
			for _, pr := range fromDoc {
				b = append(b, fmt.Sprintf("%s %s: %s", pr.Severity, ParamPath(pr.Path), pr.Message))
			}
			if strings.Join(a, "\n") != strings.Join(b, "\n") {
				t.Errorf("wo create says\n  %s\nwo validate says\n  %s", strings.Join(a, "\n  "), strings.Join(b, "\n  "))
			}
		})
	}
}

func TestRecordWarningsKeepsTheValidatorsWords(t *testing.T) {
	doc := FromCreateParams(CreateParams{Description: "Implement JWT token authentication", Constraints: []string{"Be quick about it"}}, time.Now())
	doc["_key"] = "task_new"
	RecordWarnings(doc, Validate(doc, Options{}))
	got := fmt.Sprint(Get(doc, "task_context.validation_warnings"))
	if got != `[Constraint should start with imperative: "Be quick about it"]` {
		t.Errorf("validation_warnings %s", got)
	}
}
