// Package stack keeps an epic's stack of pull requests: the stack table
// in each description, GitHub's own stacks, the restack that keeps each
// branch its own change on top of the one under it, wo sync, and wo land.
// It drives git and GitHub through the engine's store, leases and the
// push gate the actions use (procedure/action), and is wired into the
// engine as its procedure.StackKeeper.
package stack

import (
	"context"
	"fmt"
	"sync"

	"github.com/wo-runner/wo/github"
	"github.com/wo-runner/wo/procedure"
	"github.com/wo-runner/wo/procedure/action"
	"github.com/wo-runner/wo/store"
	"github.com/wo-runner/wo/workorder"
)

// maxPRBody is the longest description GitHub accepts.
const maxPRBody = 65536

// Keeper keeps the stacks of one engine's epics. Its calls share GitHub
// clients by repository, so that a second read of a pull request in one
// process is a conditional request, and the lock that makes stack
// refreshes of one process take turns and combine.
type Keeper struct {
	e       *procedure.Engine
	mu      sync.Mutex
	clients map[string]*github.Client
	// asked counts the refreshes asked for, by epic; covered is the count
	// the last finished refresh had read before it began.
	asked, covered map[string]int64
	stack          sync.Mutex
	// deferred holds the epics that a RunEpic of this engine refreshes
	// itself, with whether a pull request opened since its last refrek.
	deferred map[string]bool
}

var _ procedure.StackKeeper = (*Keeper)(nil)

// New makes e's keeper and wires it into e.
func New(e *procedure.Engine) *Keeper {
	k := &Keeper{e: e}
	e.Stacks = k
	return k
}

// Of is the keeper wired into e, wiring one when there is none.
func Of(e *procedure.Engine) *Keeper {
	if k, ok := e.Stacks.(*Keeper); ok && k.e == e {
		return k
	}
	return New(e)
}

// fault calls the engine's Fault at a named point.
func (k *Keeper) fault(point string) { k.e.FaultAt(point) }

// DeferStack makes the children of epicKey that open a pull request in
// this engine leave the refresh of their siblings' stack sections to the
// epic run, which refreshes between waves and at its end (see RunEpic).
// Refreshed at each pull request opened, a stack of n pull requests opening one
// after another would cost n(n-1)/2 description edits, enough to meet
// GitHub's secondary rate limit on a large split; refreshed by the run,
// each open pull request's description is edited about once.
func (k *Keeper) DeferStack(epicKey string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.deferred == nil {
		k.deferred = map[string]bool{}
	}
	k.deferred[epicKey] = false
}

// StackDeferred says whether epicKey's refresh is the epic run's, noting
// that it has something to refrek.
func (k *Keeper) StackDeferred(epicKey string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if _, ok := k.deferred[epicKey]; !ok {
		return false
	}
	k.deferred[epicKey] = true
	return true
}

// RefreshDeferred is the epic run's refresh: it refreshes epicKey's stack
// sections when a pull request opened since the last one, and returns the
// warnings of the refrek. last ends the deferral; an interrupted run
// refreshes nothing and says so (wo sync catches the tables up).
func (k *Keeper) RefreshDeferred(ctx context.Context, epicKey string, last bool) []string {
	k.mu.Lock()
	pending := k.deferred[epicKey]
	if last {
		delete(k.deferred, epicKey)
	} else {
		k.deferred[epicKey] = false
	}
	k.mu.Unlock()
	switch {
	case !pending:
		return nil
	case ctx.Err() != nil:
		return []string{fmt.Sprintf("the stack tables of %s were not refreshed: the run was interrupted; run wo sync %s", epicKey, epicKey)}
	}
	ups, _, err := k.RefreshStack(ctx, epicKey)
	var warnings []string
	for _, u := range ups {
		if u.Result == action.StackSkipped {
			warnings = append(warnings, fmt.Sprintf("the stack table of %s was not updated: %s", u.Key, u.Reason))
		}
	}
	if err != nil {
		warnings = append(warnings, fmt.Sprintf("%v; run wo sync %s to try again", err, epicKey))
	}
	return warnings
}

// githubFor returns the keeper's client for repo, built on first use.
func (k *Keeper) githubFor(repo string) (*github.Client, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if c := k.clients[repo]; c != nil {
		return c, nil
	}
	c, err := github.New(k.e.GitHubConfig(repo))
	if err != nil {
		return nil, err
	}
	if k.clients == nil {
		k.clients = map[string]*github.Client{}
	}
	k.clients[repo] = c
	return c, nil
}

// RefreshStack brings the stack section of every open pull request of an
// epic up to date: it reads each description (conditionally, so an
// unchanged one costs no rate limit when this engine read it before) and
// edits only those whose section differs. Merged and closed pull requests
// keep the section they had. GitHub's API offers no conditional edit of a
// description, so an edit a person saves between wo's read and its write
// (a window of one request) is lost; wo sync repeats the refrek. It stops
// at the first GitHub error, returning what it did so far.
//
// Refreshes of one engine take turns, and a refresh asked for while
// another waits is done by that one: it reads the store after both asks,
// so a wave of pull requests opening at once costs about two passes, not
// one per pull request. coalesced is true when another caller's pass
// covered this one.
func (k *Keeper) RefreshStack(ctx context.Context, epicKey string) (ups []action.StackUpdate, coalesced bool, err error) {
	k.e.FillDefaults()
	k.mu.Lock()
	if k.asked == nil {
		k.asked, k.covered = map[string]int64{}, map[string]int64{}
	}
	k.asked[epicKey]++
	ask := k.asked[epicKey]
	k.mu.Unlock()

	k.stack.Lock()
	defer k.stack.Unlock()
	k.mu.Lock()
	covers := k.asked[epicKey]
	done := k.covered[epicKey] >= ask
	k.mu.Unlock()
	if done {
		return nil, true, nil
	}
	ups, err = k.refreshStack(ctx, epicKey)
	if err == nil {
		k.mu.Lock()
		k.covered[epicKey] = covers
		k.mu.Unlock()
	}
	return ups, false, err
}

func (k *Keeper) refreshStack(ctx context.Context, epicKey string) ([]action.StackUpdate, error) {
	stack, stacked, err := k.loadStack(ctx, epicKey)
	if err != nil || len(stack) < 2 {
		return nil, err
	}
	out, err := k.refreshTables(ctx, stack)
	if err != nil || !stacked || stack[0].PRNumber == 0 {
		return out, err
	}
	c, err := k.githubFor(stack[0].Repo)
	if err == nil {
		_, err = k.syncGitHubStack(ctx, epicKey, stack, c)
	}
	if err != nil {
		err = fmt.Errorf("keeping GitHub's stack of epic %s: %w", epicKey, err)
	}
	return out, err
}

// loadStack reads an epic's stack, and whether it was split in stacked
// mode (each part based on the one under it, as GitHub's stacks are).
func (k *Keeper) loadStack(ctx context.Context, epicKey string) (action.Stack, bool, error) {
	children, err := k.e.Store.List(ctx, store.Filter{ParentKey: epicKey})
	if err != nil {
		return nil, false, err
	}
	edges, err := k.e.EdgesOf(ctx, children)
	if err != nil {
		return nil, false, err
	}
	stacked := len(children) > 0
	for _, d := range children {
		stacked = stacked && workorder.String(d, "work_order.context.split_mode") == "stacked"
	}
	return action.StackOf(children, edges), stacked, nil
}

// refreshTables brings the stack table of each open pull request up to date.
func (k *Keeper) refreshTables(ctx context.Context, stack action.Stack) ([]action.StackUpdate, error) {
	var out []action.StackUpdate
	for _, en := range stack {
		if en.PRNumber == 0 || en.PRState != github.PROpen {
			continue
		}
		up := action.StackUpdate{Key: en.Key, PR: en.PRNumber, Result: action.StackSkipped}
		c, err := k.githubFor(en.Repo)
		if err != nil {
			return out, fmt.Errorf("updating the stack table of %s: %w", en.Key, err)
		}
		pr, body, err := c.PRBody(ctx, en.PRNumber)
		if err != nil {
			return out, fmt.Errorf("updating the stack table of %s: %w", en.Key, err)
		}
		newBody, changed, err := action.SpliceStack(body, stack.Section(en.Key))
		switch {
		case pr.State != github.PROpen:
			up.Reason = fmt.Sprintf("pull request #%d is %s on GitHub", pr.Number, pr.Lifecycle())
		case err != nil:
			up.Reason = fmt.Sprintf("pull request #%d: %v", pr.Number, err)
		case !changed:
			up.Result = action.StackUnchanged
		case len(newBody) > maxPRBody:
			up.Reason = fmt.Sprintf("pull request #%d: with the stack table the description would be %d characters, over GitHub's %d; shorten it", pr.Number, len(newBody), maxPRBody)
		default:
			if err := c.EditPRBody(ctx, pr.Number, newBody); err != nil {
				return out, fmt.Errorf("updating the stack table of %s: %w", en.Key, err)
			}
			up.Result = action.StackUpdated
		}
		out = append(out, up)
	}
	return out, nil
}

// StackOfTask is the epic whose stack key belongs to: key itself when it
// has children, else its parent; "" when it is in no epic.
func (k *Keeper) StackOfTask(ctx context.Context, key string) (string, error) {
	children, err := k.e.Store.List(ctx, store.Filter{ParentKey: key})
	if err != nil || len(children) > 0 {
		return key, err
	}
	doc, err := k.e.Store.Get(ctx, key)
	if err != nil {
		return "", err
	}
	return workorder.String(doc, "parent_key"), nil
}
