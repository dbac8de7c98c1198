package procedure

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/wo-runner/wo/workorder"
)

// ContextSection is the agent context section, built from the task's
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
	return ThreadsPrompt(doc, fixAction, comments, nil, "")
}

// codeContextLines is how many lines around a thread's line the prompt
// shows, on each side.
const codeContextLines = 3

// ThreadsPrompt is FixPrompt with every unresolved review thread: its
// whole conversation and the code around its line, read from the worktree.
// The comments that open a thread are shown with their thread, not twice.
func ThreadsPrompt(doc workorder.Document, fixAction string, comments []workorder.ReviewComment, threads []workorder.ReviewThread, worktree string) string {
	var b strings.Builder
	b.WriteString(ContextSection(doc))
	fmt.Fprintf(&b, "\nTask %s: %s\n", workorder.Key(doc), workorder.String(doc, "title"))
	fmt.Fprintf(&b, "Objective: %s\n", workorder.String(doc, "work_order.objective"))
	if fixAction != "" {
		fmt.Fprintf(&b, "What to do: %s\n", fixAction)
	}
	opening := map[int64]bool{}
	for _, t := range threads {
		if len(t.Comments) > 0 && t.Comments[0].ID != 0 {
			opening[t.Comments[0].ID] = true
		}
	}
	var others []workorder.ReviewComment
	for _, c := range comments {
		if c.ID == 0 || !opening[c.ID] {
			others = append(others, c)
		}
	}
	if len(threads) == 0 || len(others) > 0 {
		title := "Review comments to address"
		if len(threads) > 0 {
			title = "Other review comments to address"
		}
		fmt.Fprintf(&b, "\n%s (%d):\n", title, len(others))
		for i, c := range others {
			where := ""
			if c.Path != "" {
				where = " on " + c.Path
				if c.Line > 0 {
					where += fmt.Sprintf(":%d", c.Line)
				}
			}
			fmt.Fprintf(&b, "\n%d. %s%s:\n%s\n", i+1, c.Author, where, c.Body)
		}
	}
	if len(threads) > 0 {
		fmt.Fprintf(&b, "\nUnresolved review threads (%d), each with its conversation:\n", len(threads))
		for i, t := range threads {
			where := t.Path
			if t.Line > 0 {
				where += fmt.Sprintf(":%d", t.Line)
			}
			state := ""
			switch {
			case t.Outdated && !t.Counted:
				state = " (outdated: the code changed since; check whether it still applies)"
			case t.Outdated:
				state = " (outdated, but still counted)"
			}
			fmt.Fprintf(&b, "\nThread %d on %s%s:\n", i+1, where, state)
			for j, c := range t.Comments {
				if j == 1 && t.Omitted > 0 {
					fmt.Fprintf(&b, "  [%d earlier comment(s) left out]\n", t.Omitted)
				}
				fmt.Fprintf(&b, "  %s: %s\n", c.Author, indent(c.Body))
			}
			if code := codeAround(worktree, t.Path, t.Line); code != "" {
				fmt.Fprintf(&b, "  Code now (%s):\n%s", t.Path, code)
			}
		}
	}
	b.WriteString("\nChange the files in this worktree to address every comment. wo commits and pushes your changes when you exit 0; do not commit or push yourself.\n")
	return b.String()
}

func indent(s string) string { return strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    ") }

// maxCodeFile bounds the file read for a thread's code.
const maxCodeFile = 1 << 20

// codeAround is the lines around line of path in the worktree, numbered,
// the line itself marked; empty when there is no such line. The path comes
// from a review, so it is opened through os.Root: it cannot leave the
// worktree, by .. or by a symlink.
func codeAround(worktree, path string, line int) string {
	if worktree == "" || path == "" || line <= 0 {
		return ""
	}
	root, err := os.OpenRoot(worktree)
	if err != nil {
		return ""
	}
	defer root.Close()
	f, err := root.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxCodeFile))
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if line > len(lines) {
		return ""
	}
	var b strings.Builder
	for n := max(1, line-codeContextLines); n <= min(len(lines), line+codeContextLines); n++ {
		mark := "   "
		if n == line {
			mark = ">> "
		}
		fmt.Fprintf(&b, "  %s%4d | %s\n", mark, n, lines[n-1])
	}
	return b.String()
}
