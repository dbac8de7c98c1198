package action

import "testing"

// What a person sees of an agent's line while it runs: a JSON event's
// text, else the line.
func TestAgentLineText(t *testing.T) {
	for line, want := range map[string]string{
		"  Applied edit to calc.go  ": "Applied edit to calc.go",
		`{"type":"item.completed","item":{"type":"agent_message","text":"Handled the nil case."}}`: "Handled the nil case.",
		`{"type":"item.started","item":{"type":"command_execution","command":"go test ./..."}}`:    "runs go test ./...",
		`{"type":"turn.failed","error":{"message":"429 Too Many Requests"}}`:                       "error: 429 Too Many Requests",
		`{"type":"result","subtype":"success","result":"done"}`:                                    "finished (success)",
		`{"type":"assistant","message":{"content":[{"type":"text","text":"Looking at calc.go"}]}}`: "Looking at calc.go",
		`{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Edit"}]}}`:           "uses Edit",
		`{"type":"system","subtype":"init"}`:                                                       "",
		`{not json`:                                                                                "{not json",
	} {
		if got := agentLineText(line); got != want {
			t.Errorf("agentLineText(%s) = %q, want %q", line, got, want)
		}
	}
}

// The lines of a stream reach the progress line by line, a partial one
// kept until it ends.
func TestProgressLinesSplitsAStream(t *testing.T) {
	h := newStepContext(t, stepOpts{})
	p := newAgentProgress(h.sc("commit"), "claude")
	w := p.stream()
	w.Write([]byte("first li"))
	w.Write([]byte("ne\nsecond line\nthird"))
	said := h.r.says
	if len(said) != 1 || said[0] != "claude: first line" {
		t.Errorf("said %q, want the first line once (the next within %s is not shown)", said, agentProgressEvery)
	}
}
