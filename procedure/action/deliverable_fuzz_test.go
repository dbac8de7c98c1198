package action

import (
	"strings"
	"testing"
)

// FuzzExtractDeliverable splits arbitrary agent output: the deliverable
// never carries a tag of its own, and without tags nothing is delivered.
func FuzzExtractDeliverable(f *testing.F) {
	for _, s := range []string{
		"thinking\n<deliverable>\nthe answer\n</deliverable>\n",
		"<deliverable>a</deliverable><deliverable>b</deliverable>",
		"I will wrap it in <deliverable> tags.\n<deliverable>real</deliverable>",
		"<deliverable>NONE</deliverable>",
		"<deliverable>unclosed",
		"</deliverable> stray <deliverable>x</deliverable>",
		"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, out string) {
		e := ExtractDeliverable(out)
		if !e.Found {
			if e.Deliverable != "" || e.Blocks != 0 || e.Invalid() == "" {
				t.Fatalf("no block found, yet %+v", e)
			}
			return
		}
		if strings.Contains(e.Deliverable, "<deliverable>") || strings.Contains(e.Deliverable, "</deliverable>") {
			t.Fatalf("the deliverable holds a tag: %q from %q", e.Deliverable, out)
		}
		if e.Blocks < 1 || !strings.Contains(out, e.Deliverable) {
			t.Fatalf("%+v from %q", e, out)
		}
	})
}

func TestDeliverableIgnoresATagMentionedInTheWorkLog(t *testing.T) {
	e := ExtractDeliverable("I will wrap the answer in <deliverable> tags.\n<deliverable>\nthe answer\n</deliverable>")
	if e.Deliverable != "the answer" || e.Blocks != 1 || !strings.Contains(e.Work, "I will wrap the answer in <deliverable> tags.") {
		t.Errorf("%+v", e)
	}
}
