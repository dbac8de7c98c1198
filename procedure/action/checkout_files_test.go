package action

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wo-runner/wo/internal/gittest"
	"github.com/wo-runner/wo/procedure/internal/fixture"
)

func TestFilesCheckoutCopiesAndStagesTheManifest(t *testing.T) {
	h := newStepContext(t, stepOpts{})
	h.upTo("checkout_files")
	source := gittest.Run(t, h.Repo, "rev-parse", fixture.Source)
	out, err := h.run("checkout_files")
	if err != nil {
		t.Fatal(err)
	}
	if got := fixture.ReadFile(t, filepath.Join(h.Worktree, "pkg/a.go")); got != fixture.SourceA {
		t.Errorf("pkg/a.go is %q, want the source's version", got)
	}
	if got := fixture.ReadFile(t, filepath.Join(h.Worktree, "foundation/new.go")); got != fixture.SourceN {
		t.Errorf("foundation/new.go is %q", got)
	}
	if _, err := os.Stat(filepath.Join(h.Worktree, "unrelated.txt")); !os.IsNotExist(err) {
		t.Errorf("a file outside the manifest came in: %v", err)
	}
	if got := gittest.Run(t, h.Worktree, "status", "--porcelain"); got != "A  foundation/new.go\nM  pkg/a.go" {
		t.Errorf("git status:\n%s\nwant both files staged and nothing else", got)
	}
	if want := "2 file(s) checked out from main (" + source[:12] + ")"; out.Note != want {
		t.Errorf("note %q, want %q", out.Note, want)
	}
	if got := h.stored().SourceSHA; got != source {
		t.Errorf("stored source_sha %q, want %s", got, source)
	}

	again, err := h.run("checkout_files")
	if err != nil {
		t.Fatalf("rerun: %v", err)
	}
	if again.Note != out.Note {
		t.Errorf("rerun says %q", again.Note)
	}
	if got := gittest.Run(t, h.Worktree, "status", "--porcelain"); got != "A  foundation/new.go\nM  pkg/a.go" {
		t.Errorf("git status after the rerun:\n%s", got)
	}
}

func TestFilesCheckoutResumesFromTheRecordedSource(t *testing.T) {
	h := newStepContext(t, stepOpts{})
	h.upTo("checkout_files")
	h.must("checkout_files")
	// The source branch moves on after the first attempt.
	fixture.WriteFile(t, filepath.Join(h.Repo, "pkg/a.go"), "package pkg\n\nconst A = 3\n")
	gittest.Run(t, h.Repo, "commit", "-q", "-am", "later")
	if _, err := h.run("checkout_files"); err != nil {
		t.Fatal(err)
	}
	if got := fixture.ReadFile(t, filepath.Join(h.Worktree, "pkg/a.go")); got != fixture.SourceA {
		t.Errorf("pkg/a.go is %q: the rerun took the moved branch, not the recorded commit", got)
	}
}

func TestFilesCheckoutDeletesTheDeleteManifest(t *testing.T) {
	h := newStepContext(t, stepOpts{Inputs: map[string]any{"delete_manifest": []any{"README.md"}}})
	h.upTo("checkout_files")
	out, err := h.run("checkout_files")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(h.Worktree, "README.md")); !os.IsNotExist(err) {
		t.Errorf("README.md is still there: %v", err)
	}
	if got := gittest.Run(t, h.Worktree, "status", "--porcelain"); got != "D  README.md\nA  foundation/new.go\nM  pkg/a.go" {
		t.Errorf("git status:\n%s", got)
	}
	if !strings.HasSuffix(out.Note, ", 1 deleted") {
		t.Errorf("note %q does not count the deletion", out.Note)
	}
}

func TestFilesCheckoutErrors(t *testing.T) {
	t.Run("a file missing at the source", func(t *testing.T) {
		h := newStepContext(t, stepOpts{Inputs: map[string]any{"file_manifest": []any{"pkg/a.go", "pkg/missing.go"}}})
		source := gittest.Run(t, h.Repo, "rev-parse", fixture.Source)
		want := "1 file(s) of the manifest do not exist at main (" + source[:12] + "): pkg/missing.go; fix inputs.file_manifest or context.source_branch"
		fixture.ErrContains(t, h.check("checkout_files"), want)
		h.upTo("checkout_files")
		_, err := h.run("checkout_files")
		fixture.ErrContains(t, err, want)
		// Nothing is written when one file is missing.
		if got := fixture.ReadFile(t, filepath.Join(h.Worktree, "pkg/a.go")); got != fixture.BaseA {
			t.Errorf("pkg/a.go was overwritten: %q", got)
		}
		if got := gittest.Run(t, h.Worktree, "status", "--porcelain"); got != "" {
			t.Errorf("git status:\n%s", got)
		}
	})
	t.Run("an empty manifest", func(t *testing.T) {
		h := newStepContext(t, stepOpts{Inputs: map[string]any{"file_manifest": []any{}}})
		fixture.ErrContains(t, h.check("checkout_files"), "work_order.inputs.file_manifest is empty: list the files to bring in")
		_, err := h.run("checkout_files")
		fixture.ErrContains(t, err, "task "+fixture.Key+": work_order.inputs.file_manifest is empty")
	})
	t.Run("no worktree", func(t *testing.T) {
		h := newStepContext(t, stepOpts{})
		_, err := h.run("checkout_files")
		fixture.ErrContains(t, err, "worktree "+h.Worktree+" does not exist: run the create_worktree step first")
	})
	t.Run("a source branch that does not exist", func(t *testing.T) {
		h := newStepContext(t, stepOpts{Context: map[string]any{"source_branch": "no-such-source"}})
		fixture.ErrContains(t, h.check("checkout_files"), "context.source_branch", "no-such-source")
		h.upTo("checkout_files")
		_, err := h.run("checkout_files")
		fixture.ErrContains(t, err, "context.source_branch", "no-such-source")
	})
	t.Run("no source branch", func(t *testing.T) {
		h := newStepContext(t, stepOpts{Context: map[string]any{"source_branch": nil}, Procedure: fixture.BareSteps("create_worktree", "checkout_files")})
		h.must("create_worktree")
		_, err := h.run("checkout_files")
		fixture.ErrContains(t, err, "task "+fixture.Key+": work_order.context.source_branch is not set")
	})
}

func TestFilesCheckoutCheckUsesTheRecordedSource(t *testing.T) {
	h := newStepContext(t, stepOpts{Inputs: map[string]any{"file_manifest": []any{"foundation/new.go"}}})
	base := gittest.Run(t, h.Repo, "rev-parse", fixture.Base)
	// A source commit recorded by an earlier run, which lacks the file.
	h.setState(func(s *stateT) { s.SourceSHA = base })
	fixture.ErrContains(t, h.check("checkout_files"), "do not exist at main ("+base[:12]+"): foundation/new.go")
}

func TestFilesCheckoutPlan(t *testing.T) {
	h := newStepContext(t, stepOpts{})
	if got, want := h.plan("checkout_files"), "copy 2 file(s) from main and stage them: pkg/a.go, foundation/new.go"; got != want {
		t.Errorf("plan %q, want %q", got, want)
	}
	many := []any{"a", "b", "c", "d", "e", "f", "g"}
	h = newStepContext(t, stepOpts{Inputs: map[string]any{"file_manifest": many}})
	if got, want := h.plan("checkout_files"), "copy 7 file(s) from main and stage them: a, b, c, d, e, … and 2 more"; got != want {
		t.Errorf("plan %q, want %q", got, want)
	}
	h = newStepContext(t, stepOpts{Inputs: map[string]any{"file_manifest": many[:5]}})
	if got, want := h.plan("checkout_files"), "copy 5 file(s) from main and stage them: a, b, c, d, e"; got != want {
		t.Errorf("plan %q, want %q", got, want)
	}
}
