package commands

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wo-runner/wo/internal/gittest"
	"github.com/wo-runner/wo/store"
)

// Quoting follows wo validate's messages, which escape what the user
// wrote ("Fix it"); the parameter's name stays the field.
func TestCreateFromParamsFile(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	params := `{"description": "Fix the authentication bug in the login flow", "priority": "p0",
	  "expected_deliverables": ["Fix it", "Regression test for the login flow in tests/test_login.py"],
	  "constraints": ["Do not change the session cookie format"]}`
	r := mustRun(t, db, params, "create", "--params", "-", "--json")
	var env struct {
		Data struct {
			TaskID     string `json:"task_id"`
			Priority   string
			Validation struct{ Warnings []string }
		}
	}
	json.Unmarshal([]byte(r.stdout), &env)
	if env.Data.Priority != "critical" || len(env.Data.Validation.Warnings) != 1 || env.Data.Validation.Warnings[0] != `expected_deliverables[0]: Deliverable is very short: "Fix it". Consider being more specific.` {
		t.Errorf("data %+v", env.Data)
	}
	shown := mustRun(t, db, "", "show", env.Data.TaskID, "--json").stdout
	if !strings.Contains(shown, `"enforcement_level": "strict"`) || !strings.Contains(shown, `"validation_warnings"`) {
		t.Errorf("task_context not in the registry shape:\n%s", shown)
	}
	if r := runWo(t, db, `{"description": ["not", "a", "string"]}`, "create", "--params", "-"); r.code != ExitInvalid {
		t.Errorf("bad params: exit %d %s", r.code, r.stderr)
	}
	if r := runWo(t, db, "", "create", "--params", "x.json", "--description", "Two ways at once is a mistake"); r.code != ExitInvalid || !strings.Contains(r.stderr, "give one of") {
		t.Errorf("two modes: exit %d %s", r.code, r.stderr)
	}
}

// wo create and wo validate judge the same task with the same rules and
// say the same thing about it.
func TestCreateAndValidateGiveTheSameMessages(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	dir := t.TempDir()
	params := map[string]any{"description": "Fix bug", "priority": "P9", "client_cwd": dir,
		"background_context": "Too short.", "expected_deliverables": []any{"Fix it"},
		"success_criteria": []any{"It looks great to me"}, "constraints": []any{"Be quick about the change"},
		"relevant_files": []any{"src/missing.py"}, "related_documentation": []any{"https://wiki/auth standards"}}
	r := runWo(t, db, string(mustJSON(t, params)), "create", "--params", "-", "--json")
	var created struct {
		Data struct {
			Problems []struct{ Field, Reason, Severity string }
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &created); err != nil || r.code != ExitInvalid {
		t.Fatalf("create: exit %d %v\n%s", r.code, err, r.stdout)
	}
	doc := map[string]any{"_key": "task_same", "description": "Fix bug", "priority": "P9", "task_context": map[string]any{
		"client_cwd": dir, "background_context": "Too short.", "expected_deliverables": map[string]any{"items": []any{"Fix it"}},
		"success_criteria": map[string]any{"criteria": []any{"It looks great to me"}}, "constraints": map[string]any{"rules": []any{"Be quick about the change"}},
		"relevant_files": []any{"src/missing.py"}, "related_documentation": []any{"https://wiki/auth standards"}}}
	r = runWo(t, db, string(mustJSON(t, doc)), "validate", "-f", "-", "--json")
	var validated struct {
		Data []struct {
			Problems []struct{ Field, Reason, Severity string }
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &validated); err != nil || len(validated.Data) != 1 {
		t.Fatalf("validate: %v\n%s", err, r.stdout)
	}
	byReason := func(probs []struct{ Field, Reason, Severity string }) map[string]string {
		out := map[string]string{}
		for _, p := range probs {
			out[p.Reason] = p.Severity
		}
		return out
	}
	a, b := byReason(created.Data.Problems), byReason(validated.Data[0].Problems)
	if len(a) != 8 {
		t.Errorf("wo create found %d problems, want one per broken rule: %v", len(a), a)
	}
	for reason, sev := range a {
		if b[reason] != sev {
			t.Errorf("wo create says %s %q; wo validate does not:\n%v", sev, reason, b)
		}
	}
	for reason := range b {
		if _, ok := a[reason]; !ok {
			t.Errorf("wo validate says %q; wo create does not", reason)
		}
	}
}

// failingLogStore is a store whose activity log cannot be written.
type failingLogStore struct{ store.Store }

func (failingLogStore) AppendLog(context.Context, store.LogEntry) error {
	return errors.New("persephone_logs: disk full")
}

func TestImportSaysWhenTheActivityLogWasNotWritten(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	var out, errb strings.Builder
	f := NewFactory(strings.NewReader(string(mustJSON(t, standalone(t)))), &out, &errb)
	f.OpenStore = func(ctx context.Context, cfg StoreConfig) (store.Store, error) {
		s, err := openStore(ctx, cfg, f.Getenv)
		return failingLogStore{s}, err
	}
	if code := Run(context.Background(), f, []string{"wo", "import", "-", "--store", db}); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	want := "warning: task_cr_01 was created but its activity log entry was not written: persephone_logs: disk full\n"
	if errb.String() != want || out.String() != "imported 1 task(s): task_cr_01\n" {
		t.Errorf("stdout %q\nstderr %q", out.String(), errb.String())
	}
}

func TestSplitWritesThroughTheSameValidatorAsImport(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	root, repo := splitRepo(t)
	r := runWo(t, db, "", "split", "--repo", repo, "--base", "base", "--source", "main", "--worktree-root", "relative/wt", "--epic-key", "task_m")
	if r.code != ExitInvalid || !strings.Contains(r.stderr, `work_order.context.worktree_root: "relative/wt" must be an absolute path`) {
		t.Errorf("exit %d: %s", r.code, r.stderr)
	}
	if n := strings.Count(mustRun(t, db, "", "list").stdout, "\n"); n != 1 {
		t.Errorf("an invalid split wrote %d lines of tasks", n)
	}
	r = mustRun(t, db, "", "split", "--repo", repo, "--base", "base", "--source", "main", "--worktree-root", filepath.Join(root, "wt"), "--epic-key", "task_m")
	// The one warning: without a GitHub remote the work orders stop after the push.
	if !strings.HasPrefix(r.stdout, "wrote epic task_m: 1 files in 1 PRs\n") || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, "no remote named origin") {
		t.Errorf("stdout %q\nstderr %q", r.stdout, r.stderr)
	}
	logs := mustRun(t, db, "", "log", "task_m_pr01").stdout
	if !strings.Contains(logs, "task_created") {
		t.Errorf("the work order's creation is not logged:\n%s", logs)
	}
}

// splitRepo is a repository whose main adds lib/lib.go to its branch base:
// a change wo split makes one PR of.
func splitRepo(t *testing.T) (root, repo string) {
	t.Helper()
	root = t.TempDir()
	repo = filepath.Join(root, "repo")
	gittest.Run(t, root, "init", "-q", "-b", "main", repo)
	os.WriteFile(filepath.Join(repo, "go.mod"), []byte("module example.com/m\n\ngo 1.22\n"), 0o644)
	gittest.Run(t, repo, "add", "-A")
	gittest.Run(t, repo, "commit", "-q", "-m", "base")
	gittest.Run(t, repo, "branch", "base")
	os.MkdirAll(filepath.Join(repo, "lib"), 0o755)
	os.WriteFile(filepath.Join(repo, "lib", "lib.go"), []byte("package lib\n"), 0o644)
	gittest.Run(t, repo, "add", "-A")
	gittest.Run(t, repo, "commit", "-q", "-m", "change")
	return root, repo
}
