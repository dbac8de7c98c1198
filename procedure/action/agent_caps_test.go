//go:build unix

package action

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wo-runner/wo/internal/gittest"
	"github.com/wo-runner/wo/procedure/internal/fixture"
	"github.com/wo-runner/wo/workorder"
)

// capRun runs the loop with the agent's usage so far and the caps given:
// the error, and whether the agent ran (its fix is in the worktree).
func capRun(t *testing.T, rounds, maxRounds int, cost, maxCost float64) (error, bool) {
	t.Helper()
	h := loopReady(t, stepOpts{Agent: fixOf})
	h.settings().MaxAgentRounds, h.settings().MaxAgentCost = maxRounds, maxCost
	h.setState(func(s *stateT) {
		s.AgentUsage = &workorder.AgentUsage{Runs: rounds + 1, Rounds: rounds, CostUSD: cost}
	})
	_, err := h.run("conditional_loop")
	ran := strings.Contains(fixture.ReadFile(t, filepath.Join(h.Worktree, "foundation/new.go")), "// N is exported.")
	return err, ran
}

// --max-agent-rounds stops the run at the cap, with a message that says
// which cap and what was spent; below it (or without one) the agent runs.
func TestTheAgentsRoundCapStopsTheRunAtTheCap(t *testing.T) {
	err, ran := capRun(t, 2, 2, 0, 0)
	if ran {
		t.Error("the agent ran at its round cap")
	}
	want := "the agent's cap of 2 round(s) for this task is reached (--max-agent-rounds, WO_MAX_AGENT_ROUNDS): it ran 3 time(s), 2 of them fixing something; fix the comments by hand and run wo run task_cr_01, or raise the cap"
	if w := waiting(t, err); w.Reason != want {
		t.Errorf("reason %q\nwant   %q", w.Reason, want)
	}
	for _, c := range []struct {
		name             string
		rounds, maxRound int
	}{{"below the cap", 1, 2}, {"no cap", 7, 0}} {
		if err, ran := capRun(t, c.rounds, c.maxRound, 0, 0); err != nil || !ran {
			t.Errorf("%s: err %v, agent ran %v", c.name, err, ran)
		}
	}
}

// --max-agent-cost stops the run once the task's runs cost the cap.
func TestTheAgentsCostCapStopsTheRunAtTheCap(t *testing.T) {
	err, ran := capRun(t, 1, 0, 0.5, 0.5)
	if ran {
		t.Error("the agent ran at its cost cap")
	}
	want := "the agent's cost cap of $0.50 for this task is reached (--max-agent-cost, WO_MAX_AGENT_COST): its runs cost $0.5000; fix the comments by hand and run wo run task_cr_01, or raise the cap"
	if w := waiting(t, err); w.Reason != want {
		t.Errorf("reason %q\nwant   %q", w.Reason, want)
	}
	for _, c := range []struct {
		name          string
		cost, maxCost float64
	}{{"below the cap", 0.49, 0.5}, {"no cap", 3, 0}} {
		if err, ran := capRun(t, 1, 0, c.cost, c.maxCost); err != nil || !ran {
			t.Errorf("%s: err %v, agent ran %v", c.name, err, ran)
		}
	}
}

// An agent that said it is rate limited until a time is not run again
// before then: the run stops and says when to run it.
func TestARateLimitedAgentIsNotRunBeforeItsTime(t *testing.T) {
	h := loopReady(t, stepOpts{Agent: fixOf})
	until := time.Date(2031, 1, 2, 3, 4, 5, 0, time.UTC)
	h.r.now = func() time.Time { return until.Add(-time.Minute) }
	h.setState(func(s *stateT) {
		s.AgentUsage = &workorder.AgentUsage{Runs: 1, Last: &workorder.AgentRunRecord{Agent: "claude", Outcome: AgentFailed,
			Message: "usage limit reached", NotBefore: until.Format(time.RFC3339)}}
	})
	_, err := h.run("conditional_loop")
	var failed *AgentFailedError
	if !errors.As(err, &failed) {
		t.Fatalf("err %v, want the agent's rate limit", err)
	}
	want := "agent claude reported a failure: usage limit reached; it is rate limited, and nothing was pushed: run wo run task_cr_01 after 2031-01-02T03:04:05Z"
	if err.Error() != want {
		t.Errorf("error %q\nwant  %q", err, want)
	}
	if strings.Contains(fixture.ReadFile(t, filepath.Join(h.Worktree, "foundation/new.go")), "// N is exported.") {
		t.Error("the agent ran before its rate limit's end")
	}
	// After its time it runs.
	h.r.now = func() time.Time { return until.Add(time.Minute) }
	if _, err := h.run("conditional_loop"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(fixture.ReadFile(t, filepath.Join(h.Worktree, "foundation/new.go")), "// N is exported.") {
		t.Error("the agent did not run after its rate limit's end")
	}
}

// The plan shows the budget a named agent is given: what is left of the
// task's cost cap (a cent at least), none without a cap; and claude runs
// bare only when its API key is set.
func TestThePlanGivesTheAgentWhatIsLeftOfTheCostCap(t *testing.T) {
	h := newStepContext(t, stepOpts{})
	h.settings().Agent = "claude"
	plan := func() string {
		p := h.plan("conditional_loop")
		_, call, _ := strings.Cut(p, "run the agent: ")
		call, _, _ = strings.Cut(call, ", commit")
		return call
	}
	const base = "claude -p --output-format json --permission-mode acceptEdits"
	if got := plan(); got != base+" < prompt" {
		t.Errorf("no cap: %q", got)
	}
	h.settings().MaxAgentCost = 2
	if got := plan(); got != base+" --max-budget-usd 2.00 < prompt" {
		t.Errorf("a cap, nothing spent: %q", got)
	}
	h.setState(func(s *stateT) { s.AgentUsage = &workorder.AgentUsage{Runs: 1, CostUSD: 0.5} })
	if got := plan(); got != base+" --max-budget-usd 1.50 < prompt" {
		t.Errorf("a cap, 0.50 spent: %q", got)
	}
	h.setState(func(s *stateT) { s.AgentUsage = &workorder.AgentUsage{Runs: 1, CostUSD: 2.5} })
	if got := plan(); got != base+" --max-budget-usd 0.01 < prompt" {
		t.Errorf("a cap, more than it spent: %q", got)
	}
	h.setenv("ANTHROPIC_API_KEY", "sk-test")
	if got := plan(); got != base+" --bare --max-budget-usd 0.01 < prompt" {
		t.Errorf("with its API key: %q", got)
	}
}

// What wo show tells of the agent's runs: each run counted, a run that
// fixed something a round, and the last one's outcome.
func TestTheAgentsRunsAreCountedInTheTasksState(t *testing.T) {
	h := loopReady(t, stepOpts{Agent: fixOf})
	out, err := h.run("conditional_loop")
	if err != nil {
		t.Fatal(err)
	}
	u := h.recorded(out).AgentUsage
	if u == nil || u.Runs != 1 || u.Rounds != 1 || u.Last == nil || u.Last.Outcome != AgentFixed || u.Last.NotBefore != "" {
		t.Fatalf("the agent's usage after a run that fixed the comments: %+v", u)
	}
	if u.Last.Comments == "" {
		t.Error("the run does not say which comments it was asked about")
	}
	// The activity log has the fix run's output as its output (an agent
	// step's is its work log).
	if logs := h.logged("agent_finished"); len(logs) != 1 || logs[0].Details["stdout"] == nil || logs[0].Details["work_log"] != nil {
		t.Errorf("the activity log of the fix run: %+v", logs)
	}
	// A run that changed nothing is a run, not a round.
	h = loopReady(t, stepOpts{Agent: "echo looked, nothing to change\n"})
	h.setState(func(s *stateT) { s.AgentUsage = &workorder.AgentUsage{Runs: 4, Rounds: 2, CostUSD: 1} })
	_, _ = h.run("conditional_loop")
	if u := h.stored().AgentUsage; u == nil || u.Runs != 5 || u.Rounds != 2 || u.Last == nil || u.Last.Outcome != AgentNoChange {
		t.Errorf("the agent's usage after a run that changed nothing: %+v", u)
	}
}

// An agent rate limited for longer than wo sits out: the run stops, and
// the state keeps when it may run again, so that the next run waits.
func TestALongRateLimitIsKeptForTheNextRun(t *testing.T) {
	h := loopReady(t, stepOpts{Agent: "echo '429 Too Many Requests: retry after 2 hours' >&2; exit 1\n"})
	at := time.Date(2031, 1, 2, 3, 4, 5, 0, time.UTC)
	h.r.now = func() time.Time { return at }
	_, err := h.run("conditional_loop")
	want := "agent command " + h.settings().Agent + " exited with status 1: 429 Too Many Requests: retry after 2 hours; it is rate limited, and nothing was pushed: run wo run task_cr_01 after 2031-01-02T05:04:05Z"
	if err == nil || err.Error() != want {
		t.Errorf("error %v\nwant  %s", err, want)
	}
	u := h.stored().AgentUsage
	if u == nil || u.Runs != 1 || u.Rounds != 0 || u.Last == nil || u.Last.Outcome != AgentFailed || u.Last.NotBefore != "2031-01-02T05:04:05Z" {
		t.Fatalf("the agent's usage after its rate limit: %+v", u)
	}
	// One that does not say until when keeps no time, and is not asked
	// again at once.
	h = loopReady(t, stepOpts{Agent: "echo 'usage limit reached' >&2; exit 1\n"})
	if _, err := h.run("conditional_loop"); err == nil || !strings.HasSuffix(err.Error(), "it is rate limited, and nothing was pushed: run wo run task_cr_01 later") {
		t.Errorf("error %v: want to be told to run it later", err)
	}
	if u := h.stored().AgentUsage; u == nil || u.Last == nil || u.Last.Failure != "rate_limit" || u.Last.NotBefore != "" || u.Runs != 1 {
		t.Errorf("the agent's usage after a rate limit without its end: %+v", u)
	}
}

// A short rate limit is sat out once: the run says so, counts the limited
// run, and asks the agent again, whose fix is pushed.
func TestAShortRateLimitIsSatOutAndTheAgentAskedAgain(t *testing.T) {
	// The agent is limited the first time it is asked: a file beside the
	// worktree that the sandbox lets it write (fixture.AgentWritable)
	// remembers that it was.
	h := loopReady(t, stepOpts{Agent: `asked="$(dirname "$WO_WORKTREE")/prompt.txt"
if [ ! -s "$asked" ]; then
	echo asked > "$asked"
	echo '429 Too Many Requests: retry after 20 ms' >&2
	exit 1
fi
` + fixOf})
	pushed := gittest.Run(t, h.Remote, "rev-parse", fixture.Branch)
	out, err := h.run("conditional_loop")
	if err != nil {
		t.Fatal(err)
	}
	said := strings.Join(h.r.says, "\n")
	if !strings.Contains(said, "is rate limited (429 Too Many Requests: retry after 20 ms): asking again in 0s") {
		t.Errorf("the run does not say it sits out the rate limit:\n%s", said)
	}
	if got := gittest.Run(t, h.Remote, "rev-parse", fixture.Branch); got == pushed {
		t.Error("the fix of the agent's second run was not pushed")
	}
	if u := h.recorded(out).AgentUsage; u == nil || u.Runs != 2 || u.Rounds != 1 || u.Last == nil || u.Last.Outcome != AgentFixed {
		t.Errorf("the agent's usage: %+v", u)
	}
}
