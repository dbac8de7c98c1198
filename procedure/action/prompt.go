package action

import (
	"crypto/rand"
	_ "embed"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"text/template"
	"unicode"

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

// codeContextLines is how many lines around a thread's line the prompt
// shows, on each side.
const codeContextLines = 3

// Bounds on what a prompt carries from GitHub.
const (
	maxPromptComments = 100
	maxPromptBytes    = 256 << 10
)

// fixPrompt is what the agent command receives to address review
// comments: the comments, and every unresolved review thread with its
// whole conversation and the code around its line, read from the worktree
// (the comments that open a thread are shown with their thread, not
// twice). What comes from GitHub (comments,
// their authors' words) and from the repository (the code around a line)
// is data, not instructions: the fixed instruction comes first and says
// so; each such text sits between fence lines made of a random token that
// the text does not contain, labelled with who wrote it; HTML comments
// (which GitHub does not display), bidirectional and zero-width
// characters and control characters are removed first; and the number
// and size of comments are capped. notes are wo's own lines (suggestions
// it could not apply). The words are in fix_prompt.tmpl; this writes its
// parts in order and applies the caps.
func fixPrompt(doc workorder.Document, fixAction string, comments []workorder.ReviewComment, threads []workorder.ReviewThread, worktree string, notes []string) string {
	return writeFixPrompt(doc, fixAction, comments, threads, worktree, notes, newFence(reviewTexts(comments, threads)))
}

// writeFixPrompt is fixPrompt with its fence token given.
func writeFixPrompt(doc workorder.Document, fixAction string, comments []workorder.ReviewComment, threads []workorder.ReviewThread, worktree string, notes []string, fence string) string {
	w := &fixPromptWriter{fence: fence}
	w.part("head", struct{ Key, Fence, FixAction, Context, Title, Objective string }{workorder.Key(doc), fence, fixAction,
		ContextSection(doc), workorder.String(doc, "title"), workorder.String(doc, "work_order.objective")})
	w.threads(threads, worktree)
	if others := commentsOutsideThreads(comments, threads); len(threads) == 0 || len(others) > 0 {
		w.comments(others, len(threads) > 0)
	}
	w.part("tail", notes)
	return w.b.String()
}

//go:embed fix_prompt.tmpl
var fixPromptText string

var fixPromptTemplate = template.Must(template.New("fix prompt").Funcs(template.FuncMap{
	"clean": cleanGitHubText,
	"data": func(fence, text string) fencedText {
		return fencedText{fence, strings.TrimRight(cleanGitHubText(text), "\n")}
	},
	// Code is shown as it is (an HTML comment in it is code), without
	// the characters that hide text.
	"code": func(fence, text string) fencedText {
		return fencedText{fence, strings.TrimRight(cleanHidden(text), "\n")}
	},
}).Parse(fixPromptText))

// fencedText is a text from GitHub or the repository, cleaned, and the
// token that fences it.
type fencedText struct{ Fence, Text string }

// promptThread is one review thread as the prompt shows it: its number,
// and the code around its line (empty when there is none).
type promptThread struct {
	workorder.ReviewThread
	N           int
	Fence, Code string
}

// Where is the thread's file and line, as GitHub text.
func (t promptThread) Where() string {
	if t.Line > 0 {
		return cleanGitHubText(fmt.Sprintf("%s:%d", t.Path, t.Line))
	}
	return cleanGitHubText(t.Path)
}

// promptComment is one review comment outside the threads, numbered.
type promptComment struct {
	workorder.ReviewComment
	N     int
	Fence string
}

// fixPromptWriter writes the prompt's parts, counting the comments shown.
type fixPromptWriter struct {
	b     strings.Builder
	fence string
	shown int
}

// part writes the template's part name. The template is fixed and
// tested and the builder does not fail, so an error is a bug in wo.
func (w *fixPromptWriter) part(name string, data any) {
	if err := fixPromptTemplate.ExecuteTemplate(&w.b, name, data); err != nil {
		panic(fmt.Sprintf("the fix prompt's template, part %q: %v", name, err))
	}
}

// full reports whether the prompt holds as many comments or bytes as it
// may: what is left is counted, not shown.
func (w *fixPromptWriter) full() bool {
	return w.shown >= maxPromptComments || w.b.Len() > maxPromptBytes
}

func (w *fixPromptWriter) threads(threads []workorder.ReviewThread, worktree string) {
	if len(threads) == 0 {
		return
	}
	w.part("threads", len(threads))
	for i, t := range threads {
		if w.full() {
			w.part("threads left out", len(threads)-i)
			return
		}
		w.part("thread", promptThread{ReviewThread: t, N: i + 1, Fence: w.fence, Code: codeAround(worktree, t.Path, t.Line)})
		w.shown += len(t.Comments)
	}
}

func (w *fixPromptWriter) comments(others []workorder.ReviewComment, inThreads bool) {
	w.part("comments", struct {
		InThreads bool
		Count     int
	}{inThreads, len(others)})
	for i, c := range others {
		if w.full() {
			w.part("comments left out", len(others)-i)
			return
		}
		w.part("comment", promptComment{ReviewComment: c, N: i + 1, Fence: w.fence})
		w.shown++
	}
}

// reviewTexts are the bodies of the comments and the threads' comments:
// what the fence must not occur in.
func reviewTexts(comments []workorder.ReviewComment, threads []workorder.ReviewThread) []string {
	var texts []string
	for _, c := range comments {
		texts = append(texts, c.Body)
	}
	for _, t := range threads {
		for _, c := range t.Comments {
			texts = append(texts, c.Body)
		}
	}
	return texts
}

// commentsOutsideThreads are the comments that do not open one of the
// threads (those are shown with their thread), and those from a review's
// body (a section), which are shown on their own.
func commentsOutsideThreads(comments []workorder.ReviewComment, threads []workorder.ReviewThread) []workorder.ReviewComment {
	opening := map[int64]bool{}
	for _, t := range threads {
		if len(t.Comments) > 0 && t.Comments[0].ID != 0 {
			opening[t.Comments[0].ID] = true
		}
	}
	var others []workorder.ReviewComment
	for _, c := range comments {
		if c.ID == 0 || !opening[c.ID] || c.Section != "" {
			others = append(others, c)
		}
	}
	return others
}

// newFence is a token that none of texts contains, to fence them with.
func newFence(texts []string) string {
	for {
		var raw [9]byte
		rand.Read(raw[:])
		fence := "WO-DATA-" + strings.ToUpper(hex.EncodeToString(raw[:]))
		if !slices.ContainsFunc(texts, func(t string) bool { return strings.Contains(t, fence) }) {
			return fence
		}
	}
}

var reHTMLComment = regexp.MustCompile(`(?s)<!--.*?(-->|$)`)

// cleanGitHubText removes from text what a reader on GitHub does not see
// but an agent would: HTML comments, bidirectional controls, zero-width
// characters and other control characters (newlines and tabs stay).
func cleanGitHubText(text string) string {
	return cleanHidden(reHTMLComment.ReplaceAllString(text, ""))
}

// cleanHidden removes bidirectional controls, zero-width characters and
// control characters (newlines and tabs stay).
func cleanHidden(text string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\t':
			return r
		case unicode.IsControl(r):
			return -1
		case r >= 0x200B && r <= 0x200F, r >= 0x202A && r <= 0x202E, r >= 0x2060 && r <= 0x2069, r == 0xFEFF, r == 0x061C, r == 0x180E:
			return -1
		case unicode.Is(unicode.Cf, r):
			return -1
		}
		return r
	}, text)
}

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
	// Only a regular file: a pipe left in the worktree would block.
	if fi, err := root.Lstat(path); err != nil || !fi.Mode().IsRegular() {
		return ""
	}
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
