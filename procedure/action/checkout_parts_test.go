package action

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/wo-runner/wo/internal/gittest"
	"github.com/wo-runner/wo/procedure/internal/fixture"
)

// A work order of a split that brings part of a file writes those lines
// of the source's file, and a rerun on a branch that has them committed
// finds them there already rather than write or commit them again.
func TestFilesCheckoutWritesThePartAndARerunFindsItCommitted(t *testing.T) {
	h := newStepContext(t, stepOpts{Inputs: map[string]any{"file_parts": map[string]any{"pkg/a.go": "1-2,4-4"}}})
	h.upTo("checkout_files")
	if _, err := h.run("checkout_files"); err != nil {
		t.Fatal(err)
	}
	want := "package pkg\n\nconst A = 2\n"
	if got := fixture.ReadFile(t, filepath.Join(h.Worktree, "pkg/a.go")); got != want {
		t.Fatalf("pkg/a.go is %q, want lines 1-2 and 4 of the source's: %q", got, want)
	}
	if got := gittest.Run(t, h.Worktree, "show", ":pkg/a.go"); got+"\n" != want {
		t.Errorf("the index has %q for pkg/a.go, want the part", got)
	}
	gittest.Run(t, h.Worktree, "commit", "-q", "-m", "the part")
	head := gittest.Run(t, h.Worktree, "rev-parse", "HEAD")

	again, err := h.run("checkout_files")
	if err != nil {
		t.Fatalf("rerun: %v", err)
	}
	if !strings.Contains(again.Note, "already") {
		t.Errorf("the rerun says %q; the part is committed on the branch already", again.Note)
	}
	if got := gittest.Run(t, h.Worktree, "rev-parse", "HEAD"); got != head {
		t.Errorf("the rerun moved the branch from %s to %s", head, got)
	}
	if got := gittest.Run(t, h.Worktree, "status", "--porcelain"); got != "" {
		t.Errorf("the rerun left changes:\n%s", got)
	}
}

// A part past the end of the source's file is refused, naming the
// field to fix, and nothing of the manifest is written.
func TestFilesCheckoutRefusesAPartPastTheFile(t *testing.T) {
	h := newStepContext(t, stepOpts{Inputs: map[string]any{"file_parts": map[string]any{"pkg/a.go": "1-2,4-99"}}})
	h.upTo("checkout_files")
	_, err := h.run("checkout_files")
	if err == nil || !strings.Contains(err.Error(), "file_parts") || !strings.Contains(err.Error(), "pkg/a.go") {
		t.Fatalf("checkout_files of lines 4-99 of a 4-line file: %v; want an error naming pkg/a.go and inputs.file_parts", err)
	}
	if got := gittest.Run(t, h.Worktree, "status", "--porcelain"); got != "" {
		t.Errorf("a refused checkout wrote:\n%s", got)
	}
}
