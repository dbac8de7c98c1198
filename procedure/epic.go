package procedure

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/wo-runner/wo/store"
	"github.com/wo-runner/wo/workorder"
)

// TaskOutcome is how one child of an epic fared.
type TaskOutcome struct {
	Key     string           `json:"key"`
	Wave    int              `json:"wave"`
	Outcome RunOutcome       `json:"outcome"`
	Reason  string           `json:"reason,omitempty"`
	Status  workorder.Status `json:"status,omitempty"`
	err     error
}

// EpicResult is the outcome of every child, wave by wave.
type EpicResult struct {
	Epic  string        `json:"epic"`
	Tasks []TaskOutcome `json:"tasks"`
	Worst RunOutcome    `json:"worst"`
	// Warnings are losses that did not stop the run.
	Warnings []string `json:"warnings,omitempty"`
}

// EpicError carries the worst outcome of an epic run, for the exit code.
type EpicError struct {
	Result *EpicResult
	Worst  error // the error of the worst task
}

func (e *EpicError) Error() string {
	n := map[RunOutcome]int{}
	for _, t := range e.Result.Tasks {
		n[t.Outcome]++
	}
	return fmt.Sprintf("epic %s: %d done, %d waiting, %d skipped, %d failed, %d other; worst: %v",
		e.Result.Epic, n[OutcomeDone], n[OutcomeWaiting], n[OutcomeSkipped], n[OutcomeFailed]+n[OutcomeInvalid],
		n[OutcomeLeaseHeld]+n[OutcomeRetryLater]+n[OutcomeInterrupted], e.Worst)
}

func (e *EpicError) Unwrap() error { return e.Worst }

// RunEpic runs an epic's children in dependency waves (a task runs
// after everything it depends on), up to parallel at a time, each under its
// own lease. A task whose blocker failed, was skipped or is still waiting is
// skipped with the reason (skip propagation), its document left
// as it is; independent branches of the graph go on.
func (e *Engine) RunEpic(ctx context.Context, epicKey string, parallel int, opts RunOptions) (*EpicResult, error) {
	e.defaults()
	if parallel < 1 {
		parallel = 1
	}
	children, edges, err := e.epicChildren(ctx, epicKey)
	if err != nil {
		return nil, err
	}
	waves, deps, err := wavesOf(children, edges)
	if err != nil {
		return nil, err
	}
	byKey := map[string]workorder.Document{}
	for _, d := range children {
		byKey[workorder.Key(d)] = d
	}
	res := &EpicResult{Epic: epicKey, Worst: OutcomeDone}
	e.deferStack(epicKey)
	lastRefresh := e.Now()
	defer func() { res.Warnings = append(res.Warnings, e.refreshDeferred(ctx, epicKey, true)...) }()
	outcome := map[string]*TaskOutcome{}
	pace := &reviewPace{}
	for _, d := range children {
		pace.learn(d)
	}
	var worstErr error
	for w, wave := range waves {
		var mu sync.Mutex
		var wg sync.WaitGroup
		sem := make(chan struct{}, parallel)
		for _, key := range e.shareOrder(wave) {
			t := &TaskOutcome{Key: key}
			outcome[key] = t
			if doc := byKey[key]; workorder.Done(doc) {
				// Merged and closed (wo sync, a person): a rerun of the epic
				// goes on with its dependents.
				t.Outcome, t.Reason, t.Status = OutcomeDone, "done already", workorder.StatusOf(doc)
				continue
			}
			if reason := blockedReason(deps[key], outcome); reason != "" {
				t.Outcome, t.Reason = OutcomeSkipped, reason
				if err := e.recordSkip(ctx, key, reason); err != nil {
					res.Warnings = append(res.Warnings, fmt.Sprintf("the skip of %s was not recorded: %v", key, err))
				}
				continue
			}
			if ctx.Err() != nil {
				t.Outcome, t.Reason = OutcomeInterrupted, "not started: the run was interrupted"
				continue
			}

			wg.Add(1)
			sem <- struct{}{}
			go func(t *TaskOutcome) {
				defer wg.Done()
				defer func() { <-sem }()
				// Looked at once a runner is free: a child that ran in the
				// meantime may have met the reviewer's limit.
				if reason := pace.hold(byKey[t.Key], e.Now()); reason != "" {
					mu.Lock()
					t.Outcome, t.Reason = OutcomeWaiting, reason
					mu.Unlock()
					return
				}
				outcome, status, err := e.runChild(ctx, t.Key, opts)
				e.learnAfter(ctx, pace, t.Key)
				mu.Lock()
				defer mu.Unlock()
				t.Outcome, t.Status, t.err = outcome, status, err
				if err != nil {
					t.Reason = err.Error()
				}
			}(t)
		}
		wg.Wait()
		if refreshDue(w, len(waves), e.Now().Sub(lastRefresh)) {
			res.Warnings = append(res.Warnings, e.refreshDeferred(ctx, epicKey, false)...)
			lastRefresh = e.Now()
		}
	}
	for w, wave := range waves {
		for _, key := range wave {
			t := outcome[key]
			t.Wave = w + 1
			res.Tasks = append(res.Tasks, *t)
			if t.Outcome.Worse(res.Worst) {
				res.Worst, worstErr = t.Outcome, t.err
				if worstErr == nil {
					worstErr = errors.New(t.Reason)
				}
			}
		}
	}
	if res.Worst != OutcomeDone {
		return res, &EpicError{Result: res, Worst: worstErr}
	}
	return res, nil
}

// refreshDue says whether an epic run refreshes its stack tables after
// wave w of n: never after the last (the end of the run does), and at
// most once every StackRefreshEvery.
func refreshDue(w, n int, since time.Duration) bool {
	return w < n-1 && since >= StackRefreshEvery
}

// epicChildren reads an epic's children and the store's blocked_by edges
// between tasks; an epic without children is an error.
func (e *Engine) epicChildren(ctx context.Context, epicKey string) ([]workorder.Document, map[string][]string, error) {
	if _, err := e.Store.Get(ctx, epicKey); err != nil {
		return nil, nil, err
	}
	children, err := e.Store.List(ctx, store.Filter{ParentKey: epicKey})
	if err != nil {
		return nil, nil, err
	}
	if len(children) == 0 {
		return nil, nil, fmt.Errorf("epic %s has no children (tasks with parent_key %s): check the key, or give its tasks parent_key %s", epicKey, epicKey, epicKey)
	}
	edges, err := e.edgesOf(ctx, children)
	return children, edges, err
}

// edgesOf reads the store's blocked_by edges of each document.
func (e *Engine) edgesOf(ctx context.Context, docs []workorder.Document) (map[string][]string, error) {
	edges := map[string][]string{}
	for _, d := range docs {
		blockers, err := e.Store.BlockedBy(ctx, workorder.Key(d))
		if err != nil {
			return nil, err
		}
		edges[workorder.Key(d)] = blockers
	}
	return edges, nil
}

// runChild runs one child of an epic. A child that another live runner
// holds is that runner's work, not a failure: it is reported as running
// elsewhere, and with EpicWait the child is watched (polling the store with
// backoff) until that runner lets go, then run here, which finds it
// complete or resumes it.
func (e *Engine) runChild(ctx context.Context, key string, opts RunOptions) (RunOutcome, workorder.Status, error) {
	deadline := e.Now().Add(e.EpicWait)
	delay := e.EpicPoll
	for {
		doc, err := e.Store.Get(ctx, key)
		if err != nil {
			return Classify(err).Outcome, "", err
		}
		if workorder.Done(doc) {
			return OutcomeDone, workorder.StatusOf(doc), nil
		}
		o := opts
		o.Key = key
		r, err := e.Run(ctx, o)
		outcome := Classify(err).Outcome
		if outcome == OutcomeLeaseHeld {
			outcome = OutcomeElsewhere
		}
		var status workorder.Status
		if r != nil {
			status = r.Status
		}
		if outcome != OutcomeElsewhere || e.EpicWait <= 0 || !e.Now().Before(deadline) {
			if outcome == OutcomeElsewhere && e.EpicWait > 0 {
				err = fmt.Errorf("%w; still running elsewhere after waiting %s (--wait-timeout)", err, e.EpicWait)
			}
			return outcome, status, err
		}
		e.emit(Event{Type: "task_elsewhere", Key: key, Outcome: string(OutcomeElsewhere), Note: err.Error()})
		t := time.NewTimer(delay + time.Duration(rand.Int64N(int64(delay)/2+1)))
		select {
		case <-ctx.Done():
			t.Stop()
			return OutcomeInterrupted, status, &InterruptedError{Key: key}
		case <-t.C:
		}
		delay = min(2*delay, 15*time.Second)
	}
}

// shareOrder is the order in which this runner starts a wave's tasks:
// rotated by the runner's identity, so that several runners on one epic
// start on different tasks instead of all contending for the first.
func (e *Engine) shareOrder(wave []string) []string {
	if len(wave) < 2 {
		return wave
	}
	h := fnv.New32a()
	h.Write([]byte(e.Runner))
	k := int(h.Sum32() % uint32(len(wave)))
	return append(slices.Clone(wave[k:]), wave[:k]...)
}

// recordSkip writes why the task was not started into its state and its
// timeline, so that status, exports and other runners can tell. A task that
// another runner holds is left alone: it is not skipped there.
func (e *Engine) recordSkip(ctx context.Context, key, reason string) error {
	written := false
	err := store.RetryConflicts(ctx, func() error {
		doc, err := e.Store.Get(ctx, key)
		if err != nil {
			return err
		}
		if cur := store.Current(doc); cur != nil && cur.ExpiresAt.After(e.Now()) {
			return nil
		}
		before, err := workorder.StateOf(doc)
		if err != nil {
			return err
		}
		after := before.Clone()
		after.Skipped = &workorder.Skip{Reason: reason, By: e.Runner, At: workorder.Timestamp(e.Now())}
		patch := workorder.StatePatch(before, after)
		patch["updated_at"] = workorder.Timestamp(e.Now())
		rev, _ := doc["_rev"].(string)
		_, err = e.Store.Update(ctx, key, rev, patch)
		written = err == nil
		return err
	})
	if err != nil || !written {
		return err
	}
	return e.Store.AppendLog(ctx, store.LogEntry{Action: "skipped", TaskKey: key, SessionKey: e.Runner, CreatedAt: e.Now(),
		Details: map[string]any{"reason": reason}})
}

// blockedReason says why a task must be skipped, or "".
func blockedReason(deps []string, outcome map[string]*TaskOutcome) string {
	for _, d := range deps {
		if o := outcome[d]; o != nil && o.Outcome != OutcomeDone {
			return fmt.Sprintf("blocker %s is %s", d, strings.ReplaceAll(string(o.Outcome), "_", " "))
		}
	}
	return ""
}

// Waves orders an epic's children by dependency: wave 1 has no blockers
// among them, wave n depends only on earlier waves. A cycle is an error.
func Waves(children []map[string]any) ([][]string, map[string][]string, error) {
	return wavesOf(children, nil)
}

// wavesOf is Waves with the store's edges (task → blockers) as well.
func wavesOf(children []map[string]any, edges map[string][]string) ([][]string, map[string][]string, error) {
	keys := map[string]bool{}
	for _, d := range children {
		keys[workorder.Key(d)] = true
	}
	deps := workorder.NewGraph(children, edges).Within(keys)
	level, err := workorder.Waves(deps, keys)
	var cycle *workorder.CycleError
	if errors.As(err, &cycle) {
		return nil, nil, &DependencyCycleError{Through: cycle.Key}
	}
	var waves [][]string
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	for _, k := range sorted {
		l := level[k]
		for len(waves) < l {
			waves = append(waves, nil)
		}
		waves[l-1] = append(waves[l-1], k)
	}
	return waves, deps, nil
}
