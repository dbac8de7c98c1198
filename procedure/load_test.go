package procedure

import (
	"errors"
	"strings"
	"testing"

	"github.com/wo-runner/wo/procedure/internal/fixture"
	"github.com/wo-runner/wo/workorder"
)

// The engine runs only what its actions' validation accepts: a loop
// without its condition does not load.
func TestALoopWithoutItsConditionDoesNotLoad(t *testing.T) {
	e, s := newTestEngine(t, "commit", "conditional_loop")
	doc, _ := s.Get(t.Context(), "task_e")
	if _, _, err := e.Load(t.Context(), "task_e"); err == nil || !strings.Contains(err.Error(), "required for conditional_loop") {
		t.Errorf("a run of a loop without its condition loads: %v (%v)", err, workorder.Get(doc, "work_order.procedure"))
	}
}

// A step field spelt in another case is no field of the step: a loop
// whose loop_to is spelt Loop_To does not load, as having no loop_to
// (before, it went unchecked past validation and sent the run past the
// procedure's end).
func TestALoopWhoseLoopToIsSpeltInAnotherCaseDoesNotLoad(t *testing.T) {
	h := newStepContext(t, stepOpts{})
	steps := fixture.Steps()
	loop := steps[8].(map[string]any)
	delete(loop, "loop_to")
	loop["Loop_To"] = 50
	loop["MAX_ITERATIONS"] = 1000
	anotherWriter(t, h, map[string]any{"work_order": map[string]any{"procedure": steps}})

	_, _, err := h.engine().Load(h.ctx, fixture.Key)
	var invalid *workorder.InvalidError
	if !errors.As(err, &invalid) || !strings.Contains(err.Error(), "step 9 loop_to: required for conditional_loop") {
		t.Errorf("loading a loop whose loop_to is spelt Loop_To: %v, want it refused as having no loop_to", err)
	}
}
