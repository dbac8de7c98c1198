package stack

import (
	"context"
	"os"
	"testing"

	"github.com/wo-runner/wo/integration/ghstandin"
	"github.com/wo-runner/wo/procedure/internal/epicworld"
	"github.com/wo-runner/wo/procedure/internal/fixture"
	"github.com/wo-runner/wo/store"
	"github.com/wo-runner/wo/workorder"
)

// The tests run over procedure/internal/epicworld: the fixture's real
// repository, bare remote and GitHub stand-in, a store and an engine,
// with this package's keeper wired into it.

func TestMain(m *testing.M) {
	code := m.Run()
	fixture.Cleanup()
	os.Exit(code)
}

// stepHarness is a world and its keeper.
type stepHarness struct {
	*epicworld.World
	t     *testing.T
	ctx   context.Context
	store store.Store
	k     *Keeper
}

func harnessOf(w *epicworld.World) *stepHarness {
	return &stepHarness{World: w, t: w.T, ctx: w.Ctx, store: w.Store, k: New(w.Engine)}
}

// newStepContext is a world over task_cr_01 as opts describe it.
func newStepContext(t *testing.T, opts fixture.Options) *stepHarness {
	t.Helper()
	return harnessOf(epicworld.New(t, opts))
}

// engine is the keeper of the world's engine.
func (h *stepHarness) engine() *Keeper { return h.k }

// stackOnStandin stores epic task_ep with three children whose PRs are
// open on the stand-in, each description written by its author without a
// stack section, and returns the harness.
func stackOnStandin(t *testing.T) *stepHarness {
	t.Helper()
	return stackOnStandinWith(t, 3, nil)
}

// stackOnStandinWith is stackOnStandin with n parts and the stand-in set
// up by standIn (when not nil) before it starts.
func stackOnStandinWith(t *testing.T, n int, standIn func(*ghstandin.Server)) *stepHarness {
	t.Helper()
	return harnessOf(epicworld.StackOnStandin(t, n, standIn))
}

// patch merges fields into a stored document.
func (h *stepHarness) patch(key string, fields map[string]any) { h.Patch(key, fields) }

// epicState is the epic's work_order.state.
func (h *stepHarness) epicState() workorder.State { return h.StateOf("task_ep") }

// stored is task_cr_01's work_order.state as the store holds it.
func (h *stepHarness) stored() workorder.State { return h.StateOf(fixture.Key) }

// openPR pushes the branch and opens its pull request on the stand-in,
// keeping the number in state; it returns the pushed commit, which is
// recorded as pushed_sha.
func (h *stepHarness) openPR() string {
	h.t.Helper()
	sha := h.PushBranch(h.t)
	pr, err := h.Client().CreatePR(h.ctx, fixture.Branch, fixture.Base, fixture.Title, "")
	if err != nil {
		h.t.Fatal(err)
	}
	h.patch(fixture.Key, map[string]any{"work_order": map[string]any{"state": map[string]any{"pushed_sha": sha, "pr_number": pr.Number, "pr_url": pr.URL}}})
	return sha
}
