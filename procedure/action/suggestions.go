package action

import (
	"fmt"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/wo-runner/wo/gitops"
	"github.com/wo-runner/wo/internal/gitname"
	"github.com/wo-runner/wo/workorder"
)

// A review comment may carry a suggestion: a ```suggestion block whose
// lines replace the lines the comment is on (GitHub's "Commit suggestion",
// CodeRabbit's "Committable suggestion"). wo applies them itself, exactly,
// before an agent sees what is left: a round whose every comment is a
// suggestion needs no agent and no person.

// maxSuggestedFile bounds a file wo edits for suggestions.
const maxSuggestedFile = 4 << 20

// suggestion is one suggested replacement of lines start..end of path.
type suggestion struct {
	thread     string // the thread's ID
	comment    int64  // the thread's first comment
	path       string
	start, end int
	lines      []string
}

// suggestionOf reads the suggestion of a counted thread's first comment:
// one block, on the head's side of the diff, on lines that are still
// there (not outdated). Two blocks in one comment are left to the agent:
// which one the reviewer meant is a judgement.
func suggestionOf(t workorder.ReviewThread) (suggestion, bool) {
	if !t.Counted || t.Outdated || t.Deleted || t.Line <= 0 || len(t.Comments) == 0 {
		return suggestion{}, false
	}
	blocks := suggestionBlocks(t.Comments[0].Body)
	if len(blocks) != 1 {
		return suggestion{}, false
	}
	start := t.StartLine
	if start <= 0 || start > t.Line {
		start = t.Line
	}
	return suggestion{thread: t.ID, comment: t.Comments[0].ID, path: t.Path, start: start, end: t.Line, lines: blocks[0]}, true
}

// suggestionBlocks are the lines of each suggestion block in a comment,
// as GitHub reads them: a fence of three or more backticks followed by
// "suggestion", closed by a fence at least as long (so a longer fence
// holds a ``` line), in a body whose lines may end in CRLF (a comment
// written in a browser). An unclosed block is no suggestion.
func suggestionBlocks(body string) [][]string {
	lines := strings.Split(strings.ReplaceAll(body, "\r\n", "\n"), "\n")
	var out [][]string
	for i := 0; i < len(lines); i++ {
		l := strings.TrimSpace(lines[i])
		n := len(l) - len(strings.TrimLeft(l, "`"))
		if n < 3 || !strings.HasPrefix(strings.TrimSpace(l[n:]), "suggestion") {
			continue
		}
		fence := strings.Repeat("`", n)
		end := -1
		for j := i + 1; j < len(lines); j++ {
			c := strings.TrimSpace(lines[j])
			if strings.HasPrefix(c, fence) && strings.Trim(c, "`") == "" {
				end = j
				break
			}
		}
		if end < 0 {
			break
		}
		block := []string{}
		block = append(block, lines[i+1:end]...)
		out = append(out, block)
		i = end
	}
	return out
}

// appliedSuggestions is what applying the suggestions did.
type appliedSuggestions struct {
	threads []string // the threads whose suggestion is in the worktree
	left    []string // "path:line: why", for suggestions left to the agent
}

// suggestionsByPath are the threads' suggestions by file, and the files
// in the order the threads name them first.
func suggestionsByPath(threads []workorder.ReviewThread) (map[string][]suggestion, []string) {
	byPath := map[string][]suggestion{}
	var paths []string
	for _, t := range threads {
		s, ok := suggestionOf(t)
		if !ok {
			continue
		}
		if _, seen := byPath[s.path]; !seen {
			paths = append(paths, s.path)
		}
		byPath[s.path] = append(byPath[s.path], s)
	}
	return byPath, paths
}

// applySuggestions writes the suggestions of the counted threads into the
// worktree. Each file is edited from its version at the reviewed head:
// when the worktree's file is still that version the suggestions are
// applied, bottom up so that line numbers hold; when it already holds the
// result (a rerun after a crash) nothing is written; when it is anything
// else, a person or an agent changed it since, and its suggestions are
// left to the agent. Overlapping suggestions: the first wins.
func applySuggestions(repo *gitops.Repo, w *gitops.Worktree, reviewed string, threads []workorder.ReviewThread) (appliedSuggestions, error) {
	var out appliedSuggestions
	byPath, paths := suggestionsByPath(threads)
	if len(paths) == 0 {
		return out, nil
	}
	commit, err := repo.Commit(plumbing.NewHash(reviewed))
	if err != nil {
		return out, fmt.Errorf("reading the reviewed commit %s: %w", gitname.Short(reviewed), err)
	}
	for _, path := range paths {
		list := byPath[path]
		leave := func(why string) {
			for _, s := range list {
				out.left = append(out.left, fmt.Sprintf("%s:%d: %s", s.path, s.end, why))
			}
		}
		f, err := commit.File(path)
		if err != nil || f.Size > maxSuggestedFile {
			leave("the file is not in the reviewed commit, or too large to edit")
			continue
		}
		before, err := f.Contents()
		if err != nil {
			return out, err
		}
		after, used, skipped := applyTo(before, list)
		for _, s := range skipped {
			out.left = append(out.left, fmt.Sprintf("%s:%d: %s", s.path, s.end, "its lines overlap another suggestion, or are past the end of the file"))
		}
		current, err := w.ReadFile(path, maxSuggestedFile)
		switch {
		case err != nil:
			leave("the file cannot be read in the worktree: " + err.Error())
			continue
		case string(current) == after:
			// Applied already (a rerun).
		case string(current) == before:
			if err := w.ReplaceFile(path, []byte(after)); err != nil {
				leave("wo could not write the file: " + err.Error())
				continue
			}
		default:
			for _, s := range used {
				out.left = append(out.left, fmt.Sprintf("%s:%d: %s", s.path, s.end, "the file changed since the review, so the suggestion may no longer apply"))
			}
			continue
		}
		for _, s := range used {
			out.threads = append(out.threads, s.thread)
		}
	}
	return out, nil
}

// applyTo replaces the suggestions' lines of text. It returns the new
// text, the suggestions applied, and those skipped because their lines
// overlap an earlier one or lie past the end.
func applyTo(text string, list []suggestion) (string, []suggestion, []suggestion) {
	trailing := strings.HasSuffix(text, "\n")
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if text == "" {
		lines = nil
	}
	var used, skipped []suggestion
	for _, s := range list {
		clash := s.end > len(lines) || slices.ContainsFunc(used, func(u suggestion) bool { return s.start <= u.end && u.start <= s.end })
		if clash {
			skipped = append(skipped, s)
		} else {
			used = append(used, s)
		}
	}
	bottomUp := slices.Clone(used)
	slices.SortFunc(bottomUp, func(a, b suggestion) int { return b.start - a.start })
	for _, s := range bottomUp {
		lines = slices.Concat(lines[:s.start-1], s.lines, lines[s.end:])
	}
	out := strings.Join(lines, "\n")
	if trailing && len(lines) > 0 {
		out += "\n"
	}
	return out, used, skipped
}
