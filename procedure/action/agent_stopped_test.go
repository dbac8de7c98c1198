//go:build unix

package action

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wo-runner/wo/procedure/internal/fixture"
)

// signalled is a context that a real signal to this process ended, as
// main's signal.NotifyContext is.
func signalled(t *testing.T, parent context.Context, sig syscall.Signal) context.Context {
	t.Helper()
	ctx, stop := signal.NotifyContext(parent, sig)
	t.Cleanup(stop)
	if err := syscall.Kill(os.Getpid(), sig); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ctx.Done():
	case <-time.After(stepLimit):
		t.Fatalf("the %s did not arrive", sig)
	}
	return ctx
}

// Who stopped the agent is said as a person says it, and the signal by
// Go's name for it.
func TestStopCause(t *testing.T) {
	leaseLost, cancel := context.WithCancelCause(context.Background())
	cancel(errors.New("task task_a: the lease was taken over by ci-7"))
	plain, cancelPlain := context.WithCancel(context.Background())
	cancelPlain()
	for _, c := range []struct {
		name       string
		ctx        context.Context
		signal, by string
	}{
		{"Ctrl-C", signalled(t, context.Background(), syscall.SIGINT), "interrupt", "Ctrl-C (SIGINT) to wo"},
		{"SIGTERM", signalled(t, context.Background(), syscall.SIGTERM), "terminated", "SIGTERM to wo"},
		{"another signal", signalled(t, context.Background(), syscall.SIGUSR1), "user defined signal 1", "a signal to wo (user defined signal 1)"},
		{"the lease lost", leaseLost, "", "wo: task task_a: the lease was taken over by ci-7"},
		{"wo itself", plain, "", "wo"},
		{"not stopped", context.Background(), "", "wo"},
	} {
		if signal, by := stopCause(c.ctx); signal != c.signal || by != c.by {
			t.Errorf("%s: stopCause = %q, %q; want %q, %q", c.name, signal, by, c.signal, c.by)
		}
	}
}

// An agent that Ctrl-C stopped is logged saying so, with no made-up exit
// status; the step's error says it too, and is the interrupt's.
func TestAnAgentStoppedByCtrlCIsLoggedSo(t *testing.T) {
	h := newStepContext(t, stepOpts{Agent: "exec sleep 30\n", Procedure: fixture.AgentSteps("task_note")})
	ctx, stop := signal.NotifyContext(h.ctx, syscall.SIGINT)
	defer stop()
	done := make(chan error, 1)
	go func() { _, err := h.action("agent").Run(ctx, h.sc("agent")); done <- err }()
	// The agent's wait begins once its process has started.
	deadline := time.Now().Add(stepLimit)
	for len(h.r.waitsSeen()) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	syscall.Kill(os.Getpid(), syscall.SIGINT)
	var err error
	select {
	case err = <-done:
	case <-time.After(stepLimit):
		t.Fatal("the agent step did not stop")
	}
	if !errors.Is(err, context.Canceled) || !strings.Contains(fmt.Sprint(err), "was stopped with its child processes by Ctrl-C (SIGINT) to wo") {
		t.Errorf("error %v, want the interrupt's, saying Ctrl-C stopped the agent", err)
	}
	ended := h.logged("agent_finished")
	if len(ended) != 1 {
		t.Fatalf("agent_finished entries %+v, want one", ended)
	}
	d := ended[0].Details
	if _, has := d["exit_code"]; has || d["signal"] != "interrupt" || d["stopped_by"] != "Ctrl-C (SIGINT) to wo" || d["outcome"] != "stopped" {
		t.Errorf("agent_finished %+v: want signal interrupt, stopped by Ctrl-C, no exit code", d)
	}
	if w := h.r.waitsSeen(); len(w) < 2 || w[0].For != "agent command agent.sh" || w[len(w)-1] != (Wait{}) {
		t.Errorf("waits %+v: want the agent's, then its end", w)
	}
}

// An agent killed from outside wo (the OOM killer, a person's kill -9)
// failed, and its failure says by what, not "status -1".
func TestAnAgentKilledFromOutsideSaysSo(t *testing.T) {
	h := newStepContext(t, stepOpts{Agent: "kill -KILL $$\n", Procedure: fixture.AgentSteps("task_note"), Unconfined: true})
	_, err := h.run("agent")
	fixture.ErrContains(t, err, "agent command "+h.settings().Agent+" was stopped by a signal from outside wo (killed)")
	if strings.Contains(err.Error(), "-1") {
		t.Errorf("the error gives a made-up status: %v", err)
	}
	ended := h.logged("agent_finished")
	if len(ended) != 1 {
		t.Fatalf("agent_finished entries %+v, want one", ended)
	}
	if d := ended[0].Details; d["signal"] != "killed" || d["stopped_by"] != "a signal from outside wo (killed)" || d["exit_code"] != nil {
		t.Errorf("agent_finished %+v: want signal killed, stopped from outside, no exit code", d)
	}
}
