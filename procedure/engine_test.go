package procedure

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wo-runner/wo/gitops"
	"github.com/wo-runner/wo/internal/identity"
	"github.com/wo-runner/wo/procedure/action"
	"github.com/wo-runner/wo/store"
	"github.com/wo-runner/wo/workorder"
)

// scripted is a test action whose behaviour a test sets.
type scripted struct {
	run func(ctx context.Context, sc *action.StepContext) (action.Outcome, error)
}

func (s scripted) Run(ctx context.Context, sc *action.StepContext) (action.Outcome, error) {
	return s.run(ctx, sc)
}

// scriptedActions is this build's table with the named actions' runners
// replaced, for one engine (Engine.Actions): tests that script actions run
// in parallel, each with its own table.
func scriptedActions(runs map[string]func(context.Context, *action.StepContext) (action.Outcome, error)) action.Actions {
	t := action.DefaultActions()
	for i, a := range t {
		if fn, ok := runs[a.Name]; ok {
			t[i].New = func() action.Action { return scripted{run: fn} }
		}
	}
	return t
}

func ok(note string) func(context.Context, *action.StepContext) (action.Outcome, error) {
	return func(context.Context, *action.StepContext) (action.Outcome, error) {
		return action.Outcome{Note: note}, nil
	}
}

// pushed is a push step that records the commit it pushed: its work order
// has a branch for someone to merge, so it is not closed when it completes.
func pushed(note string) func(context.Context, *action.StepContext) (action.Outcome, error) {
	return func(_ context.Context, sc *action.StepContext) (action.Outcome, error) {
		st := sc.State()
		st.PushedSHA = "0123456789abcdef0123456789abcdef01234567"
		return action.Outcome{Note: note, State: &st}, nil
	}
}

func newTestEngine(t testing.TB, steps ...string) (*Engine, store.Store) {
	t.Helper()
	s, err := store.OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "wo.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	var proc []any
	for i, a := range steps {
		proc = append(proc, map[string]any{"step": i + 1, "action": a})
	}
	doc := map[string]any{"_key": "task_e", "title": "Engine test", "status": "open",
		"labels": []any{"a"},
		"work_order": map[string]any{"version": "1.0", "objective": "Exercise the step engine",
			"inputs": map[string]any{"branch_name": "b"}, "procedure": proc}}
	workorder.ApplyDefaults(doc)
	if err := s.Create(context.Background(), doc); err != nil {
		t.Fatal(err)
	}
	return &Engine{Store: s, Runner: "tester@host:1", Attempts: 3, Backoff: time.Millisecond}, s
}

func get(t testing.TB, s store.Store) (map[string]any, map[string]any) {
	t.Helper()
	doc, err := s.Get(context.Background(), "task_e")
	if err != nil {
		t.Fatal(err)
	}
	v, _ := workorder.Lookup(doc, "work_order.state")
	return doc, v.(map[string]any)
}

func TestRunWritesStateAfterEveryStep(t *testing.T) {
	t.Parallel()
	e, s := newTestEngine(t, "commit", "push", "commit")
	var seen []string
	acts := scriptedActions(map[string]func(context.Context, *action.StepContext) (action.Outcome, error){
		"commit": func(ctx context.Context, sc *action.StepContext) (action.Outcome, error) {
			// The previous step's write-back is visible in the store.
			_, st := get(t, s)
			seen = append(seen, fmt.Sprint(st["current_step"], " ", st["completed_steps"]))
			after := sc.State()
			after.CommitSHA = "abc"
			return action.Outcome{Note: "c", State: &after}, nil
		},
		"push": pushed("p"),
	})
	e.Actions = acts
	res, err := e.Run(context.Background(), RunOptions{Key: "task_e"})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(seen) != "[0 [] 2 [1 2]]" {
		t.Errorf("state seen by steps: %v", seen)
	}
	doc, st := get(t, s)
	if res.CurrentStep != 3 || fmt.Sprint(st["completed_steps"]) != "[1 2 3]" || st["commit_sha"] != "abc" {
		t.Errorf("result %+v state %v", res, st)
	}
	if doc["status"] != "in_progress" || st["lease"] != nil || st["phase"] != "done" {
		t.Errorf("status %v lease %v phase %v", doc["status"], st["lease"], st["phase"])
	}
	logs, _ := s.Logs(context.Background(), "task_e")
	steps := 0
	for _, l := range logs {
		if l.Action == "step_completed" {
			steps++
			if l.SessionKey != "tester@host:1" || l.Details["duration_ms"] == nil {
				t.Errorf("log entry %+v", l)
			}
		}
	}
	if steps != 3 {
		t.Errorf("%d step_completed entries, want 3", steps)
	}
}

// A remote silent for the whole stall limit is not asked again in the
// same run: one more try would hold the runner as long again. The step is
// left for a later run, the task not blocked.
func TestAFailureThatWaitedItsLimitOutIsNotRetriedInTheSameRun(t *testing.T) {
	t.Parallel()
	calls := 0
	acts := scriptedActions(map[string]func(context.Context, *action.StepContext) (action.Outcome, error){
		"push": func(context.Context, *action.StepContext) (action.Outcome, error) {
			calls++
			return action.Outcome{}, &gitops.StalledError{Doing: "pushing review/01 to http://127.0.0.1:9/x.git", Limit: time.Minute}
		},
		"commit": ok("c"),
	})
	e, s := newTestEngine(t, "commit", "push")
	e.Actions = acts
	_, err := e.Run(context.Background(), RunOptions{Key: "task_e"})
	var exhausted *RetriesExhaustedError
	if !errors.As(err, &exhausted) || calls != 1 {
		t.Fatalf("err %v after %d calls, want RetriesExhaustedError after 1", err, calls)
	}
	if msg := err.Error(); !strings.Contains(msg, "gave up") || !strings.Contains(msg, "moved nothing for 1m0s") || !strings.Contains(msg, "run wo run task_e again later") {
		t.Errorf("the message does not say what gave up and what to run: %s", msg)
	}
	doc, st := get(t, s)
	if doc["status"] == "blocked" {
		t.Error("a stalled remote must not block the task")
	}
	if le, _ := st["last_error"].(map[string]any); le == nil || fmt.Sprint(le["step"]) != "2" {
		t.Errorf("last_error %v", st["last_error"])
	}
	if c := Classify(err); c.Outcome != OutcomeRetryLater {
		t.Errorf("classified %v, want retry later (exit 5)", c)
	}
}

func TestTransientFailuresAreRetriedThenLeftForLater(t *testing.T) {
	t.Parallel()
	calls := 0
	acts := scriptedActions(map[string]func(context.Context, *action.StepContext) (action.Outcome, error){
		"push": func(context.Context, *action.StepContext) (action.Outcome, error) {
			calls++
			return action.Outcome{}, action.Transient(&net.OpError{Op: "dial", Err: errors.New("connection refused")})
		},
		"commit": ok("c"),
	})
	e, s := newTestEngine(t, "commit", "push")
	e.Actions = acts
	_, err := e.Run(context.Background(), RunOptions{Key: "task_e"})
	var exhausted *RetriesExhaustedError
	if !errors.As(err, &exhausted) || calls != 3 {
		t.Fatalf("err %v after %d calls, want RetriesExhaustedError after 3", err, calls)
	}
	doc, st := get(t, s)
	if doc["status"] == "blocked" {
		t.Error("a transient failure must not block the task")
	}
	if le, _ := st["last_error"].(map[string]any); le == nil || fmt.Sprint(le["step"]) != "2" || fmt.Sprint(le["attempt"]) != "3" {
		t.Errorf("last_error %v", st["last_error"])
	}
	if st["lease"] != nil {
		t.Error("lease not released")
	}

	// Succeeds on the second attempt: the run goes on.
	calls = 0
	e.Actions = scriptedActions(map[string]func(context.Context, *action.StepContext) (action.Outcome, error){
		"push": func(context.Context, *action.StepContext) (action.Outcome, error) {
			calls++
			if calls < 2 {
				return action.Outcome{}, action.Transient(errors.New("503"))
			}
			return action.Outcome{Note: "pushed"}, nil
		},
	})
	if _, err := e.Run(context.Background(), RunOptions{Key: "task_e"}); err != nil {
		t.Fatal(err)
	}
	if _, st := get(t, s); fmt.Sprint(st["completed_steps"]) != "[1 2]" || st["last_error"] != nil {
		t.Errorf("state %v", st)
	}
}

func TestFailedStepBlocksAndRerunRetriesIt(t *testing.T) {
	t.Parallel()
	fail := true
	acts := scriptedActions(map[string]func(context.Context, *action.StepContext) (action.Outcome, error){
		"commit": ok("c"),
		"push": func(ctx context.Context, sc *action.StepContext) (action.Outcome, error) {
			if fail {
				return action.Outcome{}, errors.New("remote rejected the push")
			}
			return pushed("pushed")(ctx, sc)
		},
	})
	e, s := newTestEngine(t, "commit", "push")
	e.Actions = acts
	_, err := e.Run(context.Background(), RunOptions{Key: "task_e"})
	var failed *StepFailedError
	if !errors.As(err, &failed) || failed.Step != 2 {
		t.Fatalf("err %v", err)
	}
	doc, st := get(t, s)
	if doc["status"] != "blocked" || doc["block_reason"] != "step 2 (push) failed: remote rejected the push" {
		t.Errorf("status %v, block_reason %v", doc["status"], doc["block_reason"])
	}
	if fmt.Sprint(st["current_step"]) != "1" {
		t.Errorf("current_step %v", st["current_step"])
	}
	fail = false
	if _, err := e.Run(context.Background(), RunOptions{Key: "task_e"}); err != nil {
		t.Fatal(err)
	}
	doc, st = get(t, s)
	if doc["status"] != "in_progress" || doc["block_reason"] != nil || fmt.Sprint(st["completed_steps"]) != "[1 2]" {
		t.Errorf("after the retry: status %v reason %v state %v", doc["status"], doc["block_reason"], st)
	}
}

func TestAnotherWriterDuringARunIsKept(t *testing.T) {
	t.Parallel()
	e, s := newTestEngine(t, "commit")
	acts := scriptedActions(map[string]func(context.Context, *action.StepContext) (action.Outcome, error){
		"commit": func(ctx context.Context, sc *action.StepContext) (action.Outcome, error) {
			// A Persephone tool edits the task while the step runs.
			doc, _ := get(t, s)
			if _, err := s.Update(ctx, "task_e", doc["_rev"].(string), map[string]any{"labels": []any{"a", "triaged"}}); err != nil {
				t.Fatal(err)
			}
			return action.Outcome{Note: "c"}, nil
		},
	})
	e.Actions = acts
	if _, err := e.Run(context.Background(), RunOptions{Key: "task_e"}); err != nil {
		t.Fatal(err)
	}
	doc, st := get(t, s)
	if fmt.Sprint(doc["labels"]) != "[a triaged]" || fmt.Sprint(st["completed_steps"]) != "[1]" {
		t.Errorf("labels %v state %v", doc["labels"], st)
	}
}

func TestLostLeaseStopsTheRun(t *testing.T) {
	t.Parallel()
	e, s := newTestEngine(t, "commit", "commit")
	acts := scriptedActions(map[string]func(context.Context, *action.StepContext) (action.Outcome, error){
		"commit": func(ctx context.Context, sc *action.StepContext) (action.Outcome, error) {
			doc, _ := get(t, s)
			s.Update(ctx, "task_e", doc["_rev"].(string), store.Nest("work_order.state.lease",
				map[string]any{"holder": "thief@elsewhere:9", "expires_at": workorder.Timestamp(time.Now().Add(time.Hour))}))
			return action.Outcome{Note: "c"}, nil
		},
	})
	e.Actions = acts
	_, err := e.Run(context.Background(), RunOptions{Key: "task_e"})
	var lost *store.LeaseLostError
	if !errors.As(err, &lost) || lost.Holder != "thief@elsewhere:9" {
		t.Fatalf("err %v, want LeaseLostError naming the thief", err)
	}
}

func TestLeaseOfADeadLocalProcessIsTakenOver(t *testing.T) {
	t.Parallel()
	acts := scriptedActions(map[string]func(context.Context, *action.StepContext) (action.Outcome, error){"push": pushed("p")})
	e, s := newTestEngine(t, "push")
	e.Actions = acts
	doc, _ := get(t, s)
	dead := fmt.Sprintf("someone@%s:%d", identity.Host(), 999999) // no such pid
	s.Update(context.Background(), "task_e", doc["_rev"].(string), store.Nest("work_order.state.lease",
		map[string]any{"holder": dead, "expires_at": workorder.Timestamp(time.Now().Add(time.Hour))}))
	if _, err := e.Run(context.Background(), RunOptions{Key: "task_e"}); err != nil {
		t.Fatalf("a dead holder's lease must be taken over: %v", err)
	}
	doc, _ = get(t, s)
	alive := fmt.Sprintf("someone@other-host:%d", 1)
	s.Update(context.Background(), "task_e", doc["_rev"].(string), store.Nest("work_order.state.lease",
		map[string]any{"holder": alive, "expires_at": workorder.Timestamp(time.Now().Add(time.Hour))}))
	var held *store.LeaseHeldError
	if _, err := e.Run(context.Background(), RunOptions{Key: "task_e", FromStep: 1}); !errors.As(err, &held) {
		t.Fatalf("a live lease on another host: %v", err)
	}
}
