package gitops

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// FetchBranch brings the remote's tip of a branch another clone moved into
// its remote-tracking branch, and names a branch the remote lacks.
func TestFetchBranchBringsTheRemoteTip(t *testing.T) {
	t.Parallel()
	repoPath, origin := fixtureRepo(t)
	other := filepath.Join(t.TempDir(), "other")
	runGit(t, filepath.Dir(other), "clone", "-q", "-b", "code-review-base", origin, other)
	write(t, filepath.Join(other, "moved.txt"), "someone else's push\n")
	runGit(t, other, "add", "-A")
	runGit(t, other, "commit", "-q", "-m", "moved")
	runGit(t, other, "push", "-q", "origin", "code-review-base")
	want := runGit(t, origin, "rev-parse", "refs/heads/code-review-base")

	r, err := Open(repoPath)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got, err := r.FetchBranch(context.Background(), RemoteOptions{Branch: "code-review-base"})
	if err != nil || got.String() != want {
		t.Fatalf("fetched %s, %v; the remote is at %s", got, err, want)
	}
	if tracking := runGit(t, repoPath, "rev-parse", "refs/remotes/origin/code-review-base"); tracking != want {
		t.Errorf("origin/code-review-base is at %s, want %s", tracking, want)
	}
	if _, err := r.FetchBranch(context.Background(), RemoteOptions{Branch: "no-such-branch"}); err == nil ||
		!strings.Contains(err.Error(), "fetching branch no-such-branch on "+origin+": ") {
		t.Errorf("a branch the remote lacks: %v", err)
	}
	if _, err := r.FetchBranch(context.Background(), RemoteOptions{Remote: "upstream", Branch: "main"}); err == nil || !strings.Contains(err.Error(), `no remote "upstream"`) {
		t.Errorf("a remote the repository lacks: %v", err)
	}
}
