package commands

import (
	"strings"
	"testing"
)

func TestDeleteRemovesATaskThatNeverRanAndKeepsItsLog(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	mustRun(t, db, "", "import", fixture)
	before := mustRun(t, db, "", "export").stdout
	dry := mustRun(t, db, "", "delete", "task_cr_05", "--dry-run")
	if !strings.Contains(dry.stdout, "would delete task_cr_05 (PR #5: CLI): it never ran; its activity log (1 entry) stays") {
		t.Errorf("the dry run said %q", dry.stdout)
	}
	if mustRun(t, db, "", "export").stdout != before {
		t.Fatal("the dry run changed the store")
	}
	mustRun(t, db, "", "delete", "task_cr_05")
	if r := runWo(t, db, "", "show", "task_cr_05"); r.code != ExitFailed {
		t.Errorf("the deleted task is still there: exit %d", r.code)
	}
	log := mustRun(t, db, "", "log", "task_cr_05").stdout
	if !strings.Contains(log, "task_created") || !strings.Contains(log, "task_deleted") {
		t.Errorf("the deleted task's log:\n%s", log)
	}
}

func TestDeleteRefusesWhatOthersNeedOrARunMade(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	mustRun(t, db, "", "import", fixture)
	for key, want := range map[string]string{
		"task_cr_epic": "is the epic of 3 task(s)",
		"task_cr_01":   "is waited for by task_cr_04, task_cr_05",
	} {
		r := runWo(t, db, "", "delete", key)
		if r.code != ExitInvalid || !strings.Contains(r.stderr, want) {
			t.Errorf("delete %s: exit %d %s", key, r.code, r.stderr)
		}
	}
	// A task that ran: refused until an undo takes the run back.
	repo := gitRepo(t)
	mustRun(t, db, "", "import", writeDoc(t, localOrder(t, repo, "hello.go")))
	mustRun(t, db, "", "run", "local_01")
	r := runWo(t, db, "", "delete", "local_01", "--json", "--jq", ".error.code")
	if r.code != ExitInvalid || r.stdout != "REFUSED\n" || !strings.Contains(r.stderr, "wo undo local_01") {
		t.Errorf("delete of a task that ran: exit %d %q %s", r.code, r.stdout, r.stderr)
	}
	mustRun(t, db, "", "undo", "local_01")
	mustRun(t, db, "", "delete", "local_01")
}

func TestImportReplaceTakesThePlaceOfTasksThatNeverRan(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	repo := gitRepo(t)
	first := localOrder(t, repo, "hello.go")
	mustRun(t, db, "", "import", writeDoc(t, first))
	second := localOrder(t, repo, "hello.go")
	second["title"] = "Bring hello.go over, second try"
	file := writeDoc(t, second)
	if r := runWo(t, db, "", "import", file); r.code != ExitFailed || !strings.Contains(r.stderr, "already exists") {
		t.Errorf("without --replace: exit %d %s", r.code, r.stderr)
	}
	r := mustRun(t, db, "", "import", file, "--replace")
	if !strings.Contains(r.stdout, "replaced 1 that never ran: local_01") {
		t.Errorf("import --replace said %q", r.stdout)
	}
	if got := mustRun(t, db, "", "show", "local_01", "--jq", ".data.task.title").stdout; got != "Bring hello.go over, second try\n" {
		t.Errorf("the title after the replace: %q", got)
	}
	// Once it ran, it is not replaced, and nothing of the file is imported.
	mustRun(t, db, "", "run", "local_01")
	other := localOrder(t, repo, "hello.go")
	other["_key"] = "local_02"
	both := writeDocs(t, second, other)
	if r := runWo(t, db, "", "import", both, "--replace"); r.code != ExitInvalid || !strings.Contains(r.stderr, "task local_01 has run") {
		t.Errorf("replacing a task that ran: exit %d %s", r.code, r.stderr)
	}
	if r := runWo(t, db, "", "show", "local_02"); r.code != ExitFailed {
		t.Error("the rest of the file was imported although the replace was refused")
	}
}

// After wo undo, wo delete tells the truth about the task: it ran, and the
// undo took its runs back; it does not say the task never ran.
func TestDeleteAfterAnUndoSaysTheTaskRanAndWasUndone(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	repo := gitRepo(t)
	mustRun(t, db, "", "import", writeDoc(t, localOrder(t, repo, "hello.go")))
	mustRun(t, db, "", "run", "local_01")
	mustRun(t, db, "", "undo", "local_01")
	if r := mustRun(t, db, "", "delete", "local_01", "--dry-run", "--jq", ".data.undone"); r.stdout != "true\n" {
		t.Errorf("--json says undone: %q, want true", r.stdout)
	}
	for _, args := range [][]string{{"--dry-run"}, nil} {
		r := mustRun(t, db, "", append([]string{"delete", "local_01"}, args...)...)
		want := " local_01 (Bring hello.go over): it ran, and wo undo took its runs back; its activity log ("
		if !strings.Contains(r.stdout, want) || strings.Contains(r.stdout, "never ran") {
			t.Errorf("wo delete %v said %q, want %q", args, r.stdout, want)
		}
	}
}
