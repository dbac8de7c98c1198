package commands

import (
	"fmt"
	"strings"

	"github.com/wo-runner/wo/termtext"
)

// markdownStatus is --format markdown, also appended to
// $GITHUB_STEP_SUMMARY: a table for a GitHub job summary or comment.
func markdownStatus(rows []StatusRow) string {
	var b strings.Builder
	if len(rows) > 0 {
		fmt.Fprintf(&b, "### %s — %s\n\n", mdEscape(rows[0].Key), mdEscape(rows[0].Title))
	}
	b.WriteString("| Task | Status | Step | PR | Fix rounds | Open comments | Waits for |\n|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		pr := "—"
		if safeLink(r.PRURL) {
			pr = fmt.Sprintf("[#%d](%s)", r.PRNumber, r.PRURL)
		} else if r.PRNumber > 0 {
			pr = fmt.Sprintf("#%d", r.PRNumber)
		}
		fmt.Fprintf(&b, "| %s %s | %s | %s | %s | %d | %d | %s |\n", mdCode(r.Key), mdEscape(r.Title), mdEscape(string(r.Status)), stepText(r), pr,
			r.ReviewIterations, r.OpenComments, mdEscape(orDash(strings.Join(r.WaitingFor, ", "))))
	}
	if len(rows) > 1 {
		fmt.Fprintf(&b, "\n%s\n", progressLine(rows[1:], 0))
	}
	return b.String()
}

// mdEscape makes untrusted text one inert Markdown table cell.
func mdEscape(s string) string { return termtext.MarkdownCell(s) }

// mdCode is a key as inline code, or escaped text when it holds a backtick.
func mdCode(s string) string {
	if s == "" || strings.ContainsAny(s, "`\r\n|") {
		return mdEscape(s)
	}
	return "`" + termtext.Line(s) + "`"
}

// safeLink is a URL that may become a Markdown link.
func safeLink(u string) bool { return termtext.MarkdownLinkable(u) }
