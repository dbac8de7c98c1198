// Package storetest is the conformance suite that every store backend runs.
// Hooking a backend up takes a constructor for an empty store and, for the
// multi-process test, a TestMain that calls WorkerMain.
package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wo-runner/wo/store"
	"github.com/wo-runner/wo/workorder"
)

// NewFunc returns an empty store for one test and a locator with which
// another process can open the same store through the Open given to
// WorkerMain.
type NewFunc func(t *testing.T) (s store.Store, locator string)

// Environment variables of the multi-process worker.
const (
	envWorker = "WO_STORETEST_WORKER"
	envKey    = "WO_STORETEST_KEY"
	envID     = "WO_STORETEST_ID"
	envCount  = "WO_STORETEST_COUNT"
)

// WorkerMain must be called first in the backend test package's TestMain.
// In a worker process started by the suite it does the worker's share of
// writes and exits; otherwise it returns at once.
func WorkerMain(open func(locator string) (store.Store, error)) {
	locator := os.Getenv(envWorker)
	if locator == "" {
		return
	}
	n, _ := strconv.Atoi(os.Getenv(envCount))
	s, err := open(locator)
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker: open:", err)
		os.Exit(1)
	}
	err = appendMarks(context.Background(), s, os.Getenv(envKey), os.Getenv(envID), n)
	s.Close()
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// appendMarks adds n marks "id-i" to the marks array of key, each by a
// read-modify-conditional-write that retries on conflict. A lost update
// shows up as a missing mark.
func appendMarks(ctx context.Context, s store.Store, key, id string, n int) error {
	for i := 0; i < n; i++ {
		mark := fmt.Sprintf("%s-%d", id, i)
		for attempt := 0; ; attempt++ {
			doc, err := s.Get(ctx, key)
			if err != nil {
				return err
			}
			marks, _ := doc["marks"].([]any)
			next := append(slices.Clone(marks), mark)
			_, err = s.Update(ctx, key, doc["_rev"].(string), map[string]any{"marks": next})
			if store.IsConflict(err) {
				if attempt > 10000 {
					return fmt.Errorf("mark %s: still conflicting after %d attempts", mark, attempt)
				}
				continue
			}
			if err != nil {
				return err
			}
			break
		}
	}
	return nil
}

// Run runs every conformance test against the backend.
func Run(t *testing.T, newStore NewFunc) {
	tests := []struct {
		name string
		fn   func(*testing.T, NewFunc)
	}{
		{"RoundTripKeepsUnknownFields", testRoundTrip},
		{"CreateIsAllOrNothing", testCreateAllOrNothing},
		{"NotFoundAndConflictAreDistinct", testErrorKinds},
		{"NestedMergeKeepsSiblings", testNestedMerge},
		{"ArraysAndNullsReplace", testArraysReplaced},
		{"ConcurrentGoroutinesLoseNothing", testConcurrentGoroutines},
		{"ConcurrentProcessesLoseNothing", testConcurrentProcesses},
		{"ListByParentAndStatus", testList},
		{"BlockedByEdges", testEdges},
		{"DependencyUpdateMovesEdges", testDependencyUpdateMovesEdges},
		{"ActivityLog", testLogs},
		{"ActivityLogMixedPrecisionInTimeOrder", testLogsMixedPrecision},
		{"UpdateWithEmptyRevisionConflicts", testUpdateEmptyRevision},
		{"LeaseExclusiveAndExpires", testLease},
		{"LeaseRaceHasOneWinner", testLeaseRace},
		{"LeaseGivesTheDocumentItWasWrittenAgainst", testLeaseDoc},
		{"UpdateLoggedWritesBothOrNeither", testUpdateLogged},
		{"ListSummariesIsListCut", testListSummaries},
		{"LogDetailsIsLogsByActionCut", testLogDetails},
		{"ReplaceIsAllOrNothingAndKeepsTheLog", testReplace},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, newStore) })
	}
}

// Doc returns a task_cr_01-like document with fields wo does not know.
func Doc(key string) map[string]any {
	raw := fmt.Sprintf(`{
	  "_key": %q, "title": "PR #1: Foundation", "status": "open", "type": "task",
	  "priority": "high", "parent_key": "task_epic", "labels": ["review"],
	  "x_team_field": {"owner": "ops", "weights": [1, 2.5, 9007199254740993], "nothing": null},
	  "work_order": {
	    "version": "1.0", "objective": "Create a PR for review of the foundation",
	    "context": {"repo": "acme/hermes", "base_branch": "code-review-base", "x_ctx": {"deep": [{"a": 1}]}},
	    "inputs": {"branch_name": "review/01-foundation", "file_manifest": ["a.go", "b.go"]},
	    "dependencies": {"blocked_by": ["task_dep_b", "task_dep_a"], "blocks": []},
	    "procedure": [{"step": 1, "action": "create_worktree", "x_step": true}],
	    "state": {"current_step": 0, "completed_steps": [], "review_iterations": 0,
	              "pr_url": null, "worktree_path": null, "notes": ["created"], "x_state": "kept"}
	  }
	}`, key)
	doc, err := workorder.DecodeDocument("fixture", []byte(raw))
	if err != nil {
		panic(err)
	}
	return doc
}

func withoutMeta(doc map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range doc {
		if k != "_rev" && k != "_id" {
			out[k] = v
		}
	}
	return out
}

// sameJSON compares two values by their JSON encoding, so json.Number,
// float64 and int of the same value are equal.
func sameJSON(t *testing.T, want, got any) bool {
	t.Helper()
	a, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	var x, y any
	json.Unmarshal(a, &x)
	json.Unmarshal(b, &y)
	if !reflect.DeepEqual(x, y) {
		t.Errorf("documents differ:\nwant %s\n got %s", a, b)
		return false
	}
	return true
}

func mustGet(t *testing.T, s store.Store, key string) map[string]any {
	t.Helper()
	doc, err := s.Get(context.Background(), key)
	if err != nil {
		t.Fatalf("Get(%s): %v", key, err)
	}
	return doc
}

func rev(doc map[string]any) string { s, _ := doc["_rev"].(string); return s }

func testRoundTrip(t *testing.T, newStore NewFunc) {
	ctx := context.Background()
	s, _ := newStore(t)
	orig := Doc("task_rt")
	if err := s.Create(ctx, workorder.Clone(orig).(map[string]any)); err != nil {
		t.Fatal(err)
	}
	got := mustGet(t, s, "task_rt")
	if rev(got) == "" {
		t.Fatal("Get returned no _rev")
	}
	sameJSON(t, orig, withoutMeta(got))
	// 9007199254740993 is not representable as float64: it must come back exact.
	if w := got["x_team_field"].(map[string]any)["weights"].([]any)[2]; fmt.Sprint(w) != "9007199254740993" {
		t.Errorf("large integer changed to %v", w)
	}

	if _, err := s.Update(ctx, "task_rt", rev(got), store.Nest("work_order.state", map[string]any{"current_step": 1, "completed_steps": []any{1}})); err != nil {
		t.Fatal(err)
	}
	after := mustGet(t, s, "task_rt")
	want := workorder.Clone(orig).(map[string]any)
	st := want["work_order"].(map[string]any)["state"].(map[string]any)
	st["current_step"] = 1
	st["completed_steps"] = []any{1}
	sameJSON(t, want, withoutMeta(after))
	if rev(after) == rev(got) {
		t.Error("revision did not change after an update")
	}
}

func testCreateAllOrNothing(t *testing.T, newStore NewFunc) {
	ctx := context.Background()
	s, _ := newStore(t)
	if err := s.Create(ctx, Doc("task_a")); err != nil {
		t.Fatal(err)
	}
	err := s.Create(ctx, Doc("task_b"), Doc("task_a"), Doc("task_c"))
	if !store.IsExists(err) {
		t.Fatalf("creating an existing key: want an exists error, got %v", err)
	}
	for _, k := range []string{"task_b", "task_c"} {
		if _, err := s.Get(ctx, k); !store.IsNotFound(err) {
			t.Errorf("%s was stored although the batch failed (err=%v)", k, err)
		}
	}
	if _, err := s.BlockedBy(ctx, "task_b"); err != nil {
		t.Fatal(err)
	}
	if deps, _ := s.BlockedBy(ctx, "task_b"); len(deps) != 0 {
		t.Errorf("edges of the failed batch were kept: %v", deps)
	}
}

func testErrorKinds(t *testing.T, newStore NewFunc) {
	ctx := context.Background()
	s, _ := newStore(t)
	_, err := s.Get(ctx, "task_missing")
	if !store.IsNotFound(err) || store.IsConflict(err) {
		t.Errorf("Get of a missing key: want not-found only, got %v", err)
	}
	_, err = s.Update(ctx, "task_missing", "1", map[string]any{"status": "closed"})
	if !store.IsNotFound(err) || store.IsConflict(err) {
		t.Errorf("Update of a missing key: want not-found only, got %v", err)
	}
	if err := s.Create(ctx, Doc("task_k")); err != nil {
		t.Fatal(err)
	}
	first := mustGet(t, s, "task_k")
	if _, err := s.Update(ctx, "task_k", rev(first), map[string]any{"status": "in_progress"}); err != nil {
		t.Fatal(err)
	}
	_, err = s.Update(ctx, "task_k", rev(first), map[string]any{"status": "blocked"})
	if !store.IsConflict(err) || store.IsNotFound(err) {
		t.Fatalf("Update with a stale revision: want conflict only, got %v", err)
	}
	if got := mustGet(t, s, "task_k")["status"]; got != "in_progress" {
		t.Errorf("a conflicting update changed the document: status %v", got)
	}
}

func testNestedMerge(t *testing.T, newStore NewFunc) {
	ctx := context.Background()
	s, _ := newStore(t)
	if err := s.Create(ctx, Doc("task_m")); err != nil {
		t.Fatal(err)
	}
	doc := mustGet(t, s, "task_m")
	patch := store.Nest("work_order.state.current_step", 3)
	store.Merge(patch, store.Nest("work_order.state.pr_number", 7))
	if _, err := s.Update(ctx, "task_m", rev(doc), patch); err != nil {
		t.Fatal(err)
	}
	got := mustGet(t, s, "task_m")
	wo := got["work_order"].(map[string]any)
	st := wo["state"].(map[string]any)
	if n, _ := workorder.AsInt(st["current_step"]); n != 3 {
		t.Errorf("current_step = %v, want 3", st["current_step"])
	}
	if n, _ := workorder.AsInt(st["pr_number"]); n != 7 {
		t.Errorf("pr_number = %v, want 7", st["pr_number"])
	}
	if st["x_state"] != "kept" || !sameJSON(t, []any{"created"}, st["notes"]) {
		t.Errorf("siblings inside state were lost: %v", st)
	}
	sameJSON(t, Doc("task_m")["work_order"].(map[string]any)["context"], wo["context"])
	sameJSON(t, Doc("task_m")["x_team_field"], got["x_team_field"])
}

func testArraysReplaced(t *testing.T, newStore NewFunc) {
	ctx := context.Background()
	s, _ := newStore(t)
	if err := s.Create(ctx, Doc("task_arr")); err != nil {
		t.Fatal(err)
	}
	doc := mustGet(t, s, "task_arr")
	patch := store.Nest("work_order.state", map[string]any{"notes": []any{"only"}, "worktree_path": "/tmp/w"})
	r, err := s.Update(ctx, "task_arr", rev(doc), patch)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Update(ctx, "task_arr", r, store.Nest("work_order.state.worktree_path", nil)); err != nil {
		t.Fatal(err)
	}
	st := mustGet(t, s, "task_arr")["work_order"].(map[string]any)["state"].(map[string]any)
	sameJSON(t, []any{"only"}, st["notes"])
	v, present := st["worktree_path"]
	if !present || v != nil {
		t.Errorf("worktree_path set to null must be kept as null, got present=%v value=%v", present, v)
	}
}

func testConcurrentGoroutines(t *testing.T, newStore NewFunc) {
	ctx := context.Background()
	s, _ := newStore(t)
	if err := s.Create(ctx, map[string]any{"_key": "task_cc", "status": "open", "marks": []any{}}); err != nil {
		t.Fatal(err)
	}
	const workers, each = 8, 15
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			errs <- appendMarks(ctx, s, "task_cc", fmt.Sprintf("g%d", w), each)
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	checkMarks(t, mustGet(t, s, "task_cc"), "g", workers, each)
}

func testConcurrentProcesses(t *testing.T, newStore NewFunc) {
	ctx := context.Background()
	s, locator := newStore(t)
	if err := s.Create(ctx, map[string]any{"_key": "task_cp", "status": "open", "marks": []any{}}); err != nil {
		t.Fatal(err)
	}
	const procs, each = 4, 15
	cmds := make([]*exec.Cmd, procs)
	outs := make([]*lockedBuffer, procs)
	for p := 0; p < procs; p++ {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		outs[p] = &lockedBuffer{}
		cmd.Stdout, cmd.Stderr = outs[p], outs[p]
		cmd.Env = append(os.Environ(),
			envWorker+"="+locator, envKey+"=task_cp", envID+"=p"+strconv.Itoa(p), envCount+"="+strconv.Itoa(each))
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds[p] = cmd
	}
	for p, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("worker process %d failed: %v\n%s", p, err, outs[p].String())
		}
	}
	checkMarks(t, mustGet(t, s, "task_cp"), "p", procs, each)
}

type lockedBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	return len(p), nil
}

func (b *lockedBuffer) String() string { b.mu.Lock(); defer b.mu.Unlock(); return string(b.buf) }

func checkMarks(t *testing.T, doc map[string]any, prefix string, workers, each int) {
	t.Helper()
	marks, _ := doc["marks"].([]any)
	seen := map[string]int{}
	for _, m := range marks {
		seen[m.(string)]++
	}
	for w := 0; w < workers; w++ {
		for i := 0; i < each; i++ {
			m := fmt.Sprintf("%s%d-%d", prefix, w, i)
			if seen[m] != 1 {
				t.Errorf("mark %s appears %d times, want once (a lost or doubled update)", m, seen[m])
			}
		}
	}
	if len(marks) != workers*each {
		t.Errorf("%d marks, want %d", len(marks), workers*each)
	}
}

func testList(t *testing.T, newStore NewFunc) {
	ctx := context.Background()
	s, _ := newStore(t)
	mk := func(key, parent, status string) map[string]any {
		d := map[string]any{"_key": key, "status": status}
		if parent != "" {
			d["parent_key"] = parent
		}
		return d
	}
	if err := s.Create(ctx, mk("task_e", "", "open"), mk("task_e2", "task_e", "closed"), mk("task_e1", "task_e", "open"), mk("task_x", "task_other", "open")); err != nil {
		t.Fatal(err)
	}
	keys := func(docs []map[string]any) []string {
		var out []string
		for _, d := range docs {
			out = append(out, d["_key"].(string))
		}
		return out
	}
	children, err := s.List(ctx, store.Filter{ParentKey: "task_e"})
	if err != nil {
		t.Fatal(err)
	}
	if got := keys(children); !reflect.DeepEqual(got, []string{"task_e1", "task_e2"}) {
		t.Errorf("children of task_e = %v", got)
	}
	open, err := s.List(ctx, store.Filter{Status: "open"})
	if err != nil {
		t.Fatal(err)
	}
	if got := keys(open); !reflect.DeepEqual(got, []string{"task_e", "task_e1", "task_x"}) {
		t.Errorf("open tasks = %v", got)
	}
	both, err := s.List(ctx, store.Filter{ParentKey: "task_e", Status: "open"})
	if err != nil {
		t.Fatal(err)
	}
	if got := keys(both); !reflect.DeepEqual(got, []string{"task_e1"}) {
		t.Errorf("open children of task_e = %v", got)
	}
	// A status change moves a document between lists.
	d := mustGet(t, s, "task_e1")
	if _, err := s.Update(ctx, "task_e1", rev(d), map[string]any{"status": "in_progress"}); err != nil {
		t.Fatal(err)
	}
	// An error here would also give an empty list: check it.
	both, err = s.List(ctx, store.Filter{ParentKey: "task_e", Status: "open"})
	if err != nil {
		t.Fatal(err)
	}
	if len(both) != 0 {
		t.Errorf("after a status change, open children = %v", keys(both))
	}
}

func testEdges(t *testing.T, newStore NewFunc) {
	ctx := context.Background()
	s, _ := newStore(t)
	if err := s.Create(ctx, Doc("task_ed")); err != nil {
		t.Fatal(err)
	}
	deps, err := s.BlockedBy(ctx, "task_ed")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(deps, []string{"task_dep_a", "task_dep_b"}) {
		t.Errorf("blocked_by edges = %v, want [task_dep_a task_dep_b]", deps)
	}
	none, err := s.BlockedBy(ctx, "task_dep_a")
	if err != nil || len(none) != 0 {
		t.Errorf("a task with no edges: %v, %v", none, err)
	}
}

// testDependencyUpdateMovesEdges is wo split's rerun: a task's blockers
// change through Update, and BlockedBy, which decides whether the task may
// run, must follow; a stale blocker left behind would block it forever.
func testDependencyUpdateMovesEdges(t *testing.T, newStore NewFunc) {
	ctx := context.Background()
	s, _ := newStore(t)
	const a, b, c = "task_dep_a", "task_dep_b", "task_dep_c"
	task := func(key string, blockedBy ...any) map[string]any {
		return map[string]any{"_key": key, "status": "open", "work_order": map[string]any{
			"dependencies": map[string]any{"blocked_by": blockedBy, "blocks": []any{}}}}
	}
	if err := s.Create(ctx, task(a), task(b), task(c, a, b)); err != nil {
		t.Fatal(err)
	}
	// check compares both places a blocker lives: the edges and the array.
	check := func(step string, wantEdges []string, wantArray any) {
		t.Helper()
		got, err := s.BlockedBy(ctx, c)
		if err != nil {
			t.Fatalf("%s: BlockedBy: %v", step, err)
		}
		if len(got) != 0 || len(wantEdges) != 0 {
			if !reflect.DeepEqual(got, wantEdges) {
				t.Errorf("%s: BlockedBy(%s) = %v, want %v", step, c, got, wantEdges)
			}
		}
		doc := mustGet(t, s, c)
		deps := doc["work_order"].(map[string]any)["dependencies"].(map[string]any)
		if !sameJSON(t, wantArray, deps["blocked_by"]) {
			t.Errorf("%s: the document's blocked_by is wrong (above)", step)
		}
	}
	update := func(step string, patch map[string]any) {
		t.Helper()
		if _, err := s.Update(ctx, c, rev(mustGet(t, s, c)), patch); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
	}
	setBlockedBy := func(v any) map[string]any { return store.Nest("work_order.dependencies.blocked_by", v) }

	check("after create", []string{a, b}, []any{a, b})
	update("drop B", setBlockedBy([]any{a}))
	check("after dropping B", []string{a}, []any{a})
	update("drop all", setBlockedBy([]any{}))
	check("after dropping all", nil, []any{})
	update("add both back", setBlockedBy([]any{b, a}))
	check("after adding both back", []string{a, b}, []any{b, a})

	// Patches that do not decide blocked_by leave the edges as they are,
	// including a dependencies object without blocked_by (objects merge).
	update("status only", map[string]any{"status": "in_progress"})
	check("after a status update", []string{a, b}, []any{b, a})
	update("blocks only", store.Nest("work_order.dependencies", map[string]any{"blocks": []any{"task_later"}}))
	check("after a dependencies patch without blocked_by", []string{a, b}, []any{b, a})

	update("null", setBlockedBy(nil))
	check("after blocked_by set to null", nil, nil)
	update("both again", setBlockedBy([]any{a, b}))
	check("after setting both again", []string{a, b}, []any{a, b})

	// A writer holding a stale revision must not drop a blocker.
	stale := rev(mustGet(t, s, c))
	update("someone else's write", map[string]any{"status": "open"})
	_, err := s.Update(ctx, c, stale, setBlockedBy([]any{a}))
	if !store.IsConflict(err) {
		t.Fatalf("dropping B with a stale revision: want a conflict, got %v", err)
	}
	check("after a conflicting update", []string{a, b}, []any{a, b})
}

func testLogs(t *testing.T, newStore NewFunc) {
	ctx := context.Background()
	s, _ := newStore(t)
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for i, action := range []string{"create", "step", "step"} {
		err := s.AppendLog(ctx, store.LogEntry{Action: action, TaskKey: "task_l", SessionKey: "runner@host:1",
			Details: map[string]any{"step": i}, CreatedAt: base.Add(time.Duration(i) * time.Second)})
		if err != nil {
			t.Fatal(err)
		}
	}
	// Another task's entry, which Logs(task_l) must leave out.
	if err := s.AppendLog(ctx, store.LogEntry{Action: "other", TaskKey: "task_other", CreatedAt: base}); err != nil {
		t.Fatal(err)
	}
	logs, err := s.Logs(ctx, "task_l")
	if err != nil {
		t.Fatal(err)
	}
	if len(logs) != 3 {
		t.Fatalf("%d entries, want 3", len(logs))
	}
	for i, e := range logs {
		if n, _ := workorder.AsInt(e.Details["step"]); int(n) != i || e.SessionKey != "runner@host:1" || !e.CreatedAt.Equal(base.Add(time.Duration(i)*time.Second)) {
			t.Errorf("entry %d = %+v", i, e)
		}
	}
	steps, err := s.LogsByAction(ctx, "step", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 2 || steps[0].Action != "step" || !steps[0].CreatedAt.After(steps[1].CreatedAt) {
		t.Errorf("LogsByAction(step): %+v, want the 2 step entries, newest first", steps)
	}
	if one, _ := s.LogsByAction(ctx, "step", 1); len(one) != 1 || !one[0].CreatedAt.Equal(base.Add(2*time.Second)) {
		t.Errorf("LogsByAction limit 1: %+v", one)
	}
}

// testLogDetails: the chosen details of one action's entries, newest
// first, as LogsByAction has them; a store without DetailLister gives
// whole entries, which hold the same.
func testLogDetails(t *testing.T, newStore NewFunc) {
	ctx := context.Background()
	s, _ := newStore(t)
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for i := range 3 {
		details := map[string]any{"action": "commit", "duration_ms": 40 + i, "nested": map[string]any{"x": 1}}
		if i > 0 {
			details["repo"] = "/src/hermes"
		}
		err := s.AppendLog(ctx, store.LogEntry{Action: "step_completed", TaskKey: fmt.Sprintf("task_d%d", i),
			Details: details, CreatedAt: base.Add(time.Duration(i) * time.Second)})
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := s.AppendLog(ctx, store.LogEntry{Action: "run_started", TaskKey: "task_other", CreatedAt: base}); err != nil {
		t.Fatal(err)
	}
	got, err := store.LogDetails(ctx, s, "step_completed", 2, "action", "duration_ms", "repo")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("%d entries, want the newest 2", len(got))
	}
	for i, e := range got {
		n, _ := workorder.AsInt(e.Details["duration_ms"])
		if e.TaskKey != fmt.Sprintf("task_d%d", 2-i) || e.Action != "step_completed" || e.Details["action"] != "commit" ||
			n != int64(42-i) || e.Details["repo"] != "/src/hermes" {
			t.Errorf("entry %d: %+v", i, e)
		}
	}
	if _, cut := s.(store.DetailLister); cut {
		if _, extra := got[0].Details["nested"]; extra {
			t.Errorf("a detail not asked for: %+v", got[0].Details)
		}
	}
	oldest, err := store.LogDetails(ctx, s, "step_completed", 3, "repo")
	if err != nil || len(oldest) != 3 {
		t.Fatalf("%d entries, %v", len(oldest), err)
	}
	if _, ok := oldest[2].Details["repo"]; ok {
		t.Errorf("an entry without the detail has it: %+v", oldest[2].Details)
	}
	if _, err := store.LogDetails(ctx, s, "step_completed", 1, "repo') OR 1=1 --"); err == nil {
		t.Error("a detail that is not a plain name is read")
	}
}

// testUpdateLogged: a store that offers UpdateLogged writes the update and
// its log entries together, with the edges as Update keeps them; on a
// stale revision it writes neither the document nor an entry.
func testUpdateLogged(t *testing.T, newStore NewFunc) {
	ctx := context.Background()
	s, _ := newStore(t)
	lu, ok := s.(store.LoggedUpdater)
	if !ok {
		t.Skipf("%s writes an update and log entries in separate requests (no store.LoggedUpdater)", s.Describe())
	}
	if err := s.Create(ctx, Doc("task_ul"), Doc("task_ul_dep")); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	entries := []store.LogEntry{
		{Action: "step_completed", TaskKey: "task_ul", SessionKey: "runner@host:1", Details: map[string]any{"step": 1}, CreatedAt: at},
		{Action: "run_finished", TaskKey: "task_ul", SessionKey: "runner@host:1", Details: map[string]any{"step": 2}, CreatedAt: at.Add(time.Second)},
	}
	old := rev(mustGet(t, s, "task_ul"))
	patch := map[string]any{"status": "in_progress", "work_order": map[string]any{
		"state":        map[string]any{"current_step": 1},
		"dependencies": map[string]any{"blocked_by": []any{"task_ul_dep"}},
	}}
	newRev, err := lu.UpdateLogged(ctx, "task_ul", old, patch, entries)
	if err != nil {
		t.Fatal(err)
	}
	doc := mustGet(t, s, "task_ul")
	if rev(doc) != newRev || doc["status"] != "in_progress" {
		t.Errorf("after UpdateLogged: rev %s (returned %s), status %v", rev(doc), newRev, doc["status"])
	}
	if v, _ := lookup(doc, "work_order.state.current_step"); fmt.Sprint(v) != "1" {
		t.Errorf("current_step %v, want 1", v)
	}
	if blockers, err := s.BlockedBy(ctx, "task_ul"); err != nil || len(blockers) != 1 || blockers[0] != "task_ul_dep" {
		t.Errorf("edges after UpdateLogged: %v %v, want [task_ul_dep]", blockers, err)
	}
	logs, err := s.Logs(ctx, "task_ul")
	if err != nil {
		t.Fatal(err)
	}
	if len(logs) != 2 || logs[0].Action != "step_completed" || logs[1].Action != "run_finished" || !logs[0].CreatedAt.Equal(at) {
		t.Fatalf("log after UpdateLogged: %+v", logs)
	}
	// A stale revision: a conflict, and nothing of it is written.
	_, err = lu.UpdateLogged(ctx, "task_ul", old, map[string]any{"status": "blocked"},
		[]store.LogEntry{{Action: "stale_write", TaskKey: "task_ul", CreatedAt: at.Add(2 * time.Second)}})
	if !store.IsConflict(err) {
		t.Fatalf("stale revision: got %v, want a conflict", err)
	}
	if doc := mustGet(t, s, "task_ul"); doc["status"] != "in_progress" || rev(doc) != newRev {
		t.Errorf("a conflicting UpdateLogged changed the task: status %v rev %s", doc["status"], rev(doc))
	}
	if logs, _ := s.Logs(ctx, "task_ul"); len(logs) != 2 {
		t.Errorf("a conflicting UpdateLogged wrote log entries: %+v", logs)
	}
	// A log entry that cannot be written fails the update too: the task
	// keeps its state and revision, and no entry is written.
	_, err = lu.UpdateLogged(ctx, "task_ul", newRev, map[string]any{"status": "blocked"},
		[]store.LogEntry{{Action: "bad_entry", TaskKey: "task_ul", Details: map[string]any{"x": math.Inf(1)}, CreatedAt: at.Add(3 * time.Second)}})
	if err == nil {
		t.Fatal("UpdateLogged with an entry that cannot be encoded succeeded")
	}
	if doc := mustGet(t, s, "task_ul"); doc["status"] != "in_progress" || rev(doc) != newRev {
		t.Errorf("an UpdateLogged whose log write failed changed the task: status %v rev %s", doc["status"], rev(doc))
	}
	if logs, _ := s.Logs(ctx, "task_ul"); len(logs) != 2 {
		t.Errorf("an UpdateLogged whose log write failed wrote entries: %+v", logs)
	}
	// No entries is Update.
	if _, err := lu.UpdateLogged(ctx, "task_ul", newRev, map[string]any{"status": "open"}, nil); err != nil {
		t.Fatal(err)
	}
	if doc := mustGet(t, s, "task_ul"); doc["status"] != "open" {
		t.Errorf("UpdateLogged without entries: status %v", doc["status"])
	}
}

// testListSummaries: a store that lists summaries gives, for the same
// filter, the same tasks in the same order as List, each what
// store.Summary makes of the whole document, also after an update.
func testListSummaries(t *testing.T, newStore NewFunc) {
	ctx := context.Background()
	s, _ := newStore(t)
	sl, ok := s.(store.SummaryLister)
	if !ok {
		t.Skipf("%s lists whole documents only (no store.SummaryLister)", s.Describe())
	}
	parent := Doc("task_sum_epic")
	a, b := Doc("task_sum_a"), Doc("task_sum_b")
	a["parent_key"] = "task_sum_epic"
	b["parent_key"] = "task_sum_epic"
	b["work_order"].(map[string]any)["procedure"] = []any{map[string]any{"step": 1, "action": "commit", "command": "git commit", "x_extra": true}, "not a step"}
	if err := s.Create(ctx, parent, a, b); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Update(ctx, "task_sum_a", rev(mustGet(t, s, "task_sum_a")), map[string]any{
		"status": "in_progress", "work_order": map[string]any{"state": map[string]any{"current_step": 2, "pr_url": nil}}}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []store.Filter{{ParentKey: "task_sum_epic"}, {Status: "in_progress"}, {}} {
		whole, err := s.List(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		got, err := sl.ListSummaries(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(whole) {
			t.Fatalf("filter %+v: %d summaries, %d documents", f, len(got), len(whole))
		}
		for i := range whole {
			if !sameJSON(t, store.Summary(whole[i]), got[i]) {
				t.Errorf("filter %+v: summary %d differs from the document cut by store.Summary", f, i)
			}
		}
	}
	got, _ := sl.ListSummaries(ctx, store.Filter{ParentKey: "task_sum_epic"})
	if len(got) != 2 {
		t.Fatalf("%d children", len(got))
	}
	if _, has := lookup(got[1], "work_order.inputs"); has {
		t.Errorf("a summary kept work_order.inputs")
	}
	if steps, _ := lookup(got[1], "work_order.procedure"); !sameJSON(t, []any{map[string]any{"step": 1, "action": "commit"}, "not a step"}, steps) {
		t.Errorf("procedure of the summary: %v", steps)
	}
}

// testLogsMixedPrecision appends entries whose times have fractions of
// different lengths (as Persephone writes them: 05.5, 05, 05.12, 05.1),
// out of time order, and two entries of the same time: Logs gives time
// order, and same-time entries in the order they were written.
func testLogsMixedPrecision(t *testing.T, newStore NewFunc) {
	ctx := context.Background()
	s, _ := newStore(t)
	sec := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	at := func(ms int) time.Time { return sec.Add(time.Duration(ms) * time.Millisecond) }
	written := []struct {
		name string
		when time.Time
	}{
		{"half", at(500)}, {"whole", at(0)}, {"twelve", at(120)}, {"tenth", at(100)},
		{"same-1", at(120)}, {"same-2", at(120)}, {"next", sec.Add(time.Second)},
	}
	for _, w := range written {
		if err := s.AppendLog(ctx, store.LogEntry{Action: "tick", TaskKey: "task_mp", Details: map[string]any{"name": w.name}, CreatedAt: w.when}); err != nil {
			t.Fatal(err)
		}
	}
	names := func(logs []store.LogEntry) []string {
		var out []string
		for _, e := range logs {
			n, _ := e.Details["name"].(string)
			out = append(out, n)
		}
		return out
	}
	logs, err := s.Logs(ctx, "task_mp")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"whole", "tenth", "twelve", "same-1", "same-2", "half", "next"}
	if got := names(logs); !slices.Equal(got, want) {
		t.Errorf("Logs order %v, want time order %v", got, want)
	}
	newest, err := s.LogsByAction(ctx, "tick", 3)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := names(newest), []string{"next", "half", "same-2"}; !slices.Equal(got, want) {
		t.Errorf("LogsByAction(tick, 3) = %v, want newest first %v", got, want)
	}
}

// testUpdateEmptyRevision: an Update without a revision must not overwrite
// the document unconditionally.
func testUpdateEmptyRevision(t *testing.T, newStore NewFunc) {
	ctx := context.Background()
	s, _ := newStore(t)
	if err := s.Create(ctx, Doc("task_er")); err != nil {
		t.Fatal(err)
	}
	_, err := s.Update(ctx, "task_er", "", map[string]any{"status": "closed"})
	if !store.IsConflict(err) {
		t.Fatalf("Update with an empty revision: want a conflict, got %v", err)
	}
	if got := mustGet(t, s, "task_er")["status"]; got != "open" {
		t.Errorf("an Update with an empty revision changed the document: status %v", got)
	}
}

func testLease(t *testing.T, newStore NewFunc) {
	ctx := context.Background()
	s, _ := newStore(t)
	if err := s.Create(ctx, Doc("task_ls")); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	leases := store.NewLeases(s)
	leases.Now = func() time.Time { return now }

	a, err := leases.Acquire(ctx, "task_ls", "runner-a", time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	if a.Holder != "runner-a" || !a.ExpiresAt.Equal(now.Add(time.Minute)) {
		t.Errorf("lease = %+v", a)
	}
	_, err = leases.Acquire(ctx, "task_ls", "runner-b", time.Minute, nil)
	var held *store.LeaseHeldError
	if !errors.As(err, &held) || held.Holder != "runner-a" {
		t.Fatalf("second runner: want LeaseHeldError naming runner-a, got %v", err)
	}
	// takeOver lets a runner claim a lease whose holder is known to be gone.
	if _, err := leases.Acquire(ctx, "task_ls", "runner-b", time.Minute, func(h string) bool { return h == "nobody" }); !errors.As(err, &held) {
		t.Fatalf("takeOver that declines: want LeaseHeldError, got %v", err)
	}
	now = now.Add(30 * time.Second)
	if r, err := leases.Renew(ctx, "task_ls", "runner-a", time.Minute); err != nil || !r.ExpiresAt.Equal(now.Add(time.Minute)) {
		t.Fatalf("renew: %+v, %v", r, err)
	}
	// Unknown fields survive lease writes.
	sameJSON(t, Doc("task_ls")["x_team_field"], mustGet(t, s, "task_ls")["x_team_field"])

	now = now.Add(61 * time.Second) // runner-a's lease has expired
	if b, err := leases.Acquire(ctx, "task_ls", "runner-b", time.Minute, nil); err != nil || b.Holder != "runner-b" {
		t.Fatalf("acquire after expiry: %+v, %v", b, err)
	}
	var lost *store.LeaseLostError
	if _, err := leases.Renew(ctx, "task_ls", "runner-a", time.Minute); !errors.As(err, &lost) || lost.Holder != "runner-b" {
		t.Fatalf("renew by the old holder: want LeaseLostError naming runner-b, got %v", err)
	}
	if err := leases.Release(ctx, "task_ls", "runner-a"); err != nil {
		t.Fatal(err)
	}
	if cur := store.Current(mustGet(t, s, "task_ls")); cur == nil || cur.Holder != "runner-b" {
		t.Fatalf("a release by a non-holder changed the lease: %+v", cur)
	}
	if err := leases.Release(ctx, "task_ls", "runner-b"); err != nil {
		t.Fatal(err)
	}
	if cur := store.Current(mustGet(t, s, "task_ls")); cur != nil {
		t.Fatalf("lease still present after release: %+v", cur)
	}
	if _, err := leases.Acquire(ctx, "task_ls", "runner-c", time.Minute, func(string) bool { return true }); err != nil {
		t.Fatal(err)
	}
	if _, err := leases.Acquire(ctx, "task_ls", "runner-d", time.Minute, func(h string) bool { return h == "runner-c" }); err != nil {
		t.Fatalf("takeOver of a gone holder: %v", err)
	}
	// A lease no runner would write (a document saying "until 2999") does
	// not lock the task for good; one just within a runner's reach does.
	for _, c := range []struct {
		until time.Duration
		taken bool
	}{{time.Minute + store.MaxLeaseSlack - time.Second, false}, {time.Minute + store.MaxLeaseSlack + time.Second, true}, {100 * 365 * 24 * time.Hour, true}} {
		d := mustGet(t, s, "task_ls")
		if _, err := s.Update(ctx, "task_ls", rev(d), store.Nest("work_order.state.lease",
			map[string]any{"holder": "someone", "expires_at": now.Add(c.until).Format(time.RFC3339Nano)})); err != nil {
			t.Fatal(err)
		}
		_, err := leases.Acquire(ctx, "task_ls", "runner-e", time.Minute, nil)
		if c.taken != (err == nil) {
			t.Errorf("a lease until now+%s: acquire gave %v, want taken=%v", c.until, err, c.taken)
		}
	}
}

func testLeaseRace(t *testing.T, newStore NewFunc) {
	ctx := context.Background()
	s, _ := newStore(t)
	if err := s.Create(ctx, Doc("task_race")); err != nil {
		t.Fatal(err)
	}
	const runners = 8
	var wg sync.WaitGroup
	results := make([]error, runners)
	for i := 0; i < runners; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			_, results[i] = store.NewLeases(s).Acquire(ctx, "task_race", fmt.Sprintf("runner-%d", i), time.Minute, nil)
		}(i)
	}
	wg.Wait()
	winners := 0
	for i, err := range results {
		var held *store.LeaseHeldError
		switch {
		case err == nil:
			winners++
		case errors.As(err, &held):
		default:
			t.Errorf("runner-%d: unexpected error %v", i, err)
		}
	}
	if winners != 1 {
		t.Fatalf("%d runners hold the lease at once, want exactly 1", winners)
	}
}

// testLeaseDoc races a stale reader against a runner that finishes the
// task: the reader read the task, the runner then took the lease, wrote its
// progress and let go; the reader's lease must come with the document as
// it stands at the lease's own revision, so that it resumes from there and
// never repeats the runner's work.
func testLeaseDoc(t *testing.T, newStore NewFunc) {
	ctx := context.Background()
	s, _ := newStore(t)
	if err := s.Create(ctx, Doc("task_ld")); err != nil {
		t.Fatal(err)
	}
	leases := store.NewLeases(s)
	stale := mustGet(t, s, "task_ld") // the slow runner's first read
	a, err := leases.Acquire(ctx, "task_ld", "runner-a", time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Update(ctx, "task_ld", a.Rev, store.Nest("work_order.state", map[string]any{"current_step": 3, "x_done_by": "runner-a"})); err != nil {
		t.Fatal(err)
	}
	if err := leases.Release(ctx, "task_ld", "runner-a"); err != nil {
		t.Fatal(err)
	}
	b, err := leases.Acquire(ctx, "task_ld", "runner-b", time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	if b.Doc == nil || rev(b.Doc) != b.Rev || rev(b.Doc) == rev(stale) {
		t.Fatalf("the lease's document is at %q, want its own revision %q (the stale read was %q)", rev(b.Doc), b.Rev, rev(stale))
	}
	stored := mustGet(t, s, "task_ld")
	for _, path := range []string{"work_order.state.current_step", "work_order.state.x_done_by", "work_order.state.lease.holder"} {
		got, _ := lookup(b.Doc, path)
		want, _ := lookup(stored, path)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: the lease's document says %v, the store %v", path, got, want)
		}
	}
}

func lookup(doc map[string]any, path string) (any, bool) {
	var cur any = doc
	for _, part := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[part]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// testReplace is wo delete and wo import --replace: tasks go at their
// revision with their edges, new ones come, all or none, and the log of
// a task that went stays.
func testReplace(t *testing.T, newStore NewFunc) {
	ctx := context.Background()
	s, _ := newStore(t)
	r, ok := s.(store.Replacer)
	if !ok {
		t.Skip("this store cannot remove tasks (it is not a store.Replacer)")
	}
	if err := s.Create(ctx, Doc("task_old"), Doc("task_keep")); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendLog(ctx, store.LogEntry{Action: "task_created", TaskKey: "task_old"}); err != nil {
		t.Fatal(err)
	}
	old := mustGet(t, s, "task_old")
	fresh := Doc("task_old")
	fresh["title"] = "Replaced"
	store.Merge(fresh, map[string]any{"work_order": map[string]any{"dependencies": map[string]any{"blocked_by": []any{"task_dep_c"}}}})
	// A stale revision changes nothing.
	if err := r.Replace(ctx, map[string]string{"task_old": rev(old) + "0"}, []map[string]any{fresh}); !store.IsConflict(err) {
		t.Fatalf("a stale revision: %v, want a conflict", err)
	}
	// A key taken by another task undoes the removal too.
	if err := r.Replace(ctx, map[string]string{"task_old": rev(old)}, []map[string]any{fresh, Doc("task_keep")}); err == nil {
		t.Fatal("a replace that creates a key already taken succeeded")
	}
	if got := mustGet(t, s, "task_old"); got["title"] != "PR #1: Foundation" {
		t.Fatalf("a failed replace changed the task: %v", got["title"])
	}
	if err := r.Replace(ctx, map[string]string{"task_old": rev(old)}, []map[string]any{fresh}); err != nil {
		t.Fatal(err)
	}
	if got := mustGet(t, s, "task_old"); got["title"] != "Replaced" {
		t.Errorf("after the replace: %v", got["title"])
	}
	if deps, err := s.BlockedBy(ctx, "task_old"); err != nil || !reflect.DeepEqual(deps, []string{"task_dep_c"}) {
		t.Errorf("the replaced task's edges: %v, %v; want only the new one", deps, err)
	}
	// Removing alone: the task and its edges go, its log stays.
	cur := mustGet(t, s, "task_old")
	if err := r.Replace(ctx, map[string]string{"task_old": rev(cur)}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, "task_old"); !store.IsNotFound(err) {
		t.Errorf("the removed task: %v", err)
	}
	if deps, _ := s.BlockedBy(ctx, "task_old"); len(deps) != 0 {
		t.Errorf("the removed task's edges stayed: %v", deps)
	}
	if logs, err := s.Logs(ctx, "task_old"); err != nil || len(logs) != 1 {
		t.Errorf("the removed task's log: %d entries, %v; want the one it had", len(logs), err)
	}
	if err := r.Replace(ctx, map[string]string{"task_old": rev(cur)}, nil); !store.IsNotFound(err) {
		t.Errorf("removing a task that is gone: %v, want not found", err)
	}
	mustGet(t, s, "task_keep")
}
