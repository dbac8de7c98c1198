package integration

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestGitHubReviewThreadLeftOpenKeepsThePersonWaiting is issue 13 end to
// end: a person fixes one of two comments; the other's thread is still
// open after the reviewer's approval, so the run waits again, naming it.
// wo answered the thread it addressed once, across the reruns; once both
// are fixed the task goes to review.
func TestGitHubReviewThreadLeftOpenKeepsThePersonWaiting(t *testing.T) {
	f := newFixture(t, 20)
	gh, env := withGitHub(t, f)
	f.importTask(f.seedTask("task_cr_01"))
	if r := f.wo(env, "run", "task_cr_01"); r.code != 3 {
		t.Fatalf("first run: exit %d\n%s", r.code, r.stderr)
	}
	wt := filepath.Join(f.wtRoot, "pr-01-foundation")
	writeFile(t, filepath.Join(wt, "foundation/new0.go"), "package foundation\n\n// N0 is the first.\nconst N0 = 0\n")
	git(t, wt, "commit", "-q", "-am", "Address the first comment")
	r := f.wo(env, "run", "task_cr_01")
	if r.code != 3 || !strings.Contains(r.stderr, "Name N1 after what it counts. (foundation/new1.go:3)") ||
		!strings.Contains(r.stderr, "1 outdated thread(s) left open, not counted: foundation/new0.go") {
		t.Fatalf("after fixing one comment: exit %d, want 3 naming the open thread\n%s", r.code, r.stderr)
	}
	writeFile(t, filepath.Join(wt, "foundation/new1.go"), "package foundation\n\n// Count1 counts.\nconst Count1 = 1\n")
	git(t, wt, "commit", "-q", "-am", "Address the second comment")
	if r := f.wo(env, "run", "task_cr_01"); r.code != 0 {
		t.Fatalf("after fixing both: exit %d\n%s", r.code, r.stderr)
	}
	replies := map[string]int{}
	for _, th := range gh.Threads("acme/hermes", 1) {
		for _, c := range th.Comments[1:] {
			if c.Login == "wo-bot" && strings.HasPrefix(c.Body, "Addressed in ") {
				replies[th.Path]++
			}
		}
	}
	if replies["foundation/new0.go"] != 1 || replies["foundation/new1.go"] != 1 {
		t.Errorf("wo's replies by thread: %v, want one in each", replies)
	}
	for _, v := range gh.Violations() {
		t.Errorf("the stand-in refused what wo sent: %v", v)
	}
	if doc := f.doc("task_cr_01"); doc["status"] != "in_review" {
		t.Errorf("status %v", doc["status"])
	}
}
