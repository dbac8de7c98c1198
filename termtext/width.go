package termtext

import (
	"strings"

	"github.com/rivo/uniseg"
)

// Width is how many terminal columns s takes: a wide (East Asian)
// character or an emoji two, a combining mark none; bytes and runes are
// not columns. s is text already escaped by Line, so it holds no control
// character whose width a terminal would decide.
func Width(s string) int {
	for i := range len(s) {
		if s[i]&0x80 != 0 {
			return uniseg.StringWidth(s)
		}
	}
	return len(s) // ASCII, the common case: a column a byte
}

// ellipsis marks where Fit cut a value.
const ellipsis = "…"

// Fit cuts s to at most w columns, between two characters as a reader
// sees them (an accent stays with its letter, an emoji sequence whole),
// and ends what it cut with "…". Escape first, then fit: cutting before
// escaping would count columns that the escapes then add.
func Fit(s string, w int) string {
	if Width(s) <= w {
		return s
	}
	if w <= 0 {
		return ""
	}
	head, _ := split(s, w-1)
	return head + ellipsis
}

// split returns the longest start of s that takes at most w columns, and
// the rest.
func split(s string, w int) (head, rest string) {
	used, state := 0, -1
	for rest = s; rest != ""; {
		_, after, width, next := uniseg.FirstGraphemeClusterInString(rest, state)
		if used+width > w {
			break
		}
		used, rest, state = used+width, after, next
	}
	return s[:len(s)-len(rest)], rest
}

// Wrap breaks s into lines of at most w columns (0: no limit): at a
// space where a line can end there, inside a word where the word alone is
// wider than a line. The spaces where it broke, and those that end s, are
// dropped.
func Wrap(s string, w int) []string {
	if w <= 0 {
		return []string{s}
	}
	var lines []string
	for {
		head, rest := split(s, w)
		if head == "" { // one character wider than a line: it goes alone
			head, rest, _, _ = uniseg.FirstGraphemeClusterInString(s, -1)
		}
		if rest != "" && rest[0] != ' ' {
			// The word that did not fit starts the next line, unless it
			// is the line's only word.
			if i := strings.LastIndexByte(head, ' '); strings.TrimSpace(head[:max(i, 0)]) != "" {
				head, rest = head[:i], s[i:]
			}
		}
		lines = append(lines, strings.TrimRight(head, " "))
		if s = strings.TrimLeft(rest, " "); s == "" {
			return lines
		}
	}
}
