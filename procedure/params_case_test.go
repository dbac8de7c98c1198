package procedure

import (
	"errors"
	"strings"
	"testing"

	"github.com/wo-runner/wo/workorder"
)

// Validation reads a step's fields by their exact names, and says of
// "Loop_To" that it is not a field of a step. The loop must not read it
// either: encoding/json matches names regardless of case, so a loop_to
// spelt "Loop_To" went unchecked past validation (which only sees that
// loop_to is missing) and sent the run forward past the procedure's end,
// where it stopped as complete without cleaning up, with a current_step no
// later run accepts.
func TestAStepFieldSpeltInAnotherCaseIsNotRead(t *testing.T) {
	h := newStepContext(t, stepOpts{})
	steps := seedSteps()
	loop := steps[8].(map[string]any)
	delete(loop, "loop_to")
	loop["Loop_To"] = 50
	loop["MAX_ITERATIONS"] = 1000
	anotherWriter(t, h, map[string]any{"work_order": map[string]any{"procedure": steps}})

	_, _, err := h.engine().Load(h.ctx, fixKey)
	var invalid *workorder.InvalidError
	if !errors.As(err, &invalid) || !strings.Contains(err.Error(), "step 9 loop_to: required for conditional_loop") {
		t.Errorf("loading a loop whose loop_to is spelt Loop_To: %v, want it refused as having no loop_to", err)
	}
	doc, err := h.store.Get(h.ctx, fixKey)
	if err != nil {
		t.Fatal(err)
	}
	task, err := workorder.Parse(doc)
	if err != nil {
		t.Fatal(err)
	}
	if p := paramsOf[loopParams](task.WorkOrder.Procedure[8]); p.LoopTo != 0 || p.MaxIterations != 0 {
		t.Errorf("the loop reads %+v from Loop_To and MAX_ITERATIONS, fields validation calls no field of a step", p)
	}
}
