package procedure

import (
	"testing"

	"github.com/wo-runner/wo/procedure/internal/fixture"
)

// A work order that names no repository, run without --repo: an action
// that needs it says how to name one, both when checked and when run.
func TestAStepWithoutARepositorySaysHowToNameOne(t *testing.T) {
	h := newStepContext(t, stepOpts{Context: map[string]any{"repo_path": nil}})
	fixture.ErrContains(t, h.check("create_worktree"), "task "+fixture.Key, "no repository: set work_order.context.repo_path or pass --repo")
	_, err := h.run("create_worktree")
	fixture.ErrContains(t, err, "no repository")
}
