package action

import (
	"strings"
	"testing"

	"github.com/wo-runner/wo/internal/gittest"
	"github.com/wo-runner/wo/procedure/internal/fixture"
)

func TestCommitCreateCommitsTheStagedFiles(t *testing.T) {
	h := newStepContext(t, stepOpts{})
	h.upTo("commit")
	base := gittest.Run(t, h.Repo, "rev-parse", fixture.Base)
	out, err := h.run("commit")
	if err != nil {
		t.Fatal(err)
	}
	head := gittest.Run(t, h.Worktree, "rev-parse", "HEAD")
	st := h.recorded(out)
	if st.CommitSHA != head {
		t.Errorf("recorded commit_sha %q, git rev-parse HEAD in the worktree says %s", st.CommitSHA, head)
	}
	if got := gittest.Run(t, h.Repo, "rev-parse", fixture.Branch); got != head {
		t.Errorf("%s is at %s, want the new commit %s", fixture.Branch, got, head)
	}
	if got := gittest.Run(t, h.Repo, "log", "-1", "--format=%s|%an <%ae>|%P", head); got != fixture.Title+"|Wo Runner <wo@example.com>|"+base {
		t.Errorf("the commit: %s", got)
	}
	if got := gittest.Run(t, h.Repo, "diff", "--name-status", base, head); got != "A\tfoundation/new.go\nM\tpkg/a.go" {
		t.Errorf("the commit changes:\n%s", got)
	}
	if got := gittest.Run(t, h.Worktree, "status", "--porcelain"); got != "" {
		t.Errorf("git status after the commit:\n%s", got)
	}
	if want := "committed " + head[:12] + ": " + fixture.Title; out.Note != want {
		t.Errorf("note %q, want %q", out.Note, want)
	}

	// After a crash the commit is there: nothing to commit is success.
	h.keep(out)
	again, err := h.run("commit")
	if err != nil {
		t.Fatalf("rerun: %v", err)
	}
	if got := gittest.Run(t, h.Repo, "rev-list", "--count", base+".."+fixture.Branch); got != "1" {
		t.Errorf("%s commits on the branch after a rerun, want 1", got)
	}
	if want := "nothing to commit: the branch is at " + head[:12]; again.Note != want {
		t.Errorf("rerun note %q, want %q", again.Note, want)
	}
	if got := h.recorded(again).CommitSHA; got != head {
		t.Errorf("rerun records commit_sha %q, want %s", got, head)
	}
}

func TestCommitCreateMessage(t *testing.T) {
	cases := []struct {
		name    string
		opts    stepOpts
		subject string
	}{
		{"the command's -m, rendered", stepOpts{Procedure: []any{
			map[string]any{"step": 1, "action": "create_worktree"},
			map[string]any{"step": 2, "action": "commit", "command": `git commit -m "Review <branch_name> for <task_key>"`},
		}}, "Review " + fixture.Branch + " for " + fixture.Key},
		{"inputs.pr_title without a command", stepOpts{Procedure: fixture.BareSteps("create_worktree", "commit"),
			Inputs: map[string]any{"pr_title": "From the title input"}}, "From the title input"},
		{"the task title without pr_title", stepOpts{Procedure: fixture.BareSteps("create_worktree", "commit"),
			Inputs: map[string]any{"pr_title": nil}}, fixture.Title},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newStepContext(t, tc.opts)
			if got, want := h.plan("commit"), "commit the staged files as \""+tc.subject+"\""; got != want {
				t.Errorf("plan %q, want %q", got, want)
			}
			h.must("create_worktree")
			fixture.WriteFile(t, h.Worktree+"/extra.txt", "x\n")
			gittest.Run(t, h.Worktree, "add", "extra.txt")
			h.must("commit")
			if got := gittest.Run(t, h.Worktree, "log", "-1", "--format=%s"); got != tc.subject {
				t.Errorf("commit subject %q, want %q", got, tc.subject)
			}
		})
	}
}

func TestCommitCreateNeedsAnAuthor(t *testing.T) {
	h := newStepContext(t, stepOpts{Serial: true})
	h.upTo("commit")
	// No author anywhere: not in the repository, not in the user's config.
	gittest.Run(t, h.Repo, "config", "--unset", "user.name")
	gittest.Run(t, h.Repo, "config", "--unset", "user.email")
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	h.r.repo = nil // the run opens the repository again, as a new run would
	want := "no commit author for " + h.Repo + ": set git config user.name and user.email, or WO_GIT_AUTHOR_NAME and WO_GIT_AUTHOR_EMAIL"
	fixture.ErrContains(t, h.check("commit"), want)
	_, err := h.run("commit")
	fixture.ErrContains(t, err, want)
	if got := gittest.Run(t, h.Repo, "rev-parse", fixture.Branch); got != gittest.Run(t, h.Repo, "rev-parse", fixture.Base) {
		t.Errorf("a commit was made without an author: %s", got)
	}

	h.setenv("WO_GIT_AUTHOR_NAME", "Env Author")
	h.setenv("WO_GIT_AUTHOR_EMAIL", "env@example.com")
	if err := h.check("commit"); err != nil {
		t.Errorf("check with the environment's author: %v", err)
	}
	h.must("commit")
	if got := gittest.Run(t, h.Worktree, "log", "-1", "--format=%an <%ae>"); got != "Env Author <env@example.com>" {
		t.Errorf("author %s", got)
	}
}

func TestCommitCreateWithoutAWorktree(t *testing.T) {
	h := newStepContext(t, stepOpts{})
	_, err := h.run("commit")
	fixture.ErrContains(t, err, "worktree "+h.Worktree+" does not exist: run the create_worktree step first")
	if !strings.Contains(h.plan("commit"), fixture.Title) {
		t.Errorf("plan %q does not show the message", h.plan("commit"))
	}
}
