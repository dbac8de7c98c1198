package action

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/wo-runner/wo/workorder"
)

// Agent runs the agent command with the step's prompt and delivers its
// deliverable to the step's typed targets. Only the deliverable is ever
// delivered; the work log goes to the activity log. A step whose targets
// all carry their content skips the agent.
type Agent struct{}

func newAgent() Action { return Agent{} }

// maxKept bounds what a deliverable and a work log keep in the document and
// the log.
const maxKept = 8 << 10

// Run runs the agent, validates, delivers.
func (Agent) Run(ctx context.Context, sc *StepContext) (Outcome, error) {
	targets := paramsOf[agentParams](sc.Step).Delivery
	precomposed := len(targets) > 0
	for _, t := range targets {
		precomposed = precomposed && t.Content != ""
	}
	if precomposed {
		return deliver(ctx, sc, "", "pre-composed content, no agent run")
	}
	if sc.Settings().Agent == "" {
		reason := fmt.Sprintf("step %d (agent) needs an agent command: pass --agent or set WO_AGENT, then run wo run %s", sc.Step.Step, sc.Key())
		return Outcome{Status: workorder.StatusBlocked, BlockReason: reason, State: sc.withPhase(workorder.PhaseNeedsAgent)},
			&WaitingError{Key: sc.Key(), Reason: reason}
	}
	dir := ""
	if p := sc.State().WorktreePath; p != nil {
		dir = *p
	}
	if dir == "" {
		dir = sc.Context("repo_path")
	}
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "wo-agent-"); err != nil {
			return Outcome{}, err
		}
		defer os.RemoveAll(dir)
	}
	if err := agentCapped(sc); err != nil {
		return Outcome{Status: workorder.StatusBlocked, BlockReason: err.Error(), State: sc.withPhase(workorder.PhaseNeedsAgent)}, err
	}
	res, err := runAgentOnce(ctx, sc, dir, AgentPrompt(sc.Doc(), sc.Step))
	ex := ExtractDeliverable(res.Stdout)
	if err != nil {
		sc.Log(ctx, "agent_finished", howItEnded(res, map[string]any{"step": sc.Step.Step, "agent": res.Agent, "outcome": "stopped",
			"duration_ms": res.Duration.Milliseconds(), "work_log": trim(ex.Work, maxKept), "stderr": trim(res.Stderr, maxKept), "error": err.Error()}))
		return Outcome{}, err
	}
	if err := agentFailure(ctx, sc, res, ""); err != nil {
		return Outcome{}, err
	}
	// The deliverable is delivered; the work log is what the run leaves.
	res.Stdout = ex.Work
	if err := recordAgentRun(ctx, sc, res, AgentDone, ""); err != nil {
		return Outcome{}, err
	}
	if len(targets) == 0 {
		return Outcome{Note: fmt.Sprintf("agent finished in %s; no delivery targets", res.Duration.Round(1e6))}, nil
	}
	if why := ex.Invalid(); why != "" {
		reason := fmt.Sprintf("needs review: %s; nothing was delivered (the agent's work log is in wo log %s)", why, sc.Key())
		return Outcome{Status: workorder.StatusBlocked, BlockReason: reason, State: sc.withPhase(workorder.PhaseNeedsReview)},
			&WaitingError{Key: sc.Key(), Reason: reason}
	}
	return deliver(ctx, sc, ex.Deliverable, "agent's deliverable")
}

// deliver sends the deliverable (or each target's own content) to every
// target. Each delivery is safe to repeat: a PR comment carries a marker
// and is not posted twice.
func deliver(ctx context.Context, sc *StepContext, deliverable, what string) (Outcome, error) {
	var done, notes []string
	for _, t := range paramsOf[agentParams](sc.Step).Delivery {
		content := deliverable
		if t.Content != "" {
			content = t.Content
		}
		switch t.Target {
		case "task_note":
			notes = append(notes, "deliverable (step "+strconv.Itoa(sc.Step.Step)+"): "+trim(content, 2000))
		case "pr_comment", "pr_body":
			// The PR this work order opened, else one the document names as
			// the target. inputs.pr_number is a series number ("PR #1" of a
			// split), not GitHub's, so it is never used here.
			n := sc.PRNumber()
			if n == 0 {
				i, _ := workorder.AsInt(sc.Task().WorkOrder.Context["target_pr"])
				n = int(i)
			}
			if n == 0 {
				return Outcome{}, fmt.Errorf("delivery to %s needs a pull request: create_pr comes first, or set context.target_pr to the GitHub pull request number", t.Target)
			}
			client, err := sc.GitHub()
			if err != nil {
				return Outcome{}, err
			}
			// A pull request is read by more people than the task: an
			// agent that printed the token does not publish it there.
			content := sc.Redact(content)
			if t.Target == "pr_body" {
				err = client.EditPRBody(ctx, n, content)
			} else {
				marker := fmt.Sprintf("%s%d -->", DeliveryMarker(sc.Key()), sc.Step.Step)
				err = client.CommentOnce(ctx, n, content+"\n\n"+marker, marker)
			}
			if err != nil {
				return Outcome{}, err
			}
		}
		done = append(done, t.Target)
	}
	st := sc.State()
	st.Notes = append(st.Notes, notes...)
	if deliverable != "" {
		if st.Deliverables == nil {
			st.Deliverables = map[string]string{}
		}
		st.Deliverables[strconv.Itoa(sc.Step.Step)] = trim(deliverable, maxKept)
	}
	st.Phase = workorder.PhaseRunning
	return Outcome{Note: fmt.Sprintf("delivered %s to %s", what, strings.Join(done, ", ")), State: &st}, nil
}

// agentParams are an agent step's own fields.
type agentParams struct {
	Delivery []Delivery `json:"delivery"`
}

// Delivery is where an agent step's deliverable goes (the deliverable
// format): typed, never guessed from text. Content, when set, is delivered
// as it is and the agent is not asked.
type Delivery struct {
	Target  string `json:"target"` // one of workorder.DeliveryTargets
	Content string `json:"content,omitempty"`
}

// Prompter is an action that asks an agent: wo prompt shows, for its
// step, the prompt the agent gets instead of the task's general one.
type Prompter interface {
	Prompt(doc workorder.Document, step workorder.Step) string
}

// Prompt is the prompt the agent gets.
func (Agent) Prompt(doc workorder.Document, step workorder.Step) string {
	return AgentPrompt(doc, step)
}

// Plan says what the step would do.
func (Agent) Plan(sc *StepContext) string {
	var targets []string
	for _, t := range paramsOf[agentParams](sc.Step).Delivery {
		targets = append(targets, t.Target)
	}
	if len(targets) == 0 {
		return "run the agent command with the task's prompt"
	}
	return "run the agent command with the task's prompt; deliver its <deliverable> to " + strings.Join(targets, ", ")
}

func trim(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + fmt.Sprintf("\n[… %d more bytes not kept]", len(s)-n)
}

// AgentTask is the procedure of a task an agent does (wo import of a
// tasks.json): one agent step, told its role.
func AgentTask(role, description string) []any {
	return []any{map[string]any{"step": 1, "action": "agent", "description": fmt.Sprintf("As %s: %s", role, description)}}
}
