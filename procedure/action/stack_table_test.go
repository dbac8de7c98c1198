package action

import (
	"strings"
	"testing"

	"github.com/wo-runner/wo/procedure/internal/fixture"
	"github.com/wo-runner/wo/workorder"
)

// The stack section of a pull request's description, as StackOf orders
// an epic's children and Section and SpliceStack write it.

func TestStackOrdersByDependencyAndNamesWhatEachDependsOn(t *testing.T) {
	url := "https://github.com/acme/hermes/pull/"
	children := []workorder.Document{
		// pr02 waits for pr03: the review order is pr01, pr03, pr02.
		fixture.StackChild("task_ep_pr02", "[3/3] cli", []any{"task_ep_pr03", "task_ep_pr01"}, nil),
		fixture.StackChild("task_ep_pr01", "[1/3] core", nil, map[string]any{"pr_number": 4, "pr_url": url + "4", "pr_state": "merged"}),
		fixture.StackChild("task_ep_pr03", "[2/3] store", []any{"task_ep_pr01"}, map[string]any{"pr_number": 5, "pr_url": url + "5"}),
		// No create_pr: not part of the stack.
		{"_key": "task_ep_notes", "title": "notes", "parent_key": "task_ep", "work_order": map[string]any{"procedure": fixture.BareSteps("update_task")}},
	}
	stack := StackOf(children, nil)
	var order []string
	for _, e := range stack {
		order = append(order, e.Key)
	}
	if got := strings.Join(order, " "); got != "task_ep_pr01 task_ep_pr03 task_ep_pr02" {
		t.Fatalf("stack order %s", got)
	}

	top := stack.Section("task_ep_pr02")
	for _, want := range []string{
		StackBegin + "\n### Stack: part 3 of 3\n",
		// pr01 is implied through pr03: only the part just below is named.
		"Depends on #5: review and merge that first.",
		// Plain #N, which GitHub links itself, never the recorded URL.
		"|  | 1 of 3 | #4 | \\[1/3\\] core | - | merged |",
		"|  | 2 of 3 | #5 | \\[2/3\\] store | #4 | open |",
		"| → | **3 of 3** | **this pull request** | \\[3/3\\] cli | #5 | open |",
	} {
		if !strings.Contains(top, want) {
			t.Errorf("the section of the top PR lacks %q:\n%s", want, top)
		}
	}
	if !strings.HasSuffix(top, StackEnd) {
		t.Errorf("the section does not end with its marker:\n%s", top)
	}
	middle := stack.Section("task_ep_pr03")
	if !strings.Contains(middle, "Depends on #4 (merged): ") || !strings.Contains(middle, "|  | 3 of 3 | not opened yet | \\[3/3\\] cli | this pull request | - |") {
		t.Errorf("the section of part 2:\n%s", middle)
	}
	if s := stack.Section("task_ep_notes"); s != "" {
		t.Errorf("a task without a PR got a section:\n%s", s)
	}
	if s := StackOf(children[1:2], nil).Section("task_ep_pr01"); s != "" {
		t.Errorf("a stack of one got a section:\n%s", s)
	}
}

func TestStackSectionEscapesTitles(t *testing.T) {
	hostile := "x " + StackEnd + " | [click](javascript:alert(1)) <img src=x> `code`\n| injected | row |"
	stack := StackOf([]workorder.Document{
		fixture.StackChild("task_ep_pr01", hostile, nil, map[string]any{"pr_number": 1, "pr_url": "javascript:alert(1)"}),
		fixture.StackChild("task_ep_pr02", "fine", []any{"task_ep_pr01"}, nil),
	}, nil)
	s := stack.Section("task_ep_pr02")
	if strings.Count(s, StackEnd) != 1 || strings.Count(s, StackBegin) != 1 {
		t.Errorf("a title can end the section early:\n%s", s)
	}
	// What is left of the markup once the escaped characters are taken out.
	bare := strings.NewReplacer(`\<`, "", `\>`, "", `\[`, "", `\]`, "", `\|`, "", "\\`", "").Replace(s)
	for _, bad := range []string{"<img", "](javascript", "[click]", "| injected |", "\n| row", "`code`"} {
		if strings.Contains(bare, bad) {
			t.Errorf("the section carries %q unescaped:\n%s", bad, s)
		}
	}
	for _, line := range strings.Split(s, "\n") {
		if strings.HasPrefix(line, "| ") && strings.Count(strings.ReplaceAll(line, `\|`, ""), "|") != 7 {
			t.Errorf("a row with other than six cells: %q", line)
		}
	}
	if !strings.Contains(s, "| #1 |") {
		t.Errorf("a PR URL that is not http(s) became a link:\n%s", s)
	}
}

func TestSpliceStackKeepsTheAuthorsTextByteForByte(t *testing.T) {
	section := StackBegin + "\nnew table\n" + StackEnd
	before := "Why this change.\r\n\r\n"
	after := "\r\n\r\n## Notes\r\nkept | as *is* <!-- a comment -->\r\n"
	body := before + StackBegin + "\r\nold table\r\n" + StackEnd + after

	out, changed, err := SpliceStack(body, section)
	if err != nil || !changed || out != before+section+after {
		t.Fatalf("replaced: changed %v err %v\n%q", changed, err, out)
	}
	// GitHub's editor turns the section's newlines into CRLF: the same
	// section is not a change.
	crlf := before + strings.ReplaceAll(section, "\n", "\r\n") + after
	if again, changed, err := SpliceStack(crlf, section); changed || err != nil || again != crlf {
		t.Errorf("the same section in CRLF: changed %v err %v", changed, err)
	}
	if out, changed, _ := SpliceStack("Hand-written.", section); !changed || out != "Hand-written.\n\n"+section {
		t.Errorf("appended: %q", out)
	}
	if out, _, _ := SpliceStack("", section); out != section {
		t.Errorf("into an empty description: %q", out)
	}
	broken := "text " + StackBegin + " the author removed the end marker"
	if out, changed, err := SpliceStack(broken, section); err == nil || changed || out != broken {
		t.Errorf("a start marker without an end: changed %v err %v out %q", changed, err, out)
	} else if !strings.Contains(err.Error(), StackEnd) {
		t.Errorf("the error does not say what to fix: %v", err)
	}
}

// A state is document text: a pr_url pointing to another site must not
// become the link behind "#1" in every sibling's description.
func TestStackSectionLinksAStateURLToAnotherSite(t *testing.T) {
	phish := "https://evil.example/acme/hermes/pull/1"
	stack := StackOf([]workorder.Document{
		fixture.StackChild("task_ep_pr01", "core", nil, map[string]any{"pr_number": 1, "pr_url": phish}),
		fixture.StackChild("task_ep_pr02", "cli", []any{"task_ep_pr01"}, nil),
	}, nil)
	if s := stack.Section("task_ep_pr02"); strings.Contains(s, phish) || !strings.Contains(s, "| #1 |") {
		t.Errorf("the section links #1 to %s, or does not name #1 as GitHub links it:\n%s", phish, s)
	}
}

// A description with a second start marker (the author quoting it, or a
// paste of another PR's description) keeps the author's text between the
// two: only the marked section wo wrote is replaced.
func TestSpliceStackWithTwoStartMarkersDropsTheAuthorsText(t *testing.T) {
	section := StackBegin + "\nnew table\n" + StackEnd
	author := "Quoting " + StackBegin + " here: the author's own words.\n\n"
	body := author + StackBegin + "\nold table\n" + StackEnd + "\nafter\n"
	out, _, err := SpliceStack(body, section)
	if err != nil {
		t.Fatalf("splice: %v", err)
	}
	if !strings.Contains(out, "the author's own words.") || !strings.HasSuffix(out, section+"\nafter\n") {
		t.Errorf("the author's text was lost:\n%q", out)
	}
}
