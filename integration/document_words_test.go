package integration

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wo-runner/wo/internal/gittest"
)

// The core example work order, as its authors wrote it (only the ellipses
// of its shortened lists removed), validates, and, run on a copy of the
// repository layout it names, works where its own commands say.
func TestTheExampleWorkOrderAsWritten(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 4)
	raw, err := os.ReadFile("../fixtures/task_cr_01.json")
	if err != nil {
		t.Fatal(err)
	}
	r := f.wo(nil, "validate", "-f", "../fixtures/task_cr_01.json")
	if r.code != 0 || !strings.Contains(r.stdout, "warning work_order.dependencies.blocks[0]") {
		t.Fatalf("the document as written: exit %d, want 0 with warnings for the tasks it blocks\n%s%s", r.code, r.stdout, r.stderr)
	}

	// The copy of the layout: the worktree root and the repository live
	// in the test's folder; the pinned base commit is the copy's.
	base := gittest.Run(t, f.repo, "rev-parse", "code-review-base")
	text := strings.NewReplacer("/tmp/hermes-review", f.wtRoot, "/home/todd/olympus/Hermes", f.repo,
		`"0510fe2"`, `"`+base[:7]+`"`).Replace(string(raw))
	var doc map[string]any
	if err := json.Unmarshal([]byte(text), &doc); err != nil {
		t.Fatal(err)
	}
	wo := doc["work_order"].(map[string]any)
	doc["status"], wo["state"] = "open", nil // not started yet
	manifest := make([]any, len(f.files))
	for i, p := range f.files {
		manifest[i] = p
	}
	wo["inputs"].(map[string]any)["file_manifest"] = manifest
	delete(doc, "parent_key")
	f.importTask(doc)

	r = f.wo(nil, "run", "task_cr_01", "--dry-run", "--until-step", "5") // no GitHub token here: the plan of the git steps
	want := filepath.Join(f.wtRoot, "pr-01-foundation")
	if r.code != 0 || !strings.Contains(r.stdout, "create linked worktree "+want) || strings.Contains(r.stdout, "review-01-foundation") {
		t.Fatalf("the dry run does not plan the worktree the command names (%s):\n%s%s", want, r.stdout, r.stderr)
	}
	if r := f.wo(nil, "run", "task_cr_01", "--until-step", "5"); r.code != 0 {
		t.Fatalf("run: exit %d\n%s", r.code, r.stderr)
	}
	if list := gittest.Run(t, f.repo, "worktree", "list", "--porcelain"); !strings.Contains(list, "worktree "+want+"\n") {
		t.Errorf("git worktree list has no %s:\n%s", want, list)
	}
	if got := gittest.Run(t, f.origin, "rev-parse", "refs/heads/review/01-foundation~1"); got != base {
		t.Errorf("the pushed branch starts at %s, want the pinned base %s", got, base)
	}
}
