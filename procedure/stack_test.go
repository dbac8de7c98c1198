package procedure

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wo-runner/wo/github"
	"github.com/wo-runner/wo/integration/ghstandin"
	"github.com/wo-runner/wo/procedure/action"
	"github.com/wo-runner/wo/procedure/internal/fixture"
	"github.com/wo-runner/wo/workorder"
)

// stackChild is a child of epic task_ep that opens a PR.
func stackChild(key, title string, blockedBy []any, state map[string]any) workorder.Document {
	if state == nil {
		state = map[string]any{}
	}
	return workorder.Document{"_key": key, "title": title, "parent_key": "task_ep", "status": "in_progress",
		"work_order": map[string]any{"version": "1.0", "context": map[string]any{"repo": fixture.Repo},
			"dependencies": map[string]any{"blocked_by": blockedBy},
			"procedure":    fixture.BareSteps("push", "create_pr"), "state": state}}
}

func TestStackOrdersByDependencyAndNamesWhatEachDependsOn(t *testing.T) {
	url := "https://github.com/acme/hermes/pull/"
	children := []workorder.Document{
		// pr02 waits for pr03: the review order is pr01, pr03, pr02.
		stackChild("task_ep_pr02", "[3/3] cli", []any{"task_ep_pr03", "task_ep_pr01"}, nil),
		stackChild("task_ep_pr01", "[1/3] core", nil, map[string]any{"pr_number": 4, "pr_url": url + "4", "pr_state": "merged"}),
		stackChild("task_ep_pr03", "[2/3] store", []any{"task_ep_pr01"}, map[string]any{"pr_number": 5, "pr_url": url + "5"}),
		// No create_pr: not part of the stack.
		{"_key": "task_ep_notes", "title": "notes", "parent_key": "task_ep", "work_order": map[string]any{"procedure": fixture.BareSteps("update_task")}},
	}
	stack := action.StackOf(children, nil)
	var order []string
	for _, e := range stack {
		order = append(order, e.Key)
	}
	if got := strings.Join(order, " "); got != "task_ep_pr01 task_ep_pr03 task_ep_pr02" {
		t.Fatalf("stack order %s", got)
	}

	top := stack.Section("task_ep_pr02")
	for _, want := range []string{
		action.StackBegin + "\n### Stack: part 3 of 3\n",
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
	if !strings.HasSuffix(top, action.StackEnd) {
		t.Errorf("the section does not end with its marker:\n%s", top)
	}
	middle := stack.Section("task_ep_pr03")
	if !strings.Contains(middle, "Depends on #4 (merged): ") || !strings.Contains(middle, "|  | 3 of 3 | not opened yet | \\[3/3\\] cli | this pull request | - |") {
		t.Errorf("the section of part 2:\n%s", middle)
	}
	if s := stack.Section("task_ep_notes"); s != "" {
		t.Errorf("a task without a PR got a section:\n%s", s)
	}
	if s := action.StackOf(children[1:2], nil).Section("task_ep_pr01"); s != "" {
		t.Errorf("a stack of one got a section:\n%s", s)
	}
}

func TestStackSectionEscapesTitles(t *testing.T) {
	hostile := "x " + action.StackEnd + " | [click](javascript:alert(1)) <img src=x> `code`\n| injected | row |"
	stack := action.StackOf([]workorder.Document{
		stackChild("task_ep_pr01", hostile, nil, map[string]any{"pr_number": 1, "pr_url": "javascript:alert(1)"}),
		stackChild("task_ep_pr02", "fine", []any{"task_ep_pr01"}, nil),
	}, nil)
	s := stack.Section("task_ep_pr02")
	if strings.Count(s, action.StackEnd) != 1 || strings.Count(s, action.StackBegin) != 1 {
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
	section := action.StackBegin + "\nnew table\n" + action.StackEnd
	before := "Why this change.\r\n\r\n"
	after := "\r\n\r\n## Notes\r\nkept | as *is* <!-- a comment -->\r\n"
	body := before + action.StackBegin + "\r\nold table\r\n" + action.StackEnd + after

	out, changed, err := action.SpliceStack(body, section)
	if err != nil || !changed || out != before+section+after {
		t.Fatalf("replaced: changed %v err %v\n%q", changed, err, out)
	}
	// GitHub's editor turns the section's newlines into CRLF: the same
	// section is not a change.
	crlf := before + strings.ReplaceAll(section, "\n", "\r\n") + after
	if again, changed, err := action.SpliceStack(crlf, section); changed || err != nil || again != crlf {
		t.Errorf("the same section in CRLF: changed %v err %v", changed, err)
	}
	if out, changed, _ := action.SpliceStack("Hand-written.", section); !changed || out != "Hand-written.\n\n"+section {
		t.Errorf("appended: %q", out)
	}
	if out, _, _ := action.SpliceStack("", section); out != section {
		t.Errorf("into an empty description: %q", out)
	}
	broken := "text " + action.StackBegin + " the author removed the end marker"
	if out, changed, err := action.SpliceStack(broken, section); err == nil || changed || out != broken {
		t.Errorf("a start marker without an end: changed %v err %v out %q", changed, err, out)
	} else if !strings.Contains(err.Error(), action.StackEnd) {
		t.Errorf("the error does not say what to fix: %v", err)
	}
}

// stackOnStandin stores epic task_ep with three children whose PRs are
// open on the stand-in, each description written by its author without a
// stack section, and returns the harness.
func stackOnStandin(t *testing.T) *stepHarness {
	t.Helper()
	return stackOnStandinWith(t, 3, nil)
}

// stackOnStandinWith is stackOnStandin with n parts and the stand-in set
// up by standIn (when not nil) before it starts.
func stackOnStandinWith(t *testing.T, n int, standIn func(*ghstandin.Server)) *stepHarness {
	t.Helper()
	h := newStepContext(t, stepOpts{GitHub: true, StandIn: standIn})
	ctx := context.Background()
	client, err := github.New(github.Config{BaseURL: h.GH.URL, Token: fixture.Token, Repo: fixture.Repo})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.store.Create(ctx, map[string]any{"_key": "task_ep", "type": "epic", "title": "the epic", "status": "open"}); err != nil {
		t.Fatal(err)
	}
	base := fixture.Base
	for i := 1; i <= n; i++ {
		branch := fmt.Sprintf("review/%02d-part", i)
		fixture.Git(t, h.Repo, "checkout", "-q", "-b", branch, base)
		fixture.WriteFile(t, filepath.Join(h.Repo, fmt.Sprintf("part%d.txt", i)), "part\n")
		fixture.Git(t, h.Repo, "add", "-A")
		fixture.Git(t, h.Repo, "commit", "-q", "-m", branch)
		fixture.Git(t, h.Repo, "push", "-q", "origin", branch)
		pr, err := client.CreatePR(ctx, branch, base, fmt.Sprintf("[%d/%d] part %d", i, n, i), fmt.Sprintf("Author's text of part %d.", i))
		if err != nil {
			t.Fatal(err)
		}
		var blocked []any
		if i > 1 {
			blocked = []any{fmt.Sprintf("task_ep_pr%02d", i-1)}
		}
		doc := stackChild(fmt.Sprintf("task_ep_pr%02d", i), fmt.Sprintf("[%d/%d] part %d", i, n, i), blocked,
			map[string]any{"pr_number": pr.Number, "pr_url": pr.URL})
		if err := h.store.Create(ctx, doc); err != nil {
			t.Fatal(err)
		}
		base = branch
	}
	return h
}

// patches counts the PATCH requests to pull requests the stand-in answered
// since from, by PR path.
func patches(h *stepHarness, from int) map[string]int {
	out := map[string]int{}
	for _, r := range h.GH.Requests()[from:] {
		if r.Method == http.MethodPatch {
			out[r.Path]++
		}
	}
	return out
}

func TestRefreshStackEditsOnlyDescriptionsWhoseSectionChanged(t *testing.T) {
	h := stackOnStandin(t)
	e := h.engine()
	ctx := context.Background()

	ups, _, err := e.RefreshStack(ctx, "task_ep")
	if err != nil {
		t.Fatal(err)
	}
	if got := action.StackSummary(ups); got != "stack tables: 3 updated, 0 unchanged" {
		t.Errorf("first refresh: %s", got)
	}
	bodies := map[int]string{}
	for _, p := range h.GH.PullRequests(fixture.Repo) {
		n, body := p["number"].(int), p["body"].(string)
		bodies[n] = body
		if !strings.HasPrefix(body, fmt.Sprintf("Author's text of part %d.\n\n"+action.StackBegin, n)) {
			t.Errorf("#%d lost its author's text or has no section:\n%s", n, body)
		}
		if !strings.Contains(body, fmt.Sprintf("### Stack: part %d of 3", n)) {
			t.Errorf("#%d does not say which part it is:\n%s", n, body)
		}
	}
	if !strings.Contains(bodies[2], "Depends on #1: ") || !strings.Contains(bodies[3], "Depends on #2: ") {
		t.Errorf("depends on:\n%s\n%s", bodies[2], bodies[3])
	}

	// Nothing changed: no edit; once the engine has read the edited
	// descriptions, reading them again is answered 304 (free).
	var from int
	for round := 1; round <= 2; round++ {
		from = len(h.GH.Requests())
		ups, _, err = e.RefreshStack(ctx, "task_ep")
		if err != nil {
			t.Fatal(err)
		}
		if got := action.StackSummary(ups); got != "stack tables: 0 updated, 3 unchanged" {
			t.Errorf("refresh %d of an unchanged stack: %s", round, got)
		}
		if p := patches(h, from); len(p) != 0 {
			t.Errorf("refresh %d edited an unchanged stack: %v", round, p)
		}
	}
	for _, r := range h.GH.Requests()[from:] {
		if r.Status != http.StatusNotModified {
			t.Errorf("an unchanged description was read at a cost: %s %s → %d", r.Method, r.Path, r.Status)
		}
	}

	// A person edits #3 outside the section; #1 is merged and synced.
	edited := "A reviewer's note on top.\r\n\r\n" + strings.ReplaceAll(bodies[3], "\n", "\r\n") + "\r\nAnd one below."
	client, _ := github.New(github.Config{BaseURL: h.GH.URL, Token: fixture.Token, Repo: fixture.Repo})
	if err := client.EditPRBody(ctx, 3, edited); err != nil {
		t.Fatal(err)
	}
	h.GH.Merge(fixture.Repo, 1)
	doc, err := h.store.Get(ctx, "task_ep_pr01")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.store.Update(ctx, "task_ep_pr01", doc["_rev"].(string), map[string]any{"status": "closed",
		"work_order": map[string]any{"state": map[string]any{"pr_state": "merged"}}}); err != nil {
		t.Fatal(err)
	}
	from = len(h.GH.Requests())
	ups, _, err = e.RefreshStack(ctx, "task_ep")
	if err != nil {
		t.Fatal(err)
	}
	if got := action.StackSummary(ups); got != "stack tables: 2 updated, 0 unchanged" {
		t.Errorf("after the merge: %s", got)
	}
	p := patches(h, from)
	if p["/repos/acme/hermes/pulls/1"] != 0 || p["/repos/acme/hermes/pulls/2"] != 1 || p["/repos/acme/hermes/pulls/3"] != 1 {
		t.Errorf("edits after the merge: %v (want #2 and #3 once, the merged #1 never)", p)
	}
	for _, pr := range h.GH.PullRequests(fixture.Repo) {
		n, body := pr["number"].(int), pr["body"].(string)
		if n == 3 {
			if !strings.HasPrefix(body, "A reviewer's note on top.\r\n\r\nAuthor's text of part 3.\r\n\r\n"+action.StackBegin) ||
				!strings.HasSuffix(body, action.StackEnd+"\r\nAnd one below.") {
				t.Errorf("#3's text outside the section changed:\n%q", body)
			}
		}
		if n > 1 && !strings.Contains(body, "| #1 |") || n > 1 && !strings.Contains(body, "| merged |") {
			t.Errorf("#%d does not show #1 merged:\n%s", n, body)
		}
	}
	if v := h.GH.Violations(); len(v) > 0 {
		t.Errorf("requests GitHub's OpenAPI description does not allow: %v", v)
	}
}

func TestAnEpicRunRefreshesTheStackOnlyWhenAPullRequestOpened(t *testing.T) {
	h := stackOnStandin(t)
	e := h.engine()
	ctx := context.Background()
	if e.stackDeferred("task_ep") {
		t.Fatal("a stack is the epic run's to refresh before any epic run began")
	}
	e.deferStack("task_ep")

	from := len(h.GH.Requests())
	if w := e.refreshDeferred(ctx, "task_ep", false); w != nil || len(h.GH.Requests()) != from {
		t.Fatalf("nothing opened, yet the refresh said %v and sent %d request(s)", w, len(h.GH.Requests())-from)
	}
	if !e.stackDeferred("task_ep") || e.stackDeferred("task_other") {
		t.Fatal("create_pr of the epic's child must leave the refresh to the run, and of another epic's must not")
	}
	if w := e.refreshDeferred(ctx, "task_ep", false); w != nil {
		t.Fatalf("warnings: %v", w)
	}
	if p := patches(h, from); len(p) != 3 {
		t.Errorf("the run's refresh edited %v, want each of the 3 descriptions once", p)
	}

	// Interrupted: no request, a warning that says how to catch up.
	e.stackDeferred("task_ep")
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	from = len(h.GH.Requests())
	w := e.refreshDeferred(cancelled, "task_ep", true)
	if len(w) != 1 || !strings.Contains(w[0], "wo sync task_ep") || len(h.GH.Requests()) != from {
		t.Errorf("interrupted refresh: warnings %q, %d request(s)", w, len(h.GH.Requests())-from)
	}
	if e.stackDeferred("task_ep") {
		t.Error("the deferral outlived its epic run")
	}
}

// A state is document text: a pr_url pointing to another site must not
// become the link behind "#1" in every sibling's description.
func TestStackSectionLinksAStateURLToAnotherSite(t *testing.T) {
	phish := "https://evil.example/acme/hermes/pull/1"
	stack := action.StackOf([]workorder.Document{
		stackChild("task_ep_pr01", "core", nil, map[string]any{"pr_number": 1, "pr_url": phish}),
		stackChild("task_ep_pr02", "cli", []any{"task_ep_pr01"}, nil),
	}, nil)
	if s := stack.Section("task_ep_pr02"); strings.Contains(s, phish) || !strings.Contains(s, "| #1 |") {
		t.Errorf("the section links #1 to %s, or does not name #1 as GitHub links it:\n%s", phish, s)
	}
}

// A description with a second start marker (the author quoting it, or a
// paste of another PR's description) keeps the author's text between the
// two: only the marked section wo wrote is replaced.
func TestSpliceStackWithTwoStartMarkersDropsTheAuthorsText(t *testing.T) {
	section := action.StackBegin + "\nnew table\n" + action.StackEnd
	author := "Quoting " + action.StackBegin + " here: the author's own words.\n\n"
	body := author + action.StackBegin + "\nold table\n" + action.StackEnd + "\nafter\n"
	out, _, err := action.SpliceStack(body, section)
	if err != nil {
		t.Fatalf("splice: %v", err)
	}
	if !strings.Contains(out, "the author's own words.") || !strings.HasSuffix(out, section+"\nafter\n") {
		t.Errorf("the author's text was lost:\n%q", out)
	}
}

func TestAnEpicRunRefreshesBetweenWavesAtMostOnceAMinute(t *testing.T) {
	for _, c := range []struct {
		w, n  int
		since time.Duration
		want  bool
	}{
		{0, 3, StackRefreshEvery, true},
		{1, 3, 2 * StackRefreshEvery, true},
		{0, 3, StackRefreshEvery - time.Second, false}, // refreshed less than a minute ago
		{2, 3, time.Hour, false},                       // the last wave: the run's end refreshes
		{0, 1, time.Hour, false},
	} {
		if got := refreshDue(c.w, c.n, c.since); got != c.want {
			t.Errorf("after wave %d of %d, %s since the last refresh: %v, want %v", c.w+1, c.n, c.since, got, c.want)
		}
	}
}
