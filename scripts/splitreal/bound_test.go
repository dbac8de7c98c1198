package main

import (
	"testing"

	"github.com/wo-runner/wo/split"
)

// The PR-count bound scales the fewest PRs any plan could have: by the
// reviewer's budget when set-apart files are few, by what GitHub shows
// of a diff when they are many (x/text: 4,999 counted lines and 297,539
// generated ones need 15 PRs of 20,000 lines, not one of 8,000).
func TestPRBoundCountsBothBudgets(t *testing.T) {
	opts := split.Options{MaxLines: 8000, MaxFiles: 150}
	code := []split.File{{Path: "a.go", Lines: 9000}, {Path: "b.go", Lines: 7000}}
	if got := prBound(code, opts); got != 4 { // ⌈1.3 × 16,000 ÷ 8,000⌉ + 1
		t.Errorf("16,000 counted lines at 8,000 a PR: bound %d, want 4", got)
	}
	tables := append([]split.File{{Path: "c.go", Lines: 4999}}, make([]split.File, 15)...)
	for i := 1; i < len(tables); i++ {
		tables[i] = split.File{Path: "tables.go", Lines: 19_836, SetApart: "generated"}
	}
	if got := prBound(tables, opts); got != 21 { // ⌈1.3 × 302,539 ÷ 20,000⌉ + 1
		t.Errorf("4,999 counted lines and 297,540 set apart: bound %d, want 21", got)
	}
	many := make([]split.File, 600)
	for i := range many {
		many[i] = split.File{Path: "f", Lines: 1}
	}
	if got := prBound(many, opts); got != 7 { // ⌈1.3 × 600 ÷ 150⌉ + 1
		t.Errorf("600 one-line files at 150 a PR: bound %d, want 7", got)
	}
}
