package gitops

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/wo-runner/wo/internal/gittest"
)

// commitAt writes a file and commits it with the given date.
func commitAt(t *testing.T, dir, date, file, content string) {
	t.Helper()
	write(t, filepath.Join(dir, file), content)
	gitAt(t, dir, date, "add", "-A")
	gitAt(t, dir, date, "commit", "-q", "-m", file+" "+date)
}

// remoteAndClone is a bare remote with main, and a clone of it.
func remoteAndClone(t *testing.T) (origin, clone string) {
	t.Helper()
	root := t.TempDir()
	origin, clone = filepath.Join(root, "origin.git"), filepath.Join(root, "clone")
	gittest.Run(t, root, "init", "-q", "--bare", "-b", "main", origin)
	gittest.Run(t, root, "init", "-q", "-b", "main", clone)
	gittest.Run(t, clone, "remote", "add", "origin", origin)
	return origin, clone
}

// gitAt runs git with a fixed author and committer date (RFC 2822 or
// @unix), so that a test can make history whose dates lie.
func gitAt(t *testing.T, dir, date string, args ...string) string {
	t.Helper()
	cmd := gittest.Command(dir, args...)
	cmd.Env = append(cmd.Env, "GIT_AUTHOR_DATE="+date, "GIT_COMMITTER_DATE="+date)
	return gittest.Output(t, cmd)
}

// checkRemote proves the remote has the whole branch: git fsck finds
// nothing missing, and its history is the local one.
func checkRemote(t *testing.T, origin, clone, branch string) {
	t.Helper()
	gittest.Run(t, origin, "fsck", "--no-progress", "--no-dangling", "--connectivity-only")
	gittest.Run(t, origin, "fsck", "--no-progress", "--no-dangling")
	if got, want := gittest.Run(t, origin, "rev-list", "--objects", "refs/heads/"+branch), gittest.Run(t, clone, "rev-list", "--objects", branch); got != want {
		t.Errorf("the remote's %s differs from the local one", branch)
	}
}

// History whose committer dates lie (a line from the future, a line from
// 1980, merged) is what the newest-first walk can get wrong: it must
// never send too little.
func TestPushWithClockSkewAndMergesSendsEverything(t *testing.T) {
	t.Parallel()
	origin, clone := remoteAndClone(t)
	now := "@1700000000 +0000"
	commitAt(t, clone, now, "a.txt", "a\n")
	gittest.Run(t, clone, "push", "-q", "origin", "main")
	// The remote has a branch from the future that shares a commit with
	// what the local branch will merge.
	gittest.Run(t, clone, "checkout", "-q", "-b", "shared")
	commitAt(t, clone, "@1600000000 +0000", "shared.txt", "shared, dated in the past\n")
	commitAt(t, clone, "@4000000000 +0000", "future.txt", "from 2096\n")
	gittest.Run(t, clone, "push", "-q", "origin", "shared")
	// The local branch: a line from 1980 and a line from the future,
	// merged, on top of main, and merging shared's older commit.
	gittest.Run(t, clone, "checkout", "-q", "-b", "topic", "main")
	commitAt(t, clone, "@315532800 +0000", "old1.txt", "1980\n")
	commitAt(t, clone, "@315532801 +0000", "deep/old2.txt", "1980 again\n")
	gittest.Run(t, clone, "checkout", "-q", "-b", "line2", "main")
	commitAt(t, clone, "@4100000000 +0000", "deep/new.txt", "future\n")
	commitAt(t, clone, "@1000000000 +0000", "deep/mid.txt", "2001\n")
	gittest.Run(t, clone, "checkout", "-q", "topic")
	gitAt(t, clone, "@900000000 +0000", "merge", "-q", "--no-edit", "line2")
	gitAt(t, clone, "@200000000 +0000", "merge", "-q", "--no-edit", "shared~1")
	commitAt(t, clone, "@100000000 +0000", "last.txt", "1973\n")

	r, err := Open(clone)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Push(context.Background(), PushOptions{Branch: "topic"}); err != nil {
		t.Fatal(err)
	}
	checkRemote(t, origin, clone, "topic")
}

// A remote with hundreds of refs, some naming objects this clone never
// saw, an annotated tag, and HEAD as a symbolic ref.
func TestPushToARemoteWithManyRefsAndUnknownObjects(t *testing.T) {
	t.Parallel()
	origin, clone := remoteAndClone(t)
	commitAt(t, clone, "@1700000000 +0000", "a.txt", "a\n")
	gittest.Run(t, clone, "push", "-q", "origin", "main")
	// Objects the clone does not have: made in another clone.
	other := filepath.Join(t.TempDir(), "other")
	gittest.Run(t, filepath.Dir(other), "clone", "-q", origin, other)
	commitAt(t, other, "@1800000000 +0000", "b.txt", "b\n")
	gittest.Run(t, other, "push", "-q", "origin", "main:refs/heads/elsewhere")
	for i := 0; i < 300; i++ {
		gittest.Run(t, origin, "update-ref", fmt.Sprintf("refs/heads/many/%03d", i), "refs/heads/main")
	}
	gittest.Run(t, origin, "update-ref", "refs/pull/1/head", "refs/heads/elsewhere")
	gittest.Run(t, other, "tag", "-a", "-m", "v1", "v1")
	gittest.Run(t, other, "push", "-q", "origin", "v1")

	gittest.Run(t, clone, "checkout", "-q", "-b", "topic")
	commitAt(t, clone, "@1750000000 +0000", "c.txt", "c\n")
	r, err := Open(clone)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Push(context.Background(), PushOptions{Branch: "topic"}); err != nil {
		t.Fatal(err)
	}
	checkRemote(t, origin, clone, "topic")
}

// A shallow clone (CI checks out with --depth 1) whose remote main moved
// on since: the push of a branch on the shallow tip must still work, as
// git push does, or fail naming the cause and the fix.
func TestPushFromAShallowCloneAfterTheRemoteMoved(t *testing.T) {
	t.Parallel()
	origin, seedClone := remoteAndClone(t)
	for i := 0; i < 3; i++ {
		commitAt(t, seedClone, fmt.Sprintf("@%d +0000", 1700000000+i), fmt.Sprintf("f%d.txt", i), "x\n")
	}
	gittest.Run(t, seedClone, "push", "-q", "origin", "main")
	shallow := filepath.Join(t.TempDir(), "shallow")
	gittest.Run(t, filepath.Dir(shallow), "clone", "-q", "--depth", "1", "file://"+origin, shallow)
	// The remote's main moves on after the shallow clone.
	commitAt(t, seedClone, "@1700000100 +0000", "g.txt", "later\n")
	gittest.Run(t, seedClone, "push", "-q", "origin", "main")

	gittest.Run(t, shallow, "checkout", "-q", "-b", "topic")
	commitAt(t, shallow, "@1700000050 +0000", "mine.txt", "mine\n")
	r, err := Open(shallow)
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Push(context.Background(), PushOptions{Branch: "topic"})
	if err != nil {
		if !strings.Contains(err.Error(), "shallow") {
			t.Fatalf("a push from a shallow clone fails without saying why: %v", err)
		}
		return
	}
	gittest.Run(t, origin, "fsck", "--no-progress", "--no-dangling")
	if got, want := gittest.Run(t, origin, "rev-parse", "refs/heads/topic"), gittest.Run(t, shallow, "rev-parse", "topic"); got != want {
		t.Errorf("the remote's topic is at %s, want %s", got, want)
	}
}

// A remote branch that was force-pushed since the lease was taken: the
// push must refuse, and must not replace what the other writer pushed.
func TestPushWithAStaleLeaseRefuses(t *testing.T) {
	t.Parallel()
	origin, clone := remoteAndClone(t)
	commitAt(t, clone, "@1700000000 +0000", "a.txt", "a\n")
	gittest.Run(t, clone, "push", "-q", "origin", "main")
	gittest.Run(t, clone, "checkout", "-q", "-b", "topic")
	commitAt(t, clone, "@1700000001 +0000", "b.txt", "b\n")
	gittest.Run(t, clone, "push", "-q", "origin", "topic")
	lease := plumbing.NewHash(gittest.Run(t, clone, "rev-parse", "topic"))
	// Someone else force-pushes topic.
	other := filepath.Join(t.TempDir(), "other")
	gittest.Run(t, filepath.Dir(other), "clone", "-q", origin, other)
	gittest.Run(t, other, "checkout", "-q", "topic")
	gittest.Run(t, other, "reset", "-q", "--hard", "main")
	commitAt(t, other, "@1700000002 +0000", "theirs.txt", "theirs\n")
	gittest.Run(t, other, "push", "-q", "-f", "origin", "topic")
	theirs := gittest.Run(t, origin, "rev-parse", "refs/heads/topic")
	// We rewrite ours and push with the old lease.
	gittest.Run(t, clone, "commit", "-q", "--amend", "-m", "rewritten")
	r, err := Open(clone)
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Push(context.Background(), PushOptions{Branch: "topic", Lease: lease})
	var nff *NonFastForwardError
	if !errors.As(err, &nff) {
		t.Fatalf("a push with a stale lease: %v", err)
	}
	if got := gittest.Run(t, origin, "rev-parse", "refs/heads/topic"); got != theirs {
		t.Errorf("the remote topic moved to %s; the other writer's %s is lost", got, theirs)
	}
}
