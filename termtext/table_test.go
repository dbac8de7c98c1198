package termtext

import (
	"strings"
	"testing"
)

// render is a table's text and hidden columns, as one string to compare.
func render(t *Table, width int) string {
	text, hidden := t.Render(width)
	if len(hidden) > 0 {
		text += "hidden: " + strings.Join(hidden, ", ") + "\n"
	}
	return text
}

func tasks() *Table {
	return &Table{
		Columns: []Column{
			{Header: "KEY", Give: 1, Min: 6},
			{Header: "STATUS"},
			{Header: "COUNT", Drop: 1},
			{Header: "TITLE", Give: 2, Min: 5},
		},
		Rows: [][]string{
			{"task_epic_01", "open", "3", "Foundation of everything"},
			{"task_epic_02", "in_review", "0", "Adapters"},
		},
	}
}

func TestTableFitsItsWidth(t *testing.T) {
	for _, c := range []struct {
		name  string
		table *Table
		width int
		want  string
	}{
		{"whole at no limit", tasks(), 0, "" +
			"KEY           STATUS     COUNT  TITLE\n" +
			"task_epic_01  open       3      Foundation of everything\n" +
			"task_epic_02  in_review  0      Adapters\n"},
		{"whole when it fits", tasks(), 62, "" +
			"KEY           STATUS     COUNT  TITLE\n" +
			"task_epic_01  open       3      Foundation of everything\n" +
			"task_epic_02  in_review  0      Adapters\n"},
		{"the title gives way first", tasks(), 50, "" +
			"KEY           STATUS     COUNT  TITLE\n" +
			"task_epic_01  open       3      Foundation of eve…\n" +
			"task_epic_02  in_review  0      Adapters\n"},
		{"the title to its least, then the key", tasks(), 36, "" +
			"KEY          STATUS     COUNT  TITLE\n" +
			"task_epic_…  open       3      Foun…\n" +
			"task_epic_…  in_review  0      Adap…\n"},
		{"the key to its least", tasks(), 31, "" +
			"KEY     STATUS     COUNT  TITLE\n" +
			"task_…  open       3      Foun…\n" +
			"task_…  in_review  0      Adap…\n"},
		{"then a column goes, and what it leaves is the key's again", tasks(), 30, "" +
			"KEY           STATUS     TITLE\n" +
			"task_epic_01  open       Foun…\n" +
			"task_epic_02  in_review  Adap…\n" +
			"hidden: COUNT\n"},
		{"too narrow for what may not go: cut below Min", tasks(), 21, "" +
			"KEY     STATUS     T…\n" +
			"task_…  open       F…\n" +
			"task_…  in_review  A…\n" +
			"hidden: COUNT\n"},
		{"narrower than can be: each cut to the mark", tasks(), 10, "" +
			"…  STATUS     …\n" +
			"…  open       …\n" +
			"…  in_review  …\n" +
			"hidden: COUNT\n"},
	} {
		if got := render(c.table, c.width); got != c.want {
			t.Errorf("%s (width %d):\n got:\n%s\nwant:\n%s", c.name, c.width, got, c.want)
		}
	}
}

// Short forms come before cutting: a key without its epic's prefix is
// still whole.
func TestTableUsesShortFormsBeforeCutting(t *testing.T) {
	tb := tasks()
	tb.Columns[0].Short = []string{"…_01", "…_02"}
	got := render(tb, 44)
	want := "" +
		"KEY   STATUS     COUNT  TITLE\n" +
		"…_01  open       3      Foundation of every…\n" +
		"…_02  in_review  0      Adapters\n"
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	if got := render(tb, 0); strings.Contains(got, "…_01") {
		t.Errorf("a short form at no limit:\n%s", got)
	}
}

// A column with nothing to say goes before one that says something, and
// among those that say something the highest Drop goes first.
func TestTableLeavesOutEmptyColumnsFirst(t *testing.T) {
	tb := &Table{
		Columns: []Column{
			{Header: "KEY"},
			{Header: "UPDATED", Drop: 3},
			{Header: "PR", Drop: 1},
			{Header: "WAITS FOR", Drop: 2},
		},
		Rows: [][]string{{"task_a", "5m ago", "-", "task_b"}, {"task_b", "1h ago", "", "-"}},
	}
	// A column that must show goes too when it has nothing to show.
	blank := &Table{
		Columns: []Column{{Header: "KEY"}, {Header: "STEP"}, {Header: "FIXES"}, {Header: "TITLE", Give: 1, Min: 4}},
		Rows:    [][]string{{"task_a", "-", "0", "Foundation"}},
	}
	if got, want := render(blank, 20), "KEY     STEP  TITLE\ntask_a  -     Found…\nhidden: FIXES\n"; got != want {
		t.Errorf("width 20:\n got:\n%s\nwant:\n%s", got, want)
	}
	if got, want := render(blank, 16), "KEY     TITLE\ntask_a  Foundat…\nhidden: STEP, FIXES\n"; got != want {
		t.Errorf("width 16:\n got:\n%s\nwant:\n%s", got, want)
	}
	if got, want := render(blank, 28), "KEY     STEP  FIXES  TITLE\ntask_a  -     0      Founda…\n"; got != want {
		t.Errorf("width 28:\n got:\n%s\nwant:\n%s", got, want)
	}
	for width, want := range map[int]string{
		34: "KEY     UPDATED  PR  WAITS FOR\ntask_a  5m ago   -   task_b\ntask_b  1h ago       -\n",
		30: "KEY     UPDATED  PR  WAITS FOR\ntask_a  5m ago   -   task_b\ntask_b  1h ago       -\n",
		29: "KEY     UPDATED  WAITS FOR\ntask_a  5m ago   task_b\ntask_b  1h ago   -\nhidden: PR\n",
		26: "KEY     UPDATED  WAITS FOR\ntask_a  5m ago   task_b\ntask_b  1h ago   -\nhidden: PR\n",
		25: "KEY     WAITS FOR\ntask_a  task_b\ntask_b  -\nhidden: UPDATED, PR\n",
		10: "KEY\ntask_a\ntask_b\nhidden: UPDATED, PR, WAITS FOR\n",
	} {
		if got := render(tb, width); got != want {
			t.Errorf("width %d:\n got:\n%s\nwant:\n%s", width, got, want)
		}
	}
}

func TestTableWrapsAColumnThatMustBeReadWhole(t *testing.T) {
	tb := &Table{
		Columns: []Column{{Header: "ACTION"}, {Header: "DETAILS", Give: 1, Min: 10, Wrap: true}},
		Rows:    [][]string{{"step_failed", "step=3 error=the remote hung up"}, {"ok", "-"}},
	}
	want := "" +
		"ACTION       DETAILS\n" +
		"step_failed  step=3\n" +
		"             error=the\n" +
		"             remote\n" +
		"             hung up\n" +
		"ok           -\n"
	if got := render(tb, 23); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

// Cells are untrusted: escaped before they are measured and cut, so an
// escape sequence neither reaches the terminal nor shifts the columns.
func TestTableEscapesCellsBeforeMeasuring(t *testing.T) {
	tb := &Table{
		Columns: []Column{{Header: "KEY"}, {Header: "TITLE", Give: 1, Min: 4}},
		Rows:    [][]string{{"task\x1b[2J", "red \x1b[31mtitle\x1b[0m"}, {"task_日本", "ok"}},
	}
	got := render(tb, 24)
	want := "" +
		"KEY          TITLE\n" +
		`task\x1b[2J  red \x1b[3…` + "\n" +
		"task_日本    ok\n"
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

// Style adds what takes no columns (colour) after the layout; indent
// starts every line; a table without headers has no header line, and no
// line ends in spaces.
func TestTableStyleIndentAndNoHeader(t *testing.T) {
	var rows []int
	tb := &Table{
		Indent: "  ",
		Columns: []Column{
			{Style: func(row int, cell string) string { rows = append(rows, row); return "<" + cell + ">" }},
			{Give: 1, Min: 3},
		},
		Rows: [][]string{{"repo_path", "/src/hermes"}, {"branch", ""}},
	}
	got := render(tb, 20)
	want := "  <repo_path>  /src/h…\n  <branch   >\n"
	if got != want {
		t.Errorf("got:\n%q\nwant:\n%q", got, want)
	}
	if len(rows) != 2 || rows[0] != 0 || rows[1] != 1 {
		t.Errorf("Style saw rows %v, want [0 1] (no header)", rows)
	}
	tb.Columns[0].Header = "FIELD"
	rows = nil
	tb.Render(0)
	if len(rows) != 3 || rows[0] != -1 {
		t.Errorf("Style saw rows %v, want the header as -1 first", rows)
	}
}

// Whatever the width, no line of a table is wider than it can be made:
// the width, or the columns that may not be cut or left out with those
// that may be cut at one column each.
func TestTableNeverExceedsTheWidth(t *testing.T) {
	tb := tasks()
	tb.Columns[0].Short = []string{"…_01", ""}
	floor := 1 + gap + Width("in_review") + gap + 1 // key, status, title at their least
	for width := 1; width <= 80; width++ {
		text, _ := tb.Render(width)
		for _, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
			if Width(line) > max(width, floor) {
				t.Fatalf("width %d: %q takes %d columns", width, line, Width(line))
			}
		}
	}
}

// Below Min, the cut is shared: each column that gives way keeps a few
// columns before any is cut to its mark.
func TestTableCutsBelowMinEvenlyFirst(t *testing.T) {
	tb := &Table{
		Columns: []Column{{Header: "KEY", Give: 1, Min: 12}, {Header: "TITLE", Give: 2, Min: 20}},
		Rows:    [][]string{{"task_hermes_review_01", "Foundation of everything"}},
	}
	for width, want := range map[int]string{
		34: "KEY           TITLE\ntask_hermes…  Foundation of every…\n",
		18: "KEY       TITLE\ntask_he…  Foundat…\n",
		12: "KEY       T…\ntask_he…  F…\n",
	} {
		if got := render(tb, width); got != want {
			t.Errorf("width %d:\n got:\n%s\nwant:\n%s", width, got, want)
		}
	}
}

// A row may hold fewer cells than the table has columns: the rest are
// empty. The first column may go like any other, and a column on the left
// may give way before one on its right.
func TestTableShortRowsFirstColumnsAndGiveOrder(t *testing.T) {
	tb := &Table{
		Columns: []Column{{Header: "PR", Drop: 1}, {Header: "TITLE", Give: 2, Min: 4}, {Header: "KEY", Give: 1, Min: 4}},
		Rows:    [][]string{{"-", "Foundation"}, {"", "Adapters", "task_cr_02"}},
	}
	for width, want := range map[int]string{
		0:  "PR  TITLE       KEY\n-   Foundation\n    Adapters    task_cr_02\n",
		26: "PR  TITLE       KEY\n-   Foundation\n    Adapters    task_cr_02\n", // exactly its width: nothing cut
		20: "PR  TIT…  KEY\n-   Fou…\n    Ada…  task_cr_02\n",                   // the title gives way first
		16: "PR  TIT…  KEY\n-   Fou…\n    Ada…  task_…\n",
		13: "TIT…  KEY\nFou…\nAda…  task_c…\nhidden: PR\n",
	} {
		if got := render(tb, width); got != want {
			t.Errorf("width %d:\n got:\n%s\nwant:\n%s", width, got, want)
		}
	}
}

// A short form is used only when the full ones do not fit: not at the
// exact width of the full table.
func TestTableShortFormsOnlyWhenNeeded(t *testing.T) {
	tb := tasks()
	tb.Columns[0].Short = []string{"…_01", "…_02"}
	full, _ := tasks().Render(0)
	width := Width(strings.SplitN(full, "\n", 2)[0]) + Width("Foundation of everything") - Width("TITLE")
	if got, _ := tb.Render(width); got != full {
		t.Errorf("at its own width (%d) the table changed:\n%s\nwant:\n%s", width, got, full)
	}
	if got, _ := tb.Render(width - 1); !strings.Contains(got, "…_01  open") {
		t.Errorf("one column less: no short form:\n%s", got)
	}
}
