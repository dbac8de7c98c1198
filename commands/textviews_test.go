package commands

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wo-runner/wo/procedure"
	"github.com/wo-runner/wo/split"
	"github.com/wo-runner/wo/store"
	"github.com/wo-runner/wo/termtext"
	"github.com/wo-runner/wo/workorder"
)

// The keys of the text views' epic: as long as the keys people give the
// PRs of a real split.
const (
	longEpic = "task_hermes_review_pipeline"
	longFull = longEpic + "_01_foundation"                     // every state field set
	longMid  = longEpic + "_04_adapters_and_their_integration" // waits for the first
	longLast = longEpic + "_05_command_line"                   // waits for both
)

// textNow is the clock of the text views: two hours after the documents'
// last update.
var textNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// textWorld is a store holding the fixture's epic under long keys, whose
// first child has every state field set (fullState) and a timeline whose
// details hold lists and objects.
func textWorld(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.NewReplacer("task_cr_epic", longEpic, "task_cr_01", longFull, "task_cr_04", longMid, "task_cr_05", longLast).Replace(string(data))
	docs, err := workorder.DecodeDocuments(fixture, []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		d["updated_at"] = "2026-03-01T10:00:00Z"
		if workorder.Key(d) == longFull {
			st := workorder.StateMap(fullState())
			lease, _ := workorder.Normalize(fullState().Lease)
			st["lease"] = lease
			d["status"], d["block_reason"] = "blocked", "review comments to fix: the agent is rate limited until 2099-01-01T00:00:00Z"
			d["work_order"].(map[string]any)["state"] = st
		}
	}
	db := newDB(t)
	ctx := context.Background()
	s, err := store.OpenSQLite(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Create(ctx, docs...); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	for i, e := range []store.LogEntry{
		{Action: "step_completed", Details: map[string]any{"step": 1, "action": "create_worktree", "duration_ms": 1234, "outcome": "ok",
			"worktree": map[string]any{"path": "/tmp/hermes-review/pr-01-foundation", "branch": "review/01-foundation"}}},
		{Action: "review_checked", Details: map[string]any{"step": 8, "comments": []any{
			map[string]any{"author": "coderabbitai[bot]", "path": "internal/a.go", "line": 14, "body": "Check the error"}},
			"verdicts": map[string]any{"coderabbitai[bot]": "CHANGES_REQUESTED"}}},
		{Action: "reset", Details: map[string]any{"to_step": 2, "from_step": 9, "forgot": map[string]any{"loop_iterations": map[string]any{"9": 2}}}},
		{Action: "run_waiting", Details: map[string]any{"step": 9, "action": "conditional_loop", "reason": []any{"a fix of the review comments", "the agent"}}},
	} {
		e.TaskKey, e.SessionKey, e.CreatedAt = longFull, "ci@runner-7:4242", at.Add(time.Duration(i)*time.Minute)
		if err := s.AppendLog(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	return db
}

// runAt runs wo on a terminal of width columns (COLUMNS), at textNow.
func runAt(t *testing.T, db string, width int, args ...string) woRun {
	t.Helper()
	var out, errb bytes.Buffer
	f := NewFactory(strings.NewReader(""), &out, &errb)
	env := map[string]string{"COLUMNS": fmt.Sprint(width), "NO_COLOR": "1"}
	f.Getenv = func(k string) string { return env[k] }
	f.Now = func() time.Time { return textNow }
	code := Run(context.Background(), f, append(append([]string{"wo"}, args...), "--store", db))
	return woRun{stdout: out.String(), stderr: errb.String(), code: code}
}

// textView is one command's text output that a person reads.
type textCase struct {
	name string
	args []string
	// fits: every line of stdout within the width (a table and what it
	// says around it); else only the lines of sections that are tables.
	fits bool
}

var textCases = []textCase{
	{"status-epic", []string{"status", longEpic}, true},
	{"status-key", []string{"status", longFull}, true},
	{"list", []string{"list"}, true},
	{"list-parent", []string{"list", "--parent", longEpic}, true},
	{"log", []string{"log", longFull}, true},
	{"log-verbose", []string{"log", longFull, "--verbose"}, true},
	{"show", []string{"show", longFull}, false},
	{"show-epic", []string{"show", longEpic}, false},
	{"reset-dry-run", []string{"reset", longFull, "--to-start", "--dry-run"}, false},
	{"reset-dry-run-to-step", []string{"reset", longFull, "--to-step", "4", "--dry-run"}, false},
	{"undo-dry-run", []string{"undo", longFull, "--dry-run"}, false},
	{"validate", []string{"validate", longFull}, false},
	{"prompt", []string{"prompt", longFull}, false},
	{"status-markdown", []string{"status", longEpic, "--format", "markdown"}, false},
	{"status-mermaid", []string{"status", longEpic, "--format", "mermaid"}, false},
	{"status-dot", []string{"status", longEpic, "--format", "dot"}, false},
}

// Every text view of a task whose state has every field set, at 80 and
// 120 columns, with keys as long as real ones: no Go syntax anywhere
// (map[…], &{…}, <nil>), a table and the lines around it no wider than the
// terminal, and the output as the golden file in testdata/text has it
// (go test -run TestTextViewsReadWellAtEveryWidth -update rewrites them:
// read the diff).
func TestTextViewsReadWellAtEveryWidth(t *testing.T) {
	t.Parallel()
	db := textWorld(t)
	for _, width := range []int{80, 120} {
		for _, c := range textCases {
			r := runAt(t, db, width, c.args...)
			name := fmt.Sprintf("%s-%d", c.name, width)
			out := r.stdout
			if r.stderr != "" {
				out += "--- stderr\n" + r.stderr
			}
			if r.code != 0 && r.code != ExitInvalid && r.code != ExitFailed {
				t.Errorf("%s: exit %d\n%s", name, r.code, out)
			}
			if g := hasGoSyntax(out); g != "" {
				t.Errorf("wo %s at %d columns prints Go's %q:\n%s", strings.Join(c.args, " "), width, g, out)
			}
			for _, line := range strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n") {
				if (c.fits || inTable(r.stdout, line)) && termtext.Width(line) > width {
					t.Errorf("wo %s: a line of %d columns on a terminal of %d:\n%s", strings.Join(c.args, " "), termtext.Width(line), width, line)
				}
			}
			compareGolden(t, filepath.Join("testdata", "text", name+".golden"), out)
		}
	}
}

// inTable reports whether line belongs to a section of wo show that is a
// table (Context:, Inputs:).
func inTable(out, line string) bool {
	for _, title := range []string{"\nContext:\n", "\nInputs:\n"} {
		if i := strings.Index(out, title); i >= 0 {
			section, _, _ := strings.Cut(out[i+len(title):], "\n\n")
			if strings.Contains("\n"+section+"\n", "\n"+line+"\n") {
				return true
			}
		}
	}
	return false
}

func compareGolden(t *testing.T, path, got string) {
	t.Helper()
	if *updateGolden {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -run %s -update writes it)", err, t.Name())
	}
	if got != string(want) {
		t.Errorf("the output differs from %s:\n got:\n%s\nwant:\n%s", path, got, want)
	}
}

// What a person reads of the state in the views that show it: the worded
// values, where Go printed map[9:2] and [map[comments:[map[author:….
func TestTextViewsWordTheState(t *testing.T) {
	t.Parallel()
	db := textWorld(t)
	reset := runAt(t, db, 120, "reset", longFull, "--to-start", "--dry-run").stdout
	for _, want := range []string{
		"  loop_iterations: step 9 ×2\n",
		"  review_verdicts: alice changes requested, coderabbitai[bot] approved\n",
		"  review_threads: 2 open threads, 1 counted: internal/a.go (outdated) by coderabbitai[bot]: Check the error returned by",
		"  base_sha: aaaaaaaaaaaa\n",
		"  fix_pushed: cccccccccccc → dddddddddddd\n",
	} {
		if !strings.Contains(reset, want) {
			t.Errorf("wo reset --dry-run lacks %q:\n%s", want, reset)
		}
	}
	show := runAt(t, db, 120, "show", longFull).stdout
	for _, want := range []string{
		"  file_manifest  (8) internal/adapter/adapter.go, internal/adapter/adapter_test.go, ",
		"  verdicts  alice changes requested, coderabbitai[bot] approved\n",
		"  estimate: no estimate yet:",
	} {
		if !strings.Contains(show, want) {
			t.Errorf("wo show lacks %q:\n%s", want, show)
		}
	}
	log := runAt(t, db, 120, "log", longFull, "--verbose").stdout
	for _, want := range []string{"comments=(1) {author: coderabbitai[bot], body: Check the error, line: 14, path: internal/a.go}",
		"verdicts={coderabbitai[bot]: CHANGES_REQUESTED}"} {
		if !strings.Contains(strings.Join(strings.Fields(log), " "), want) {
			t.Errorf("wo log --verbose lacks %q:\n%s", want, log)
		}
	}
}

// The epic's table at 80 columns keeps what a person scans an epic for —
// each child's short key, status, next step and what it waits for — and
// says what it left out; --wide prints every column and key whole.
func TestStatusTableAtEightyColumns(t *testing.T) {
	t.Parallel()
	db := textWorld(t)
	narrow := runAt(t, db, 80, "status", longEpic).stdout
	for _, want := range []string{"…_04_adapters_", "…_01_foundation", "WAITS FOR", "NEXT", "--wide shows every column"} {
		if !strings.Contains(narrow, want) {
			t.Errorf("at 80 columns the table lacks %q:\n%s", want, narrow)
		}
	}
	wide := runAt(t, db, 80, "status", longEpic, "--wide").stdout
	for _, want := range []string{longMid, longLast, "FIX ROUNDS", "UPDATED", "2h ago", "a fix of the review comments"} {
		if !strings.Contains(wide, want) {
			t.Errorf("--wide lacks %q:\n%s", want, wide)
		}
	}
	if strings.Contains(wide, "…") || strings.Contains(wide, "left out") {
		t.Errorf("--wide cut something:\n%s", wide)
	}
}

// The split plan's table: keys without the epic's, titles cut, at 80 and
// 120 columns.
func TestSplitPlanFitsTheWidth(t *testing.T) {
	t.Parallel()
	epic := "task_split_3f9a2c_hermes_review"
	plan := &split.Plan{Change: &split.Change{Files: make([]split.File, 9)}}
	var tasks []workorder.Document
	for i, title := range []string{"[1/3] internal/adapter and the configuration it reads at start-up", "[2/3] cmd/hermes", "[3/3] docs"} {
		plan.PRs = append(plan.PRs, &split.PR{Number: i + 1, Title: title, Files: make([]split.File, 3), Lines: 120 * (i + 1), Wave: i + 1})
		for d := 1; d <= i; d++ {
			plan.PRs[i].BlockedBy = append(plan.PRs[i].BlockedBy, d)
		}
		tasks = append(tasks, workorder.Document{"_key": fmt.Sprintf("%s_pr%02d", epic, i+1)})
	}
	for _, width := range []int{80, 120} {
		var out bytes.Buffer
		if err := writeSplit(&out, plan, epic, tasks, true, nil, width); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
		for _, line := range lines[1:] { // the first line says the epic's key whole
			if termtext.Width(line) > width {
				t.Errorf("%d columns: %q takes %d", width, line, termtext.Width(line))
			}
		}
		if g := hasGoSyntax(out.String()); g != "" {
			t.Errorf("the plan prints Go's %q:\n%s", g, out.String())
		}
		compareGolden(t, filepath.Join("testdata", "text", fmt.Sprintf("split-plan-%d.golden", width)), out.String())
	}
}

// An estimate in a table is the time and how sure it is; what it rests
// on is wo show's.
func TestEstimateCellIsShort(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		e    *procedure.Estimate
		want string
	}{
		{nil, "-"},
		{&procedure.Estimate{Basis: "no estimate yet: 1 past push step(s), 3 needed"}, "unknown"},
		{&procedure.Estimate{Known: true, Remaining: 7*time.Minute + 10*time.Second, Confidence: "low", Basis: "from 3 past run(s), low confidence"}, "~7 min (low)"},
		{&procedure.Estimate{Known: true, Remaining: 1500 * time.Millisecond, Confidence: "high"}, "~2 s (high)"},
		{&procedure.Estimate{Known: true, Remaining: 95 * time.Minute, Basis: "sum of 3 children's estimates"}, "~1 h 35 min"},
		{&procedure.Estimate{Known: true, Remaining: 59*time.Minute + 50*time.Second}, "~1 h"},
		{&procedure.Estimate{Known: true, Remaining: 26 * time.Hour}, "~1 d 2 h"},
		{&procedure.Estimate{Known: true, Remaining: 47*time.Hour + 50*time.Minute}, "~2 d"},
	} {
		if got := estimateCell(c.e); got != c.want {
			t.Errorf("estimateCell(%+v) = %q, want %q", c.e, got, c.want)
		}
	}
}

// Keys under an epic lose the start they share with the epic's key, up
// to a separator; "task_" alone is not worth it.
func TestShortKey(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ epic, key, want string }{
		{longEpic, longFull, "…_01_foundation"},
		{"task_cr_epic", "task_cr_01", "…_01"},
		{"task_a1b2c3", "task_a1f00d", "task_a1f00d"},
		{longEpic, longEpic + "x", "…_pipelinex"}, // the shared start ends at a separator
		{longEpic, "task_other", "task_other"},
		{"", "task_cr_01", "task_cr_01"},
		{longEpic, "a review since 2026-03-01T10:06:00Z", "a review since 2026-03-01T10:06:00Z"},
	} {
		if got := shortKey(c.epic, c.key); got != c.want {
			t.Errorf("shortKey(%q, %q) = %q, want %q", c.epic, c.key, got, c.want)
		}
	}
}

// The table at the end of wo run --epic fits the width: keys without the
// epic's start, the reason wrapped whole, nothing from a task raw; --wide
// (width 0) shows every key whole.
func TestEpicRunTableFitsTheWidth(t *testing.T) {
	t.Parallel()
	epic := "task_hermes_review_pipeline"
	r := &procedure.EpicResult{Epic: epic, Tasks: []procedure.TaskOutcome{
		{Key: epic + "_01_foundation", Wave: 1, Outcome: procedure.OutcomeDone, Status: workorder.StatusInReview},
		{Key: epic + "_02_adapters_and_the_plugins_they_load", Wave: 2, Outcome: procedure.OutcomeWaiting, Status: workorder.StatusInProgress,
			Reason: "waiting for coderabbitai[bot] to review 1a2b3c4 on pull request #2 \x1b]8;;https://evil.example\x07here\x1b]8;;\x07, until 10:29"},
	}}
	var narrow, wide strings.Builder
	if err := writeEpicResult(&narrow, r, 80); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimRight(narrow.String(), "\n"), "\n") {
		if w := termtext.Width(line); w > 80 {
			t.Errorf("a line of %d columns at 80:\n%s", w, line)
		}
	}
	for _, want := range []string{"…_01_foundation", "coderabbitai[bot]", "until 10:29", "WAVE"} {
		if !strings.Contains(narrow.String(), want) {
			t.Errorf("at 80 columns the table lacks %q:\n%s", want, narrow.String())
		}
	}
	if strings.Contains(narrow.String(), "\x1b") || strings.Contains(narrow.String(), "\a") {
		t.Errorf("a task's reason reached the terminal raw:\n%q", narrow.String())
	}
	if err := writeEpicResult(&wide, r, 0); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(wide.String(), epic+"_02_adapters_and_the_plugins_they_load") || strings.Contains(wide.String(), "…") {
		t.Errorf("with no limit the table cut something:\n%s", wide.String())
	}
}
