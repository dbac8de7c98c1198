package commands

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// gitRepo makes a repository with main and a feature branch that adds
// hello.go, with the real git command.
func gitRepo(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "repo")
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
			"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
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
// too, with the same reason, by step number; and the dry run fails.
func TestValidateRefusesWhatRunWouldRefuse(t *testing.T) {
	t.Parallel()
	repo := gitRepo(t)
	for _, c := range []struct {
		name string
		doc  map[string]any
		want string
	}{
		{"a file the source branch lacks", localOrder(t, repo, "hello.go", "missing.go"), "step 3: wo run would refuse:"},
		{"no repository", func() map[string]any {
			d := localOrder(t, repo, "hello.go")
			delete(d["work_order"].(map[string]any)["context"].(map[string]any), "repo_path")
			return d
		}(), "step 1: wo run would refuse: no repository: set work_order.context.repo_path or pass --repo (steps 2, 3, 4, 5 too)"},
		{"an empty manifest", localOrder(t, repo), "step 3: wo run would refuse: work_order.inputs.file_manifest is empty"},
	} {
		t.Run(c.name, func(t *testing.T) {
			db := newDB(t)
			file := writeDoc(t, c.doc)
			r := runWo(t, db, "", "validate", "-f", file)
			if r.code != ExitInvalid || !strings.Contains(r.stderr, c.want) {
				t.Fatalf("wo validate -f: exit %d, want 2 saying %q:\n%s", r.code, c.want, r.stderr)
			}
			mustRun(t, db, "", "import", file)
			if r := runWo(t, db, "", "validate", "local_01"); r.code != ExitInvalid || !strings.Contains(r.stderr, c.want) {
				t.Errorf("wo validate KEY: exit %d, want 2 saying %q:\n%s", r.code, c.want, r.stderr)
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
	if log, _ := exec.Command("git", "-C", repo, "log", "--format=%s", "review/hello").Output(); !strings.Contains(string(log), "Bring hello.go over") {
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
