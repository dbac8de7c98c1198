package commands

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Regression tests from the hostile review of issue 25: the actions' own
// rules (action.Adviser) replaced rules of workorder's validator, and
// must reject, and report, what the validator did.

// badLoop is task_cr_01 on its own, with its conditional_loop (step 9)
// changed, written to a file.
func badLoop(t *testing.T, change func(doc, loop map[string]any)) string {
	t.Helper()
	doc := standalone(t)
	doc["_key"] = "task_bad_loop"
	loop := doc["work_order"].(map[string]any)["procedure"].([]any)[8].(map[string]any)
	change(doc, loop)
	file := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(file, mustJSON(t, doc), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// The loop's required condition is the loop's rule now, applied to the
// typed view of the document (workorder.Parse). When the typed view cannot
// be read, every action's rule is silently skipped. A _rev that is no
// string (nothing else checks _rev) let wo import store a work order that
// no run can run; a block_reason that is no string hid the loop's problem
// from the list of every problem. Before, the validator reported both.
// Suggested fix: Actions.Advice decodes each step (and the context) on its
// own instead of workorder.Parse of the whole document.
func TestImportRefusesALoopWithoutConditionWhateverElseTheDocumentHolds(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	for field, value := range map[string]any{"_rev": 5, "block_reason": 5} {
		file := badLoop(t, func(doc, loop map[string]any) {
			doc[field] = value
			delete(loop, "condition")
		})
		for _, args := range [][]string{{"import", file}, {"validate", "-f", file}} {
			r := runWo(t, db, "", args...)
			if r.code != ExitInvalid || !strings.Contains(r.stderr, "step 9 condition: required for conditional_loop") {
				t.Errorf("%s %v: wo %s: exit %d, want 2 naming the loop's missing condition\n%s", field, value, args[0], r.code, r.stderr)
			}
		}
	}
	if out := mustRun(t, db, "", "list").stdout; strings.Contains(out, "task_bad_loop") {
		t.Errorf("wo import stored the invalid work order:\n%s", out)
	}
}

// A problem is listed once. The loop's rules now look at the typed step,
// where an empty condition and a loop_to of 0 (or null) read as missing:
// they add "required" to the error the validator already gives for the
// same field.
// Suggested fix: workorder.Validate drops an Advice problem at a path that
// already carries an error.
func TestEachProblemOfTheLoopIsListedOnce(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	for name, c := range map[string]struct {
		field string
		value any
	}{
		"empty condition": {"condition", ""},
		"loop_to 0":       {"loop_to", 0},
		"loop_to null":    {"loop_to", nil},
	} {
		file := badLoop(t, func(_, loop map[string]any) { loop[c.field] = c.value })
		r := runWo(t, db, "", "validate", "-f", file)
		if r.code != ExitInvalid {
			t.Errorf("%s: exit %d, want 2\n%s", name, r.code, r.stderr)
		}
		if n := strings.Count(r.stderr, "step 9 "+c.field+":"); n != 1 {
			t.Errorf("%s: step 9 %s is listed %d times, want once:\n%s", name, c.field, n, r.stderr)
		}
	}
}
