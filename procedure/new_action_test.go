package procedure

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/wo-runner/wo/internal/gitname"
	"github.com/wo-runner/wo/internal/gittest"
	"github.com/wo-runner/wo/procedure/action"
	"github.com/wo-runner/wo/procedure/internal/fixture"
	"github.com/wo-runner/wo/workorder"
)

// Adding an action is one file and one line in the table. This test is
// that file: the action below, and the one line that registers it
// (tableWithRecordHead), give an engine a new step a work order can name,
// which validation accepts, --dry-run describes, the run runs and logs,
// and wo reset knows, with nothing else in wo changed.

// RecordHead says which commit the worktree's HEAD is at, and changes
// nothing: a real action that reads the repository through its step
// context, the only way an action reaches the run.
type RecordHead struct{}

// Run reads HEAD in the worktree.
func (RecordHead) Run(_ context.Context, sc *action.StepContext) (action.Outcome, error) {
	w, err := sc.Worktree()
	if err != nil {
		return action.Outcome{}, err
	}
	if !w.Complete() {
		return action.Outcome{}, fmt.Errorf("worktree %s does not exist: run the create_worktree step first", w.Path)
	}
	head, branch, err := w.Head()
	if err != nil {
		return action.Outcome{}, err
	}
	return action.Outcome{Note: fmt.Sprintf("HEAD of %s is %s on %s", w.Name, gitname.Short(head.String()), branch)}, nil
}

// Plan says what it would read.
func (RecordHead) Plan(sc *action.StepContext) string {
	name, _ := sc.WorktreeName()
	return "read the HEAD of worktree " + name
}

// tableWithRecordHead is the registry line.
func tableWithRecordHead() action.Actions {
	return append(action.DefaultActions(), action.Spec{Name: "record_head", Does: "say which commit the worktree's HEAD is at",
		New: func() action.Action { return RecordHead{} }})
}

func TestANewActionIsOneFileAndOneRegistryLine(t *testing.T) {
	h := newStepContextWith(t, stepOpts{Procedure: fixture.BareSteps("create_worktree", "create_branch", "record_head")},
		tableWithRecordHead())
	e := h.engine()

	plan, err := e.Plan(h.ctx, RunOptions{Key: fixture.Key})
	if err != nil {
		t.Fatal(err)
	}
	if s := plan.Steps[2]; s.Action != "record_head" || !s.Runnable || !strings.Contains(s.Does, "HEAD") || s.Would != "read the HEAD of worktree "+fixture.Worktree {
		t.Errorf("the dry run's step 3: %+v", s)
	}
	if _, err := e.Run(h.ctx, RunOptions{Key: fixture.Key}); err != nil {
		t.Fatal(err)
	}
	head := gittest.Run(t, h.Worktree, "rev-parse", "HEAD")
	if st := h.stored(); fmt.Sprint(st.CompletedSteps) != "[1 2 3]" || !strings.Contains(strings.Join(st.Notes, "\n"), "HEAD of "+fixture.Worktree+" is "+head[:12]+" on "+fixture.Branch) {
		t.Errorf("after the run: completed %v, notes %q", st.CompletedSteps, st.Notes)
	}
	entries, err := h.store.Logs(h.ctx, fixture.Key)
	if err != nil {
		t.Fatal(err)
	}
	logged := false
	for _, en := range entries {
		if en.Action == "step_completed" && en.Details["action"] == "record_head" {
			facts, ok, _ := action.FactsOf(en.Details)
			logged = ok && len(facts) == 0 // it made nothing, and says so
		}
	}
	if !logged {
		t.Error("the run logged no step_completed for record_head (with its empty facts)")
	}
	if res, err := e.Reset(h.ctx, fixture.Key, 2); err != nil || res.CurrentStep != 2 {
		t.Errorf("wo reset to step 2: %+v, %v", res, err)
	}

	// This build's own table does not know it: the work order is
	// refused with the names it does know.
	other := &Engine{Store: h.store}
	_, _, err = other.Load(h.ctx, fixture.Key)
	var invalid *workorder.InvalidError
	if !errors.As(err, &invalid) || !strings.Contains(err.Error(), `unknown action "record_head"`) || !strings.Contains(err.Error(), "create_worktree") {
		t.Errorf("an engine without the registry line: %v", err)
	}
}
