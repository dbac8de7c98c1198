package procedure

import (
	"os/exec"
	"syscall"
	"testing"
	"time"

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
		h := newStepContext(t, stepOpts{Procedure: agentSteps("task_note"), Agent: "echo '<deliverable>fine</deliverable>'\n"})
		h.setState(func(s *workorder.State) {
			s.Agent = &workorder.AgentProcess{PID: pid, Host: hostname(), StartTicks: ticks, StartedAt: "2020-01-01T00:00:00Z", Step: 1}
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
