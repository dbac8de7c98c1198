package workorder

import (
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

// One case per error and per warning of seed 000's rules.
func TestSeed000RulesOneByOne(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "handler.py"), []byte("x"), 0o644)
	good := CreateParams{Description: "Implement JWT token authentication", Priority: "P1", ClientCWD: dir}
	long := strings.Repeat("y", 201)
	cases := []struct {
		name     string
		change   func(p *CreateParams)
		severity Severity
		field    string
		message  string
	}{
		{"description too short", func(p *CreateParams) { p.Description = "Fix bug" }, SeverityError, "description", "Must be at least 10 characters"},
		{"description only spaces", func(p *CreateParams) { p.Description = "          " }, SeverityError, "description", "Must be at least 10 characters"},
		{"description too long", func(p *CreateParams) { p.Description = strings.Repeat("d", 501) }, SeverityError, "description", "Must be at most 500 characters"},
		{"priority unknown", func(p *CreateParams) { p.Priority = "P7" }, SeverityError, "priority", "Must be P0, P1, P2, or P3"},
		{"background too long", func(p *CreateParams) { p.BackgroundContext = strings.Repeat("b", 5001) }, SeverityError, "background_context", "Must be at most 5000 characters"},
		{"background short", func(p *CreateParams) { p.BackgroundContext = "Login breaks." }, SeverityWarning, "background_context", "Background context is very short"},
		{"too many deliverables", func(p *CreateParams) { p.ExpectedDeliverables = many(21, "Deliverable number ") }, SeverityError, "expected_deliverables", "Maximum 20 items allowed"},
		{"deliverable too long", func(p *CreateParams) { p.ExpectedDeliverables = []string{long} }, SeverityError, "expected_deliverables[0]", "at most 200 characters"},
		{"deliverable short", func(p *CreateParams) { p.ExpectedDeliverables = []string{"Fix it"} }, SeverityWarning, "expected_deliverables[0]", "Deliverable is very short: 'Fix it'"},
		{"too many criteria", func(p *CreateParams) { p.SuccessCriteria = many(16, "All tests pass ") }, SeverityError, "success_criteria", "Maximum 15 items allowed"},
		{"criterion too long", func(p *CreateParams) { p.SuccessCriteria = []string{long} }, SeverityError, "success_criteria[0]", "at most 200 characters"},
		{"criterion short", func(p *CreateParams) { p.SuccessCriteria = []string{"No errors"} }, SeverityWarning, "success_criteria[0]", "Criterion is very short"},
		{"criterion not measurable", func(p *CreateParams) { p.SuccessCriteria = []string{"It looks great to me"} }, SeverityWarning, "success_criteria[0]", "may not be measurable"},
		{"too many constraints", func(p *CreateParams) { p.Constraints = many(16, "Do not touch file ") }, SeverityError, "constraints", "Maximum 15 items allowed"},
		{"constraint too long", func(p *CreateParams) { p.Constraints = []string{"Do not " + long} }, SeverityError, "constraints[0]", "at most 200 characters"},
		{"constraint short", func(p *CreateParams) { p.Constraints = []string{"Never X"} }, SeverityWarning, "constraints[0]", "Constraint is very short"},
		{"constraint not imperative", func(p *CreateParams) { p.Constraints = []string{"Be quick about the change"} }, SeverityWarning, "constraints[0]", "Constraint should start with imperative"},
		{"too many files", func(p *CreateParams) { p.RelevantFiles = many(51, "f") }, SeverityError, "relevant_files", "Maximum 50 files allowed"},
		{"file not found", func(p *CreateParams) { p.RelevantFiles = []string{"src/missing.py"} }, SeverityWarning, "relevant_files", "File not found: '" + filepath.Join(dir, "src/missing.py") + "' - will be skipped by agents"},
		{"too many docs", func(p *CreateParams) { p.RelatedDocumentation = many(21, "https://example.com/") }, SeverityError, "related_documentation", "Maximum 20 items allowed"},
		{"URL with spaces", func(p *CreateParams) { p.RelatedDocumentation = []string{"https://wiki/auth standards"} }, SeverityWarning, "related_documentation", "URL contains spaces"},
		{"doc file not found", func(p *CreateParams) { p.RelatedDocumentation = []string{"docs/guide.md"} }, SeverityWarning, "related_documentation", "Documentation file not found"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := good
			tc.change(&p)
			_, probs := FromCreateParams(p, time.Now())
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
	if _, probs := FromCreateParams(good, time.Now()); len(probs) != 0 {
		t.Errorf("good parameters: %v", probs)
	}
}

func TestCreateParamsBuildTheRegistryShape(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "handler.py"), []byte("x"), 0o644)
	now := time.Date(2025, 10, 29, 12, 34, 56, 0, time.UTC)
	doc, probs := FromCreateParams(CreateParams{
		Description: "  Implement JWT token authentication  ", Priority: "p1", ClientCWD: dir,
		ExpectedDeliverables: []string{"Updated authentication handler", "", "Updated authentication handler", "  JWT validation function  "},
		SuccessCriteria:      []string{"All existing integration tests pass"},
		Constraints:          []string{"Do not modify src/auth/legacy.py"},
		RelevantFiles:        []string{"handler.py", "handler.py"},
	}, now)
	if len(probs) != 0 {
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
