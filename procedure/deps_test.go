package procedure

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wo-runner/wo/store"
	"github.com/wo-runner/wo/workorder"
)

// noteTask is an agent-only work order that delivers pre-composed notes:
// no git, no GitHub, nothing to merge.
func noteTask(key, parent string, deps map[string]any) map[string]any {
	doc := map[string]any{"_key": key, "title": "Note " + key, "status": "open", "parent_key": parent,
		"work_order": map[string]any{"version": "1.0", "objective": "Deliver a note for " + key,
			"procedure": []any{map[string]any{"step": 1, "action": "agent", "description": "Write the note",
				"delivery": []any{map[string]any{"target": "task_note", "content": "note of " + key}}}}}}
	if deps != nil {
		doc["work_order"].(map[string]any)["dependencies"] = deps
	}
	workorder.ApplyDefaults(doc)
	return doc
}

func epicStore(t *testing.T, docs ...map[string]any) (*Engine, store.Store) {
	t.Helper()
	s, err := store.OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "wo.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	epic := map[string]any{"_key": "task_epic", "title": "The epic", "status": "open", "type": "epic"}
	workorder.ApplyDefaults(epic)
	if err := s.Create(context.Background(), append([]map[string]any{epic}, docs...)...); err != nil {
		t.Fatal(err)
	}
	return &Engine{Store: s, Runner: "tester@host:1", Attempts: 1, Backoff: time.Millisecond}, s
}

func statusOf(t *testing.T, s store.Store, key string) workorder.Status {
	t.Helper()
	d, err := s.Get(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	return workorder.StatusOf(d)
}

func TestEpicRerunGoesOnAfterAClosedChild(t *testing.T) {
	a := noteTask("task_a", "task_epic", nil)
	a["status"] = "closed" // merged, and closed by wo sync or a person
	b := noteTask("task_b", "task_epic", map[string]any{"blocked_by": []any{"task_a"}})
	e, s := epicStore(t, a, b)
	res, err := e.RunEpic(context.Background(), "task_epic", 2, RunOptions{})
	if err != nil {
		t.Fatalf("epic rerun with a closed child: %v\n%+v", err, res)
	}
	if res.Tasks[0].Key != "task_a" || res.Tasks[0].Outcome != OutcomeDone || res.Tasks[1].Outcome != OutcomeDone {
		t.Errorf("outcomes %+v, want both done", res.Tasks)
	}
	if got := statusOf(t, s, "task_b"); got != workorder.StatusClosed {
		t.Errorf("the dependent is %s, want closed: it ran and had nothing to merge", got)
	}
	logs, _ := s.Logs(context.Background(), "task_a")
	for _, l := range logs {
		if l.Action == "run_started" {
			t.Error("the closed child was run again")
		}
	}
}

func TestBlocksAloneMakeADependency(t *testing.T) {
	a := noteTask("task_a", "task_epic", map[string]any{"blocks": []any{"task_b"}})
	b := noteTask("task_b", "task_epic", nil)
	e, s := epicStore(t, a, b)

	_, err := e.Run(context.Background(), RunOptions{Key: "task_b"})
	var open *BlockersOpenError
	if !errors.As(err, &open) || !strings.Contains(err.Error(), "task_a (open)") {
		t.Fatalf("task_b run alone while task_a, which blocks it, is open: %v", err)
	}
	if got := statusOf(t, s, "task_b"); got != workorder.StatusOpen {
		t.Errorf("task_b is %s after a refused run", got)
	}

	children, _ := s.List(context.Background(), store.Filter{ParentKey: "task_epic"})
	waves, _, err := Waves(children)
	if err != nil || len(waves) != 2 || waves[0][0] != "task_a" || waves[1][0] != "task_b" {
		t.Fatalf("waves %v (%v), want task_a then task_b", waves, err)
	}
	// One epic run finishes both: task_a closes when done, which lets
	// task_b run in the same run.
	res, err := e.RunEpic(context.Background(), "task_epic", 1, RunOptions{})
	if err != nil {
		t.Fatalf("epic: %v %+v", err, res)
	}
	for _, k := range []string{"task_a", "task_b"} {
		if got := statusOf(t, s, k); got != workorder.StatusClosed {
			t.Errorf("%s is %s, want closed", k, got)
		}
	}
}

func TestGraphReadsBothSidesAndEdges(t *testing.T) {
	docs := []workorder.Document{
		noteTask("task_a", "", map[string]any{"blocks": []any{"task_c"}}),
		noteTask("task_b", "", nil),
		noteTask("task_c", "", map[string]any{"blocked_by": []any{"task_b", "task_a"}}),
	}
	g := workorder.NewGraph(docs, map[string][]string{"task_b": {"task_z"}})
	if got := strings.Join(g.BlockersOf("task_c"), ","); got != "task_a,task_b" {
		t.Errorf("task_c waits for %s, want task_a,task_b each once", got)
	}
	if got := strings.Join(g.BlockersOf("task_b"), ","); got != "task_z" {
		t.Errorf("task_b waits for %s, want the edge's task_z", got)
	}
	within := g.Within(map[string]bool{"task_b": true, "task_c": true})
	if strings.Join(within["task_c"], ",") != "task_b" || len(within["task_b"]) != 0 {
		t.Errorf("within {b, c}: %v", within)
	}
}

func TestASkipIsRecordedWhereOthersCanSeeIt(t *testing.T) {
	a := noteTask("task_a", "task_epic", nil)
	// An agent step with nothing pre-composed and no agent configured waits.
	a["work_order"].(map[string]any)["procedure"] = []any{map[string]any{"step": 1, "action": "agent",
		"description": "Write the note", "delivery": []any{map[string]any{"target": "task_note"}}}}
	b := noteTask("task_b", "task_epic", map[string]any{"blocked_by": []any{"task_a"}})
	e, s := epicStore(t, a, b)
	res, err := e.RunEpic(context.Background(), "task_epic", 1, RunOptions{})
	if err == nil || res.Tasks[1].Outcome != OutcomeSkipped {
		t.Fatalf("epic: %v %+v, want task_b skipped", err, res)
	}
	if res.Tasks[0].Wave != 1 || res.Tasks[1].Wave != 2 {
		t.Errorf("waves %d and %d, want 1 and 2", res.Tasks[0].Wave, res.Tasks[1].Wave)
	}
	if len(res.Warnings) != 0 {
		t.Errorf("the skip was recorded, yet the run warns: %q", res.Warnings)
	}
	doc, _ := s.Get(context.Background(), "task_b")
	st, _ := workorder.StateOf(doc)
	if st.Skipped == nil || st.Skipped.Reason != "blocker task_a is waiting" || st.Skipped.By != "tester@host:1" {
		t.Fatalf("task_b's state says %+v, want the skip and its reason", st.Skipped)
	}
	logs, _ := s.Logs(context.Background(), "task_b")
	if len(logs) == 0 || logs[len(logs)-1].Action != "skipped" {
		t.Errorf("task_b's timeline has no skip: %+v", logs)
	}
	epic, _ := s.Get(context.Background(), "task_epic")
	children, _ := s.List(context.Background(), store.Filter{ParentKey: "task_epic"})
	f, err := workorder.ToTasksFile(epic, children)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.Tasks["task_b"]; got.Status != "skipped" || got.Error == nil || *got.Error != "blocker task_a is waiting" {
		t.Errorf("tasks.json shows task_b as %q (%v), want skipped with the reason", got.Status, got.Error)
	}
	// Once its blocker is done, the task runs and the skip is gone.
	d, _ := s.Get(context.Background(), "task_a")
	if _, err := s.Update(context.Background(), "task_a", d["_rev"].(string), map[string]any{"status": "closed"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Run(context.Background(), RunOptions{Key: "task_b"}); err != nil {
		t.Fatal(err)
	}
	doc, _ = s.Get(context.Background(), "task_b")
	if st, _ := workorder.StateOf(doc); st.Skipped != nil {
		t.Errorf("the skip survived the task's own run: %+v", st.Skipped)
	}
}

func TestRunnersOnOneEpicDoEveryStepOnceAndFinishIt(t *testing.T) {
	var docs []map[string]any
	for chain := 0; chain < 3; chain++ {
		for depth := 0; depth < 3; depth++ {
			key := fmt.Sprintf("task_c%d_%d", chain, depth)
			var deps map[string]any
			if depth > 0 {
				deps = map[string]any{"blocked_by": []any{fmt.Sprintf("task_c%d_%d", chain, depth-1)}}
			}
			docs = append(docs, noteTask(key, "task_epic", deps))
		}
	}
	_, s := epicStore(t, docs...)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			e := &Engine{Store: s, Runner: fmt.Sprintf("runner%d@host:%d", i, i+1), Attempts: 3, Backoff: time.Millisecond,
				EpicWait: 30 * time.Second, EpicPoll: 5 * time.Millisecond}
			_, errs[i] = e.RunEpic(context.Background(), "task_epic", 2, RunOptions{})
		}(i)
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("runner %d: %v", i, err)
		}
	}
	for _, d := range docs {
		k := workorder.Key(d)
		if got := statusOf(t, s, k); got != workorder.StatusClosed {
			t.Errorf("%s is %s after one round of runners, want closed", k, got)
		}
		logs, _ := s.Logs(context.Background(), k)
		n := 0
		for _, l := range logs {
			if l.Action == "step_completed" {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%s: its one step completed %d times", k, n)
		}
	}
}

func TestEpicWavesHonourStoreEdgesAndRefuseCycles(t *testing.T) {
	docs := []map[string]any{noteTask("task_a", "task_epic", nil), noteTask("task_b", "task_epic", nil)}
	waves, _, err := wavesOf(docs, map[string][]string{"task_a": {"task_b"}})
	if err != nil || len(waves) != 2 || waves[0][0] != "task_b" {
		t.Errorf("an edge task_a → task_b: waves %v (%v), want task_b first", waves, err)
	}
	a := noteTask("task_a", "task_epic", map[string]any{"blocks": []any{"task_b"}})
	b := noteTask("task_b", "task_epic", map[string]any{"blocks": []any{"task_a"}})
	e, _ := epicStore(t, a, b)
	_, err = e.RunEpic(context.Background(), "task_epic", 1, RunOptions{})
	var cycle *DependencyCycleError
	if !errors.As(err, &cycle) || Classify(err).Outcome != OutcomeInvalid {
		t.Errorf("an epic whose tasks block each other: %v, want a cycle error (exit 2)", err)
	}
}

func TestARunStoppedWhileClosingIsFinishedByTheNext(t *testing.T) {
	a := noteTask("task_a", "task_epic", nil)
	a["status"] = "in_review" // killed between in_review and closed
	st := a["work_order"].(map[string]any)["state"].(map[string]any)
	st["current_step"], st["completed_steps"], st["phase"] = 1, []any{1}, "done"
	b := noteTask("task_b", "task_epic", map[string]any{"blocked_by": []any{"task_a"}})
	e, s := epicStore(t, a, b)
	if _, err := e.Run(context.Background(), RunOptions{Key: "task_a"}); err != nil {
		t.Fatal(err)
	}
	if got := statusOf(t, s, "task_a"); got != workorder.StatusClosed {
		t.Fatalf("a complete task with nothing to merge is %s after a rerun, want closed", got)
	}
	if _, err := e.RunEpic(context.Background(), "task_epic", 1, RunOptions{}); err != nil {
		t.Fatalf("the epic after the rerun: %v", err)
	}
	if got := statusOf(t, s, "task_b"); got != workorder.StatusClosed {
		t.Errorf("the dependent is %s, want closed", got)
	}
}
