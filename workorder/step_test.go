package workorder

import (
	"encoding/json"
	"testing"
)

// A step keeps what every step has in its fields and the action's own
// fields in Params, which the action decodes into its own type.
func TestAStepKeepsItsActionsOwnFieldsAsParams(t *testing.T) {
	var s Step
	raw := `{"step": 3, "action": "conditional_loop", "command": "x", "description": "loop", "condition": "c", "loop_to": 2, "max_iterations": 4}`
	if err := json.Unmarshal([]byte(raw), &s); err != nil {
		t.Fatal(err)
	}
	if s.Step != 3 || s.Action != "conditional_loop" || s.Command != "x" || s.Description != "loop" || len(s.Params) != 3 {
		t.Fatalf("step %+v", s)
	}
	var p struct {
		Condition string `json:"condition"`
		LoopTo    int    `json:"loop_to"`
		Max       int    `json:"max_iterations"`
	}
	if err := s.DecodeParams(&p); err != nil || p.Condition != "c" || p.LoopTo != 2 || p.Max != 4 {
		t.Errorf("params %+v, %v", p, err)
	}
	// A field of the wrong type is an error naming the step.
	var bad struct {
		LoopTo string `json:"loop_to"`
	}
	if err := s.DecodeParams(&bad); err == nil || err.Error()[:len("step 3 (conditional_loop)")] != "step 3 (conditional_loop)" {
		t.Errorf("decoding loop_to as a string: %v", err)
	}
	// A step with none has no params, and decodes to the zero value.
	var plain Step
	if err := json.Unmarshal([]byte(`{"step": 1, "action": "push"}`), &plain); err != nil || plain.Params != nil {
		t.Errorf("plain step %+v, %v", plain, err)
	}
	if err := plain.DecodeParams(&p); err != nil {
		t.Errorf("no params: %v", err)
	}
	if err := json.Unmarshal([]byte(`{"step": "one"}`), &plain); err == nil {
		t.Error("a step number that is a string decoded")
	}
	if err := json.Unmarshal([]byte(`[1]`), &plain); err == nil {
		t.Error("a step that is a list decoded")
	}
}

// A step's params are read by their exact names, as validation reads them:
// a field spelt in another case is no field of the step's, whatever
// encoding/json would match it to.
func TestAStepsParamsAreReadByTheirExactNames(t *testing.T) {
	var s Step
	raw := `{"step": 9, "action": "conditional_loop", "Loop_To": 50, "max_iterations": 3, "Skip": "x", "hidden": "y", "-": "z"}`
	if err := json.Unmarshal([]byte(raw), &s); err != nil {
		t.Fatal(err)
	}
	var p struct {
		LoopTo int    `json:"loop_to"`
		Max    int    `json:"max_iterations"`
		Skip   string `json:"-"`
		Plain  string
		hidden string
	}
	if err := s.DecodeParams(&p); err != nil || p.LoopTo != 0 || p.Max != 3 || p.Skip != "" || p.hidden != "" {
		t.Errorf("params %+v, %v: only max_iterations is named as the type names it", p, err)
	}
	s.Params["Plain"] = "kept"
	if err := s.DecodeParams(&p); err != nil || p.Plain != "kept" {
		t.Errorf("an untagged field is read by its Go name: %+v, %v", p, err)
	}
	// A target that is no struct gets every param.
	var all map[string]any
	if err := s.DecodeParams(&all); err != nil || len(all) != len(s.Params) || all["Loop_To"] != float64(50) {
		t.Errorf("into a map: %v, %v", all, err)
	}
	// A struct that embeds another is decoded as encoding/json would.
	type inner struct {
		LoopTo int `json:"loop_to"`
	}
	var embeds struct{ inner }
	s.Params["loop_to"] = 4
	if err := s.DecodeParams(&embeds); err != nil || embeds.LoopTo != 4 {
		t.Errorf("an embedding struct: %+v, %v", embeds, err)
	}
}
