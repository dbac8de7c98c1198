// Package termtext makes untrusted text safe to print on a terminal.
//
// Titles, descriptions, review comments, notes and log details come from
// documents and servers that wo does not control. Printed as they are, an
// escape sequence in them could set the clipboard (OSC 52), clear the
// screen, move the cursor to overwrite earlier lines (CSI, a bare CR) or
// reorder what the reader sees (bidirectional overrides). Line and Block
// show every such character as a visible Go-style escape instead (\x1b,
// \r, \u202e), so the text stays readable and nothing is interpreted.
//
// Width, Fit, Wrap and Table measure escaped text in terminal columns
// (not bytes, not runes) and fit it to the terminal's width: a table whose
// rows wrap is unreadable.
//
// Machine output (--json) is never passed through here: JSON has its own,
// exact escaping.
package termtext

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Line escapes s for a single line or a table cell: every control
// character, newline and tab included, is shown escaped.
func Line(s string) string { return escape(s, false) }

// Block escapes s for multi-line text (a description, an error message):
// newlines and tabs are kept, every other control character is escaped.
func Block(s string) string { return escape(s, true) }

func escape(s string, keepLines bool) string {
	if clean(s, keepLines) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case keepLines && (r == '\n' || r == '\t'):
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafeRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// clean reports whether s has nothing to escape, the common case.
func clean(s string, keepLines bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 {
			return cleanUnicode(s[i:])
		}
		if c == 0x7f || (c < 0x20 && !(keepLines && (c == '\n' || c == '\t'))) {
			return false
		}
	}
	return true
}

func cleanUnicode(s string) bool {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || r < 0x20 || r == 0x7f || unsafeRune(r) {
			return false // the slow path decides, kept newlines included
		}
		i += size
	}
	return true
}

// unsafeRune is a C1 control (0x80-0x9f: 0x9b is CSI and 0x9d OSC on
// terminals that honour 8-bit controls), a bidirectional override or
// isolate, or a line or paragraph separator.
func unsafeRune(r rune) bool {
	switch {
	case r >= 0x80 && r <= 0x9f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f, r == 0x061c:
		return true
	case r == 0x2028 || r == 0x2029:
		return true
	}
	return false
}

// Cut shortens s to at most max bytes, on a character boundary, and marks
// the cut with " […]": for text kept to be read again (a review comment in
// the state), where Clip's byte count would be noise.
func Cut(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + " […]"
}

// Clip shortens s to at most max bytes (on a character boundary) and says
// how long it was, so that a huge untrusted value is never echoed in full.
func Clip(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes in all)", s[:cut], len(s))
}
