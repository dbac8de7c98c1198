package action

import "testing"

func TestStripStackLeavesThePullRequestsOwnSummary(t *testing.T) {
	table := "### Stack: part 2 of 3\n\n| | part | pull request |\n"
	for _, c := range []struct{ name, body, want string }{
		{"no section", "  The summary.\n", "The summary."},
		{"a section after the summary", "The summary.\n\n" + StackBegin + "\n" + table + StackEnd + "\n", "The summary."},
		{"text on both sides", "Above.\r\n\r\n" + StackBegin + "\n" + table + StackEnd + "\r\n\r\nBelow.", "Above.\n\nBelow."},
		{"only a section", StackBegin + "\n" + table + StackEnd, ""},
		{"two sections", StackBegin + "x" + StackEnd + "\nMiddle.\n" + StackBegin + "y" + StackEnd, "Middle."},
		{"a start with no end is the author's", "Quoting " + StackBegin + " here.", "Quoting " + StackBegin + " here."},
		{"an end with no start is the author's", "Quoting " + StackEnd + ", then\n\n" + StackBegin + "t" + StackEnd, "Quoting " + StackEnd + ", then"},
		{"the section nearest its end", "Quoting " + StackBegin + " here.\n\n" + StackBegin + "t" + StackEnd, "Quoting " + StackBegin + " here."},
	} {
		if got := StripStack(c.body); got != c.want {
			t.Errorf("%s: StripStack(%q) = %q, want %q", c.name, c.body, got, c.want)
		}
	}
}
