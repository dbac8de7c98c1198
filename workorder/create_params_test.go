package workorder

import (
	"strings"
	"testing"
	"time"
)

func TestCreateParamsStoreNothingForEmptyLists(t *testing.T) {
	p := CreateParams{Description: "Implement JWT token authentication",
		ExpectedDeliverables: []string{"", "  "}, SuccessCriteria: []string{" "}, Constraints: []string{},
		RelevantFiles: []string{"\t"}, RelatedDocumentation: []string{""}}
	doc := FromCreateParams(p, time.Now())
	if tc, ok := doc["task_context"]; ok {
		t.Errorf("parameters with only blank items gave a task_context: %v", tc)
	}
	p.Constraints = []string{"Do not touch the legacy module"}
	tc, _ := FromCreateParams(p, time.Now())["task_context"].(map[string]any)
	for _, f := range []string{"expected_deliverables", "success_criteria", "relevant_files", "related_documentation"} {
		if x, ok := tc[f]; ok {
			t.Errorf("%s stored although every item was blank: %v", f, x)
		}
	}
	if _, ok := tc["constraints"]; !ok {
		t.Errorf("the one constraint is missing: %v", tc)
	}
}

func TestCreateParamsTitle(t *testing.T) {
	line := func(n int) string { return strings.Repeat("t", n) }
	cases := []struct {
		title, description string
		want               any // nil: no title field
	}{
		{"Given title", "Implement JWT token authentication", "Given title"},
		{"", "First line\nand the rest", "First line"},
		{"", line(80) + "\nmore", line(80)},
		{"", line(81), line(79) + "…"},
		{"  ", "", nil},
	}
	for _, tc := range cases {
		doc := FromCreateParams(CreateParams{Title: tc.title, Description: tc.description}, time.Now())
		if got := doc["title"]; got != tc.want {
			t.Errorf("title %q, description %.20q: title %v, want %v", tc.title, tc.description, got, tc.want)
		}
	}
}
