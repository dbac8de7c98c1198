package termtext

import "strings"

// MarkdownCell makes untrusted text one inert Markdown table cell: no line
// break to end the row, no pipe to add a cell, no HTML tag (so no comment
// marker either), no link (bare URLs too, which GitHub would link), no
// @mention (which would notify whoever it names wherever the cell is
// shown), no code span, and every control character shown escaped as Line
// does. A zero-width space after @, inside :// and after www keeps those
// visible but inert. Emphasis is left alone: it can only change how the
// cell looks, not what it holds.
func MarkdownCell(s string) string {
	s = Line(strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(s))
	var b strings.Builder
	b.Grow(len(s) + 8)
	for _, r := range s {
		if strings.ContainsRune("\\`|<>[]", r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
		if r == '@' {
			b.WriteString(zeroWidthSpace)
		}
	}
	return autolinks.Replace(b.String())
}

const zeroWidthSpace = "\u200b"

var autolinks = strings.NewReplacer("://", ":"+zeroWidthSpace+"//", "www.", "www"+zeroWidthSpace+".", "WWW.", "WWW"+zeroWidthSpace+".")

// MarkdownLinkable reports whether a URL may become a Markdown link as it
// is: http(s), with nothing that ends the link early or adds markup.
func MarkdownLinkable(u string) bool {
	return (strings.HasPrefix(u, "https://") || strings.HasPrefix(u, "http://")) &&
		!strings.ContainsAny(u, " ()<>[]\"'`|\\") && Line(u) == u
}
