package commands

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/wo-runner/wo/internal/gittest"
)

// gitRepo makes a repository with main and a feature branch that adds
// hello.go, with the real git command.
func gitRepo(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "repo")
	run := func(args ...string) { gittest.Run(t, dir, args...) }
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	run("init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(dir, "README.md"), []byte("# r\n"), 0o644)
	run("add", "README.md")
	run("commit", "-qm", "first")
	run("switch", "-qc", "feature")
	os.WriteFile(filepath.Join(dir, "hello.go"), []byte("package hello\n"), 0o644)
	run("add", "hello.go")
	run("commit", "-qm", "hello")
	return dir
}

// localOrder is a work order of git steps only, over repo.
func localOrder(t *testing.T, repo string, files ...string) map[string]any {
	manifest := []any{}
	for _, f := range files {
		manifest = append(manifest, f)
	}
	steps := []any{}
	for i, a := range []string{"create_worktree", "create_branch", "checkout_files", "commit", "cleanup_worktree"} {
		steps = append(steps, map[string]any{"step": i + 1, "action": a})
	}
	return map[string]any{"_key": "local_01", "title": "Bring hello.go over",
		"work_order": map[string]any{"version": "1.0", "objective": "Bring hello.go over to a review branch",
			"context": map[string]any{"repo_path": repo, "base_branch": "main", "source_branch": "feature",
				"worktree_root": filepath.Join(filepath.Dir(repo), "worktrees")},
			"inputs":    map[string]any{"branch_name": "review/hello", "file_manifest": manifest},
			"procedure": steps}}
}

func writeDoc(t *testing.T, doc map[string]any) string {
	t.Helper()
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "doc.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// What wo run refuses before it changes anything, wo validate refuses
// too, with the same reason, by step number, and says whose the problem
// is: the document's (exit 2) or this machine's (exit 1, the document
// valid); and the dry run fails.
func TestValidateRefusesWhatRunWouldRefuse(t *testing.T) {
	t.Parallel()
	repo := gitRepo(t)
	const machine = "the document is valid, but this machine cannot run it: 1 problem(s)"
	for _, c := range []struct {
		name string
		doc  map[string]any
		want string
		code int
		kind string
	}{
		{"a file the source branch lacks", localOrder(t, repo, "hello.go", "missing.go"), "step 3: wo run would refuse: 1 file(s) of the manifest do not exist at feature",
			ExitFailed, "machine"},
		{"no repository", func() map[string]any {
			d := localOrder(t, repo, "hello.go")
			delete(d["work_order"].(map[string]any)["context"].(map[string]any), "repo_path")
			return d
		}(), "step 1: wo run would refuse: no repository: set work_order.context.repo_path or pass --repo (steps 2, 3, 4, 5 too)", ExitFailed, "machine"},
		{"an empty manifest", localOrder(t, repo), "step 3: wo run would refuse: work_order.inputs.file_manifest is empty", ExitInvalid, "document"},
	} {
		t.Run(c.name, func(t *testing.T) {
			db := newDB(t)
			file := writeDoc(t, c.doc)
			r := runWo(t, db, "", "validate", "-f", file)
			if r.code != c.code || !strings.Contains(r.stderr, c.want) || strings.Contains(r.stderr, machine) != (c.kind == "machine") {
				t.Fatalf("wo validate -f: exit %d, want %d saying %q, a %s problem:\n%s", r.code, c.code, c.want, c.kind, r.stderr)
			}
			kinds := runWo(t, db, "", "validate", "-f", file, "--jq", `[.data[].problems[].kind] | unique | join(",")`)
			if kinds.code != c.code || kinds.stdout != c.kind+"\n" {
				t.Errorf("--json: exit %d, the problems are %q, want %d and %q", kinds.code, kinds.stdout, c.code, c.kind)
			}
			mustRun(t, db, "", "import", file)
			if r := runWo(t, db, "", "validate", "local_01"); r.code != c.code || !strings.Contains(r.stderr, c.want) {
				t.Errorf("wo validate KEY: exit %d, want %d saying %q:\n%s", r.code, c.code, c.want, r.stderr)
			}
			dry := runWo(t, db, "", "run", "local_01", "--dry-run")
			if dry.code != ExitInvalid || !strings.Contains(dry.stdout, "Plan for local_01") || !strings.Contains(dry.stderr, "cannot run; nothing was changed") {
				t.Errorf("wo run --dry-run: exit %d, want 2 with the plan and the reason:\n%s\n%s", dry.code, dry.stdout, dry.stderr)
			}
			run := runWo(t, db, "", "run", "local_01")
			if run.code != ExitInvalid || !strings.Contains(run.stderr, "cannot run; nothing was changed") {
				t.Errorf("wo run: exit %d, want 2:\n%s", run.code, run.stderr)
			}
		})
	}
}

func TestValidatePassesWhatRunStarts(t *testing.T) {
	t.Parallel()
	repo := gitRepo(t)
	db := newDB(t)
	file := writeDoc(t, localOrder(t, repo, "hello.go"))
	if r := mustRun(t, db, "", "validate", "-f", file); !strings.HasPrefix(r.stdout, "local_01: valid") {
		t.Errorf("wo validate -f said %q", r.stdout)
	}
	mustRun(t, db, "", "import", file)
	mustRun(t, db, "", "validate", "local_01")
	mustRun(t, db, "", "run", "local_01", "--dry-run")
	r := mustRun(t, db, "", "run", "local_01")
	if log, _ := gittest.Try(repo, "log", "--format=%s", "review/hello"); !strings.Contains(log, "Bring hello.go over") {
		t.Errorf("the run did not commit on review/hello: %s\n%s", log, r.stderr)
	}
}

// A document without a _key is named by its file, place and title, not
// by the key an import would give it (new at every try).
func TestAProblemInADocumentWithoutAKeyNamesItsFileAndTitle(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	doc := localOrder(t, "/nowhere", "hello.go")
	delete(doc, "_key")
	doc["work_order"].(map[string]any)["procedure"].([]any)[0].(map[string]any)["action"] = "make_worktree"
	path := filepath.Join(t.TempDir(), "mine.json")
	b, _ := json.Marshal([]any{doc, doc})
	os.WriteFile(path, b, 0o644)
	r := runWo(t, db, "", "validate", "-f", path)
	want := path + `, document 2 ("Bring hello.go over") step 1 action: unknown action "make_worktree" (did you mean create_worktree?)`
	if r.code != ExitInvalid || !strings.Contains(r.stderr, want) || strings.Contains(r.stderr, "task_") {
		t.Errorf("exit %d, want 2 saying %q and no made-up key:\n%s", r.code, want, r.stderr)
	}
}

// wo reset never guesses how far back: without --to-step or --to-start it
// changes nothing; with --dry-run it says what it would forget and
// changes nothing; then it does what it said.
func TestResetSaysWhatItForgetsAndNeedsATarget(t *testing.T) {
	t.Parallel()
	repo := gitRepo(t)
	db := newDB(t)
	mustRun(t, db, "", "import", writeDoc(t, localOrder(t, repo, "hello.go")))
	mustRun(t, db, "", "run", "local_01")
	before := mustRun(t, db, "", "export").stdout

	r := runWo(t, db, "", "reset", "local_01")
	if r.code != ExitInvalid || !strings.Contains(r.stderr, "say how far back") {
		t.Errorf("reset without a target: exit %d %s", r.code, r.stderr)
	}
	dry := mustRun(t, db, "", "reset", "local_01", "--to-step", "2", "--dry-run")
	for _, want := range []string{"local_01: rewinding from step 5/5 to step 2 would forget:", "steps done: 3, 4, 5 (they run again)",
		"source_sha: ", "dry run: nothing changed"} {
		if !strings.Contains(dry.stdout, want) {
			t.Errorf("the dry run does not say %q:\n%s", want, dry.stdout)
		}
	}
	if after := mustRun(t, db, "", "export").stdout; after != before {
		t.Error("a refused reset or a dry run changed the task")
	}
	done := mustRun(t, db, "", "reset", "local_01", "--to-step", "2")
	if !strings.Contains(done.stdout, "steps done: 3, 4, 5") || !strings.Contains(done.stdout, "local_01: reset to step 2/5, status in_progress") {
		t.Errorf("reset --to-step 2:\n%s", done.stdout)
	}
	start := mustRun(t, db, "", "reset", "local_01", "--to-start", "--json", "--jq", ".data.plan.not_done")
	if strings.TrimSpace(start.stdout) != "[\n  1,\n  2\n]" && strings.TrimSpace(start.stdout) != "[1,2]" {
		t.Errorf("reset --to-start: %q", start.stdout)
	}
}

func writeDocs(t *testing.T, docs ...map[string]any) string {
	t.Helper()
	list := make([]any, len(docs))
	for i, d := range docs {
		list[i] = d
	}
	b, err := json.Marshal(list)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "docs.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// wo validate --offline checks the documents alone: it opens no store,
// asks no GitHub and looks at no repository, so a document that this
// machine cannot run passes, while the document's own errors fail it
// (exit 2) — also those that wo run's checks find in the document alone.
func TestValidateOfflineChecksTheDocumentsAlone(t *testing.T) {
	t.Parallel()
	var asked atomic.Int32
	gh := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { asked.Add(1) }))
	defer gh.Close()
	env := map[string]string{"GITHUB_API_URL": gh.URL + "/"}
	// A store in a folder that does not exist: opening it would make the folder.
	db := filepath.Join(t.TempDir(), "never", "wo.db")
	offline := func(file string, args ...string) woRun {
		t.Helper()
		return runWoEnv(t, env, db, "", append([]string{"validate", "--offline", "-f", file}, args...)...)
	}

	// The seed's example: its repository and token are on another machine.
	if r := offline(fixture); r.code != 0 || !strings.Contains(r.stdout, "task_cr_01: valid") {
		t.Errorf("the example: exit %d, want 0:\n%s%s", r.code, r.stdout, r.stderr)
	}
	noRepo := localOrder(t, "/nowhere/repo", "hello.go")
	if r := runWoEnv(t, env, newDB(t), "", "validate", "-f", writeDoc(t, noRepo)); r.code != ExitFailed {
		t.Errorf("without --offline, a document whose repository is not here: exit %d, want 1\n%s", r.code, r.stderr)
	}
	// A blocker in the store, which --offline does not read.
	noRepo["work_order"].(map[string]any)["dependencies"] = map[string]any{"blocked_by": []any{"task_elsewhere"}}
	r := offline(writeDoc(t, noRepo))
	const outside = `warning work_order.dependencies.blocked_by[0]: names task "task_elsewhere", which is not among the documents checked (offline: the store was not read)`
	if r.code != 0 || !strings.Contains(r.stdout, "local_01: valid, 1 warning(s)") || !strings.Contains(r.stdout, outside) {
		t.Errorf("offline, the same document: exit %d, want 0 with a warning for the blocker it cannot see:\n%s%s", r.code, r.stdout, r.stderr)
	}

	typo := localOrder(t, "/nowhere/repo", "hello.go")
	typo["work_order"].(map[string]any)["procedure"].([]any)[0].(map[string]any)["action"] = "make_worktree"
	r = offline(writeDoc(t, typo), "--json", "--jq", ".error.code")
	if r.code != ExitInvalid || r.stdout != "INVALID_DOCUMENT\n" {
		t.Errorf("an unknown action: exit %d %q, want 2 INVALID_DOCUMENT\n%s", r.code, r.stdout, r.stderr)
	}
	// What wo run's checks find wrong in the document alone counts offline too.
	empty := localOrder(t, "/nowhere/repo")
	r = offline(writeDoc(t, empty))
	if r.code != ExitInvalid || !strings.Contains(r.stderr, "local_01 step 3: wo run would refuse: work_order.inputs.file_manifest is empty") ||
		strings.Contains(r.stderr, "no repository") || strings.Contains(r.stderr, "/nowhere") {
		t.Errorf("an empty manifest: exit %d, want 2 for it and nothing of the machine:\n%s", r.code, r.stderr)
	}

	if _, err := os.Stat(filepath.Dir(db)); !os.IsNotExist(err) {
		t.Errorf("wo validate --offline opened the store: %v", err)
	}
	if n := asked.Load(); n > 0 {
		t.Errorf("wo validate --offline asked GitHub %d time(s)", n)
	}
}
