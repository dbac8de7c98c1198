package action

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/wo-runner/wo/procedure/internal/fixture"
	"github.com/wo-runner/wo/redact"
)

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

// The lines of a stream reach the wait line by line, a partial one kept
// until it ends; each is the agent's last line, its secrets removed, under
// the agent's name, its start and its time limit.
func TestProgressLinesSplitsAStream(t *testing.T) {
	h := newStepContext(t, stepOpts{})
	h.settings().AgentTimeout = 10 * time.Minute
	h.setenv("GITHUB_TOKEN", fixture.Token)
	started := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	p := newAgentProgress(h.sc("commit"), "claude", started)
	p.start()
	w := p.stream()
	w.Write([]byte("first li"))
	w.Write([]byte("ne\n{\"type\":\"system\"}\nsecond line with " + fixture.Token + "\nthird"))
	p.end()
	want := []Wait{
		{For: "agent claude", Since: started, Until: started.Add(10 * time.Minute)},
		{For: "agent claude", Last: "first line", Since: started, Until: started.Add(10 * time.Minute)},
		{For: "agent claude", Last: "second line with " + redact.Mask, Since: started, Until: started.Add(10 * time.Minute)},
		{},
	}
	if got := h.r.waitsSeen(); !reflect.DeepEqual(got, want) {
		t.Errorf("waits\n%+v\nwant\n%+v", got, want)
	}
}

// A line longer than the wait carries is cut; an agent with no time limit
// has no deadline.
func TestProgressCutsALongLine(t *testing.T) {
	h := newStepContext(t, stepOpts{})
	h.settings().AgentTimeout = 0
	p := newAgentProgress(h.sc("commit"), "command fix.sh", time.Now())
	p.stream().Write([]byte(strings.Repeat("x", 3*maxAgentLine) + "\n"))
	got := h.r.waitsSeen()
	if len(got) != 1 || !got[0].Until.IsZero() || got[0].For != "agent command fix.sh" {
		t.Fatalf("waits %+v", got)
	}
	if last := got[0].Last; len(last) > maxAgentLine+len(" […]") || !strings.HasPrefix(last, "xxx") {
		t.Errorf("the last line is %d bytes, want at most %d", len(last), maxAgentLine)
	}
}

// A named agent goes by its name, a command of the user's by its program.
func TestAgentWho(t *testing.T) {
	for _, c := range [][3]string{{"claude", "claude", "claude"}, {"command", "/tmp/x/fix.sh", "command fix.sh"}, {"", "fix", "command fix"}} {
		if got := agentWho(c[0], c[1]); got != c[2] {
			t.Errorf("agentWho(%q, %q) = %q, want %q", c[0], c[1], got, c[2])
		}
	}
}
