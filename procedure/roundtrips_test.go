package procedure

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/wo-runner/wo/integration/ghstandin"
	"github.com/wo-runner/wo/procedure/action"
	"github.com/wo-runner/wo/procedure/internal/fixture"
	"github.com/wo-runner/wo/store"
	"github.com/wo-runner/wo/workorder"
)

// requestCounter counts the store requests of a run, as a remote store
// (ArangoDB) would see them: every method call is one request (the arango
// package's tests check that Get, Update, UpdateLogged and AppendLog are
// one request each when the patch does not move blocked_by edges).
type requestCounter struct {
	store.Store
	mu    sync.Mutex
	calls []string
}

func (c *requestCounter) count(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, name)
}

func (c *requestCounter) Get(ctx context.Context, key string) (map[string]any, error) {
	c.count("Get")
	return c.Store.Get(ctx, key)
}

func (c *requestCounter) Update(ctx context.Context, key, rev string, patch map[string]any) (string, error) {
	c.count("Update")
	return c.Store.Update(ctx, key, rev, patch)
}

func (c *requestCounter) List(ctx context.Context, f store.Filter) ([]map[string]any, error) {
	c.count("List")
	return c.Store.List(ctx, f)
}

func (c *requestCounter) BlockedBy(ctx context.Context, key string) ([]string, error) {
	c.count("BlockedBy")
	return c.Store.BlockedBy(ctx, key)
}

func (c *requestCounter) AppendLog(ctx context.Context, e store.LogEntry) error {
	c.count("AppendLog " + e.Action)
	return c.Store.AppendLog(ctx, e)
}

// loggedCounter is a requestCounter over a store that writes an update
// and log entries in one request.
type loggedCounter struct{ *requestCounter }

func (c loggedCounter) UpdateLogged(ctx context.Context, key, rev string, patch map[string]any, entries []store.LogEntry) (string, error) {
	name := "UpdateLogged"
	for _, e := range entries {
		name += " " + e.Action
	}
	c.count(name)
	return c.Store.(store.LoggedUpdater).UpdateLogged(ctx, key, rev, patch, entries)
}

// runCounting runs a work order of n no-op steps and returns the store
// requests of the run, and its activity log.
func runCounting(t *testing.T, n int, logged bool) ([]string, []string) {
	t.Helper()
	acts := scriptedActions(map[string]func(context.Context, *action.StepContext) (action.Outcome, error){"commit": ok("done")})
	s, err := store.OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "wo.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	proc := make([]any, n)
	for i := range proc {
		proc[i] = map[string]any{"step": i + 1, "action": "commit"}
	}
	doc := map[string]any{"_key": "task_rt", "title": "round trips", "status": "open",
		"work_order": map[string]any{"version": "1.0", "objective": "Count the store requests of a run", "procedure": proc}}
	workorder.ApplyDefaults(doc)
	if err := s.Create(context.Background(), doc); err != nil {
		t.Fatal(err)
	}
	c := &requestCounter{Store: s}
	var st store.Store = c
	if logged {
		st = loggedCounter{c}
	}
	if _, err := (&Engine{Store: st, Runner: "counter@host:1", Actions: acts}).Run(context.Background(), RunOptions{Key: "task_rt"}); err != nil {
		t.Fatal(err)
	}
	logs, err := s.Logs(context.Background(), "task_rt")
	if err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, e := range logs {
		actions = append(actions, e.Action)
	}
	return c.calls, actions
}

// A step costs at most two store requests: step_started before it runs
// (the timeline is written before anything is shown), and its state
// write-back carrying step_completed. Counted as the difference between
// runs of 10 and 5 steps, so that the run's own requests (load, blockers,
// lease, release) drop out. The activity log is the same as when every
// entry is a request of its own.
func TestAStepCostsTwoStoreRequests(t *testing.T) {
	t.Parallel()
	five, _ := runCounting(t, 5, true)
	ten, logs := runCounting(t, 10, true)
	perStep := float64(len(ten)-len(five)) / 5
	t.Logf("store requests: %d for a run of 5 steps, %d for 10: %.1f per step; a run of n steps costs %d + 2n",
		len(five), len(ten), perStep, len(five)-10)
	t.Logf("requests of the 5-step run: %v", five)
	if perStep > 2 {
		t.Errorf("%.1f store requests per step, want at most 2", perStep)
	}
	tenPlain, plainLogs := runCounting(t, 10, false)
	if !slices.Equal(logs, plainLogs) {
		t.Errorf("activity log with one request per step write:\n%v\nwith separate log requests:\n%v", logs, plainLogs)
	}
	// Without UpdateLogged, each step's step_completed and the run's
	// run_started are requests of their own (run_finished is one either
	// way: the closing status moves were written before it).
	if want := len(ten) + 11; len(tenPlain) != want {
		t.Errorf("a store without UpdateLogged: %d requests, want %d", len(tenPlain), want)
	}
}

// The seed's whole review procedure, run by the engine against real git,
// the GitHub stand-in and an agent that fixes one review comment: every
// step, the loop's second pass included, costs the engine two store
// requests, step_started and the write-back carrying step_completed. The
// rest of the run's requests (logged) are the run's own (load, blockers,
// lease, release, run_started and run_finished riding on writes) and what
// actions record mid-step so that a crash resumes exactly (the base
// commit before a worktree is made, a wait's deadline).
func TestTheSeedRunsStoreRequests(t *testing.T) {
	h := newStepContext(t, stepOpts{GitHub: true, Agent: "echo '// fixed' >> pkg/a.go\n",
		Reviews: [][]ghstandin.Comment{{{Path: "pkg/a.go", Line: 1, Body: "Say what A is."}}}})
	if err := h.r.wb.Release(h.ctx); err != nil {
		t.Fatal(err)
	}
	e := h.engine()
	c := &requestCounter{Store: e.Store}
	e.Store = loggedCounter{c}
	res, err := e.Run(h.ctx, RunOptions{Key: fixture.Key})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the seed's procedure: %d steps run (%v), %d store requests:\n%s", len(res.Ran), res.Ran, len(c.calls), strings.Join(c.calls, "\n"))
	if len(res.Ran) < len(fixture.Steps()) {
		t.Fatalf("ran %v: the review loop did not run", res.Ran)
	}
	started, completed := 0, 0
	for _, call := range c.calls {
		switch call {
		case "AppendLog step_started":
			started++
		case "UpdateLogged step_completed":
			completed++
		case "AppendLog step_completed":
			t.Errorf("a step_completed entry was a request of its own")
		}
	}
	if started != len(res.Ran) || completed != len(res.Ran) {
		t.Errorf("%d step_started requests and %d write-backs with step_completed for %d steps, want one each per step", started, completed, len(res.Ran))
	}
}
