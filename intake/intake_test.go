package intake

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wo-runner/wo/store"
	"github.com/wo-runner/wo/workorder"
)

var vocabulary = Vocabulary{
	Actions:    []string{"create_worktree", "create_branch", "checkout_files", "commit", "push", "create_pr", "wait_for_review", "check_review", "conditional_loop", "cleanup_worktree", "update_task"},
	Conditions: []string{"review_comments_exist"},
	LaterNames: []string{"pr_number", "pr_url", "body", "commit_sha"},
}

func newIntake(t *testing.T) *Intake {
	t.Helper()
	s, err := store.OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "wo.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return &Intake{Store: s, Vocabulary: vocabulary, Session: "tester@host:1"}
}

// task is a plain task document with a valid description.
func task(key, desc string) workorder.Document {
	return workorder.Document{"_key": key, "title": "A task", "description": desc}
}

// failingLog is a store whose activity log cannot be written.
type failingLog struct{ store.Store }

func (failingLog) AppendLog(context.Context, store.LogEntry) error {
	return errors.New("persephone_logs: disk full")
}

func TestCreateStoresAllAndLogsEachTask(t *testing.T) {
	in := newIntake(t)
	ctx := context.Background()
	res, err := in.Create(ctx, []workorder.Document{
		task("task_a", "Rotate the release signing keys"),
		{"_key": "task_b", "description": "Update the runbook for key rotation", "priority": "P0",
			"task_context": map[string]any{"constraints": map[string]any{"rules": []any{"Be careful"}}}},
	}, Origin{Source: "tasks.json", Command: "import"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(res.Keys, ",") != "task_a,task_b" || len(res.Warnings) != 0 {
		t.Errorf("result %+v", res)
	}
	if len(res.Validation) != 1 || res.Validation[0].Key != "task_b" || !strings.Contains(res.Validation[0].Problems[0].Message, "Constraint should start with imperative") {
		t.Errorf("validation warnings %+v", res.Validation)
	}
	b, err := in.Store.Get(ctx, "task_b")
	if err != nil || b["priority"] != "critical" || workorder.StatusOf(b) != workorder.StatusOpen {
		t.Errorf("defaults not filled: %v %v", b, err)
	}
	for _, key := range res.Keys {
		logs, err := in.Store.Logs(ctx, key)
		if err != nil || len(logs) != 1 {
			t.Fatalf("%s: %d log entries, %v", key, len(logs), err)
		}
		l := logs[0]
		if l.Action != "task_created" || l.SessionKey != "tester@host:1" || l.Details["source"] != "tasks.json" || l.Details["command"] != "import" {
			t.Errorf("%s log entry %+v", key, l)
		}
	}
}

func TestCreateRefusesTheWholeBatch(t *testing.T) {
	in := newIntake(t)
	ctx := context.Background()
	_, err := in.Create(ctx, []workorder.Document{
		task("task_good", "Rotate the release signing keys"),
		task("task_bad", "Fix bug"),
		task("task_good", "Rotate the release signing keys again"),
	}, Origin{Source: "stdin", Command: "import"})
	var inv *workorder.InvalidError
	if !errors.As(err, &inv) {
		t.Fatalf("want an invalid document error, got %v", err)
	}
	for _, want := range []string{"task_good _key: appears more than once in stdin", "task_bad description: Must be at least 10 characters"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	if docs, _ := in.Store.List(ctx, store.Filter{}); len(docs) != 0 {
		t.Errorf("%d tasks stored from a refused batch", len(docs))
	}
}

func TestAFailedLogWriteIsReportedNotDropped(t *testing.T) {
	in := newIntake(t)
	in.Store = failingLog{in.Store}
	res, err := in.Create(context.Background(), []workorder.Document{task("task_a", "Rotate the release signing keys")}, Origin{Source: "stdin", Command: "import"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Warnings) != 1 || res.Warnings[0] != "task_a was created but its activity log entry was not written: persephone_logs: disk full" {
		t.Errorf("warnings %q", res.Warnings)
	}
	if _, err := in.Store.Get(context.Background(), "task_a"); err != nil {
		t.Errorf("the task is stored even so: %v", err)
	}
}

func TestCreateTaskFromParamsNamesProblemsByParameter(t *testing.T) {
	in := newIntake(t)
	ctx := context.Background()
	bad := workorder.FromCreateParams(workorder.CreateParams{Description: "Fix bug", Constraints: []string{"Be quick about it"}}, time.Now())
	res, err := in.CreateTask(ctx, NewTask{Doc: bad, FromParams: true})
	var inv *workorder.InvalidError
	if !errors.As(err, &inv) || !strings.Contains(err.Error(), "(new task) description: Must be at least 10 characters") {
		t.Fatalf("want the description refused: %v", err)
	}
	if len(res.Problems) != 2 || res.Problems[1].Path != "constraints[0]" {
		t.Errorf("problems %+v", res.Problems)
	}
	if docs, _ := in.Store.List(ctx, store.Filter{}); len(docs) != 0 {
		t.Errorf("an invalid task was stored")
	}

	good := workorder.FromCreateParams(workorder.CreateParams{Description: "Rotate the release signing keys", Constraints: []string{"Be quick about it"}}, time.Now())
	res, err = in.CreateTask(ctx, NewTask{Doc: good, FromParams: true})
	if err != nil {
		t.Fatal(err)
	}
	key := workorder.Key(res.Doc)
	if len(res.Validation) != 1 || res.Validation[0].Key != key || res.Validation[0].Problems[0].String() != `constraints[0]: Constraint should start with imperative: "Be quick about it"` {
		t.Errorf("validation %+v", res.Validation)
	}
	stored, err := in.Store.Get(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if got := workorder.Get(stored, "task_context.validation_warnings").([]any); len(got) != 1 || got[0] != `Constraint should start with imperative: "Be quick about it"` {
		t.Errorf("validation_warnings %v", got)
	}
}

func TestCreateTaskPerEventIsIdempotent(t *testing.T) {
	in := newIntake(t)
	ctx := context.Background()
	newTask := func() workorder.Document {
		return workorder.Document{"title": "Triage", "description": "Triage the failing nightly build"}
	}
	first, err := in.CreateTask(ctx, NewTask{Doc: newTask(), SourceEvent: "evt-42"})
	if err != nil || first.Existing || workorder.Key(first.Doc) != EventKey("evt-42", 6) {
		t.Fatalf("first: %+v %v", first, err)
	}
	again, err := in.CreateTask(ctx, NewTask{Doc: newTask(), SourceEvent: "evt-42"})
	if err != nil || !again.Existing || workorder.Key(again.Doc) != workorder.Key(first.Doc) {
		t.Fatalf("again: %+v %v", again, err)
	}
	if logs, _ := in.Store.Logs(ctx, workorder.Key(first.Doc)); len(logs) != 1 {
		t.Errorf("%d task_created entries for one task", len(logs))
	}
	// Another event whose short key is taken by a task of no event gets
	// the long key.
	if _, err := in.Create(ctx, []workorder.Document{task(EventKey("evt-7", 6), "Someone else's task here")}, Origin{Source: "stdin", Command: "import"}); err != nil {
		t.Fatal(err)
	}
	other, err := in.CreateTask(ctx, NewTask{Doc: newTask(), SourceEvent: "evt-7"})
	if err != nil || other.Existing || workorder.Key(other.Doc) != EventKey("evt-7", 16) {
		t.Fatalf("collision: %+v %v", other, err)
	}
	if docs, _ := in.Store.List(ctx, store.Filter{}); len(docs) != 3 {
		t.Errorf("%d tasks, want 3", len(docs))
	}
}

// Replace takes a stored task's place and adds a new one in one write: the
// replaced task's log keeps its history and gains task_replaced, the new
// one's starts with task_created. A task whose revision moved is not
// replaced, and then nothing of the batch is stored.
func TestReplaceLogsWhatItReplacedAndWhatItCreated(t *testing.T) {
	in := newIntake(t)
	ctx := context.Background()
	from := Origin{Source: "tasks.json", Command: "import"}
	if _, err := in.Create(ctx, []workorder.Document{task("task_a", "Rotate the release signing keys")}, from); err != nil {
		t.Fatal(err)
	}
	old, err := in.Store.Get(ctx, "task_a")
	if err != nil {
		t.Fatal(err)
	}
	stale := map[string]string{"task_a": "999"}
	if _, err := in.Replace(ctx, []workorder.Document{task("task_a", "Rotate the keys, second version"), task("task_b", "Update the runbook for key rotation")}, stale, from); !store.IsConflict(err) {
		t.Fatalf("a replace at a revision that moved: %v, want a conflict", err)
	}
	if _, err := in.Store.Get(ctx, "task_b"); !store.IsNotFound(err) {
		t.Errorf("task_b was stored by a refused replace: %v", err)
	}
	rev, _ := old["_rev"].(string)
	res, err := in.Replace(ctx, []workorder.Document{task("task_a", "Rotate the keys, second version"), task("task_b", "Update the runbook for key rotation")}, map[string]string{"task_a": rev}, from)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(res.Keys, ",") != "task_a,task_b" || len(res.Warnings) != 0 {
		t.Errorf("result %+v", res)
	}
	if a, err := in.Store.Get(ctx, "task_a"); err != nil || a["description"] != "Rotate the keys, second version" {
		t.Errorf("task_a after the replace: %v %v", a["description"], err)
	}
	for key, want := range map[string][]string{"task_a": {"task_created", "task_replaced"}, "task_b": {"task_created"}} {
		logs, err := in.Store.Logs(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, l := range logs {
			got = append(got, l.Action)
			if l.SessionKey != "tester@host:1" || l.Details["source"] != "tasks.json" || l.Details["command"] != "import" {
				t.Errorf("%s log entry %+v", key, l)
			}
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("%s log: %v, want %v", key, got, want)
		}
	}
}
