package gitops

import (
	"slices"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/utils/diff"
	"github.com/sergi/go-diff/diffmatchpatch"
)

// diffTimeout bounds the line diff of one file: past it the rest of the
// file counts as rewritten, which makes more lines touched, never fewer.
const diffTimeout = 2 * time.Second

// TouchedLines are the lines of before (numbered from 1) that a change to
// after touched: each line deleted or rewritten, and the lines on either
// side of a pure insertion. A review thread about a line is addressed by a
// change that touched the lines around it, not by one elsewhere in the
// file.
type TouchedLines []int

// LinesTouched compares two versions of a file line by line.
func LinesTouched(before, after string) TouchedLines {
	var out TouchedLines
	line := 1 // the next line of before
	deleted := false
	for _, d := range diff.DoWithTimeout(before, after, diffTimeout) {
		n := strings.Count(d.Text, "\n")
		if !strings.HasSuffix(d.Text, "\n") {
			n++ // a last line without its newline
		}
		switch d.Type {
		case diffmatchpatch.DiffEqual:
			line += n
		case diffmatchpatch.DiffDelete:
			for i := range n {
				out = append(out, line+i)
			}
			line += n
		case diffmatchpatch.DiffInsert:
			if !deleted { // an insertion, not the new text of a rewrite
				out = append(out, line-1, line)
			}
		}
		deleted = d.Type == diffmatchpatch.DiffDelete
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Near reports whether a touched line lies within distance lines of line.
func (t TouchedLines) Near(line, distance int) bool {
	i, _ := slices.BinarySearch(t, line-distance)
	return i < len(t) && t[i] <= line+distance
}
