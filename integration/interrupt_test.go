package integration

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// After Ctrl-C the task says what happened: the phase is interrupted (not
// running, with nobody running it), the timeline has the entry, the lease
// is given back, the exit code is the shell's 130; and wo run goes on.
func TestAnInterruptedRunSaysSoAndResumes(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 5)
	f.importTask(f.task("task_sig", gitProcedure(), nil))
	signal := filepath.Join(t.TempDir(), "paused")
	cmd := f.cmd([]string{"WO_FAULT_PAUSE=create_branch:before_switch=1500ms", "WO_FAULT_SIGNAL=" + signal}, "run", "task_sig")
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the run to pause in step 2", 10*time.Second, func() bool {
		_, err := os.Stat(signal)
		return err == nil
	})
	cmd.Process.Signal(syscall.SIGINT)
	r := result(cmd, cmd.Wait(), "", errb.String())
	if r.code != 130 || !strings.Contains(r.stderr, "interrupted during step 2; run wo run task_sig to continue") {
		t.Fatalf("exit %d, want 130:\n%s", r.code, r.stderr)
	}
	if strings.Count(r.stderr, "interrupted during step 2") != 1 {
		t.Errorf("the interruption is said more than once:\n%s", r.stderr)
	}
	st := stateOf(f.doc("task_sig"))
	if st["phase"] != "interrupted" || st["lease"] != nil {
		t.Errorf("after the interrupt: phase %v, lease %v; want interrupted and none", st["phase"], st["lease"])
	}
	status := f.wo(nil, "status", "task_sig", "--json", "--jq", ".data[0].phase")
	if !strings.Contains(status.stdout, "interrupted") {
		t.Errorf("wo status does not say interrupted: %s %s", status.stdout, status.stderr)
	}
	if table := f.wo(nil, "status", "task_sig", "--wide"); !strings.Contains(table.stdout, "create_branch (interrupted)") {
		t.Errorf("wo status does not say the next step was interrupted:\n%s", table.stdout)
	}
	if show := f.wo(nil, "show", "task_sig"); !strings.Contains(show.stdout, "interrupted: the last run was stopped by a signal in step 2; wo run task_sig goes on from there") {
		t.Errorf("wo show does not say the run was interrupted:\n%s", show.stdout)
	}
	log := f.wo(nil, "log", "task_sig")
	if !regexp.MustCompile(`(?m)^\S+ \S+\s+2\s+create_branch\s+interrupted`).MatchString(log.stdout) {
		t.Errorf("the timeline has no interruption:\n%s", log.stdout)
	}
	if r := f.wo(nil, "run", "task_sig"); r.code != 0 {
		t.Fatalf("the rerun: exit %d\n%s", r.code, r.stderr)
	}
	f.assertGitDone("task_sig")
	if st := stateOf(f.doc("task_sig")); st["phase"] == "interrupted" {
		t.Error("the finished run still says interrupted")
	}
}

// An agent interrupted mid-run: what it did is in the timeline (its
// agent_finished entry, without a made-up exit status), and no warning
// says an entry was lost.
func TestAnInterruptedAgentStepKeepsItsTimeline(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 2)
	f.importTask(map[string]any{"_key": "task_think", "title": "Think", "status": "open",
		"work_order": map[string]any{"version": "1.0", "objective": "Let an agent think for a while",
			"procedure": []any{map[string]any{"step": 1, "action": "agent", "delivery": []any{map[string]any{"target": "task_note"}}}}}})
	dir := t.TempDir()
	agent := filepath.Join(dir, "agent.sh")
	started := filepath.Join(dir, "started")
	os.WriteFile(agent, []byte("#!/bin/sh\ntouch "+started+"\nsleep 30\n"), 0o755)
	cmd := f.cmd([]string{"WO_AGENT=" + agent, "WO_AGENT_WRITABLE=" + dir}, "run", "task_think")
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the agent to start", 10*time.Second, func() bool { _, err := os.Stat(started); return err == nil })
	cmd.Process.Signal(syscall.SIGINT)
	r := result(cmd, cmd.Wait(), "", errb.String())
	if r.code != 130 || strings.Contains(r.stderr, "was not written") {
		t.Fatalf("exit %d, want 130 and no lost entry:\n%s", r.code, r.stderr)
	}
	log := f.wo(nil, "log", "task_think", "--wide").stdout
	// Stopped by Ctrl-C, with no exit status of its own: no made-up one.
	if !regexp.MustCompile(`agent_finished\s+stopped\s+\S+\s+command, stopped by Ctrl-C \(SIGINT\) to wo: agent command`).MatchString(log) ||
		!strings.Contains(log, "interrupted") || strings.Contains(log, "exit -1") {
		t.Errorf("the timeline of the interrupted agent step:\n%s", log)
	}
	entries := f.wo(nil, "log", "task_think", "--json", "--jq", `.data[] | select(.action == "agent_finished") | .details | [.signal, .stopped_by, has("exit_code")] | @tsv`).stdout
	if got := strings.TrimSpace(entries); got != "interrupt\tCtrl-C (SIGINT) to wo\tfalse" {
		t.Errorf("agent_finished says signal, stopped_by, has an exit code: %q", got)
	}
}
