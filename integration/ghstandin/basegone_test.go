package ghstandin

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/wo-runner/wo/internal/gittest"
)

// Deleting a branch closes the open pull requests based on it, as GitHub
// does; one whose base never existed in the remote is not touched.
func TestDeletingABaseBranchClosesThePullRequestsOnIt(t *testing.T) {
	dir := t.TempDir()
	run := func(args ...string) {
		t.Helper()
		gittest.Run(t, dir, args...)
	}
	run("init", "-q", "-b", "main", "work")
	work := filepath.Join(dir, "work")
	run("-C", work, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "base")
	run("-C", work, "branch", "review/01")
	run("-C", work, "branch", "review/02")
	run("clone", "-q", "--bare", work, "origin.git")

	s := New("t0ken")
	s.Remotes["acme/x"] = filepath.Join(dir, "origin.git")
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	stacked := s.OpenPRAs("acme/x", "review/02", "review/01", "alice", "the top of the stack")
	nowhere := s.OpenPRAs("acme/x", "review/02", "never-pushed", "alice", "a base never seen")
	state := func(n int) any { return s.PullRequests("acme/x")[n-1]["state"] }
	if state(stacked) != "open" || state(nowhere) != "open" {
		t.Fatalf("before the delete: #%d %v, #%d %v", stacked, state(stacked), nowhere, state(nowhere))
	}
	run("-C", filepath.Join(dir, "origin.git"), "branch", "-D", "review/01")
	deadline := time.Now().Add(5 * time.Second)
	for state(stacked) != "closed" && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if state(stacked) != "closed" || state(nowhere) != "open" {
		t.Errorf("after deleting review/01: #%d %v (want closed), #%d %v (want open)", stacked, state(stacked), nowhere, state(nowhere))
	}
}
