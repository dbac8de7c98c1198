//go:build unix

package action

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/wo-runner/wo/internal/gittest"
	"github.com/wo-runner/wo/procedure/internal/fixture"
)

// An agent that changes nothing for the comments: the run waits and says
// what it said; run again, it is not asked again about the same comments
// (the task waits for a person's change, or --rerun-agent), and a
// person's change is then the fix.
func TestAnAgentThatChangedNothingIsNotAskedAgainAboutTheSameComments(t *testing.T) {
	// Each run of the agent leaves a line in a file beside the worktree
	// that the sandbox lets it write (fixture.AgentWritable).
	h := loopReady(t, stepOpts{Agent: `echo ran >> "$(dirname "$WO_WORKTREE")/prompt.txt"
echo 'nothing to change here'
`})
	runs := func() int {
		return strings.Count(fixture.ReadFile(t, filepath.Join(h.WtRoot, "prompt.txt")), "ran")
	}
	pushed := gittest.Run(t, h.Remote, "rev-parse", fixture.Branch)
	_, err := h.run("conditional_loop")
	w := waiting(t, err)
	if !strings.HasPrefix(w.Reason, `agent command changed nothing for the `) || !strings.Contains(w.Reason, `it said: "nothing to change here". Change the files in `+h.Worktree+` yourself and run wo run task_cr_01, or ask it again with wo run task_cr_01 --rerun-agent`) {
		t.Errorf("reason %q", w.Reason)
	}
	if runs() != 1 {
		t.Fatalf("the agent ran %d times", runs())
	}

	// Again: not asked, and the reason says it changed nothing before.
	h.r.says = nil
	_, err = h.run("conditional_loop")
	w = waiting(t, err)
	if runs() != 1 {
		t.Errorf("the agent was asked again about the same comments (%d runs)", runs())
	}
	if !strings.Contains(w.Reason, `changed nothing for the `) || !strings.Contains(w.Reason, ` before (it said: "nothing to change here"), and the worktree `+h.Worktree+` has no changes`) {
		t.Errorf("reason %q", w.Reason)
	}
	if said := strings.Join(h.r.says, "\n"); !strings.Contains(said, "not asking the agent again: it changed nothing for these comments before (nothing to change here); --rerun-agent asks it again") {
		t.Errorf("the run does not say why the agent is not asked:\n%s", said)
	}

	// --rerun-agent asks it again.
	h.settings().RerunAgent = true
	_, err = h.run("conditional_loop")
	waiting(t, err)
	if runs() != 2 {
		t.Errorf("--rerun-agent: the agent ran %d times in all, want 2", runs())
	}
	h.settings().RerunAgent = false

	// A person's change is the fix, committed and pushed without the agent.
	fixture.WriteFile(t, filepath.Join(h.Worktree, "foundation/new.go"), "package foundation\n\n// N is exported.\nconst N = 0\n")
	if _, err := h.run("conditional_loop"); err != nil {
		t.Fatal(err)
	}
	if runs() != 2 {
		t.Errorf("the agent was asked again after a person's change (%d runs)", runs())
	}
	if got := gittest.Run(t, h.Remote, "rev-parse", fixture.Branch); got == pushed {
		t.Error("the person's fix was not pushed")
	}
}
