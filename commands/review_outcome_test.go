package commands

import (
	"encoding/json"
	"strings"
	"testing"
)

// reviewedState is the state check_review leaves: a thread that counts,
// an outdated one, and two verdicts, with text a hostile reviewer wrote.
func reviewedState() map[string]any {
	return map[string]any{
		"current_step": 8, "completed_steps": []any{1, 2, 3, 4, 5, 6, 7, 8}, "pr_number": 1,
		"review_threads": []any{
			map[string]any{"id": "PRRT_1", "path": "pkg/a.go", "line": 4, "counted": true, "comments": []any{
				map[string]any{"id": 11, "author": "coderabbitai[bot]", "body": "Name A\nafter \x1b[2Jwhat it counts.", "url": "https://github.com/acme/hermes/pull/1#discussion_r11"},
				map[string]any{"id": 12, "author": "alice", "body": "+1"}}},
			map[string]any{"id": "PRRT_2", "path": "foundation/new.go", "outdated": true, "counted": false, "comments": []any{
				map[string]any{"id": 13, "author": "bob", "body": strings.Repeat("long ", 40)}}},
		},
		"review_verdicts":      map[string]any{"coderabbitai[bot]": "CHANGES_REQUESTED", "alice": "APPROVED"},
		"changes_requested_by": []any{"coderabbitai[bot]"},
	}
}

func TestShowAndStatusShowTheReviewOutcome(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	mustRun(t, db, "", "import", fixture)
	updateState(t, db, "task_cr_01", reviewedState())

	show := mustRun(t, db, "", "show", "task_cr_01").stdout
	for _, want := range []string{
		"Review at the last check: 2 open thread(s), 1 counted\n",
		"  verdicts  alice approved, coderabbitai[bot] changes requested\n",
		"  changes requested by coderabbitai[bot]\n",
		"  - pkg/a.go:4  coderabbitai[bot]: Name A after \\x1b[2Jwhat it counts.\n",
		"  - foundation/new.go (outdated)  bob: " + strings.Repeat("long ", 15) + "long…\n",
	} {
		if !strings.Contains(show, want) {
			t.Errorf("wo show lacks %q:\n%s", want, show)
		}
	}
	if strings.Contains(show, "\x1b") {
		t.Error("wo show printed a raw escape character from a review comment")
	}

	var shown struct {
		Data struct{ Review ReviewOutcome }
	}
	if err := json.Unmarshal([]byte(mustRun(t, db, "", "show", "task_cr_01", "--json").stdout), &shown); err != nil {
		t.Fatal(err)
	}
	rv := shown.Data.Review
	if len(rv.OpenThreads) != 2 || rv.Counted != 1 || rv.Verdicts["coderabbitai[bot]"] != "CHANGES_REQUESTED" {
		t.Fatalf("wo show --json review: %+v", rv)
	}
	if th := rv.OpenThreads[0]; th.Path != "pkg/a.go" || th.Line != 4 || th.Outdated || th.Author != "coderabbitai[bot]" ||
		th.Excerpt != "Name A after \x1b[2Jwhat it counts." || th.Comments != 2 {
		t.Errorf("first thread in JSON (exact, unescaped): %+v", th)
	}

	// One task: the row, then the outcome; an epic: the compact column only.
	one := mustRun(t, db, "", "status", "task_cr_01", "--wide").stdout
	if !strings.Contains(one, "OPEN THREADS") || !strings.Contains(one, "2 (1 outdated)") ||
		!strings.Contains(one, "  - pkg/a.go:4  coderabbitai[bot]: Name A after \\x1b[2Jwhat it counts.") {
		t.Errorf("wo status task_cr_01:\n%s", one)
	}
	epic := mustRun(t, db, "", "status", "task_cr_epic", "--wide").stdout
	if !strings.Contains(epic, "2 (1 outdated)") || strings.Contains(epic, "pkg/a.go") {
		t.Errorf("wo status of the epic: want the count, not the threads:\n%s", epic)
	}
	var rows struct{ Data []StatusRow }
	if err := json.Unmarshal([]byte(mustRun(t, db, "", "status", "task_cr_epic", "--json").stdout), &rows); err != nil {
		t.Fatal(err)
	}
	for _, r := range rows.Data {
		if (r.Key == "task_cr_01") != (r.Review != nil) {
			t.Errorf("%s: review %+v", r.Key, r.Review)
		}
		if r.Review != nil && (len(r.Review.OpenThreads) != 2 || r.Review.Verdicts["alice"] != "APPROVED") {
			t.Errorf("%s: review %+v", r.Key, r.Review)
		}
	}
}
