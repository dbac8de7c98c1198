package commands

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/wo-runner/wo/store"
	"github.com/wo-runner/wo/workorder"
)

// wo runs the command line in-process against the store at dbPath.
type woRun struct {
	stdout, stderr string
	code           int
}

func runWo(t *testing.T, dbPath string, stdin string, args ...string) woRun {
	t.Helper()
	return runWoEnv(t, nil, dbPath, stdin, args...)
}

// runWoEnv is runWo in the environment env, which is all the command sees:
// not the process's (a developer's WO_STORE or ArangoDB stays out of
// tests), so tests that run wo can run in parallel.
func runWoEnv(t *testing.T, env map[string]string, dbPath string, stdin string, args ...string) woRun {
	t.Helper()
	var out, errb bytes.Buffer
	f := NewFactory(strings.NewReader(stdin), &out, &errb)
	f.Getenv = func(k string) string { return env[k] }
	full := append([]string{"wo"}, args...)
	if dbPath != "" {
		full = append(full, "--store", dbPath)
	}
	code := Run(context.Background(), f, full)
	checkJSONOutput(t, args, out.Bytes())
	return woRun{stdout: out.String(), stderr: errb.String(), code: code}
}

// checkJSONOutput holds every --json output the tests see to its published
// schema (docs/json/).
func checkJSONOutput(t *testing.T, args []string, stdout []byte) {
	t.Helper()
	if !slices.Contains(args, "--json") || slices.ContainsFunc(args, func(a string) bool { return a == "--help" || strings.HasPrefix(a, "--jq") }) || len(stdout) == 0 {
		return
	}
	if err := CheckOutput(stdout); err != nil {
		t.Errorf("wo %s: %v\n%s", strings.Join(args, " "), err, stdout)
	}
}

func newDB(t *testing.T) string {
	return filepath.Join(t.TempDir(), "wo.db")
}

const fixture = "../fixtures/hermes-review.json"

func mustRun(t *testing.T, db, stdin string, args ...string) woRun {
	t.Helper()
	return mustRunEnv(t, nil, db, stdin, args...)
}

func mustRunEnv(t *testing.T, env map[string]string, db, stdin string, args ...string) woRun {
	t.Helper()
	r := runWoEnv(t, env, db, stdin, args...)
	if r.code != 0 {
		t.Fatalf("wo %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r
}

func TestImportValidateShowList(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	r := mustRun(t, db, "", "import", fixture)
	if !strings.Contains(r.stdout, "imported 4 task(s)") {
		t.Errorf("import said %q", r.stdout)
	}
	// The document is valid, but its repository is not on this machine:
	// wo run would refuse it, and so does wo validate, as this machine's
	// problem.
	r = runWo(t, db, "", "validate", "task_cr_01")
	if r.code != ExitFailed || !strings.Contains(r.stderr, "task_cr_01 step 1: wo run would refuse: opening repository /home/todd/olympus/Hermes") ||
		!strings.Contains(r.stderr, "(steps 2, 3, 4, 5, 10 too)") || !strings.Contains(r.stderr, "step 6: wo run would refuse: no GitHub token") {
		t.Errorf("validate: exit %d\n%s", r.code, r.stderr)
	}
	r = mustRun(t, db, "", "show", "task_cr_01")
	for _, want := range []string{
		"task_cr_01  PR #1: Foundation",
		"[next]  1 create_worktree",
		"command: git worktree add /tmp/hermes-review/pr-01-foundation code-review-base",
		"command: git checkout main -- internal/adapter/adapter.go internal/adapter/adapter_test.go",
		"command: gh api repos/toddwbucy/Hermes/pulls/1/comments",
		"[    ] 11 update_task",
		"blocks      task_cr_04, task_cr_05",
		"State: step 0/11 done",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("show lacks %q:\n%s", want, r.stdout)
		}
	}
	r = mustRun(t, db, "", "list", "--parent", "task_cr_epic")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[1], "task_cr_01") || !strings.Contains(lines[1], "0/11") {
		t.Errorf("list --parent:\n%s", r.stdout)
	}
	r = mustRun(t, db, "", "list", "--status", "open", "--json")
	var env struct {
		Success bool
		Data    []TaskRow
	}
	if err := json.Unmarshal([]byte(r.stdout), &env); err != nil || !env.Success || len(env.Data) != 4 {
		t.Errorf("list --json: %v %s", err, r.stdout)
	}
}

func TestShowMarksProgressFromState(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	mustRun(t, db, "", "import", fixture)
	updateState(t, db, "task_cr_01", map[string]any{"current_step": 2, "completed_steps": []any{1, 2},
		"worktree_path": "/tmp/hermes-review/pr-01-foundation"})
	r := mustRun(t, db, "", "show", "task_cr_01")
	for _, want := range []string{"[done]  1 create_worktree", "[done]  2 create_branch", "[next]  3 checkout_files", "[    ]  4 commit", "worktree /tmp/hermes-review/pr-01-foundation"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("show lacks %q:\n%s", want, r.stdout)
		}
	}
}

// updateState writes work_order.state the way the engine does: one
// conditional, merging update.
func updateState(t *testing.T, db, key string, state map[string]any) {
	t.Helper()
	s, err := store.OpenSQLite(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	doc, err := s.Get(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Update(context.Background(), key, doc["_rev"].(string), store.Nest("work_order.state", state)); err != nil {
		t.Fatal(err)
	}
}

func TestUnknownFieldsSurviveStateWrites(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	doc := fixtureDoc(t, "task_cr_01")
	doc["x_persephone_owner"] = map[string]any{"team": "platform", "seats": []any{1, 2}}
	doc["work_order"].(map[string]any)["context"].(map[string]any)["x_ci_runner"] = "linux-large"
	doc["work_order"].(map[string]any)["dependencies"] = map[string]any{"blocked_by": []any{}, "blocks": []any{}}
	mustRun(t, db, string(mustJSON(t, doc)), "import", "-")
	updateState(t, db, "task_cr_01", map[string]any{"current_step": 1, "completed_steps": []any{1}, "notes": []any{"worktree created"}})
	r := mustRun(t, db, "", "export")
	docs, err := workorder.DecodeDocuments("export", []byte(r.stdout))
	if err != nil || len(docs) != 1 {
		t.Fatalf("export: %v\n%s", err, r.stdout)
	}
	got := docs[0]
	if v, _ := workorder.Lookup(got, "x_persephone_owner.team"); v != "platform" {
		t.Errorf("unknown top-level field lost: %v", got["x_persephone_owner"])
	}
	if v, _ := workorder.Lookup(got, "work_order.context.x_ci_runner"); v != "linux-large" {
		t.Errorf("unknown context field lost: %v", got["work_order"])
	}
	if n, _ := workorder.AsInt(mustLookup(t, got, "work_order.state.current_step")); n != 1 {
		t.Errorf("state not written")
	}
}

func mustLookup(t *testing.T, doc map[string]any, path string) any {
	t.Helper()
	v, ok := workorder.Lookup(doc, path)
	if !ok {
		t.Fatalf("%s missing", path)
	}
	return v
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fixtureDoc returns one document of the fixture file.
func fixtureDoc(t testing.TB, key string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	docs, err := workorder.DecodeDocuments(fixture, data)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		if workorder.Key(d) == key {
			return d
		}
	}
	t.Fatalf("fixture has no %s", key)
	return nil
}

// standalone is task_cr_01 without links to other tasks, so that one rule
// at a time can be broken.
func standalone(t *testing.T) map[string]any {
	d := fixtureDoc(t, "task_cr_01")
	delete(d, "parent_key")
	d["work_order"].(map[string]any)["dependencies"] = map[string]any{"blocked_by": []any{}, "blocks": []any{}}
	return d
}

func TestBadDocumentsAreRejectedAndChangeNothing(t *testing.T) {
	t.Parallel()
	set := func(path string, v any) func(map[string]any) {
		return func(d map[string]any) { store.Merge(d, store.Nest(path, v)) }
	}
	step := func(i int, field string, v any) func(map[string]any) {
		return func(d map[string]any) {
			steps := d["work_order"].(map[string]any)["procedure"].([]any)
			s := steps[i].(map[string]any)
			if v == nil {
				delete(s, field)
			} else {
				s[field] = v
			}
		}
	}
	cases := []struct {
		name   string
		break_ func(map[string]any)
		field  string
	}{
		{"status outside Persephone's enum", set("status", "done"), "status"},
		{"blocked without a reason", set("status", "blocked"), "block_reason"},
		{"unknown priority", set("priority", "urgent"), "priority"},
		{"unknown type", set("type", "story"), "type"},
		{"key with a slash", set("_key", "task/01"), "_key"},
		{"timestamp not RFC 3339", set("created_at", "yesterday"), "created_at"},
		{"description too short", set("description", "Fix bug"), "description"},
		{"unsupported work order version", set("work_order.version", "2.0"), "work_order.version"},
		{"steps out of order", step(1, "step", 3), "step 2 step"},
		{"unknown action", step(0, "action", "deploy_rocket"), "step 1 action"},
		{"loop_to pointing forward", step(8, "loop_to", 10), "step 9 loop_to"},
		{"conditional_loop without condition", step(8, "condition", nil), "step 9 condition"},
		{"unknown placeholder in a command", step(3, "command", "git commit -m '<no_such_field>'"), "step 4 command"},
		{"manifest path climbing out", set("work_order.inputs.file_manifest", []any{"../../etc/passwd"}), "work_order.inputs.file_manifest[0]"},
		{"absolute manifest path", set("work_order.inputs.file_manifest", []any{"/etc/passwd"}), "work_order.inputs.file_manifest[0]"},
		{"pr_number not positive", set("work_order.inputs.pr_number", -1), "work_order.inputs.pr_number"},
		{"branch name git refuses", set("work_order.inputs.branch_name", "review/..bad"), "work_order.inputs.branch_name"},
		{"worktree root inside .git", set("work_order.context.worktree_root", "/home/todd/olympus/Hermes/.git/wt"), "work_order.context.worktree_root"},
		{"blocked_by a task that does not exist", set("work_order.dependencies.blocked_by", []any{"task_ghost"}), "work_order.dependencies.blocked_by[0]"},
		{"state from a newer wo", set("work_order.state.version", 99), "work_order.state.version"},
		{"current_step past the end", set("work_order.state.current_step", 12), "work_order.state.current_step"},
		{"completed step listed twice", set("work_order.state.completed_steps", []any{1, 1}), "work_order.state.completed_steps[1]"},
		{"too many success criteria", set("work_order.success_criteria", manyCriteria(16)), "work_order.success_criteria"},
	}
	db := newDB(t)
	mustRun(t, db, "", "import", fixture)
	before := mustRun(t, db, "", "export").stdout
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			doc := standalone(t)
			doc["_key"] = "task_bad"
			tc.break_(doc)
			file := filepath.Join(t.TempDir(), "bad.json")
			os.WriteFile(file, mustJSON(t, doc), 0o644)
			for _, args := range [][]string{{"import", file}, {"validate", "-f", file}, {"create", "-f", file}} {
				r := runWo(t, db, "", args...)
				if r.code != ExitInvalid {
					t.Errorf("wo %s: exit %d, want 2\n%s", args[0], r.code, r.stderr)
				}
				if !strings.Contains(r.stderr, tc.field+":") {
					t.Errorf("wo %s: message does not name %s:\n%s", args[0], tc.field, r.stderr)
				}
			}
		})
	}
	if after := mustRun(t, db, "", "export").stdout; after != before {
		t.Errorf("rejected documents changed the store")
	}
}

func manyCriteria(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = "All tests pass in package number " + strings.Repeat("x", i+1)
	}
	return out
}

func TestEveryProblemIsListedNotJustTheFirst(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	doc := standalone(t)
	doc["status"] = "done"
	doc["priority"] = "urgent"
	doc["work_order"].(map[string]any)["procedure"].([]any)[0].(map[string]any)["action"] = "nope"
	r := runWo(t, db, string(mustJSON(t, doc)), "validate", "-f", "-", "--json")
	if r.code != ExitInvalid {
		t.Fatalf("exit %d", r.code)
	}
	var env Envelope
	if err := json.Unmarshal([]byte(r.stdout), &env); err != nil {
		t.Fatal(err)
	}
	if env.Success || env.Error == nil || env.Error.Code != "INVALID_DOCUMENT" {
		t.Fatalf("envelope: %+v", env)
	}
	for _, field := range []string{"status:", "priority:", "step 1 action:"} {
		if !strings.Contains(env.Error.Message, field) {
			t.Errorf("error lacks %s: %s", field, env.Error.Message)
		}
	}
	if !strings.Contains(env.Error.Message, "known actions are create_worktree, create_branch") {
		t.Errorf("unknown action error must list the known ones: %s", env.Error.Message)
	}
}

func TestDependencyCycleIsRejected(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	a, b := standalone(t), standalone(t)
	a["_key"], b["_key"] = "task_a", "task_b"
	a["work_order"].(map[string]any)["dependencies"] = map[string]any{"blocked_by": []any{"task_b"}}
	b["work_order"].(map[string]any)["dependencies"] = map[string]any{"blocked_by": []any{"task_a"}}
	r := runWo(t, db, string(mustJSON(t, []any{a, b})), "import", "-")
	if r.code != ExitInvalid || !strings.Contains(r.stderr, "dependency cycle: task_a → task_b → task_a") {
		t.Errorf("exit %d: %s", r.code, r.stderr)
	}
}

func TestCreateGeneratesKeyAndNormalisesPriority(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	doc := `{"title": "Rotate the signing keys", "description": "Rotate the release signing keys before they expire", "priority": "p1",
	         "task_context": {"constraints": {"rules": ["Be quick"]}}}`
	r := mustRun(t, db, doc, "create", "-f", "-", "--json")
	var env struct {
		Success bool
		Data    struct {
			Success    bool
			TaskID     string `json:"task_id"`
			Priority   string
			Validation struct {
				Performed bool
				Warnings  []string
			}
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &env); err != nil {
		t.Fatal(err, r.stdout)
	}
	if !regexp.MustCompile(`^task_[0-9a-f]{6}$`).MatchString(env.Data.TaskID) {
		t.Errorf("generated key %q", env.Data.TaskID)
	}
	if env.Data.Priority != "high" || !env.Data.Validation.Performed {
		t.Errorf("data: %+v", env.Data)
	}
	if len(env.Data.Validation.Warnings) != 2 || !strings.Contains(r.stderr, "Constraint should start with imperative") {
		t.Errorf("warnings: %v / %s", env.Data.Validation.Warnings, r.stderr)
	}
	stored := mustRun(t, db, "", "show", env.Data.TaskID, "--json").stdout
	if !strings.Contains(stored, `"priority": "high"`) || !strings.Contains(stored, `"status": "open"`) {
		t.Errorf("stored: %s", stored)
	}
}

func TestImportIsAllOrNothing(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	mustRun(t, db, "", "import", fixture)
	fresh := standalone(t)
	fresh["_key"] = "task_fresh"
	again := standalone(t) // task_cr_01 exists already
	r := runWo(t, db, string(mustJSON(t, []any{fresh, again})), "import", "-")
	if r.code != ExitFailed || !strings.Contains(r.stderr, "task task_cr_01: a task with this key already exists") || !strings.Contains(r.stderr, "nothing was imported") {
		t.Errorf("exit %d: %s", r.code, r.stderr)
	}
	if r := runWo(t, db, "", "show", "task_fresh"); r.code != ExitFailed {
		t.Errorf("task_fresh was imported from a failed batch")
	}
}

func TestExportImportRoundTrip(t *testing.T) {
	t.Parallel()
	db1, db2 := newDB(t), filepath.Join(t.TempDir(), "other.db")
	mustRun(t, db1, "", "import", fixture)
	updateState(t, db1, "task_cr_01", map[string]any{"current_step": 3, "completed_steps": []any{1, 2, 3}})
	out1 := mustRun(t, db1, "", "export").stdout
	mustRun(t, db2, out1, "import", "-")
	out2 := mustRun(t, db2, "", "export").stdout
	if out1 != out2 {
		t.Errorf("round trip changed the documents:\n%s\n---\n%s", out1, out2)
	}
	sub := mustRun(t, db1, "", "export", "--parent", "task_cr_epic").stdout
	docs, _ := workorder.DecodeDocuments("export", []byte(sub))
	if len(docs) != 4 || workorder.Key(docs[0]) != "task_cr_epic" {
		t.Errorf("export --parent gave %d documents", len(docs))
	}
}

func TestClearErrors(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	mustRun(t, db, "", "init") // show reads a store, it does not create one
	cases := []struct {
		name  string
		stdin string
		args  []string
		code  int
		want  []string
	}{
		{"missing key", "", []string{"show", "task_nope"}, ExitFailed, []string{"task task_nope: no such task"}},
		{"no key given", "", []string{"show"}, ExitInvalid, []string{"missing task KEY", "wo show KEY"}},
		{"malformed JSON", "[\n  {\"_key\": \"task_x\",\n   \"status\": open}\n]", []string{"import", "-"}, ExitInvalid, []string{"stdin: malformed JSON at line 3, column"}},
		{"unreadable file", "", []string{"import", "/nonexistent/tasks.json"}, ExitInvalid, []string{"cannot read /nonexistent/tasks.json: no such file or directory"}},
		{"not an object", `[1]`, []string{"import", "-"}, ExitInvalid, []string{"element 0 is a number"}},
		{"unknown flag", "", []string{"list", "--colour"}, ExitInvalid, []string{"unknown flag --colour"}},
		{"bad status filter", "", []string{"list", "--status", "done"}, ExitInvalid, []string{`--status "done": use one of open, in_progress`}},
		{"create without -f", "", []string{"create"}, ExitInvalid, []string{"give -f FILE"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := runWo(t, db, tc.stdin, tc.args...)
			if r.code != tc.code {
				t.Errorf("exit %d, want %d: %s", r.code, tc.code, r.stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr lacks %q: %s", w, r.stderr)
				}
			}
			if strings.Contains(r.stderr, "goroutine ") || strings.Contains(r.stderr, "panic") {
				t.Errorf("stack trace shown: %s", r.stderr)
			}
		})
	}
}

func TestUnreachableArangoExits5AndNamesURL(t *testing.T) {
	t.Parallel()
	r := runWoEnv(t, map[string]string{"ARANGO_PASSWORD": "hunter2-secret"}, "", "", "show", "task_cr_01", "--store", "arangodb+http://127.0.0.1:1", "--database", "hades", "--json")
	if r.code != ExitUnavailable {
		t.Fatalf("exit %d, want 5: %s %s", r.code, r.stdout, r.stderr)
	}
	var env Envelope
	if err := json.Unmarshal([]byte(r.stdout), &env); err != nil {
		t.Fatal(err)
	}
	if env.Error == nil || env.Error.Code != "STORE_UNAVAILABLE" || !strings.Contains(env.Error.Message, "127.0.0.1:1") {
		t.Errorf("envelope error: %+v", env.Error)
	}
	if strings.Contains(r.stdout+r.stderr, "hunter2-secret") {
		t.Error("the password appeared in the output")
	}
}

func TestFlagsMayFollowArguments(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	mustRun(t, db, "", "import", fixture)
	r := mustRun(t, db, "", "show", "task_cr_01", "--json")
	var env Envelope
	if err := json.Unmarshal([]byte(r.stdout), &env); err != nil || !env.Success || env.Command != "show" {
		t.Fatalf("show KEY --json: %v %s", err, r.stdout)
	}
	for _, k := range []string{"success", "command", "data", "error", "metadata"} {
		if !strings.Contains(r.stdout, `"`+k+`"`) {
			t.Errorf("envelope lacks %q", k)
		}
	}
}

func TestInitIsIdempotent(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	mustRun(t, db, "", "init")
	r := mustRun(t, db, "", "init")
	if !strings.Contains(r.stdout, "store ready: sqlite:"+db) {
		t.Errorf("init said %q", r.stdout)
	}
}

func TestStatusFormats(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	mustRun(t, db, "", "import", fixture)
	summary := filepath.Join(t.TempDir(), "summary.md")
	env := map[string]string{"GITHUB_STEP_SUMMARY": summary, "NO_COLOR": "1"}
	table := mustRunEnv(t, env, db, "", "status", "task_cr_epic", "--wide").stdout
	for _, want := range []string{"task_cr_04    open    0/11  create_worktree  -   0           0         -             task_cr_01", "3 tasks: 0 done · 0 in review · 0 running · 0 blocked · 3 not started"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
	if strings.Contains(table, "\033[") {
		t.Error("colour codes with NO_COLOR set and no terminal")
	}
	md := mustRunEnv(t, env, db, "", "status", "--epic", "task_cr_epic", "--format", "markdown").stdout
	if !strings.Contains(md, "| `task_cr_04` PR #4: Adapters | open | 0/11 | — | 0 | 0 | task_cr_01 |") {
		t.Errorf("markdown:\n%s", md)
	}
	if b, err := os.ReadFile(summary); err != nil || string(b) != md {
		t.Errorf("$GITHUB_STEP_SUMMARY holds %q (%v)", b, err)
	}
	mermaid := mustRunEnv(t, env, db, "", "status", "task_cr_epic", "--format", "mermaid").stdout
	if !strings.Contains(mermaid, "task_cr_01 --> task_cr_04") || !strings.Contains(mermaid, "task_cr_01 --> task_cr_05") {
		t.Errorf("mermaid:\n%s", mermaid)
	}
	dot := mustRunEnv(t, env, db, "", "status", "task_cr_epic", "--format", "dot").stdout
	if !strings.Contains(dot, `"task_cr_01" -> "task_cr_05";`) {
		t.Errorf("dot:\n%s", dot)
	}
	var envelope struct{ Data []StatusRow }
	if err := json.Unmarshal([]byte(mustRunEnv(t, env, db, "", "status", "task_cr_epic", "--json").stdout), &envelope); err != nil || len(envelope.Data) != 4 {
		t.Fatalf("json: %v", err)
	}
	if r := runWoEnv(t, env, db, "", "status", "task_cr_epic", "--format", "pdf"); r.code != ExitInvalid {
		t.Errorf("bad format: exit %d", r.code)
	}
}

func TestTasksJSONRoundTripThroughTheCLI(t *testing.T) {
	t.Parallel()
	db1, db2 := newDB(t), filepath.Join(t.TempDir(), "two.db")
	mustRun(t, db1, "", "import", fixture)
	out := mustRun(t, db1, "", "export", "--format", "tasks-json", "--epic", "task_cr_epic").stdout
	if !strings.Contains(out, `"session_id": "wo-task-cr-epic-20251029"`) {
		t.Errorf("export:\n%.400s", out)
	}
	r := mustRun(t, db2, out, "import", "--format", "tasks-json", "-")
	if !strings.Contains(r.stdout, "imported 4 task(s)") {
		t.Errorf("import: %s", r.stdout)
	}
	shown := mustRun(t, db2, "", "show", "task_cr_04").stdout
	if !strings.Contains(shown, "1 agent") || !strings.Contains(shown, "blocked by  task_cr_01") {
		t.Errorf("imported work order:\n%s", shown)
	}
	if r := runWo(t, db2, "", "export", "--format", "tasks-json"); r.code != ExitInvalid || !strings.Contains(r.stderr, "needs --epic") {
		t.Errorf("export without --epic: %d %s", r.code, r.stderr)
	}
}

func TestCreateFromSeed000FlagsAndPrompt(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	dir := t.TempDir()
	var fileFlags []string
	for i := 0; i < 12; i++ {
		name := fmt.Sprintf("src/f%02d.py", i)
		os.MkdirAll(filepath.Join(dir, "src"), 0o755)
		os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o644)
		fileFlags = append(fileFlags, "--relevant-file", name)
	}
	args := append([]string{"create", "--json", "--description", "Implement JWT token authentication", "--priority", "P1", "--cwd", dir,
		"--background-context", "Current OAuth2 implementation uses a deprecated token format; users report failures.",
		"--expected-deliverable", "Updated authentication handler in src/auth/handler.py",
		"--success-criterion", "All existing integration tests pass", "--success-criterion", "It feels fast",
		"--constraint", "Do not modify src/auth/legacy.py", "--related-doc", "https://jwt.io/introduction"}, fileFlags...)
	r := mustRun(t, db, "", args...)
	var env struct {
		Data struct {
			TaskID     string `json:"task_id"`
			Validation struct{ Warnings []string }
		}
	}
	json.Unmarshal([]byte(r.stdout), &env)
	if len(env.Data.Validation.Warnings) != 1 || !strings.Contains(env.Data.Validation.Warnings[0], "may not be measurable") {
		t.Errorf("warnings %v", env.Data.Validation.Warnings)
	}
	p := mustRun(t, db, "", "prompt", env.Data.TaskID).stdout
	for _, want := range []string{"📋 BACKGROUND CONTEXT:", "  • Do not modify src/auth/legacy.py", "… and 2 more files", "https://jwt.io/introduction", "Implement JWT token authentication"} {
		if !strings.Contains(p, strings.ReplaceAll(want, "…", "...")) {
			t.Errorf("prompt lacks %q:\n%s", want, p)
		}
	}
	md := mustRun(t, db, "", "prompt", env.Data.TaskID, "--format", "markdown").stdout
	if !strings.Contains(md, "### Constraints") || strings.Contains(md, "⚠️") {
		t.Errorf("markdown prompt:\n%s", md)
	}

	// The error shape task creators expect (success, error, field, value),
	// and nothing stored.
	r = runWo(t, db, "", "create", "--json", "--description", "Fix bug")
	var bad struct {
		Data struct {
			Success             bool
			Error, Field, Value string
		}
		Error struct{ Code string }
	}
	json.Unmarshal([]byte(r.stdout), &bad)
	if r.code != ExitInvalid || bad.Data.Success || bad.Data.Field != "description" || bad.Data.Value != "Fix bug" ||
		bad.Data.Error != "Validation failed for 'description': Must be at least 10 characters" || bad.Error.Code != "INVALID_DOCUMENT" {
		t.Errorf("exit %d: %s", r.code, r.stdout)
	}
	if n := strings.Count(mustRun(t, db, "", "list").stdout, "\n"); n != 2 {
		t.Errorf("the bad task was stored: %d lines", n)
	}
}

func TestCreateWithSourceEventIsIdempotent(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	a := mustRun(t, db, "", "create", "--description", "Triage the failing nightly build", "--source-event-id", "evt-42", "--json").stdout
	b := mustRun(t, db, "", "create", "--description", "Triage the failing nightly build", "--source-event-id", "evt-42", "--json").stdout
	var ea, eb struct {
		Data struct {
			TaskID   string `json:"task_id"`
			Existing bool
		}
	}
	json.Unmarshal([]byte(a), &ea)
	json.Unmarshal([]byte(b), &eb)
	if ea.Data.TaskID == "" || ea.Data.TaskID != eb.Data.TaskID || ea.Data.Existing || !eb.Data.Existing {
		t.Errorf("first %+v, second %+v", ea.Data, eb.Data)
	}
	if n := strings.Count(mustRun(t, db, "", "list").stdout, "\n"); n != 2 {
		t.Errorf("%d lines in list: two tasks for one event", n)
	}
}
