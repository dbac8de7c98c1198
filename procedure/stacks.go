package procedure

import (
	"context"
	"fmt"
	"time"

	"github.com/wo-runner/wo/github"
	"github.com/wo-runner/wo/procedure/action"
	"github.com/wo-runner/wo/store"
	"github.com/wo-runner/wo/workorder"
)

// An epic's stack of pull requests (its tables, GitHub's stacks, restack,
// sync, land) is kept by package procedure/stack, above the engine. A run
// reaches it only through StackKeeper, which the commands wire in; what
// else the packages above the engine need of it is exported here.

// StackKeeper keeps the stack tables of an epic's pull requests as they
// open (package procedure/stack; nil: none are kept).
type StackKeeper interface {
	// RefreshStack brings the epic's stack tables (and GitHub's stack) up
	// to date; coalesced says another caller's pass covered this one.
	RefreshStack(ctx context.Context, epic string) (ups []action.StackUpdate, coalesced bool, err error)
	// DeferStack leaves the refresh of the epic's tables to its epic run;
	// StackDeferred says whether it is left so (noting that a pull request
	// opened); RefreshDeferred is the epic run's refresh, last ending it.
	DeferStack(epic string)
	StackDeferred(epic string) bool
	RefreshDeferred(ctx context.Context, epic string, last bool) []string
	// UnstackEpic takes apart the GitHub stacks wo made for the epic.
	UnstackEpic(ctx context.Context, epic string, dryRun bool) ([]string, error)
}

// StackRefreshEvery is how often, at most, an epic run refreshes the
// stack sections between its waves; it always refreshes once at its end.
const StackRefreshEvery = time.Minute

func (e *Engine) deferStack(epic string) {
	if e.Stacks != nil {
		e.Stacks.DeferStack(epic)
	}
}

func (e *Engine) stackDeferred(epic string) bool {
	return e.Stacks != nil && e.Stacks.StackDeferred(epic)
}

func (e *Engine) refreshDeferred(ctx context.Context, epic string, last bool) []string {
	if e.Stacks == nil {
		return nil
	}
	return e.Stacks.RefreshDeferred(ctx, epic, last)
}

// RefreshStack refreshes the epic's stack tables through the keeper.
func (e *Engine) RefreshStack(ctx context.Context, epic string) ([]action.StackUpdate, bool, error) {
	if e.Stacks == nil {
		return nil, false, nil
	}
	return e.Stacks.RefreshStack(ctx, epic)
}

// UnstackEpic takes apart the GitHub stacks that wo made for an epic (wo
// undo --epic), through the keeper. An engine without a keeper refuses an
// epic whose state records stacks wo made, rather than let the undo close
// their pull requests and delete their branches under them.
func (e *Engine) UnstackEpic(ctx context.Context, epic string, dryRun bool) ([]string, error) {
	if e.Stacks != nil {
		return e.Stacks.UnstackEpic(ctx, epic, dryRun)
	}
	doc, err := e.Store.Get(ctx, epic)
	if err != nil {
		return nil, err
	}
	st, err := workorder.StateOf(doc)
	if err != nil {
		return nil, err
	}
	if gs := st.GitHubStacks; gs != nil && len(gs.Stacks) > 0 {
		return nil, fmt.Errorf("epic %s: wo made GitHub stacks of its pull requests (%v) and this engine has no stack keeper to take them apart (procedure.Engine.Stacks unset: wire stack.New)", epic, gs.Stacks)
	}
	return nil, nil
}

// LoadStack reads an epic's stack from the store.
func (e *Engine) LoadStack(ctx context.Context, epicKey string) (action.Stack, error) {
	children, err := e.Store.List(ctx, store.Filter{ParentKey: epicKey})
	if err != nil {
		return nil, err
	}
	edges, err := e.edgesOf(ctx, children)
	if err != nil {
		return nil, err
	}
	return action.StackOf(children, edges), nil
}

// GitHubConfig is how the engine reaches GitHub for repo.
func (e *Engine) GitHubConfig(repo string) github.Config { return e.githubConfig(repo) }

// FillDefaults sets what the engine's caller left unset.
func (e *Engine) FillDefaults() { e.defaults() }

// ActionTable is the table of actions the engine runs.
func (e *Engine) ActionTable() action.Actions { return e.actions() }

// EpicChildren reads an epic's children and the store's blocked_by edges
// between tasks; an epic without children is an error.
func (e *Engine) EpicChildren(ctx context.Context, epicKey string) ([]workorder.Document, map[string][]string, error) {
	return e.epicChildren(ctx, epicKey)
}

// EdgesOf reads the store's blocked_by edges of each document.
func (e *Engine) EdgesOf(ctx context.Context, docs []workorder.Document) (map[string][]string, error) {
	return e.edgesOf(ctx, docs)
}

// FaultAt calls Fault at a named point, when it is set.
func (e *Engine) FaultAt(point string) { e.fault(point) }

// EditState changes a task's state (and its status, when to is set) under
// its lease, outside a run.
func (e *Engine) EditState(ctx context.Context, key string, to workorder.Status, reason string, edit func(*workorder.State)) error {
	return store.RetryConflicts(ctx, func() error {
		doc, task, err := e.Load(ctx, key)
		if err != nil {
			return err
		}
		r, release, err := e.hold(ctx, doc, task)
		if err != nil {
			return err
		}
		defer release()
		edit(&r.state)
		if to != "" && workorder.StatusOf(r.doc) != to {
			for _, hop := range workorder.StatusPath(workorder.StatusOf(r.doc), to) {
				top := map[string]any{}
				why := ""
				if hop == workorder.StatusBlocked {
					why = reason
				}
				if err := r.setStatus(top, hop, why); err != nil {
					return err
				}
				if err := r.save(ctx, top); err != nil {
					return err
				}
			}
			return nil
		}
		return r.save(ctx, nil)
	})
}
