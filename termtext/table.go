package termtext

import (
	"cmp"
	"slices"
	"strings"
)

// Table is text in columns that fits a terminal's width: a person reads
// each row on one line (a wrapped row is no longer a row). When the
// columns do not fit, the table leaves out the columns that may go (Drop)
// until what is left fits with the columns that give way (Give) at their
// Min, saying which; then it uses the shorter forms of cells that have
// one, and cuts the columns that give way, each down to its Min (below it
// only when nothing else may go). At width 0 every cell is whole.
//
// Every cell is escaped (Line) before it is measured and cut, so a cell
// may be untrusted text.
type Table struct {
	Columns []Column
	Rows    [][]string
	// Indent starts every line (a table inside a section).
	Indent string
}

// Column is one column of a Table.
type Column struct {
	// Header heads the column; a table whose headers are all empty has no
	// header line.
	Header string
	// Give orders the columns that are cut when the table is too wide:
	// the highest first, each down to Min before the next gives way; 0
	// never cut.
	Give int
	// Min is the narrowest a column that gives way is cut to.
	Min int
	// Wrap breaks a cell that is too long onto more lines instead of
	// cutting it: for a column whose every word counts.
	Wrap bool
	// Drop orders the columns that may be left out when cutting is not
	// enough: the highest first; 0 never, unless it has nothing in it. A
	// column with nothing in it ("", "-" or "0" in every row) goes before
	// any other.
	Drop int
	// Short is a shorter form of each row's cell ("" for none), used when
	// the column is narrowed: a key without the prefix its epic gives it.
	Short []string
	// Style dresses a cell once it is laid out and padded (colour, which
	// takes no columns): row is the row's index, -1 for the header.
	Style func(row int, cell string) string
}

// gap is the space between two columns.
const gap = 2

// fewColumns is as narrow as a cut cell gets while another can give.
const fewColumns = 8

// Render lays the table out in at most width columns (0: no limit), and
// returns it with the headers of the columns it left out.
func (t *Table) Render(width int) (text string, hidden []string) {
	cells := make([][]string, len(t.Columns)) // by column, escaped
	shorts := make([][]string, len(t.Columns))
	for c, col := range t.Columns {
		cells[c] = make([]string, len(t.Rows))
		shorts[c] = make([]string, len(t.Rows))
		for r, row := range t.Rows {
			if c < len(row) {
				cells[c][r] = Line(row[c])
			}
			shorts[c][r] = cells[c][r]
			if r < len(col.Short) && col.Short[r] != "" {
				shorts[c][r] = Line(col.Short[r])
			}
		}
	}
	l := layout{t: t, cells: cells, shorts: shorts, width: width, shown: make([]bool, len(t.Columns)),
		full: make([]int, len(t.Columns)), short: make([]int, len(t.Columns))}
	for c := range t.Columns {
		l.shown[c] = true
		l.full[c], l.short[c] = l.measure(cells[c], c), l.measure(shorts[c], c)
	}
	widths, short := l.fit()
	var b strings.Builder
	header := false
	for _, col := range t.Columns {
		header = header || col.Header != ""
	}
	if header {
		heads := make([]string, len(t.Columns))
		for c, col := range t.Columns {
			heads[c] = Line(col.Header)
		}
		l.writeRow(&b, -1, heads, widths)
	}
	for r := range t.Rows {
		row := make([]string, len(t.Columns))
		for c := range t.Columns {
			row[c] = cells[c][r]
			if short[c] {
				row[c] = shorts[c][r]
			}
		}
		l.writeRow(&b, r, row, widths)
	}
	for c, col := range t.Columns {
		if !l.shown[c] {
			hidden = append(hidden, col.Header)
		}
	}
	return b.String(), hidden
}

// layout decides which columns show, and how wide.
type layout struct {
	t             *Table
	cells, shorts [][]string
	width         int
	shown         []bool
	// full and short are each column's width with every cell whole, in
	// the full or the short form, the header included.
	full, short []int
}

func (l *layout) measure(cells []string, c int) int {
	w := Width(Line(l.t.Columns[c].Header))
	for _, s := range cells {
		w = max(w, Width(s))
	}
	return w
}

// narrowest is the least a column can take.
func (l *layout) narrowest(c int) int {
	w := l.short[c]
	if col := l.t.Columns[c]; col.Give > 0 {
		w = min(w, max(col.Min, 1))
	}
	return w
}

// total is the width of the shown columns at the given widths, gaps and
// indent included.
func (l *layout) total(width func(c int) int) int {
	sum, n := Width(l.t.Indent), 0
	for c := range l.t.Columns {
		if l.shown[c] {
			sum += width(c)
			n++
		}
	}
	return sum + gap*max(n-1, 0)
}

// fit leaves out columns until the rest can fit, then narrows: short
// forms first, then the columns that give way, in their order.
func (l *layout) fit() (widths []int, short []bool) {
	n := len(l.t.Columns)
	widths, short = make([]int, n), make([]bool, n)
	for c := range n {
		widths[c] = l.full[c]
	}
	if l.width <= 0 {
		return widths, short
	}
	for l.total(l.narrowest) > l.width {
		c := l.toDrop()
		if c < 0 {
			break
		}
		l.shown[c] = false
	}
	excess := l.total(func(c int) int { return widths[c] }) - l.width
	for _, c := range l.byGive(func(col Column) bool { return col.Short != nil }) {
		if excess <= 0 {
			break
		}
		short[c] = true
		w := min(l.short[c], widths[c])
		excess -= widths[c] - w
		widths[c] = w
	}
	// Down to Min; when even the columns that may go are gone, down to a
	// few columns each, and then to one: a table too wide for its
	// terminal is worse than one whose cells are all cut.
	few := func(c int) int { return min(l.narrowest(c), fewColumns) }
	for _, least := range []func(c int) int{l.narrowest, few, func(int) int { return 1 }} {
		for _, c := range l.byGive(func(col Column) bool { return col.Give > 0 }) {
			cut := max(min(excess, widths[c]-least(c)), 0)
			widths[c] -= cut
			excess -= cut
		}
	}
	return widths, short
}

// byGive lists the shown columns that pass keep, the one that gives way
// first first (the rightmost of equals).
func (l *layout) byGive(keep func(Column) bool) []int {
	var out []int
	for c := len(l.t.Columns) - 1; c >= 0; c-- {
		if l.shown[c] && keep(l.t.Columns[c]) {
			out = append(out, c)
		}
	}
	slices.SortStableFunc(out, func(a, b int) int { return cmp.Compare(l.t.Columns[b].Give, l.t.Columns[a].Give) })
	return out
}

// toDrop is the next column to leave out, -1 when none may go.
func (l *layout) toDrop() int {
	best, bestEmpty := -1, false
	for c := len(l.t.Columns) - 1; c >= 0; c-- {
		col := l.t.Columns[c]
		if !l.shown[c] {
			continue
		}
		empty := l.empty(c)
		if col.Drop == 0 && !empty {
			continue
		}
		switch {
		case best < 0, empty && !bestEmpty, empty == bestEmpty && col.Drop > l.t.Columns[best].Drop:
			best, bestEmpty = c, empty
		}
	}
	return best
}

// empty reports whether a column says nothing in any row.
func (l *layout) empty(c int) bool {
	for _, s := range l.cells[c] {
		if s != "" && s != "-" && s != "0" {
			return false
		}
	}
	return true
}

// writeRow writes one row, a cell that is too long cut or, in a column
// that wraps, continued on the next lines.
func (l *layout) writeRow(b *strings.Builder, row int, cells []string, widths []int) {
	last := 0 // the last column shown: it is not padded
	for c := range cells {
		if l.shown[c] {
			last = c
		}
	}
	parts := make([][]string, len(cells))
	lines := 1
	for c, s := range cells {
		if !l.shown[c] {
			continue
		}
		switch {
		case l.width <= 0:
			parts[c] = []string{s}
		case l.t.Columns[c].Wrap && row >= 0:
			parts[c] = Wrap(s, widths[c])
		default:
			parts[c] = []string{Fit(s, widths[c])}
		}
		lines = max(lines, len(parts[c]))
	}
	for i := range lines {
		var line strings.Builder
		line.WriteString(l.t.Indent)
		for c := range cells {
			if !l.shown[c] {
				continue
			}
			s := ""
			if i < len(parts[c]) {
				s = parts[c][i]
			}
			if c != last {
				s += strings.Repeat(" ", max(widths[c]-Width(s), 0))
			}
			if style := l.t.Columns[c].Style; style != nil && i == 0 {
				s = style(row, s)
			}
			line.WriteString(s)
			if c != last {
				line.WriteString(strings.Repeat(" ", gap))
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " "))
		b.WriteByte('\n')
	}
}
