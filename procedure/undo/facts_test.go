package undo

import (
	"context"
	"fmt"
	"maps"
	"os"
	"strings"
	"testing"

	"github.com/wo-runner/wo/procedure/action"
	"github.com/wo-runner/wo/procedure/internal/fixture"
	"github.com/wo-runner/wo/store"
	"github.com/wo-runner/wo/workorder"
)

// relogged is a store whose activity log reads back changed: every
// step_completed entry through change. Undo reads the log through it.
type relogged struct {
	store.Store
	change func(details map[string]any)
}

func (s relogged) Logs(ctx context.Context, key string) ([]store.LogEntry, error) {
	entries, err := s.Store.Logs(ctx, key)
	for i, e := range entries {
		if e.Action == "step_completed" {
			d := maps.Clone(e.Details)
			s.change(d)
			entries[i].Details = d
		}
	}
	return entries, err
}

// undoAllThrough undoes a run of the whole review path (worktree, branch,
// commit, push, pull request) with the log read through change, and
// checks that undo took back everything the run made.
func undoAllThrough(t *testing.T, change func(map[string]any)) {
	t.Helper()
	h := undoHarness(t)
	e := h.engine()
	e.Store = relogged{Store: e.Store, change: change}
	res, err := Task(h.ctx, e, Options{Key: fixture.Key})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Complete || res.Status != workorder.StatusOpen {
		t.Errorf("undo: complete %v, status %s; steps %v", res.Complete, res.Status, stepsOf(res))
	}
	for _, step := range []string{"pull_request", "remote_branch", "worktree", "local_branch"} {
		if got := stepsOf(res)[step]; !strings.HasPrefix(got, Done) {
			t.Errorf("%s: %q, want it undone", step, got)
		}
	}
	if p := h.GH.PullRequests(fixture.Repo)[0]; p["state"] != "closed" {
		t.Errorf("the pull request wo opened is %v", p["state"])
	}
	if hasBranch(t, h.Remote, fixture.Branch) || hasBranch(t, h.Repo, fixture.Branch) {
		t.Error("a branch wo made is still there")
	}
	if _, err := os.Stat(h.Worktree); !os.IsNotExist(err) {
		t.Errorf("the worktree is still there: %v", err)
	}
}

// Notes are for people: reword every one (here, to a claim about
// something else entirely) and undo still takes back exactly what the run
// made, from the facts the steps logged.
func TestUndoReadsFactsNotNotes(t *testing.T) {
	undoAllThrough(t, func(d map[string]any) {
		d["note"] = fmt.Sprintf("étape %v terminée; committed 0123456789ab: pushed x to y (0123456789ab)", d["step"])
	})
}

// A task run by a wo that logged notes only (no facts) keeps its undo:
// the legacy reader proves the same things from the notes.
func TestUndoOfATaskWhoseLogHasOnlyNotes(t *testing.T) {
	undoAllThrough(t, func(d map[string]any) {
		if _, ok := d[action.FactsKey]; !ok {
			t.Errorf("a step_completed entry without facts: %v", d)
		}
		delete(d, action.FactsKey)
	})
}

// With neither facts nor a note that proves anything, undo proves nothing
// and takes nothing back: the two tests above pass because of what the
// log says, not in spite of it.
func TestUndoOfALogThatProvesNothingLeavesEverything(t *testing.T) {
	h := undoHarness(t)
	e := h.engine()
	e.Store = relogged{Store: e.Store, change: func(d map[string]any) { d[action.FactsKey] = []any{}; d["note"] = "done" }}
	res, err := Task(h.ctx, e, Options{Key: fixture.Key})
	if err != nil {
		t.Fatal(err)
	}
	if res.Complete {
		t.Errorf("undo with nothing proven is complete: %v", stepsOf(res))
	}
	// The worktree carries its own mark of wo's (its admin files), so
	// only what the log alone proves is left.
	for _, step := range []string{"pull_request", "remote_branch", "local_branch"} {
		if got := stepsOf(res)[step]; strings.HasPrefix(got, Done) {
			t.Errorf("%s: %q, undone with nothing in the log to prove it wo's", step, got)
		}
	}
	if p := h.GH.PullRequests(fixture.Repo)[0]; p["state"] != "open" {
		t.Errorf("the pull request is %v", p["state"])
	}
	if !hasBranch(t, h.Remote, fixture.Branch) || !hasBranch(t, h.Repo, fixture.Branch) {
		t.Error("a branch is gone")
	}
}

// Facts as the store gives them back (decoded JSON), as they are in
// memory, and broken: an entry with facts is never read as prose, even
// when its note makes a claim.
func TestProvenanceReadsTheFactsOfTheTasksOwnSteps(t *testing.T) {
	t.Parallel()
	const a, b, c, d = "aaaaaaaaaaaa0000000000000000000000000000", "bbbbbbbbbbbb0000000000000000000000000000",
		"cccccccccccc0000000000000000000000000000", "dddddddddddd0000000000000000000000000000"
	step := func(key, name string, facts any) store.LogEntry {
		return store.LogEntry{Action: "step_completed", TaskKey: key, Details: map[string]any{"action": name,
			"note": "committed eeeeeeeeeeee: a note that claims a commit", action.FactsKey: facts}}
	}
	entries := []store.LogEntry{
		step(fixture.Key, "create_worktree", []action.Fact{{Kind: action.FactWorktree, Path: "/wt/pr 01"}}),
		step(fixture.Key, "create_worktree", []any{map[string]any{"kind": "worktree", "path": "/wt/other"},
			map[string]any{"kind": "adopted_branch", "branch": "feature/x", "sha": b}}),
		step(fixture.Key, "create_branch", []action.Fact{{Kind: action.FactBranch, Branch: "review/01", SHA: a}}),
		step(fixture.Key, "commit", []action.Fact{{Kind: action.FactCommit, SHA: c}}),
		step(fixture.Key, "commit", []action.Fact{}),
		// A rerun finding the branch an earlier run made is not adopted.
		step(fixture.Key, "create_worktree", []action.Fact{{Kind: action.FactAdopted, Branch: "review/01", SHA: c}}),
		step(fixture.Key, "push", []any{map[string]any{"kind": "pushed", "branch": "review/02", "sha": c}}),
		step(fixture.Key, "conditional_loop", []action.Fact{{Kind: action.FactCommit, SHA: d}, {Kind: action.FactPushed, Branch: "review/01", SHA: d}}),
		step(fixture.Key, "create_pr", []any{map[string]any{"kind": "pull_request", "number": 3.0}}),
		// A fact of a kind its action never makes proves nothing.
		step(fixture.Key, "update_task", []action.Fact{{Kind: action.FactCommit, SHA: "ffffffffffff0000000000000000000000000000"}}),
		step(fixture.Key, "check_review", []action.Fact{{Kind: action.FactPullRequest, Number: 9}}),
		// Unreadable facts prove nothing, and the note is not read instead.
		step(fixture.Key, "commit", "committed"),
		// Not this task's, or not a finished step.
		step("task_other", "commit", []action.Fact{{Kind: action.FactCommit, SHA: "ffffffffffff"}}),
		{Action: "step_failed", TaskKey: fixture.Key, Details: map[string]any{"action": "commit", action.FactsKey: []action.Fact{{Kind: action.FactCommit, SHA: "ffffffffffff"}}}},
	}
	p := ProvenanceOf(fixture.Key, entries)
	if got := strings.Join(p.Commits, ","); got != c[:12]+","+d[:12] {
		t.Errorf("commits %s, want %s,%s", got, c[:12], d[:12])
	}
	if got := strings.Join(p.Pushed, ","); got != c[:12]+","+d[:12] {
		t.Errorf("pushed %s", got)
	}
	if len(p.Branches) != 2 || p.Branches["review/01"] != a[:12] || p.Branches["review/02"] != "" || !p.Branch("review/02") {
		t.Errorf("branches %v", p.Branches)
	}
	if len(p.Adopted) != 1 || p.Adopted["feature/x"] != b[:12] {
		t.Errorf("adopted %v", p.Adopted)
	}
	if strings.Join(p.Worktrees, ",") != "/wt/pr 01,/wt/other" {
		t.Errorf("worktrees %q", p.Worktrees)
	}
	if fmt.Sprint(p.PRs) != "[3]" {
		t.Errorf("pull requests %v", p.PRs)
	}
}

// Each step that makes something says so in its facts, as the run logs
// them: the log of a run up to the review holds exactly these kinds.
func TestTheRunLogsWhatEachStepMade(t *testing.T) {
	h := undoHarness(t)
	entries, err := h.store.Logs(h.ctx, fixture.Key)
	if err != nil {
		t.Fatal(err)
	}
	made := map[string][]action.FactKind{}
	for _, e := range entries {
		if e.Action != "step_completed" {
			continue
		}
		facts, ok, err := action.FactsOf(e.Details)
		if !ok || err != nil {
			t.Fatalf("%v: facts %v, %v", e.Details["action"], ok, err)
		}
		for _, f := range facts {
			made[e.Details["action"].(string)] = append(made[e.Details["action"].(string)], f.Kind)
			if f.Kind != action.FactWorktree && f.Kind != action.FactPullRequest && len(f.SHA) != 40 {
				t.Errorf("%v: %+v names no full commit", e.Details["action"], f)
			}
		}
	}
	want := "map[commit:[commit] create_branch:[branch] create_pr:[pull_request] create_worktree:[worktree] push:[pushed]]"
	if got := fmt.Sprint(made); got != want {
		t.Errorf("facts logged %s\nwant %s", got, want)
	}
}

// What undo takes back, and in what order, is its own fixed list, not
// the engine's table: an engine whose table runs an action of its own
// under a name of this build (a test's scripted runner, say) still has
// what a run of that name made taken back. wo's comments and pull
// request go before the branch it is from, the worktree before the
// branch checked out in it.
func TestUndoTakesBackItsPartsInOrder(t *testing.T) {
	t.Parallel()
	var names []string
	for _, p := range parts {
		names = append(names, p.name)
	}
	if got, want := strings.Join(names, ","), "comments,pull_request,remote_branch,worktree,local_branch"; got != want {
		t.Errorf("undo parts: %s, want %s", got, want)
	}
}
