package gitops

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wo-runner/wo/internal/gittest"
)

// A push sends what the remote lacks and no more: after several pushes of
// a branch that grows, and with unrelated branches on the remote, the
// remote is complete (git fsck) and holds the same commits as the local
// branch; and the second push's pack carried only the new commit, its
// changed trees and its one new blob.
func TestPushSendsOnlyWhatTheRemoteLacks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r, base, w, origin := plannedWorktree(t, "wt")
	if err := w.Create(ctx, base, nil); err != nil {
		t.Fatal(err)
	}
	// Other branches on the remote, one of them with history of its own.
	gittest.Run(t, r.Path, "push", "-q", "origin", "main:refs/heads/other")
	if _, err := w.SwitchBranch("review/x"); err != nil {
		t.Fatal(err)
	}
	sig := Signature{"T", "t@example.com"}
	for i := 0; i < 3; i++ {
		write(t, filepath.Join(w.Path, fmt.Sprintf("deep/dir%d/f.txt", i)), fmt.Sprintf("round %d\n", i))
		if _, err := w.StageAll(); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Commit(fmt.Sprintf("round %d", i), sig, time.Now()); err != nil {
			t.Fatal(err)
		}
		if i == 1 {
			continue // two commits go in the next push
		}
		before := countObjects(t, origin)
		res, err := r.Push(ctx, PushOptions{Branch: "review/x"})
		if err != nil {
			t.Fatal(err)
		}
		if got := gittest.Run(t, origin, "rev-parse", "refs/heads/review/x"); got != res.Hash.String() {
			t.Fatalf("push %d: remote at %s, want %s", i, got, res.Hash)
		}
		if i == 2 {
			// Two commits, each with a new root tree, deep/ tree, dirN
			// tree and blob: 10 objects, nothing of the base or of other.
			if added := countObjects(t, origin) - before; added != 10 {
				t.Errorf("the last push added %d objects to the remote, want 10", added)
			}
		}
	}
	gittest.Run(t, origin, "fsck", "--no-progress", "--no-dangling")
	if got, want := gittest.Run(t, origin, "rev-list", "refs/heads/review/x"), gittest.Run(t, r.Path, "rev-list", "review/x"); got != want {
		t.Errorf("remote history differs:\n%s\nwant\n%s", got, want)
	}
	if got := gittest.Run(t, r.Path, "rev-parse", "refs/remotes/origin/review/x"); got != gittest.Run(t, r.Path, "rev-parse", "review/x") {
		t.Errorf("remote-tracking branch at %s", got)
	}
}

// countObjects counts the objects in a bare repository, loose and packed.
func countObjects(t *testing.T, repo string) int {
	t.Helper()
	n := 0
	for _, line := range strings.Split(gittest.Run(t, repo, "count-objects", "-v"), "\n") {
		var v int
		if _, err := fmt.Sscanf(line, "count: %d", &v); err == nil {
			n += v
		}
		if _, err := fmt.Sscanf(line, "in-pack: %d", &v); err == nil {
			n += v
		}
	}
	return n
}
