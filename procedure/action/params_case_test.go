package action

import (
	"testing"

	"github.com/wo-runner/wo/procedure/internal/fixture"
	"github.com/wo-runner/wo/workorder"
)

// Validation reads a step's fields by their exact names, and says of
// "Loop_To" that it is not a field of a step. The loop must not read it
// either: encoding/json matches names regardless of case, so a loop_to
// spelt "Loop_To" went unchecked past validation (which only sees that
// loop_to is missing) and sent the run forward past the procedure's end,
// where it stopped as complete without cleaning up, with a current_step no
// later run accepts. (That such a loop does not load is the engine's test.)
func TestAStepFieldSpeltInAnotherCaseIsNotRead(t *testing.T) {
	t.Parallel()
	steps := fixture.Steps()
	loop := steps[8].(map[string]any)
	delete(loop, "loop_to")
	loop["Loop_To"] = 50
	loop["MAX_ITERATIONS"] = 1000
	task, err := workorder.Parse(map[string]any{"_key": fixture.Key, "work_order": map[string]any{"procedure": steps}})
	if err != nil {
		t.Fatal(err)
	}
	if p := paramsOf[loopParams](task.WorkOrder.Procedure[8]); p.LoopTo != 0 || p.MaxIterations != 0 {
		t.Errorf("the loop reads %+v from Loop_To and MAX_ITERATIONS, fields validation calls no field of a step", p)
	}
	loop["loop_to"], loop["max_iterations"] = 7, 2
	if task, err = workorder.Parse(map[string]any{"_key": fixture.Key, "work_order": map[string]any{"procedure": steps}}); err != nil {
		t.Fatal(err)
	}
	if p := paramsOf[loopParams](task.WorkOrder.Procedure[8]); p.LoopTo != 7 || p.MaxIterations != 2 {
		t.Errorf("the loop reads %+v from loop_to 7 and max_iterations 2", p)
	}
}
