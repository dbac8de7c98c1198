//go:build unix

package action

import (
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wo-runner/wo/internal/identity"
	"github.com/wo-runner/wo/procedure/internal/fixture"
	"github.com/wo-runner/wo/workorder"
)

// A document can say anything about an agent it claims is running; wo
// signals a process group only when its members carry this task's agent
// environment.
func TestAForgedAgentRecordNeverStopsSomeoneElsesProcess(t *testing.T) {
	victim := exec.Command("sleep", "30")
	victim.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := victim.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { victim.Process.Kill(); victim.Wait() })
	pid := victim.Process.Pid
	for _, ticks := range []uint64{0, startTicks(pid)} {
		h := newStepContext(t, stepOpts{Procedure: fixture.AgentSteps("task_note"), Agent: "echo '<deliverable>fine</deliverable>'\n"})
		h.setState(func(s *workorder.State) {
			s.Agent = &workorder.AgentProcess{PID: pid, Host: identity.Host(), StartTicks: ticks, StartedAt: "2020-01-01T00:00:00Z", Step: 1}
		})
		h.must("agent")
		time.Sleep(50 * time.Millisecond)
		if err := syscall.Kill(pid, 0); err != nil {
			t.Fatalf("start ticks %d: the run signalled a process it never started (pid %d): %v", ticks, pid, err)
		}
		if h.stored().Agent != nil {
			t.Errorf("the forged record was not cleared: %+v", h.stored().Agent)
		}
	}
}

func TestTheAgentNeverGetsTheGitHubToken(t *testing.T) {
	t.Setenv("GITHUB_TOKEN", "ghs_AGENT_MUST_NOT_SEE")
	t.Setenv("GH_TOKEN", "ghs_AGENT_MUST_NOT_SEE_EITHER")
	h := newStepContext(t, stepOpts{Procedure: fixture.AgentSteps("task_note"), Serial: true,
		Agent: "if env | grep -q TOKEN=ghs_; then echo '<deliverable>leaked</deliverable>'; else echo \"<deliverable>clean $WO_TASK_KEY</deliverable>\"; fi\n"})
	h.must("agent")
	if got := fmt.Sprint(h.stored().Notes, h.recorded(Outcome{}).Deliverables); !strings.Contains(got, "clean "+fixture.Key) || strings.Contains(got, "leaked") {
		t.Errorf("the agent saw the token, or not its task key: %s", got)
	}
}
