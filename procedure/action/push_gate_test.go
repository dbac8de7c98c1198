package action

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/wo-runner/wo/gitops"
	"github.com/wo-runner/wo/internal/gittest"
	"github.com/wo-runner/wo/procedure/internal/fixture"
	"github.com/wo-runner/wo/workorder"
)

// The push gate (push_gate.go) against an agent that does an honest fix
// and then misbehaves: it rewrites the task's record, moves the branch
// after the gate passed, or races the push. Everything is checked on the
// bare remote with the git command.

const workflow = ".github/workflows/x.yml"

// commitIn commits path with content in the worktree, as an agent's
// leftover process would, and returns the commit.
func commitIn(t *testing.T, dir, path, content string) string {
	t.Helper()
	fixture.WriteFile(t, filepath.Join(dir, path), content)
	gittest.Run(t, dir, "add", "--", path)
	gittest.Run(t, dir, "commit", "-q", "-m", "add "+path)
	return gittest.Run(t, dir, "rev-parse", "HEAD")
}

// remoteTip is where the remote's work branch is.
func remoteTip(t *testing.T, h *stepHarness) string {
	t.Helper()
	return gittest.Run(t, h.Remote, "rev-parse", "refs/heads/"+fixture.Branch)
}

// remoteHas says whether the remote holds the object.
func remoteHas(h *stepHarness, object string) bool {
	_, err := gittest.Try(h.Remote, "cat-file", "-e", object)
	return err == nil
}

// refusedPath is the refusal's reason for path, failing the test when err
// is not a refusal.
func refusedPath(t *testing.T, err error, path string) string {
	t.Helper()
	var refused *FixRefusedError
	if !errors.As(err, &refused) {
		t.Fatalf("err %v, want a refusal", err)
	}
	for _, r := range refused.Refused {
		if r.Path == path {
			return r.Reason
		}
	}
	return ""
}

// (a) The agent commits a workflow, then an honest fix on top, and
// rewrites state.pushed_sha to the workflow commit: the gate checks from
// the remote's tip, so the workflow is refused and never sent.
func TestAForgedPushedSHADoesNotNarrowTheFixGate(t *testing.T) {
	h := loopReady(t, stepOpts{})
	pushed := remoteTip(t, h)
	evil := commitIn(t, h.Worktree, workflow, "on: push\n")
	fix := commitIn(t, h.Worktree, "foundation/new.go", "package foundation\n\nconst N = 1\n")
	// What the store holds after the agent wrote it: its workflow commit
	// as the last push, and the fix as a pass waiting to be pushed.
	h.setState(func(s *stateT) {
		s.PushedSHA = evil
		s.FixPushed = &workorder.FixPush{From: evil, To: fix}
	})
	_, err := h.run("conditional_loop")
	if got := refusedPath(t, err, workflow); !strings.HasPrefix(got, "under .github/") || !strings.HasSuffix(got, "(commit "+evil[:12]+")") {
		t.Errorf("the workflow's reason %q", got)
	}
	var refused *FixRefusedError
	if errors.As(err, &refused); refused.From != pushed {
		t.Errorf("the range starts at %s, want the remote's tip %s", refused.From, pushed)
	}
	if got := remoteTip(t, h); got != pushed {
		t.Errorf("the remote moved to %s", got)
	}
	if remoteHas(h, evil) || remoteHas(h, fix) {
		t.Error("the refused commits reached the remote")
	}
	if len(h.logged("fix_refused")) != 1 || h.logged("fix_refused")[0].Details["from"] != pushed {
		t.Errorf("the refusal's log: %v", h.logged("fix_refused"))
	}
}

// (b) After the gate passed, a process the agent left moves the branch (a
// workflow commit); the loop or a reset comes back to the push step: it
// is gated as a fix is, and nothing is pushed. A commit of the task's own
// files is pushed the same way, as a fast-forward.
func TestThePushStepReenteredGatesWhatMovedTheBranch(t *testing.T) {
	h := newStepContext(t, stepOpts{})
	h.upTo("push")
	h.must("push")
	pushed := remoteTip(t, h)
	moved := commitIn(t, h.Worktree, workflow, "on: push\n")
	_, err := h.run("push")
	if got := refusedPath(t, err, workflow); !strings.HasPrefix(got, "under .github/") {
		t.Errorf("reason %q", got)
	}
	if got := remoteTip(t, h); got != pushed || remoteHas(h, moved) {
		t.Errorf("the remote is at %s (has the moved commit: %v), want %s", got, remoteHas(h, moved), pushed)
	}
	// The person removes it; a commit of the task's own files goes out.
	gittest.Run(t, h.Worktree, "reset", "-q", "--hard", pushed)
	own := commitIn(t, h.Worktree, "pkg/a.go", "package pkg\n\nconst A = 3\n")
	out, err := h.run("push")
	if err != nil {
		t.Fatal(err)
	}
	if got := remoteTip(t, h); got != own || h.recorded(out).PushedSHA != own {
		t.Errorf("the remote is at %s, recorded %s; want %s", got, h.recorded(out).PushedSHA, own)
	}
}

// The first push (no remote branch) carries the commits that join the
// remote's history in a line, with the manifest's files and fix_paths
// only: a workflow the branch gained before it is refused.
func TestTheFirstPushCarriesOnlyTheWorkOrdersOwnFiles(t *testing.T) {
	h := newStepContext(t, stepOpts{})
	h.upTo("push")
	evil := commitIn(t, h.Worktree, workflow, "on: push\n")
	_, err := h.run("push")
	if got := refusedPath(t, err, workflow); !strings.HasPrefix(got, "under .github/") {
		t.Errorf("reason %q", got)
	}
	if _, err := gittest.Try(h.Remote, "rev-parse", "--verify", "refs/heads/"+fixture.Branch); err == nil || remoteHas(h, evil) {
		t.Error("the branch reached the remote")
	}
	// A file outside the manifest is refused too; one the manifest names
	// is the work order's own, even where a fix may not go.
	gittest.Run(t, h.Worktree, "reset", "-q", "--hard", "HEAD^")
	commitIn(t, h.Worktree, "notes.txt", "mine\n")
	_, err = h.run("push")
	if got := refusedPath(t, err, "notes.txt"); !strings.HasPrefix(got, "outside inputs.file_manifest and context.fix_paths") {
		t.Errorf("reason %q", got)
	}

	h = newStepContext(t, stepOpts{})
	h.upTo("push")
	h.r.task.WorkOrder.Inputs["file_manifest"] = []any{"pkg/a.go", "foundation/new.go", workflow}
	listed := commitIn(t, h.Worktree, workflow, "on: push\n")
	if _, err := h.run("push"); err != nil {
		t.Fatalf("the manifest's own workflow: %v", err)
	}
	if got := remoteTip(t, h); got != listed {
		t.Errorf("the remote is at %s, want %s", got, listed)
	}
	// After the first push the same file is a fix's, and refused.
	again := commitIn(t, h.Worktree, workflow, "on: [push, pull_request]\n")
	_, err = h.run("push")
	if got := refusedPath(t, err, workflow); !strings.HasPrefix(got, "under .github/") {
		t.Errorf("a later change to the manifest's workflow: %q", got)
	}
	if remoteHas(h, again) {
		t.Error("the later change reached the remote")
	}
}

// (c) The remote moves between the gate's check and the push: the lease
// on the tip it checked from refuses the push, for a fix, for the push
// step, and for a first push whose branch someone created meanwhile.
func TestTheGatesLeaseRefusesARemoteThatMovedAfterTheCheck(t *testing.T) {
	race := func(h *stepHarness, from string) *string {
		theirs := new(string)
		h.r.fault = func(point string) {
			if strings.HasSuffix(point, ":gate_checked") && *theirs == "" {
				*theirs = fixture.SomeonePushes(h.t, h.Root, h.Remote, from, fixture.Branch)
			}
		}
		return theirs
	}
	moved := func(t *testing.T, h *stepHarness, err error, theirs string) {
		t.Helper()
		var nff *gitops.NonFastForwardError
		if !errors.As(err, &nff) || !strings.Contains(err.Error(), "when wo checked the push, and moved since: nothing was pushed") {
			t.Fatalf("err %v, want the lease to refuse", err)
		}
		if got := remoteTip(t, h); got != theirs || theirs == "" {
			t.Errorf("the remote is at %s, want their %s", got, theirs)
		}
	}
	t.Run("the push step", func(t *testing.T) {
		h := newStepContext(t, stepOpts{})
		h.upTo("push")
		h.must("push")
		commitIn(t, h.Worktree, "pkg/a.go", "package pkg\n\nconst A = 3\n")
		theirs := race(h, fixture.Branch)
		_, err := h.run("push")
		moved(t, h, err, *theirs)
	})
	t.Run("the first push", func(t *testing.T) {
		h := newStepContext(t, stepOpts{})
		h.upTo("push")
		theirs := race(h, fixture.Base)
		_, err := h.run("push")
		moved(t, h, err, *theirs)
		if !strings.Contains(err.Error(), "(it was absent when wo checked") {
			t.Errorf("err %v", err)
		}
	})
	t.Run("a fix", func(t *testing.T) {
		h := loopReady(t, stepOpts{})
		pushed := remoteTip(t, h)
		fix := commitIn(t, h.Worktree, "foundation/new.go", "package foundation\n\nconst N = 1\n")
		h.setState(func(s *stateT) { s.FixPushed = &workorder.FixPush{From: pushed, To: fix} })
		theirs := race(h, fixture.Branch)
		_, err := h.run("conditional_loop")
		moved(t, h, err, *theirs)
	})
}

// (e) A restacked commit is checked against its new parent with the
// branch's paths, and replaces only the head that was rebuilt.
func TestARestackPushIsGated(t *testing.T) {
	h := newStepContext(t, stepOpts{})
	h.upTo("push")
	h.must("push")
	head := remoteTip(t, h)
	base := gittest.Run(t, h.Repo, "rev-parse", fixture.Base)
	repo, err := h.sc("push").Repo()
	if err != nil {
		t.Fatal(err)
	}
	// A rebuild on the base: the branch's own file, and one that is not.
	rebuild := func(files map[string]string) plumbing.Hash {
		gittest.Run(t, h.Worktree, "reset", "-q", "--hard", base)
		for p, c := range files {
			fixture.WriteFile(t, filepath.Join(h.Worktree, p), c)
			gittest.Run(t, h.Worktree, "add", "--", p)
		}
		gittest.Run(t, h.Worktree, "commit", "-q", "-m", "rebuilt")
		return plumbing.NewHash(gittest.Run(t, h.Worktree, "rev-parse", "HEAD"))
	}
	gate := func(to, head plumbing.Hash) PushGate {
		return RestackGate(h.r.task, fixture.Key, fixture.Branch, to, plumbing.NewHash(base), head, gitops.PushOptions{}, nil)
	}
	outside := rebuild(map[string]string{"pkg/a.go": fixture.SourceA, "unrelated.txt": "not the branch's\n"})
	_, err = PushThroughGate(h.ctx, repo, gate(outside, plumbing.NewHash(head)))
	var refused *RestackRefusedError
	if !errors.As(err, &refused) || len(refused.Refused) != 1 || refused.Refused[0].Path != "unrelated.txt" ||
		!strings.HasPrefix(err.Error(), "restacking "+fixture.Branch+" was refused, nothing was pushed: 1 path(s) of the rebuilt commit are not the branch's own: unrelated.txt (outside inputs.file_manifest") {
		t.Fatalf("err %v", err)
	}
	var fixRefused *FixRefusedError
	if !errors.As(err, &fixRefused) || fixRefused.From != base {
		t.Errorf("a restack refusal is not a FixRefusedError from the new parent: %v", err)
	}
	if got := remoteTip(t, h); got != head || remoteHas(h, outside.String()) {
		t.Errorf("the remote is at %s", got)
	}
	own := rebuild(map[string]string{"pkg/a.go": fixture.SourceA, "foundation/new.go": fixture.SourceN})
	// Not the head the remote is at: left, as someone else's push.
	_, err = PushThroughGate(h.ctx, repo, gate(own, plumbing.NewHash(base)))
	var nff *gitops.NonFastForwardError
	if !errors.As(err, &nff) || remoteTip(t, h) != head {
		t.Errorf("a restack of another head: %v", err)
	}
	res, err := PushThroughGate(h.ctx, repo, gate(own, plumbing.NewHash(head)))
	if err != nil || res.Hash != own {
		t.Fatalf("the branch's own rebuild: %+v %v", res, err)
	}
	if got := remoteTip(t, h); got != own.String() {
		t.Errorf("the remote is at %s, want the rebuilt %s", got, own)
	}
}

// What is not a line on the remote's history, whether the first push or a
// push step come back to, is refused whole; a refusal lists at most
// maxRefusalsListed paths and counts the rest; a rewrite of wo's own push
// is checked as a fix is.
func TestThePushGateRefusesWhatIsNotALineAndBoundsItsList(t *testing.T) {
	merge := func(t *testing.T, h *stepHarness) string {
		t.Helper()
		head := gittest.Run(t, h.Worktree, "rev-parse", "HEAD")
		gittest.Run(t, h.Worktree, "switch", "-q", "-c", "side", gittest.Run(t, h.Repo, "rev-parse", fixture.Base))
		commitIn(t, h.Worktree, "pkg/a.go", "package pkg\n\nconst A = 5\n")
		gittest.Run(t, h.Worktree, "switch", "-q", fixture.Branch)
		gittest.Run(t, h.Worktree, "merge", "-q", "--no-ff", "-X", "ours", "-m", "merge", "side")
		if gittest.Run(t, h.Worktree, "rev-parse", "HEAD^1") != head {
			t.Fatal("no merge was made")
		}
		return gittest.Run(t, h.Worktree, "rev-parse", "HEAD")
	}
	t.Run("a merge before the first push", func(t *testing.T) {
		h := newStepContext(t, stepOpts{})
		h.upTo("push")
		m := merge(t, h)
		_, err := h.run("push")
		if got := refusedPath(t, err, "refs/heads/"+fixture.Branch); !strings.HasPrefix(got, "it does not join the remote's history in a line: ") || !strings.Contains(got, m[:12]+" is a merge") {
			t.Errorf("reason %q", got)
		}
		if _, err := gittest.Try(h.Remote, "rev-parse", "--verify", "refs/heads/"+fixture.Branch); err == nil {
			t.Error("the branch reached the remote")
		}
	})
	t.Run("a merge after it", func(t *testing.T) {
		h := newStepContext(t, stepOpts{})
		h.upTo("push")
		h.must("push")
		pushed := remoteTip(t, h)
		m := merge(t, h)
		_, err := h.run("push")
		if got := refusedPath(t, err, "refs/heads/"+fixture.Branch); !strings.HasPrefix(got, "not a line of commits: ") || !strings.Contains(got, m[:12]+" is a merge") {
			t.Errorf("reason %q", got)
		}
		if remoteTip(t, h) != pushed {
			t.Error("the remote moved")
		}
	})
	t.Run("a rewrite of wo's own push", func(t *testing.T) {
		h := newStepContext(t, stepOpts{})
		h.upTo("push")
		h.must("push")
		pushed := remoteTip(t, h)
		fixture.WriteFile(t, filepath.Join(h.Worktree, "notes.txt"), "not the task's\n")
		gittest.Run(t, h.Worktree, "add", "notes.txt")
		gittest.Run(t, h.Worktree, "commit", "-q", "--amend", "--no-edit")
		_, err := h.run("push")
		if got := refusedPath(t, err, "notes.txt"); !strings.HasPrefix(got, "outside inputs.file_manifest and context.fix_paths") {
			t.Errorf("reason %q", got)
		}
		if remoteTip(t, h) != pushed {
			t.Error("the remote was rewritten")
		}
	})
	t.Run("a long list", func(t *testing.T) {
		h := newStepContext(t, stepOpts{})
		h.upTo("push")
		for i := range maxRefusalsListed + 2 {
			fixture.WriteFile(t, filepath.Join(h.Worktree, "extra", strings.Repeat("x", i+1)), "x\n")
		}
		gittest.Run(t, h.Worktree, "add", "extra")
		gittest.Run(t, h.Worktree, "commit", "-q", "-m", "extra")
		_, err := h.run("push")
		var refused *FixRefusedError
		if !errors.As(err, &refused) || len(refused.Refused) != maxRefusalsListed || refused.More != 2 {
			t.Fatalf("err %v", err)
		}
	})
}

// A clone whose remote moved on since (every branch of the remote at a
// commit not here): the first push fetches the base, and its line joins
// the remote's history there.
func TestTheFirstPushFetchesABaseThatMovedOn(t *testing.T) {
	h := newStepContext(t, stepOpts{})
	h.upTo("push")
	other := filepath.Join(t.TempDir(), "other")
	gittest.Run(t, filepath.Dir(other), "clone", "-q", "--branch", fixture.Base, h.Remote, other)
	commitIn(t, other, "theirs.txt", "theirs\n")
	for _, ref := range strings.Fields(gittest.Run(t, h.Remote, "for-each-ref", "--format=%(refname)")) {
		gittest.Run(t, other, "push", "-q", "-f", "origin", "HEAD:"+ref)
	}
	head := gittest.Run(t, h.Worktree, "rev-parse", "HEAD")
	if _, err := h.run("push"); err != nil {
		t.Fatal(err)
	}
	if got := remoteTip(t, h); got != head {
		t.Errorf("the remote is at %s, want %s", got, head)
	}
}
