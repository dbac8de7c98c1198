// Package fileparts reads and writes the part of a file that a PR of a
// split brings: some of its lines, named as ranges ("1-12,30-41").
package fileparts

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// Ranges writes sorted, distinct line numbers (from 1) as ranges.
func Ranges(lines []int) string {
	var b strings.Builder
	for i := 0; i < len(lines); {
		j := i
		for j+1 < len(lines) && lines[j+1] == lines[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%d-%d", lines[i], lines[j])
		i = j + 1
	}
	return b.String()
}

// Check says whether ranges are well formed: first-last pairs from line
// 1, ascending, apart.
func Check(ranges string) error {
	_, err := lineRanges(ranges, -1)
	return err
}

type span struct{ from, to int }

// lineRanges reads ranges; max < 0 is a file of any length.
func lineRanges(ranges string, max int) ([]span, error) {
	var out []span
	last := 0
	for _, r := range strings.Split(ranges, ",") {
		a, b, ok := strings.Cut(r, "-")
		from, err1 := strconv.Atoi(a)
		to, err2 := strconv.Atoi(b)
		if !ok || err1 != nil || err2 != nil || from <= last || to < from || max >= 0 && to > max {
			within := ""
			if max >= 0 {
				within = fmt.Sprintf(" and within the file's %d lines", max)
			}
			return nil, fmt.Errorf("line range %q is not first-last, after the range before it%s", r, within)
		}
		out = append(out, span{from, to})
		last = to
	}
	return out, nil
}

// Cut is the lines of src that ranges names, in order, each with its end
// of line. The ranges must be ascending and within src.
func Cut(src []byte, ranges string) ([]byte, error) {
	lines := bytes.SplitAfter(src, []byte("\n"))
	if len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	spans, err := lineRanges(ranges, len(lines))
	if err != nil {
		return nil, err
	}
	var out []byte
	for _, s := range spans {
		for _, l := range lines[s.from-1 : s.to] {
			out = append(out, l...)
		}
	}
	return out, nil
}
