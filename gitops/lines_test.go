package gitops

import (
	"slices"
	"testing"
)

func TestLinesTouched(t *testing.T) {
	t.Parallel()
	before := "a\nb\nc\nd\ne\nf\ng\n"
	cases := []struct {
		name, after string
		want        []int
	}{
		{"nothing changed", before, nil},
		{"one line rewritten", "a\nb\nC\nd\ne\nf\ng\n", []int{3}},
		{"a line deleted", "a\nb\nd\ne\nf\ng\n", []int{3}},
		{"lines inserted after the fourth", "a\nb\nc\nd\nnew\nnewer\ne\nf\ng\n", []int{4, 5}},
		{"the last line without its newline", "a\nb\nc\nd\ne\nf\nG", []int{7}},
		{"appended at the end", before + "h\n", []int{7, 8}},
	}
	for _, c := range cases {
		got := LinesTouched(before, c.after)
		if !slices.Equal([]int(got), c.want) {
			t.Errorf("%s: touched %v, want %v", c.name, got, c.want)
		}
	}
}

func TestTouchedLinesNear(t *testing.T) {
	t.Parallel()
	touched := LinesTouched("1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n", "1\n2\n3\n4\n5\n6\n7\n8\n9\nten\n")
	for line, want := range map[int]bool{10: true, 7: true, 6: false, 1: false} {
		if got := touched.Near(line, 3); got != want {
			t.Errorf("a change on line 10 is near line %d (within 3): %v, want %v", line, got, want)
		}
	}
	if TouchedLines(nil).Near(5, 3) {
		t.Error("no touched line is near anything")
	}
}
