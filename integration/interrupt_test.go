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
	if table := f.wo(nil, "status", "task_sig"); !strings.Contains(table.stdout, "create_branch (interrupted)") {
		t.Errorf("wo status does not say the next step was interrupted:\n%s", table.stdout)
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
