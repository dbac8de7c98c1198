package procedure

import (
	"fmt"
	"strings"

	"github.com/wo-runner/wo/workorder"
)

// ContextSection is seed 000's agent context section, built from the task's
// task_context; empty when there is none.
func ContextSection(doc workorder.Document) string {
	tc, _ := doc["task_context"].(map[string]any)
	if len(tc) == 0 {
		return ""
	}
	var sections []string
	if bg, _ := tc["background_context"].(string); bg != "" {
		sections = append(sections, "\n📋 BACKGROUND CONTEXT:\n"+bg+"\n")
	}
	bullets := func(title string, items []string, limit int) {
		if len(items) == 0 {
			return
		}
		shown := items
		if limit > 0 && len(items) > limit {
			shown = items[:limit]
		}
		lines := make([]string, 0, len(shown)+1)
		for _, it := range shown {
			lines = append(lines, "  • "+it)
		}
		if len(shown) < len(items) {
			lines = append(lines, fmt.Sprintf("  • ... and %d more files", len(items)-len(shown)))
		}
		sections = append(sections, "\n"+title+"\n"+strings.Join(lines, "\n")+"\n")
	}
	bullets("✅ EXPECTED DELIVERABLES:", listAt(tc, "expected_deliverables", "items"), 0)
	bullets("🎯 SUCCESS CRITERIA:", listAt(tc, "success_criteria", "criteria"), 0)
	bullets("⚠️ CONSTRAINTS:", listAt(tc, "constraints", "rules"), 0)
	bullets("📁 RELEVANT FILES TO EXAMINE:", listAt(tc, "relevant_files", ""), 10)
	bullets("📚 RELATED DOCUMENTATION:", listAt(tc, "related_documentation", ""), 0)
	if len(sections) == 0 {
		return ""
	}
	rule := strings.Repeat("=", 80)
	return "\n" + rule + "\n🎯 TASK CONTEXT (Provided by task creator)\n" + rule + "\n\n" + strings.Join(sections, "") + "\n\n" + rule + "\n"
}

// listAt reads m[outer][inner], or m[outer] itself when it is a list.
func listAt(m map[string]any, outer, inner string) []string {
	v := m[outer]
	if o, ok := v.(map[string]any); ok && inner != "" {
		v = o[inner]
	}
	return stringList(v)
}

// FixPrompt is what the agent command receives to address review comments.
func FixPrompt(doc workorder.Document, fixAction string, comments []workorder.ReviewComment) string {
	var b strings.Builder
	b.WriteString(ContextSection(doc))
	fmt.Fprintf(&b, "\nTask %s: %s\n", workorder.Key(doc), workorder.String(doc, "title"))
	fmt.Fprintf(&b, "Objective: %s\n", workorder.String(doc, "work_order.objective"))
	if fixAction != "" {
		fmt.Fprintf(&b, "What to do: %s\n", fixAction)
	}
	fmt.Fprintf(&b, "\nReview comments to address (%d):\n", len(comments))
	for i, c := range comments {
		where := ""
		if c.Path != "" {
			where = " on " + c.Path
			if c.Line > 0 {
				where += fmt.Sprintf(":%d", c.Line)
			}
		}
		fmt.Fprintf(&b, "\n%d. %s%s:\n%s\n", i+1, c.Author, where, c.Body)
	}
	b.WriteString("\nChange the files in this worktree to address every comment. wo commits and pushes your changes when you exit 0; do not commit or push yourself.\n")
	return b.String()
}
