package action

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/wo-runner/wo/workorder"
)

var fenceToken = regexp.MustCompile(`WO-DATA-[0-9A-F]{18}`)

// shapeOf is a fix prompt with its random fence written FENCE.
func shapeOf(comments []workorder.ReviewComment, threads []workorder.ReviewThread, worktree string, notes []string) string {
	doc := workorder.Document{"_key": "task_p", "title": "P", "work_order": map[string]any{"objective": "Fix the parser"}}
	return fenceToken.ReplaceAllString(fixPrompt(doc, "", comments, threads, worktree, notes), "FENCE")
}

// What a fix prompt shows of each comment and thread: where it is (a
// line, a range of lines, none), what kind of finding it is, the thread's
// state and the comments left out of a long conversation, and each
// comment once.
func TestAFixPromptSaysWhereEachCommentIsAndShowsItOnce(t *testing.T) {
	t.Parallel()
	wt := t.TempDir()
	if err := os.WriteFile(filepath.Join(wt, "a.go"), []byte("l1\nl2\nl3\nl4\nl5\nl6\nl7\nl8\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	threads := []workorder.ReviewThread{
		{Path: "a.go", Line: 5, Counted: true, Omitted: 2, Comments: []workorder.ThreadComment{
			{ID: 10, Author: "bot", Body: "OPENS THREAD 1"}, {ID: 11, Author: "bot", Body: "LATEST IN THREAD 1"}}},
		{Path: "a.go", Line: 0, Outdated: true, Comments: []workorder.ThreadComment{{ID: 20, Author: "bot", Body: "OUTDATED THREAD"}}},
		{Path: "a.go", Line: 2, Outdated: true, Counted: true, Comments: []workorder.ThreadComment{
			{ID: 30, Author: "bot", Body: "COUNTED OUTDATED"}, {ID: 31, Author: "alice", Body: "A REPLY"}}},
		{Path: "b.go", Line: 1},
	}
	comments := []workorder.ReviewComment{
		{ID: 10, Author: "bot", Path: "a.go", Line: 5, Body: "OPENS THREAD 1"},
		{ID: 30, Author: "bot", Path: "a.go", Line: 2, Section: "outside_diff", Body: "COUNTED OUTDATED"},
		{ID: 0, Author: "bot", Body: "A FINDING WITHOUT AN ID"},
		{ID: 40, Author: "bot", Path: "c.go", StartLine: 2, Line: 5, Section: "duplicate", Body: "A RANGE"},
		{ID: 41, Author: "bot", Path: "c.go", StartLine: 5, Line: 5, Section: "nitpick", Body: "ONE LINE"},
		{ID: 42, Author: "bot", Path: "c.go", Body: "A FILE"},
	}
	p := shapeOf(comments, threads, wt, nil)
	for _, want := range []string{
		"\nUnresolved review threads (4), each with its conversation:\n",
		"\nThread 1 on a.go:5:\nComment by GitHub user bot:\n<<<FENCE\nOPENS THREAD 1\nFENCE>>>\n[2 earlier comment(s) left out]\nComment by GitHub user bot:\n<<<FENCE\nLATEST IN THREAD 1\nFENCE>>>\n",
		"Code now (a.go):\n<<<FENCE\n        2 | l2\n        3 | l3\n        4 | l4\n  >>    5 | l5\n        6 | l6\n        7 | l7\n        8 | l8\nFENCE>>>\n",
		"\nThread 2 on a.go (outdated: the code changed since; check whether it still applies):\n",
		"\nThread 3 on a.go:2 (outdated, but still counted):\nComment by GitHub user bot:\n<<<FENCE\nCOUNTED OUTDATED\nFENCE>>>\nComment by GitHub user alice:\n<<<FENCE\nA REPLY\nFENCE>>>\nCode now (a.go):\n<<<FENCE\n        1 | l1\n  >>    2 | l2\n",
		"\nThread 4 on b.go:1:\n",
		"\nOther review comments to address (5):\n",
		"\n1. Comment by GitHub user bot on a.go:2 (in the review's body: outside the lines the pull request changed):\n<<<FENCE\nCOUNTED OUTDATED\nFENCE>>>\n",
		"\n2. Comment by GitHub user bot:\n<<<FENCE\nA FINDING WITHOUT AN ID\nFENCE>>>\n",
		"\n3. Comment by GitHub user bot on c.go:2-5 (in the review's body: raised before and still open):\n",
		"\n4. Comment by GitHub user bot on c.go:5 (in the review's body: a nitpick):\n",
		"\n5. Comment by GitHub user bot on c.go:\n",
	} {
		if !strings.Contains(p, want) {
			t.Errorf("the prompt does not have %q:\n%s", want, p)
		}
	}
	if n := strings.Count(p, "OPENS THREAD 1"); n != 1 {
		t.Errorf("the comment that opens thread 1 is shown %d times, want once (with its thread)", n)
	}
	for _, not := range []string{"earlier comment(s) left out]\nComment by GitHub user alice", "Thread 2 on a.go:0", "Code now (a.go):\n<<<FENCE\n  >>    0",
		"Suggestions in the review that wo did not apply", "left out of this prompt"} {
		if strings.Contains(p, not) {
			t.Errorf("the prompt has %q:\n%s", not, p)
		}
	}
	if strings.Count(p, "Code now") != 2 {
		t.Errorf("code is shown for %d threads, want the 2 with a line in a file that has it:\n%s", strings.Count(p, "Code now"), p)
	}

	// Without threads, the comments are the review comments, and wo's
	// notes close the prompt.
	p = shapeOf(comments[2:3], nil, "", []string{"c.go:9: the file changed since the review"})
	if strings.Contains(p, "Unresolved review threads") || !strings.Contains(p, "\nReview comments to address (1):\n") ||
		!strings.Contains(p, "\nSuggestions in the review that wo did not apply (apply them by hand if they still make sense):\n  - c.go:9: the file changed since the review\n") {
		t.Errorf("a prompt of one comment and a note:\n%s", p)
	}
	// Threads whose comments all open them leave no other comments.
	p = shapeOf(comments[:1], threads[:1], wt, nil)
	if strings.Contains(p, "review comments to address") || strings.Contains(p, "Review comments to address") {
		t.Errorf("a prompt of one thread lists other comments:\n%s", p)
	}
}

// A prompt shows at most maxPromptComments comments, and says how many
// threads and comments it left out.
func TestAFixPromptShowsAtMostItsShareOfComments(t *testing.T) {
	t.Parallel()
	var threads []workorder.ReviewThread
	for i := range maxPromptComments + 1 {
		threads = append(threads, workorder.ReviewThread{Path: "a.go", Comments: []workorder.ThreadComment{{ID: int64(i + 1), Author: "bot", Body: fmt.Sprintf("thread comment %d", i+1)}}})
	}
	p := shapeOf(nil, threads, "", nil)
	if !strings.Contains(p, fmt.Sprintf("thread comment %d\n", maxPromptComments)) || strings.Contains(p, fmt.Sprintf("thread comment %d\n", maxPromptComments+1)) ||
		!strings.Contains(p, "\n[1 more thread(s) left out of this prompt: fix these first]\n") {
		t.Errorf("a prompt of %d threads shows %d thread comments and says %q", len(threads), strings.Count(p, "thread comment "), lastLineWith(p, "left out"))
	}
	if p := shapeOf(nil, threads[:maxPromptComments], "", nil); strings.Contains(p, "left out") {
		t.Errorf("a prompt of exactly %d threads leaves some out: %q", maxPromptComments, lastLineWith(p, "left out"))
	}
	var comments []workorder.ReviewComment
	for i := range maxPromptComments + 2 {
		comments = append(comments, workorder.ReviewComment{ID: int64(i + 1001), Author: "bot", Body: fmt.Sprintf("review comment %d", i+1)})
	}
	p = shapeOf(comments, nil, "", nil)
	if !strings.Contains(p, fmt.Sprintf("\n%d. Comment by", maxPromptComments)) || strings.Contains(p, fmt.Sprintf("\n%d. Comment by", maxPromptComments+1)) ||
		!strings.Contains(p, "\n[2 more comment(s) left out of this prompt]\n") {
		t.Errorf("a prompt of %d comments says %q", len(comments), lastLineWith(p, "left out"))
	}
	// Threads and comments share the bound.
	p = shapeOf(comments[:2], threads[:maxPromptComments-1], "", nil)
	if !strings.Contains(p, "\n1. Comment by") || strings.Contains(p, "\n2. Comment by") || !strings.Contains(p, "\n[1 more comment(s) left out of this prompt]\n") {
		t.Errorf("%d thread comments and 2 comments: %q", maxPromptComments-1, lastLineWith(p, "left out"))
	}
}

func lastLineWith(s, part string) string {
	lines := strings.Split(s, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.Contains(lines[i], part) {
			return lines[i]
		}
	}
	return ""
}

// The task's context, when the task has one, comes before the comments;
// at most ten relevant files are listed.
func TestAFixPromptCarriesTheTasksContext(t *testing.T) {
	t.Parallel()
	var files []any
	for i := range 11 {
		files = append(files, fmt.Sprintf("f%d.go", i+1))
	}
	doc := workorder.Document{"_key": "task_p", "task_context": map[string]any{"background_context": "The parser is old.",
		"constraints": map[string]any{"rules": []any{"no new dependencies"}}, "relevant_files": files}}
	s := ContextSection(doc)
	for _, want := range []string{"TASK CONTEXT (Provided by task creator)", "\n📋 BACKGROUND CONTEXT:\nThe parser is old.\n",
		"\n⚠️ CONSTRAINTS:\n  • no new dependencies\n", "  • f10.go\n  • ... and 1 more files\n"} {
		if !strings.Contains(s, want) {
			t.Errorf("the context section has no %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "f11.go") || strings.Contains(s, "SUCCESS CRITERIA") {
		t.Errorf("the context section lists an 11th file or an empty section:\n%s", s)
	}
	if ContextSection(workorder.Document{"_key": "task_p"}) != "" || ContextSection(workorder.Document{"task_context": map[string]any{}}) != "" {
		t.Error("a task without context has a context section")
	}
}
