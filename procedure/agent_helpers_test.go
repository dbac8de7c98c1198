package procedure

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// What an agent prints is kept up to a bound, and what was dropped is
// counted, so a chatty agent cannot fill the document or the memory.
func TestAgentOutputIsBoundedAndSaysWhatItDropped(t *testing.T) {
	b := limitedBuffer{limit: 5}
	b.Write([]byte("abc"))
	b.Write([]byte("defgh"))
	b.Write([]byte("ij"))
	if got, want := b.String(), "abcde\n[… 5 more bytes not kept]"; got != want {
		t.Errorf("kept %q, want %q", got, want)
	}
	exact := limitedBuffer{limit: 3}
	exact.Write([]byte("abc"))
	if got := exact.String(); got != "abc" {
		t.Errorf("output exactly at the bound: %q", got)
	}
	if got := trim("abcdef", 6); got != "abcdef" {
		t.Errorf("trim at the bound: %q", got)
	}
	if got := trim("abcdefg", 6); got != "abcdef\n[… 1 more bytes not kept]" {
		t.Errorf("trim past the bound: %q", got)
	}
	if got := lastLine("first\nsecond\nthe last one  \n\n"); got != "the last one" {
		t.Errorf("lastLine: %q", got)
	}
	if got := lastLine("only"); got != "only" {
		t.Errorf("lastLine of one line: %q", got)
	}
}

func TestProcessFactsComeFromProc(t *testing.T) {
	me := os.Getpid()
	if startTicks(me) == 0 {
		t.Fatal("no start time for this very process")
	}
	other := exec.Command("sleep", "5")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { other.Process.Kill(); other.Wait() }()
	if startTicks(other.Process.Pid) < startTicks(me) {
		t.Error("a process started later has an earlier start time")
	}
	if f := statFields(me); len(f) < 20 || f[0] != "R" && f[0] != "S" {
		t.Errorf("the fields of this process's stat: %v", f)
	}
	if startTicks(1<<30) != 0 || statFields(1<<30) != nil {
		t.Error("a process that does not exist has facts")
	}
	if groupExists(0) || groupExists(1) {
		t.Error("the kernel's and init's groups count as an agent's")
	}
}

func TestTheApprovalRequestListsWhatItHas(t *testing.T) {
	bare := (&ApprovalRequiredError{Key: "k", Step: 2, Summary: []string{"2 commit"}}).Error()
	with := (&ApprovalRequiredError{Key: "k", Step: 2, Summary: []string{"2 commit"}, Request: []string{"summary: x"}}).Error()
	if strings.Contains(bare, "\n\n") || !strings.Contains(with, "2 commit\nsummary: x\napprove with") {
		t.Errorf("without a request:\n%s\nwith one:\n%s", bare, with)
	}
}
