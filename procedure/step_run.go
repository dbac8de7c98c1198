package procedure

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/wo-runner/wo/github"
	"github.com/wo-runner/wo/gitops"
	"github.com/wo-runner/wo/procedure/action"
	"github.com/wo-runner/wo/workorder"
)

// stepRun is a run as its actions see it: every part of action.Run, the
// only way from an action into the engine.
type stepRun struct{ r *run }

// stepContext is the context of one step of the run.
func (r *run) stepContext(step workorder.Step, scope workorder.Scope) *action.StepContext {
	s := stepRun{r}
	return action.NewStepContext(action.Run{TaskView: s, Environment: s, Recorder: s, Connections: s, Reporter: s, StackTables: s}, step, scope)
}

func (s stepRun) Key() string               { return s.r.key() }
func (s stepRun) Task() *workorder.Task     { return s.r.task }
func (s stepRun) Doc() workorder.Document   { return s.r.currentDoc() }
func (s stepRun) State() workorder.State    { return s.r.state.Clone() }
func (s stepRun) Getenv(name string) string { return s.r.Getenv(name) }
func (s stepRun) Settings() action.Settings { return s.r.Settings }
func (s stepRun) Now() time.Time            { return s.r.Now() }
func (s stepRun) Warn(msg string) {
	s.r.warnings = append(s.r.warnings, msg)
	s.r.emit(Event{Type: "warning", Key: s.r.key(), Error: msg})
}
func (s stepRun) Redact(text string) string      { return s.r.secrets().String(text) }
func (s stepRun) StackDeferred(epic string) bool { return s.r.stackDeferred(epic) }
func (s stepRun) GitHubAPI() string              { return s.r.GitHubAPI }
func (s stepRun) Fault(point string)             { s.r.fault(point) }

func (s stepRun) Checkpoint(ctx context.Context, st workorder.State) error {
	s.r.state = st.Clone()
	return s.r.save(ctx, nil)
}

func (s stepRun) Log(ctx context.Context, kind string, details map[string]any) {
	s.r.log(ctx, kind, details)
}

func (s stepRun) LoadStack(ctx context.Context, epic string) (action.Stack, error) {
	return s.r.LoadStack(ctx, epic)
}

func (s stepRun) RefreshStack(ctx context.Context, epic string) ([]action.StackUpdate, bool, error) {
	return s.r.RefreshStack(ctx, epic)
}

func (s stepRun) Say(step workorder.Step, msg string) {
	s.r.emit(Event{Type: "step_note", Key: s.r.key(), Step: step.Step, Steps: len(s.r.procedure()), Action: step.Action, Note: msg})
}

func (s stepRun) Progress(step workorder.Step, done, total int) {
	s.r.emit(Event{Type: "step_progress", Key: s.r.key(), Step: step.Step, Steps: len(s.r.procedure()), Action: step.Action, Done: done, Total: total})
}

// Waiting is a step_waiting event, for people only: Event.Wait is left
// out of --json.
func (s stepRun) Waiting(step workorder.Step, w action.Wait) {
	ev := Event{Type: "step_waiting", Key: s.r.key(), Step: step.Step, Steps: len(s.r.procedure()), Action: step.Action}
	if w.For != "" {
		ev.Wait = &w
	}
	s.r.emit(ev)
}

// errOffline is what an offline check gets for the repository or GitHub.
var errOffline = errors.New("offline: not looked at")

// Repo opens the repository (--repo, else context.repo_path) once per run.
func (s stepRun) Repo() (*gitops.Repo, error) {
	r := s.r
	if r.repo != nil {
		return r.repo, nil
	}
	if r.opts.Offline {
		return nil, errOffline
	}
	path := r.opts.RepoPath
	if path == "" {
		path, _ = r.task.WorkOrder.Context["repo_path"].(string)
	}
	if path == "" {
		return nil, fmt.Errorf("task %s: no repository: set work_order.context.repo_path or pass --repo", r.key())
	}
	repo, err := gitops.Open(path)
	if err != nil {
		return nil, err
	}
	r.repo = repo
	return repo, nil
}

// GitHub is the run's client, made on first use for repo from the token
// in GITHUB_TOKEN (or GH_TOKEN). A run works in one repository and keeps
// its one client (its conditional requests and counts with it), so a
// later repo is not asked again.
func (s stepRun) GitHub(repo string) (*github.Client, error) {
	if s.r.gh != nil {
		return s.r.gh, nil
	}
	if s.r.opts.Offline {
		return nil, errOffline
	}
	c, err := github.New(s.r.githubConfig(repo))
	if err != nil {
		return nil, err
	}
	s.r.gh = c
	return c, nil
}

// CommandFacts are what the procedure's commands name, read once per run.
func (s stepRun) CommandFacts() workorder.CommandFacts {
	if s.r.facts == nil {
		f := workorder.FactsOf(s.r.doc)
		s.r.facts = &f
	}
	return *s.r.facts
}
