package action

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wo-runner/wo/internal/gittest"
	"github.com/wo-runner/wo/procedure/internal/fixture"
)

func TestBranchPushSendsTheBranchToTheRemote(t *testing.T) {
	h := newStepContext(t, stepOpts{})
	h.upTo("push")
	head := gittest.Run(t, h.Worktree, "rev-parse", "HEAD")
	out, err := h.run("push")
	if err != nil {
		t.Fatal(err)
	}
	if got := gittest.Run(t, h.Remote, "rev-parse", "refs/heads/"+fixture.Branch); got != head {
		t.Errorf("the remote's %s is %s, want %s", fixture.Branch, got, head)
	}
	if got := h.recorded(out).PushedSHA; got != head {
		t.Errorf("recorded pushed_sha %q, want %s", got, head)
	}
	if want := "pushed " + fixture.Branch + " to " + h.Remote + " (" + head[:12] + ")"; out.Note != want {
		t.Errorf("note %q, want %q", out.Note, want)
	}
	h.keep(out)

	again, err := h.run("push")
	if err != nil {
		t.Fatalf("rerun: %v", err)
	}
	if want := fixture.Branch + " already at " + head[:12] + " on " + h.Remote; again.Note != want {
		t.Errorf("rerun note %q, want %q", again.Note, want)
	}
	if got := gittest.Run(t, h.Remote, "rev-parse", "refs/heads/"+fixture.Branch); got != head {
		t.Errorf("after the rerun the remote is at %s", got)
	}
}

func TestBranchPushNeverOverwritesOthersCommits(t *testing.T) {
	h := newStepContext(t, stepOpts{})
	h.upTo("push")
	// Somebody else pushed to the branch first.
	theirs := fixture.SomeonePushes(t, h.Root, h.Remote, fixture.Base, fixture.Branch)

	_, err := h.run("push")
	fixture.ErrContains(t, err, "remote "+h.Remote+" has commits on "+fixture.Branch+" that this branch does not: wo will not overwrite them")
	if got := gittest.Run(t, h.Remote, "rev-parse", "refs/heads/"+fixture.Branch); got != theirs {
		t.Errorf("the remote branch was overwritten: %s, want %s", got, theirs)
	}

	// Even when wo pushed before: the lease is on wo's own last push, and
	// the remote no longer is there.
	h.setState(func(s *stateT) { s.PushedSHA = gittest.Run(t, h.Repo, "rev-parse", fixture.Base) })
	_, err = h.run("push")
	fixture.ErrContains(t, err, "remote "+h.Remote+" has commits on "+fixture.Branch+" that this branch does not: wo will not overwrite them")
	if got := gittest.Run(t, h.Remote, "rev-parse", "refs/heads/"+fixture.Branch); got != theirs {
		t.Errorf("the remote branch was overwritten under a stale lease: %s", got)
	}
}

// TestBranchPushStaleLeaseSaysWhatHappened: wo pushed, somebody added a
// commit on top, and wo's commit was amended since. The push must refuse
// (it does), and the message should say that the remote moved and how to
// go on, as the plain non-fast-forward refusal does.
func TestBranchPushStaleLeaseSaysWhatHappened(t *testing.T) {
	h := newStepContext(t, stepOpts{})
	h.upTo("push")
	h.must("push")
	theirs := fixture.SomeonePushes(t, h.Root, h.Remote, fixture.Branch, fixture.Branch)
	gittest.Run(t, h.Worktree, "commit", "-q", "--amend", "-m", "amended")

	_, err := h.run("push")
	if err == nil {
		t.Fatal("the push overwrote somebody else's commit")
	}
	if got := gittest.Run(t, h.Remote, "rev-parse", "refs/heads/"+fixture.Branch); got != theirs {
		t.Fatalf("the remote branch was overwritten: %s", got)
	}
	if !strings.Contains(err.Error(), "wo will not overwrite them") {
		t.Errorf("a push refused by its lease says only %q, not that the remote has commits wo did not push", err)
	}
}

func TestBranchPushRewritesItsOwnPushWithALease(t *testing.T) {
	h := newStepContext(t, stepOpts{})
	h.upTo("push")
	h.must("push")
	// wo's commit is amended in the worktree (a fix folded in).
	fixture.WriteFile(t, filepath.Join(h.Worktree, "pkg/a.go"), "package pkg\n\nconst A = 4\n")
	gittest.Run(t, h.Worktree, "commit", "-q", "-a", "--amend", "--no-edit")
	amended := gittest.Run(t, h.Worktree, "rev-parse", "HEAD")
	out, err := h.run("push")
	if err != nil {
		t.Fatalf("rewriting wo's own push: %v", err)
	}
	if got := gittest.Run(t, h.Remote, "rev-parse", "refs/heads/"+fixture.Branch); got != amended {
		t.Errorf("the remote is at %s, want the amended %s", got, amended)
	}
	if got := h.recorded(out).PushedSHA; got != amended {
		t.Errorf("recorded pushed_sha %q", got)
	}
}

func TestBranchPushErrors(t *testing.T) {
	t.Run("no such remote", func(t *testing.T) {
		h := newStepContext(t, stepOpts{Context: map[string]any{"remote": "upstream"}})
		want := h.Repo + " has no remote \"upstream\": add it with git remote add"
		fixture.ErrContains(t, h.check("push"), want, "or set context.remote")
		h.upTo("push")
		_, err := h.run("push")
		fixture.ErrContains(t, err, h.Repo+" has no remote \"upstream\"")
	})
	t.Run("no local branch", func(t *testing.T) {
		h := newStepContext(t, stepOpts{})
		if err := h.check("push"); err != nil {
			t.Errorf("check with origin: %v", err)
		}
		_, err := h.run("push")
		fixture.ErrContains(t, err, "pushing "+fixture.Branch+": no local branch "+fixture.Branch)
	})
}

func TestBranchPushPlan(t *testing.T) {
	h := newStepContext(t, stepOpts{})
	if got, want := h.plan("push"), "push "+fixture.Branch+" to origin"; got != want {
		t.Errorf("plan %q, want %q", got, want)
	}
	h = newStepContext(t, stepOpts{Context: map[string]any{"remote": "upstream"}})
	if got, want := h.plan("push"), "push "+fixture.Branch+" to upstream"; got != want {
		t.Errorf("plan %q, want %q", got, want)
	}
}

// The push step never moves the remote branch back, nor to a tree that
// takes back what its commits changed, without --discard-commits.
func TestBranchPushNeverTakesBackAPushedChangeUnlessTold(t *testing.T) {
	h := newStepContext(t, stepOpts{})
	h.upTo("push")
	h.must("push")
	older := gittest.Run(t, h.Worktree, "rev-parse", "HEAD")
	// A review fix, pushed: wo's record is the remote's tip.
	fixture.WriteFile(t, filepath.Join(h.Worktree, "pkg/a.go"), "package pkg\n\n// A is fixed.\nconst A = 1\n")
	gittest.Run(t, h.Worktree, "commit", "-q", "-am", "fix")
	h.must("push")
	fixed := remoteTip(t, h)
	// The branch goes back to before the fix; the loop comes round to the
	// push step again.
	gittest.Run(t, h.Worktree, "reset", "-q", "--hard", older)
	_, err := h.run("push")
	var waiting *WaitingError
	if !errors.As(err, &waiting) || !strings.Contains(err.Error(), "takes back what its commits changed (pkg/a.go of "+fixed[:12]+")") ||
		!strings.Contains(err.Error(), "--discard-commits") {
		t.Fatalf("err %v, want a wait naming the fix it would take back", err)
	}
	if remoteTip(t, h) != fixed {
		t.Fatal("the remote moved back")
	}
	h.settings().DiscardCommits = true
	if _, err := h.run("push"); err != nil {
		t.Fatalf("with --discard-commits: %v", err)
	}
	if remoteTip(t, h) != older {
		t.Errorf("the remote is at %s, want %s as told", remoteTip(t, h)[:12], older[:12])
	}
}

// A rewrite that would take back many changes names the first five and
// counts the rest.
func TestBranchPushNamesFiveOfTheChangesItWouldTakeBack(t *testing.T) {
	h := newStepContext(t, stepOpts{Context: map[string]any{"fix_paths": []any{"**"}}})
	h.upTo("push")
	h.must("push")
	older := gittest.Run(t, h.Worktree, "rev-parse", "HEAD")
	for i := 1; i <= 7; i++ {
		fixture.WriteFile(t, filepath.Join(h.Worktree, fmt.Sprintf("pkg/f%d.go", i)), "package pkg\n")
	}
	gittest.Run(t, h.Worktree, "add", "pkg")
	gittest.Run(t, h.Worktree, "commit", "-q", "-m", "fix")
	h.must("push")
	fixed := remoteTip(t, h)[:12]
	gittest.Run(t, h.Worktree, "reset", "-q", "--hard", older)
	_, err := h.run("push")
	want := fmt.Sprintf("takes back what its commits changed (pkg/f1.go of %[1]s, pkg/f2.go of %[1]s, pkg/f3.go of %[1]s, pkg/f4.go of %[1]s, pkg/f5.go of %[1]s, and 2 more); nothing was pushed", fixed)
	fixture.ErrContains(t, err, want)
	if remoteTip(t, h)[:12] != fixed {
		t.Fatal("the remote moved back")
	}
}
