package fileparts

import "testing"

func TestRangesJoinRunsOfLines(t *testing.T) {
	for _, c := range []struct {
		lines []int
		want  string
	}{
		{nil, ""},
		{[]int{1}, "1-1"},
		{[]int{1, 2, 3, 5, 7, 8}, "1-3,5-5,7-8"},
	} {
		if got := Ranges(c.lines); got != c.want {
			t.Errorf("Ranges(%v) = %q, want %q", c.lines, got, c.want)
		}
	}
}

func TestCutKeepsTheNamedLinesInOrder(t *testing.T) {
	src := []byte("package p\n\nimport \"fmt\"\n\nfunc A() { fmt.Println() }\n\nfunc B() {}\n")
	got, err := Cut(src, "1-2,7-7")
	if err != nil {
		t.Fatal(err)
	}
	if want := "package p\n\nfunc B() {}\n"; string(got) != want {
		t.Errorf("Cut = %q, want %q", got, want)
	}
	whole, err := Cut(src, "1-7")
	if err != nil || string(whole) != string(src) {
		t.Errorf("Cut of every line = %q, %v; want the file", whole, err)
	}
	noEOL, err := Cut([]byte("a\nb"), "2-2")
	if err != nil || string(noEOL) != "b" {
		t.Errorf("the last line without its end of line: %q, %v", noEOL, err)
	}
}

func TestCutRefusesRangesOutsideOrOutOfOrder(t *testing.T) {
	src := []byte("a\nb\nc\n")
	for _, r := range []string{"", "0-1", "2-1", "1-4", "2-3,1-1", "1-2,2-3", "x-1", "1", "1-2,"} {
		if _, err := Cut(src, r); err == nil {
			t.Errorf("Cut(%q) took it; want an error", r)
		}
	}
}
