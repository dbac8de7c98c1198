package action

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/wo-runner/wo/agent"
	"github.com/wo-runner/wo/workorder"
)

// How an agent's run ended, as the state and the log record it. Only a
// run that fixed something is a round of the review loop.
const (
	AgentFixed    = "fixed"     // it left a diff
	AgentNoChange = "no_change" // it ended well and changed nothing
	AgentFailed   = "failed"    // its own words, or its exit, say it failed
	AgentDone     = "done"      // an agent step's run (its deliverable judges it)
)

// agentWaitOut is the longest rate-limit wait wo sits out within a run;
// a longer one stops the run until then.
const agentWaitOut = 5 * time.Minute

// AgentFailedError is a run of the agent that failed: nothing of it is
// committed or pushed, and its own words say why.
type AgentFailedError struct {
	Key, Agent string
	Program    string // the command's program, for a command of the user's own
	ExitCode   int
	StoppedBy  string // who or what stopped it, when a signal ended it
	Report     agent.Report
	NotBefore  time.Time // a rate limit's end, when the agent said
}

// TellsNextStep: every message ends with the run to make next.
func (e *AgentFailedError) TellsNextStep() {}

func (e *AgentFailedError) Error() string {
	subject := "agent " + e.Agent
	if e.Agent == "command" || e.Agent == "" {
		subject = "agent command " + e.Program
	}
	words := e.Report.Message
	if words == "" {
		words = "it said nothing"
	}
	head := fmt.Sprintf("%s reported a failure: %s", subject, words)
	switch {
	case e.StoppedBy != "":
		head = fmt.Sprintf("%s was stopped by %s: %s", subject, e.StoppedBy, words)
	case e.ExitCode != 0:
		head = fmt.Sprintf("%s exited with status %d: %s", subject, e.ExitCode, words)
	}
	switch e.Report.Failure {
	case agent.FailAuth:
		return head + fmt.Sprintf("; it could not log in, and nothing was pushed: set its API key in wo's environment (a named agent gets its own key variables, see docs/agents.md) or pass --agent-login to use your own login, then run wo run %s", e.Key)
	case agent.FailRateLimit:
		when := "later"
		if !e.NotBefore.IsZero() {
			when = "after " + e.NotBefore.UTC().Format(time.RFC3339)
		}
		return head + fmt.Sprintf("; it is rate limited, and nothing was pushed: run wo run %s %s", e.Key, when)
	case agent.FailLimit:
		return head + fmt.Sprintf("; it stopped at its own turn or budget limit, and nothing was pushed: raise that limit in --agent, or fix the comments by hand, then run wo run %s", e.Key)
	}
	return head + fmt.Sprintf("; nothing was pushed: run wo run %s to try again", e.Key)
}

// RateLimited reports whether waiting would help.
func (e *AgentFailedError) RateLimited() bool { return e.Report.Failure == agent.FailRateLimit }

// recordAgentRun counts a run of the agent in the task's state and logs
// it whole (its output bounded); how is one of the Agent… outcomes.
func recordAgentRun(ctx context.Context, sc *StepContext, run AgentRun, how, comments string) error {
	st := sc.State()
	u := workorder.AgentUsage{}
	if st.AgentUsage != nil {
		u = *st.AgentUsage
	}
	u.Runs++
	if how == AgentFixed {
		u.Rounds++
	}
	u.CostUSD += run.Report.CostUSD
	u.Tokens += run.Report.Tokens
	rec := &workorder.AgentRunRecord{Agent: run.Agent, Step: sc.Step.Step, Outcome: how, Failure: string(run.Report.Failure),
		Message: sc.Redact(run.Report.Message), CostUSD: run.Report.CostUSD, Tokens: run.Report.Tokens,
		DurationMS: run.Duration.Milliseconds(), At: workorder.Timestamp(sc.Now()), Comments: comments}
	if how == AgentFailed && run.Report.Failure == agent.FailRateLimit && run.Report.RetryAfter > 0 {
		rec.NotBefore = workorder.Timestamp(sc.Now().Add(run.Report.RetryAfter))
	}
	u.Last = rec
	st.AgentUsage = &u
	details := map[string]any{"step": sc.Step.Step, "agent": run.Agent, "outcome": how,
		"failure": string(run.Report.Failure), "message": rec.Message, "cost_usd": run.Report.CostUSD, "tokens": run.Report.Tokens,
		"turns": run.Report.Turns, "duration_ms": run.Duration.Milliseconds(),
		"stdout": trim(run.Stdout, maxKept), "stderr": trim(run.Stderr, maxKept)}
	howItEnded(run, details)
	if how == AgentDone {
		// An agent step's output less its deliverable: its work log.
		details["work_log"] = details["stdout"]
		delete(details, "stdout")
	}
	sc.Log(ctx, "agent_finished", details)
	return sc.Checkpoint(ctx, st)
}

// howItEnded records in an agent_finished entry's details how the run
// ended: its exit status, and when it was stopped, the signal and who
// stopped it ("signal": "interrupt", "stopped_by": "Ctrl-C (SIGINT) to
// wo"); never the -1 that stands for no exit status.
func howItEnded(run AgentRun, details map[string]any) map[string]any {
	if run.ExitCode != -1 {
		details["exit_code"] = run.ExitCode
	}
	if run.Signal != "" {
		details["signal"] = run.Signal
	}
	if run.StoppedBy != "" {
		details["stopped_by"] = run.StoppedBy
	}
	return details
}

// agentFailure is the error of a failed run, recorded; nil when the run
// did not fail.
func agentFailure(ctx context.Context, sc *StepContext, run AgentRun, comments string) error {
	if run.Report.Failure == agent.FailNone {
		return nil
	}
	if err := recordAgentRun(ctx, sc, run, AgentFailed, comments); err != nil {
		return err
	}
	e := &AgentFailedError{Key: sc.Key(), Agent: run.Agent, Program: run.Program, ExitCode: run.ExitCode, StoppedBy: run.StoppedBy, Report: run.Report}
	if e.RateLimited() && run.Report.RetryAfter > 0 {
		e.NotBefore = sc.Now().Add(run.Report.RetryAfter)
	}
	sc.Say(e.Error())
	return e
}

// agentCapped stops before a run of the agent that a cap forbids
// (--max-agent-rounds, --max-agent-cost), or one that its rate limit
// says is too early: a waiting error that names the cap, or nil.
func agentCapped(sc *StepContext) error {
	s, u := sc.Settings(), sc.State().AgentUsage
	if u == nil {
		return nil
	}
	var reason string
	switch {
	case s.MaxAgentRounds > 0 && u.Rounds >= s.MaxAgentRounds:
		reason = fmt.Sprintf("the agent's cap of %d round(s) for this task is reached (--max-agent-rounds, WO_MAX_AGENT_ROUNDS): it ran %d time(s), %d of them fixing something", s.MaxAgentRounds, u.Runs, u.Rounds)
	case s.MaxAgentCost > 0 && u.CostUSD >= s.MaxAgentCost:
		reason = fmt.Sprintf("the agent's cost cap of $%.2f for this task is reached (--max-agent-cost, WO_MAX_AGENT_COST): its runs cost $%.4f", s.MaxAgentCost, u.CostUSD)
	}
	if reason != "" {
		reason += fmt.Sprintf("; fix the comments by hand and run wo run %s, or raise the cap", sc.Key())
		return &WaitingError{Key: sc.Key(), Reason: reason}
	}
	if l := u.Last; l != nil && l.NotBefore != "" {
		if t, err := time.Parse(time.RFC3339, l.NotBefore); err == nil && sc.Now().Before(t) {
			return &AgentFailedError{Key: sc.Key(), Agent: l.Agent, Report: agent.Report{Failure: agent.FailRateLimit, Message: l.Message}, NotBefore: t}
		}
	}
	return nil
}

// runAgentOnce runs the agent, sitting out a short rate limit once.
func runAgentOnce(ctx context.Context, sc *StepContext, dir, prompt string) (AgentRun, error) {
	run, err := runAgent(ctx, sc, dir, prompt)
	if err != nil || run.Report.Failure != agent.FailRateLimit || run.Report.RetryAfter <= 0 || run.Report.RetryAfter > agentWaitOut {
		return run, err
	}
	sc.Say(fmt.Sprintf("%s is rate limited (%s): asking again in %s", run.Agent, strings.TrimSpace(run.Report.Message), run.Report.RetryAfter.Round(time.Second)))
	again := sc.Now().Add(run.Report.RetryAfter)
	sc.Waiting(Wait{For: agentWho(run.Agent, run.Program) + "'s rate limit to end", Since: sc.Now(), Until: again, NextLook: again})
	if err := recordAgentRun(ctx, sc, run, AgentFailed, ""); err != nil {
		return run, err
	}
	if err := SleepCtx(ctx, run.Report.RetryAfter); err != nil {
		return run, err
	}
	return runAgent(ctx, sc, dir, prompt)
}

// commentsKey names the comments a fix run was asked about: the review
// watermark they were read to.
func commentsKey(st workorder.State) string {
	w := st.ReviewSeen
	return fmt.Sprintf("%d/%d/%d@%s", w.Review, w.ReviewComment, w.IssueComment, st.PushedSHA)
}
