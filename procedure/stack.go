package procedure

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/wo-runner/wo/github"
	"github.com/wo-runner/wo/procedure/action"
	"github.com/wo-runner/wo/store"
	"github.com/wo-runner/wo/workorder"
)

// maxPRBody is the longest description GitHub accepts.
const maxPRBody = 65536

// engineShared is what an Engine's calls share: GitHub clients by
// repository, so that a second read of a pull request in one process is
// a conditional request, and the lock that makes stack refreshes of one
// process take turns and combine.
type engineShared struct {
	mu      sync.Mutex
	clients map[string]*github.Client
	// asked counts the refreshes asked for, by epic; covered is the count
	// the last finished refresh had read before it began.
	asked, covered map[string]int64
	stack          sync.Mutex
	// deferred holds the epics that a RunEpic of this engine refreshes
	// itself, with whether a pull request opened since its last refresh.
	deferred map[string]bool
}

// StackRefreshEvery is how often, at most, an epic run refreshes the
// stack sections between its waves; it always refreshes once at its end.
const StackRefreshEvery = time.Minute

// deferStack makes the children of epicKey that open a pull request in
// this engine leave the refresh of their siblings' stack sections to the
// epic run, which refreshes between waves and at its end (see RunEpic).
// Refreshed at each pull request opened, a stack of n pull requests opening one
// after another would cost n(n-1)/2 description edits, enough to meet
// GitHub's secondary rate limit on a large split; refreshed by the run,
// each open pull request's description is edited about once.
func (e *Engine) deferStack(epicKey string) {
	e.shared.mu.Lock()
	defer e.shared.mu.Unlock()
	if e.shared.deferred == nil {
		e.shared.deferred = map[string]bool{}
	}
	e.shared.deferred[epicKey] = false
}

// stackDeferred says whether epicKey's refresh is the epic run's, noting
// that it has something to refresh.
func (e *Engine) stackDeferred(epicKey string) bool {
	e.shared.mu.Lock()
	defer e.shared.mu.Unlock()
	if _, ok := e.shared.deferred[epicKey]; !ok {
		return false
	}
	e.shared.deferred[epicKey] = true
	return true
}

// refreshDeferred is the epic run's refresh: it refreshes epicKey's stack
// sections when a pull request opened since the last one, and returns the
// warnings of the refresh. last ends the deferral; an interrupted run
// refreshes nothing and says so (wo sync catches the tables up).
func (e *Engine) refreshDeferred(ctx context.Context, epicKey string, last bool) []string {
	e.shared.mu.Lock()
	pending := e.shared.deferred[epicKey]
	if last {
		delete(e.shared.deferred, epicKey)
	} else {
		e.shared.deferred[epicKey] = false
	}
	e.shared.mu.Unlock()
	switch {
	case !pending:
		return nil
	case ctx.Err() != nil:
		return []string{fmt.Sprintf("the stack tables of %s were not refreshed: the run was interrupted; run wo sync %s", epicKey, epicKey)}
	}
	ups, _, err := e.RefreshStack(ctx, epicKey)
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

// githubFor returns the engine's client for repo, built on first use.
func (e *Engine) githubFor(repo string) (*github.Client, error) {
	e.shared.mu.Lock()
	defer e.shared.mu.Unlock()
	if c := e.shared.clients[repo]; c != nil {
		return c, nil
	}
	c, err := github.New(e.githubConfig(repo))
	if err != nil {
		return nil, err
	}
	if e.shared.clients == nil {
		e.shared.clients = map[string]*github.Client{}
	}
	e.shared.clients[repo] = c
	return c, nil
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

// RefreshStack brings the stack section of every open pull request of an
// epic up to date: it reads each description (conditionally, so an
// unchanged one costs no rate limit when this engine read it before) and
// edits only those whose section differs. Merged and closed pull requests
// keep the section they had. GitHub's API offers no conditional edit of a
// description, so an edit a person saves between wo's read and its write
// (a window of one request) is lost; wo sync repeats the refresh. It stops
// at the first GitHub error, returning what it did so far.
//
// Refreshes of one engine take turns, and a refresh asked for while
// another waits is done by that one: it reads the store after both asks,
// so a wave of pull requests opening at once costs about two passes, not
// one per pull request. coalesced is true when another caller's pass
// covered this one.
func (e *Engine) RefreshStack(ctx context.Context, epicKey string) (ups []action.StackUpdate, coalesced bool, err error) {
	e.defaults()
	sh := &e.shared
	sh.mu.Lock()
	if sh.asked == nil {
		sh.asked, sh.covered = map[string]int64{}, map[string]int64{}
	}
	sh.asked[epicKey]++
	ask := sh.asked[epicKey]
	sh.mu.Unlock()

	sh.stack.Lock()
	defer sh.stack.Unlock()
	sh.mu.Lock()
	covers := sh.asked[epicKey]
	done := sh.covered[epicKey] >= ask
	sh.mu.Unlock()
	if done {
		return nil, true, nil
	}
	ups, err = e.refreshStack(ctx, epicKey)
	if err == nil {
		sh.mu.Lock()
		sh.covered[epicKey] = covers
		sh.mu.Unlock()
	}
	return ups, false, err
}

func (e *Engine) refreshStack(ctx context.Context, epicKey string) ([]action.StackUpdate, error) {
	stack, stacked, err := e.loadStack(ctx, epicKey)
	if err != nil || len(stack) < 2 {
		return nil, err
	}
	out, err := e.refreshTables(ctx, stack)
	if err != nil || !stacked || stack[0].PRNumber == 0 {
		return out, err
	}
	c, err := e.githubFor(stack[0].Repo)
	if err == nil {
		_, err = e.syncGitHubStack(ctx, epicKey, stack, c)
	}
	if err != nil {
		err = fmt.Errorf("keeping GitHub's stack of epic %s: %w", epicKey, err)
	}
	return out, err
}

// loadStack reads an epic's stack, and whether it was split in stacked
// mode (each part based on the one under it, as GitHub's stacks are).
func (e *Engine) loadStack(ctx context.Context, epicKey string) (action.Stack, bool, error) {
	children, err := e.Store.List(ctx, store.Filter{ParentKey: epicKey})
	if err != nil {
		return nil, false, err
	}
	edges, err := e.edgesOf(ctx, children)
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
func (e *Engine) refreshTables(ctx context.Context, stack action.Stack) ([]action.StackUpdate, error) {
	var out []action.StackUpdate
	for _, en := range stack {
		if en.PRNumber == 0 || en.PRState != github.PROpen {
			continue
		}
		up := action.StackUpdate{Key: en.Key, PR: en.PRNumber, Result: action.StackSkipped}
		c, err := e.githubFor(en.Repo)
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
func (e *Engine) StackOfTask(ctx context.Context, key string) (string, error) {
	children, err := e.Store.List(ctx, store.Filter{ParentKey: key})
	if err != nil || len(children) > 0 {
		return key, err
	}
	doc, err := e.Store.Get(ctx, key)
	if err != nil {
		return "", err
	}
	return workorder.String(doc, "parent_key"), nil
}
