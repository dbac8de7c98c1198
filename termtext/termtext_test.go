package termtext

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestLineEscapesTerminalControls(t *testing.T) {
	cases := map[string]string{
		"plain title":                   "plain title",
		"OSC 52 \x1b]52;c;ZXZpbA==\x07": `OSC 52 \x1b]52;c;ZXZpbA==\x07`,
		"clear \x1b[H\x1b[2J":           `clear \x1b[H\x1b[2J`,
		"fake\rok":                      `fake\rok`,
		"two\nlines\ttab":               `two\nlines\ttab`,
		"C1 CSI \u009b31m":              `C1 CSI \u009b31m`,
		"bidi \u202eevil":               `bidi \u202eevil`,
		"bad utf8 \xff\xfe":             `bad utf8 \xff\xfe`,
		"del \x7f nul \x00":             `del \x7f nul \x00`,
		"ünïcödé ✓ stays":               "ünïcödé ✓ stays",
		"back\\slash stays":             "back\\slash stays",
	}
	for in, want := range cases {
		if got := Line(in); got != want {
			t.Errorf("Line(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestBlockKeepsLinesButNotControls(t *testing.T) {
	got := Block("line one\n\tindented\r\x1b]52;c;AAAA\x07 ünï")
	want := "line one\n\tindented\\r\\x1b]52;c;AAAA\\x07 ünï"
	if got != want {
		t.Errorf("Block = %q, want %q", got, want)
	}
}

func TestClipNeverEchoesHugeValues(t *testing.T) {
	huge := strings.Repeat("é", 5<<20) // 10 MB
	got := Clip(huge, 100)
	if len(got) > 200 || !strings.Contains(got, "10485760 bytes in all") || !utf8.ValidString(got) {
		t.Errorf("Clip gave %d bytes: %.120q", len(got), got)
	}
	if Clip("short", 100) != "short" {
		t.Error("Clip changed a short value")
	}
}

// FuzzLine checks that nothing a terminal interprets survives escaping.
func FuzzLine(f *testing.F) {
	for _, s := range []string{"", "a\x1b]52;c;x\x07", "\u009b2J", "\xff", "a\nb\rc", "\u202e"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, out := range []string{Line(s), Block(s)} {
			if !utf8.ValidString(out) {
				t.Fatalf("invalid UTF-8 out of %q: %q", s, out)
			}
			for _, r := range out {
				if (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f || unsafeRune(r) {
					t.Fatalf("control %U survived in %q (from %q)", r, out, s)
				}
			}
		}
		if strings.ContainsAny(Line(s), "\n\t") {
			t.Fatalf("Line kept a newline or tab: %q", Line(s))
		}
	})
}

// A title in a table of a PR description must stay one inert cell: no
// new cell, row, link, tag, mention or autolink.
func TestMarkdownCellIsInert(t *testing.T) {
	for in, want := range map[string]string{
		"a | b":                     `a \| b`,
		"line\nbreak":               "line break",
		"<!-- /wo:stack -->":        `\<!-- /wo:stack --\>`,
		"[x](javascript:alert(1))":  `\[x\](javascript:alert(1))`,
		"ping @acme/security":       "ping @\u200bacme/security",
		"see https://evil.example":  "see https:\u200b//evil.example",
		"or www.evil.example":       "or www\u200b.evil.example",
		"code `span`":               "code \\`span\\`",
		"\x1b[2Jclear":              `\\x1b\[2Jclear`, // shown as \x1b[2Jclear
		"[2/5] internal/adapters":   `\[2/5\] internal/adapters`,
		"plain title, nothing else": "plain title, nothing else",
	} {
		if got := MarkdownCell(in); got != want {
			t.Errorf("MarkdownCell(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCutMarksTheCutOnACharacterBoundary(t *testing.T) {
	if got := Cut("short", 10); got != "short" {
		t.Errorf("a short text: %q", got)
	}
	if got := Cut("abcdef", 6); got != "abcdef" {
		t.Errorf("a text of exactly max: %q", got)
	}
	if got := Cut("ab€cd", 4); got != "ab […]" { // € is 3 bytes at 2..4: never split
		t.Errorf("cut inside a character: %q", got)
	}
	if got := Cut("abcdef", 3); got != "abc […]" {
		t.Errorf("cut: %q", got)
	}
}
