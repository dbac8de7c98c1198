package action

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/wo-runner/wo/procedure/internal/fixture"
	"github.com/wo-runner/wo/redact"
	"github.com/wo-runner/wo/workorder"
)

// agentSteps is a procedure that opens the PR, then runs an agent step
// delivering to the given targets.

const summariser = `prompt=$(cat)
echo "$prompt" | grep -q 'Summarise the change for reviewers' || exit 9
echo "$prompt" | grep -q '<deliverable>' || exit 8
echo "I read pkg/a.go and foundation/new.go."
echo "<deliverable>Two files: A changes, N is new.</deliverable>"
`

// issueComments are the bodies of the PR's conversation comments.
func issueComments(t *testing.T, h *stepHarness) []string {
	t.Helper()
	gh, err := h.sc("agent").GitHub()
	if err != nil {
		t.Fatal(err)
	}
	cs, err := gh.IssueComments(h.ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, c := range cs {
		out = append(out, c.Body)
	}
	return out
}

func TestAgentStepDeliversToThePullRequestOnce(t *testing.T) {
	h := newStepContext(t, stepOpts{GitHub: true, Agent: summariser, Procedure: fixture.AgentSteps("pr_comment", "task_note")})
	h.openPR()
	out, err := h.run("agent")
	if err != nil {
		t.Fatal(err)
	}
	want := "Two files: A changes, N is new.\n\n<!-- wo:" + fixture.Key + ":step:2 -->"
	if got := issueComments(t, h); len(got) != 1 || got[0] != want {
		t.Errorf("PR comments %q, want one %q", got, want)
	}
	st := h.recorded(out)
	if st.Deliverables["2"] != "Two files: A changes, N is new." {
		t.Errorf("deliverables %v", st.Deliverables)
	}
	if n := st.Notes; len(n) == 0 || n[len(n)-1] != "deliverable (step 2): Two files: A changes, N is new." {
		t.Errorf("notes %q", n)
	}
	if strings.Contains(strings.Join(st.Notes, "\n"), "I read pkg/a.go") {
		t.Error("the work log was delivered")
	}
	if out.Note != "delivered agent's deliverable to pr_comment, task_note" || st.Phase != workorder.PhaseRunning {
		t.Errorf("note %q phase %q", out.Note, st.Phase)
	}

	// A rerun after a crash posts no second comment.
	if _, err := h.run("agent"); err != nil {
		t.Fatal(err)
	}
	if got := issueComments(t, h); len(got) != 1 {
		t.Errorf("%d PR comments after a rerun, want 1", len(got))
	}
}

func TestAgentStepWritesThePullRequestBody(t *testing.T) {
	h := newStepContext(t, stepOpts{GitHub: true, Agent: summariser, Procedure: fixture.AgentSteps("pr_body")})
	h.openPR()
	h.must("agent")
	if got := h.GH.PullRequests(fixture.Repo)[0]["body"]; got != "Two files: A changes, N is new." {
		t.Errorf("PR body %q", got)
	}
}

func TestAgentStepWithoutAnAgentWaits(t *testing.T) {
	h := newStepContext(t, stepOpts{Procedure: fixture.AgentSteps("task_note")})
	out, err := h.run("agent")
	var w *WaitingError
	if !errors.As(err, &w) {
		t.Fatalf("err %v, want waiting", err)
	}
	want := "step 2 (agent) needs an agent command: pass --agent or set WO_AGENT, then run wo run " + fixture.Key
	if w.Reason != want || out.BlockReason != want || out.Status != workorder.StatusBlocked {
		t.Errorf("reason %q status %q, want %q", w.Reason, out.Status, want)
	}
	if st := h.recorded(out); st.Phase != workorder.PhaseNeedsAgent {
		t.Errorf("phase %q, want needs_agent", st.Phase)
	}
}

func TestAgentStepRunsWhereTheWorkIs(t *testing.T) {
	script := `echo "<deliverable>$(pwd) $WO_WORKTREE $WO_TASK_KEY</deliverable>"` + "\n"
	h := newStepContext(t, stepOpts{Agent: script, Procedure: fixture.AgentSteps("task_note")})
	out := h.must("agent")
	if got := h.r.state.Deliverables["2"]; got != h.Repo+" "+h.Repo+" "+fixture.Key {
		t.Errorf("the agent ran in %q, want the repository %s (note %q)", got, h.Repo, out.Note)
	}
	// With a worktree recorded, there.
	wt := t.TempDir()
	h.setState(func(s *stateT) { s.WorktreePath = &wt })
	h.must("agent")
	if got := h.r.state.Deliverables["2"]; got != wt+" "+wt+" "+fixture.Key {
		t.Errorf("the agent ran in %q, want the worktree %s", got, wt)
	}
}

func TestAgentStepWithoutTargets(t *testing.T) {
	h := newStepContext(t, stepOpts{Agent: "echo done\n", Procedure: fixture.AgentSteps()})
	out, err := h.run("agent")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.Note, "agent finished in ") || !strings.HasSuffix(out.Note, "; no delivery targets") {
		t.Errorf("note %q", out.Note)
	}
	if got := h.plan("agent"); got != "run the agent command with the task's prompt" {
		t.Errorf("plan %q", got)
	}
}

func TestAgentStepErrors(t *testing.T) {
	t.Run("a PR target without a PR", func(t *testing.T) {
		h := newStepContext(t, stepOpts{GitHub: true, Agent: summariser, Procedure: fixture.AgentSteps("pr_comment")})
		_, err := h.run("agent")
		fixture.ErrContains(t, err, "delivery to pr_comment needs a pull request: create_pr comes first, or set context.target_pr")
		// inputs.pr_number is a series number, never taken for GitHub's.
		h = newStepContext(t, stepOpts{GitHub: true, Agent: summariser, Procedure: fixture.AgentSteps("pr_comment"), Inputs: map[string]any{"pr_number": 1}})
		h.pushBranch()
		h.must("create_pr")
		h.setState(func(s *stateT) { s.PRNumber = 0 })
		_, err = h.run("agent")
		fixture.ErrContains(t, err, "needs a pull request")
		if got := issueComments(t, h); len(got) != 0 {
			t.Errorf("a comment went to the PR numbered like the series: %q", got)
		}
	})
	t.Run("context.target_pr names the PR", func(t *testing.T) {
		h := newStepContext(t, stepOpts{GitHub: true, Agent: summariser, Procedure: fixture.AgentSteps("pr_comment"), Context: map[string]any{"target_pr": 1}})
		h.pushBranch()
		h.must("create_pr")
		h.setState(func(s *stateT) { s.PRNumber = 0 })
		h.must("agent")
		if got := issueComments(t, h); len(got) != 1 {
			t.Errorf("PR comments %q", got)
		}
	})
	t.Run("the agent fails", func(t *testing.T) {
		h := newStepContext(t, stepOpts{Agent: "echo 'no credits left' >&2\nexit 4\n", Procedure: fixture.AgentSteps("task_note")})
		_, err := h.run("agent")
		fixture.ErrContains(t, err, "agent command "+h.settings().Agent+" exited with status 4: no credits left")
	})
	t.Run("the agent outlasts its limit", func(t *testing.T) {
		h := newStepContext(t, stepOpts{Agent: "exec sleep 30\n", Procedure: fixture.AgentSteps("task_note")})
		h.settings().AgentTimeout = 100 * time.Millisecond
		_, err := h.run("agent")
		fixture.ErrContains(t, err, "agent command "+h.settings().Agent+" ran longer than its limit of 100ms and was stopped")
		// A stopped agent has no exit status of its own: the log says what
		// stopped it, and with what signal.
		ended := h.logged("agent_finished")
		if len(ended) != 1 || ended[0].Details["stopped_by"] != "its time limit of 100ms" || ended[0].Details["exit_code"] != nil {
			t.Fatalf("agent_finished entries %+v, want one stopped by the time limit, with no exit code", ended)
		}
		if sig := ended[0].Details["signal"]; sig != "terminated" {
			t.Errorf("the agent ended by signal %v, want terminated (wo's SIGTERM)", sig)
		}
	})
	t.Run("an agent command that cannot be split", func(t *testing.T) {
		h := newStepContext(t, stepOpts{Procedure: fixture.AgentSteps("task_note")})
		h.settings().Agent = `fixer "unterminated`
		_, err := h.run("agent")
		fixture.ErrContains(t, err, `agent command "fixer \"unterminated" cannot be split into words`)
	})
	t.Run("an agent command that does not exist", func(t *testing.T) {
		h := newStepContext(t, stepOpts{Procedure: fixture.AgentSteps("task_note")})
		h.settings().Agent = "/no/such/agent --fast"
		_, err := h.run("agent")
		fixture.ErrContains(t, err, "agent command /no/such/agent could not run")
	})
}

func TestAgentStepPlan(t *testing.T) {
	h := newStepContext(t, stepOpts{Procedure: fixture.AgentSteps("pr_comment", "task_note")})
	if got, want := h.plan("agent"), "run the agent command with the task's prompt; deliver its <deliverable> to pr_comment, task_note"; got != want {
		t.Errorf("plan %q, want %q", got, want)
	}
}

// A deliverable goes to a pull request, which more people read than the
// task: a token the agent printed is masked there too. And someone who
// quotes wo's marker in a comment of their own does not stop the delivery.
func TestADeliveryToThePullRequestIsMaskedAndNotStoppedByAQuotedMarker(t *testing.T) {
	agent := "cat > /dev/null\necho '<deliverable>Deployed with token " + fixture.Token + "</deliverable>'\n"
	h := newStepContext(t, stepOpts{GitHub: true, Agent: agent, Procedure: fixture.AgentSteps("pr_comment")})
	h.openPR()
	h.GH.CommentAs(fixture.Repo, 1, "mallory", "<!-- wo:"+fixture.Key+":step:2 -->")
	h.must("agent")
	got := issueComments(t, h)
	if len(got) != 2 || strings.Contains(got[1], fixture.Token) || !strings.HasPrefix(got[1], "Deployed with token "+redact.Mask) {
		t.Errorf("PR comments %q: want mallory's and wo's, masked", got)
	}
}

// An imported task's procedure is one agent step that this build runs,
// told the task's role.
func TestAnAgentTaskIsOneAgentStep(t *testing.T) {
	t.Parallel()
	steps := AgentTask("reviewer", "Read the change")
	doc := workorder.Document{"_key": "task_a", "title": "A", "status": "open", "type": "task", "priority": "medium",
		"work_order": map[string]any{"version": "1.0", "objective": "Read the change and say what it does", "procedure": steps}}
	if r := workorder.Validate(doc, DefaultActions().Options()); !r.Valid() {
		t.Fatalf("the procedure does not validate: %+v", r)
	}
	task, err := workorder.Parse(doc)
	if err != nil {
		t.Fatal(err)
	}
	if s := task.WorkOrder.Procedure; len(s) != 1 || s[0].Action != "agent" || s[0].Description != "As reviewer: Read the change" {
		t.Errorf("procedure %+v", s)
	}
}
