package termtext

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/rivo/uniseg"
)

// Columns, not bytes or runes: an accent takes none, a CJK character or
// an emoji two.
func TestWidthCountsColumnsAsATerminalDraws(t *testing.T) {
	for s, want := range map[string]int{
		"":                   0,
		"task_cr_01":         10,
		"café":               4, // é as one code point
		"cafe\u0301":         4, // e and a combining accent
		"日本語":                6,
		"👍":                  2,
		"👩\u200d👩\u200d👧":    2, // one family, three people
		`\x1b[31m`:           8, // escaped: what is printed is what counts
		"…":                  1,
		"step 9 ×2":          9,
		"░▓█":                3,
		"a\u200bb":           2, // a zero-width space takes none
		"ünïcödé ✓ stays 日本": 20,
	} {
		if got := Width(s); got != want {
			t.Errorf("Width(%q) = %d, want %d", s, got, want)
		}
	}
}

func TestFitCutsToColumnsAndMarksTheCut(t *testing.T) {
	for _, c := range []struct {
		in   string
		w    int
		want string
	}{
		{"task_cr_01", 10, "task_cr_01"},
		{"task_cr_01", 11, "task_cr_01"},
		{"task_cr_01", 9, "task_cr_…"},
		{"task_cr_01", 1, "…"},
		{"task_cr_01", 0, ""},
		{"task_cr_01", -3, ""},
		{"", 0, ""},
		{"日本語", 6, "日本語"},
		{"日本語", 5, "日本…"},
		{"日本語", 4, "日…"}, // 本 would take the fourth column and the mark a fifth
		{"cafe\u0301s", 4, "caf…"},
		{"cafe\u0301s", 5, "cafe\u0301s"},
		{"e\u0301e\u0301e\u0301", 2, "e\u0301…"}, // the accent stays with its letter
		{"👩\u200d👩\u200d👧 family", 3, "👩\u200d👩\u200d👧…"},
		{"👩\u200d👩\u200d👧 family", 2, "…"}, // never half a family
	} {
		got := Fit(c.in, c.w)
		if got != c.want {
			t.Errorf("Fit(%q, %d) = %q, want %q", c.in, c.w, got, c.want)
		}
		if c.w >= 0 && Width(got) > c.w {
			t.Errorf("Fit(%q, %d) takes %d columns", c.in, c.w, Width(got))
		}
	}
}

func TestWrapBreaksAtSpacesAndInsideLongWords(t *testing.T) {
	for _, c := range []struct {
		in   string
		w    int
		want []string
	}{
		{"the quick brown fox", 10, []string{"the quick", "brown fox"}},
		{"the quick brown fox", 9, []string{"the quick", "brown fox"}},
		{"the quick brown fox", 19, []string{"the quick brown fox"}},
		{"the quick brown fox", 0, []string{"the quick brown fox"}},
		{"", 5, []string{""}},
		{"abc   ", 10, []string{"abc"}},
		{"abc d", 3, []string{"abc", "d"}},
		{"abcdefghij", 4, []string{"abcd", "efgh", "ij"}},
		{"ab abcdefghij", 4, []string{"ab", "abcd", "efgh", "ij"}},
		{"a  b", 1, []string{"a", "b"}},
		{"   abcdef", 3, []string{"", "abc", "def"}},
		{"日本語", 1, []string{"日", "本", "語"}}, // wider than the line: one a line
		{"日本語 x", 4, []string{"日本", "語 x"}},
		{"key=value reason=a-long-reason", 12, []string{"key=value", "reason=a-lon", "g-reason"}},
	} {
		got := Wrap(c.in, c.w)
		if strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("Wrap(%q, %d) = %q, want %q", c.in, c.w, got, c.want)
		}
	}
}

// FuzzFitWrap: whatever the text and width, a fitted value and every
// wrapped line stay within the width (but for one character wider than
// the whole line: a character as a reader sees it, which may be several
// runes, such as an Arabic number sign and the emoji it prefixes), stay
// valid UTF-8, and wrapping loses no word.
func FuzzFitWrap(f *testing.F) {
	for _, s := range []string{"", "a b c", "日本語 text", "e\u0301e\u0301", "👩\u200d👩\u200d👧 x", "   ", "x\xffy"} {
		f.Add(s, 3)
	}
	f.Add("\u0600👩", 1) // one grapheme of three columns, found by the fuzzer
	f.Fuzz(func(t *testing.T, s string, w int) {
		s = Line(s)
		w = w%40 + 1
		if w < 1 {
			w += 40
		}
		if got := Fit(s, w); Width(got) > w || !utf8.ValidString(got) || (Width(s) <= w) != (got == s) {
			t.Fatalf("Fit(%q, %d) = %q", s, w, got)
		}
		lines := Wrap(s, w)
		for _, l := range lines {
			if Width(l) > w && uniseg.GraphemeClusterCount(l) > 1 {
				t.Fatalf("Wrap(%q, %d): line %q takes %d columns", s, w, l, Width(l))
			}
		}
		if strings.Join(strings.Fields(strings.Join(lines, "")), "") != strings.Join(strings.Fields(s), "") {
			t.Fatalf("Wrap(%q, %d) = %q lost text", s, w, lines)
		}
	})
}
