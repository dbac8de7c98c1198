package commands

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/wo-runner/wo/store"
)

func TestStatusSaysWhatEachTaskWaitsForAndWhoRunsIt(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	mustRun(t, db, "", "import", fixture)
	// task_cr_01: its PR known only by URL, and a runner on it now.
	updateState(t, db, "task_cr_01", map[string]any{"pr_url": "https://github.com/acme/hermes/pull/42",
		"lease": map[string]any{"holder": "ci@runner-7:4242", "expires_at": time.Now().Add(time.Hour).UTC().Format(time.RFC3339Nano)}})
	// task_cr_04: its agent's deliverable is held for review.
	updateState(t, db, "task_cr_04", map[string]any{"phase": "needs_review"})
	// task_cr_05: skipped by an epic run.
	updateState(t, db, "task_cr_05", map[string]any{"skipped": map[string]any{"reason": "blocker task_cr_01 is waiting", "by": "ci", "at": "2026-01-01T00:00:00Z"}})

	r := mustRun(t, db, "", "status", "task_cr_epic", "--json")
	var env struct{ Data []StatusRow }
	if err := json.Unmarshal([]byte(r.stdout), &env); err != nil {
		t.Fatal(err)
	}
	rows := map[string]StatusRow{}
	for _, row := range env.Data {
		rows[row.Key] = row
	}
	if got := rows["task_cr_01"]; got.PRNumber != 42 || got.HeldBy != "ci@runner-7:4242" {
		t.Errorf("task_cr_01: PR %d held by %q, want #42 from its URL, held by ci@runner-7:4242", got.PRNumber, got.HeldBy)
	}
	if got := strings.Join(rows["task_cr_04"].WaitingFor, "; "); !strings.Contains(got, "task_cr_01") || !strings.Contains(got, "a review of the agent's deliverable") {
		t.Errorf("task_cr_04 waits for %q, want its blocker and the review of its deliverable", got)
	}
	if got := strings.Join(rows["task_cr_05"].WaitingFor, "; "); !strings.Contains(got, "skipped: blocker task_cr_01 is waiting") {
		t.Errorf("task_cr_05 waits for %q, want the skip and its reason", got)
	}
	table := mustRunEnv(t, map[string]string{"NO_COLOR": "1"}, db, "", "status", "task_cr_epic", "--wide").stdout
	for _, want := range []string{"RUNNER", "ci@runner-7:4242", "#42"} {
		if !strings.Contains(table, want) {
			t.Errorf("the table lacks %q:\n%s", want, table)
		}
	}
}

func TestStatusDrawsDependenciesWrittenAsBlocks(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	mustRun(t, db, "", "import", fixture)
	// The fixture's task_cr_01 says it blocks task_cr_04 and task_cr_05;
	// strip their own blocked_by so that only blocks says so.
	s, err := store.OpenSQLite(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"task_cr_04", "task_cr_05"} {
		d, _ := s.Get(context.Background(), k)
		if _, err := s.Update(context.Background(), k, d["_rev"].(string), store.Nest("work_order.dependencies.blocked_by", []any{})); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	r := mustRun(t, db, "", "status", "task_cr_epic", "--format", "mermaid")
	for _, edge := range []string{"task_cr_01 --> task_cr_04", "task_cr_01 --> task_cr_05"} {
		if !strings.Contains(r.stdout, edge) {
			t.Errorf("mermaid lacks %s, which task_cr_01's blocks states:\n%s", edge, r.stdout)
		}
	}
	var env struct{ Data []StatusRow }
	json.Unmarshal([]byte(mustRun(t, db, "", "status", "task_cr_epic", "--json").stdout), &env)
	for _, row := range env.Data {
		if row.Key == "task_cr_04" && strings.Join(row.WaitingFor, ",") != "task_cr_01" {
			t.Errorf("task_cr_04 waits for %v, want task_cr_01", row.WaitingFor)
		}
	}
}

// The review columns count fix rounds (conditional_loop passes that
// committed a fix) and the actionable comments left open, and their
// headers say so in every format: a reviewed PR with no fix to make is 0
// fix rounds, which "REVIEWS 0" misreported.
func TestStatusColumnsSayWhatTheyCount(t *testing.T) {
	t.Parallel()
	rows := []StatusRow{{Key: "task_cr_01", Title: "t", Status: "in_review", PRNumber: 3, ReviewIterations: 2, OpenComments: 5}}
	table := tableStatus(rows, textView{})
	if !strings.Contains(table, "FIX ROUNDS") || !strings.Contains(table, "COMMENTS") || strings.Contains(table, "REVIEWS") {
		t.Errorf("table headers:\n%s", table)
	}
	md := markdownStatus(rows)
	if !strings.Contains(md, "| PR | Fix rounds | Open comments |") || !strings.Contains(md, "| #3 | 2 | 5 |") || strings.Contains(md, "Reviews") {
		t.Errorf("markdown headers:\n%s", md)
	}
}

// wo status without a key says what it needs and where to find one: the
// store's epics, else wo list, else how tasks get there.
func TestStatusWithoutAKeySaysWhatItNeedsAndWhereToFindOne(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	r := runWo(t, db, "", "status")
	if want := "wo status: give the KEY of a task or an epic; this store has no tasks yet: wo import FILE, wo create or wo split adds some"; r.code != ExitInvalid || !strings.Contains(r.stderr, want) {
		t.Errorf("an empty store: exit %d, want 2 saying %q:\n%s", r.code, want, r.stderr)
	}
	mustRun(t, db, "", "import", writeDoc(t, localOrder(t, "/nowhere", "hello.go")))
	if r := runWo(t, db, "", "status"); !strings.Contains(r.stderr, "give the KEY of a task or an epic; wo list shows the 1 task(s) of this store") {
		t.Errorf("a store without epics:\n%s", r.stderr)
	}
	mustRun(t, db, "", "import", fixture)
	r = runWo(t, db, "", "status")
	want := "wo status: give the KEY of a task or an epic, such as an epic of this store: task_cr_epic (3 task(s): Code review of Hermes, split into review PRs); wo list shows every task"
	if r.code != ExitInvalid || !strings.Contains(r.stderr, want) || strings.Contains(r.stderr, "missing task KEY") {
		t.Errorf("a store with an epic: exit %d, want 2 saying %q:\n%s", r.code, want, r.stderr)
	}
}
