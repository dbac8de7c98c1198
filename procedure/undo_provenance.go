package procedure

import (
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/wo-runner/wo/gitops"
	"github.com/wo-runner/wo/procedure/action"
	"github.com/wo-runner/wo/store"
)

// Provenance is what this task's own runs wrote in the activity log when
// they finished a step that makes something: the commits wo made and
// pushed, the branches it switched to and pushed, the worktrees it
// created, the pull requests it opened or took up. The state says the same
// things, but the state is document text that anyone who can write the
// document can write (wo import takes it as given); the log is appended
// by wo's runs only, and no document carries it. So undo takes a thing as
// wo's only when the log says so.
type Provenance struct {
	// Commits and Pushed are the first 12 hex digits of the commits the
	// commit step and the review loop made, and those the push step and
	// the review loop pushed.
	Commits []string
	Pushed  []string
	// Branches maps each branch a step switched to (FactBranch) onto the
	// commit (12 hex digits) it found the branch at, "" for a branch only
	// pushed.
	Branches map[string]string
	// Adopted maps the branches wo found existing (FactAdopted; and
	// started from, or found checked out in a worktree already there) onto
	// the commit (12 hex digits) it found them at: wo did not make them,
	// so they are never wo's to delete.
	Adopted map[string]string
	// Worktrees are the paths of the worktrees wo created (FactWorktree).
	Worktrees []string
	// PRs are the numbers of the pull requests wo opened or took
	// up.
	PRs []int
	// StartedActions are the actions whose steps this task's runs started
	// (step_started), finished or not: a step killed after its side
	// effect and before its write-back may have made something.
	StartedActions map[string]bool
}

// ProvenanceOf reads the step_completed entries of a task's activity log,
// oldest first: the facts each finished step recorded. Entries of another
// task, and entries that are not a finished step, say nothing. An entry
// written before steps recorded facts is read by the legacy reader
// (action.LegacyFacts), so that a task run by an older wo keeps its undo.
func ProvenanceOf(key string, entries []store.LogEntry) Provenance {
	return provenanceOf(defaultTable, key, entries)
}

// provenanceOf reads the log with the table's actions: a fact counts only
// when the action that logged it may make such things (action.Spec.Makes).
func provenanceOf(t action.Actions, key string, entries []store.LogEntry) Provenance {
	p := Provenance{Branches: map[string]string{}, Adopted: map[string]string{}, StartedActions: map[string]bool{}}
	for _, e := range entries {
		if e.Action == "step_started" && e.TaskKey == key {
			if name, ok := e.Details["action"].(string); ok {
				p.StartedActions[name] = true
			}
		}
		if e.Action != "step_completed" || e.TaskKey != key {
			continue
		}
		facts, ok, err := action.FactsOf(e.Details)
		switch {
		case !ok:
			facts = action.LegacyFacts(e.Details)
		case err != nil:
			// Unreadable facts prove nothing: undo then leaves what
			// it cannot prove wo's, which is the safe side.
			continue
		}
		name, _ := e.Details["action"].(string)
		spec, _ := t.Lookup(name)
		for _, f := range facts {
			if spec.MayMake(f.Kind) {
				p.add(f)
			}
		}
	}
	return p
}

// add takes one fact into the provenance. A fact about a commit that
// names none (at least the 12 hex digits the notes gave) proves nothing:
// an empty sha would be the prefix of every commit.
func (p *Provenance) add(f action.Fact) {
	if f.Kind != action.FactWorktree && f.Kind != action.FactPullRequest && (len(f.SHA) < 12 || strings.Trim(f.SHA, "0123456789abcdef") != "") {
		return
	}
	switch f.Kind {
	case action.FactBranch:
		p.Branches[f.Branch] = gitops.Short(f.SHA)
	case action.FactCommit:
		p.Commits = append(p.Commits, gitops.Short(f.SHA))
	case action.FactPushed:
		if _, ok := p.Branches[f.Branch]; !ok && f.Branch != "" {
			p.Branches[f.Branch] = ""
		}
		p.Pushed = append(p.Pushed, gitops.Short(f.SHA))
	case action.FactWorktree:
		p.Worktrees = append(p.Worktrees, f.Path)
	case action.FactAdopted:
		// Also when the worktree was found already there: the branch in
		// it is someone's all the same, unless an earlier run of this
		// task left it there (a rerun after wo reset).
		if !p.earlier(f.Branch, gitops.Short(f.SHA)) {
			p.Adopted[f.Branch] = gitops.Short(f.SHA)
		}
	case action.FactPullRequest:
		p.PRs = append(p.PRs, f.Number)
	}
}

// earlier reports whether the log so far shows the branch at the commit
// because of this task's runs: a commit they made or pushed, or where a
// step of theirs switched to the branch.
func (p Provenance) earlier(branch, at string) bool {
	return slices.Contains(p.Commits, at) || slices.Contains(p.Pushed, at) || (p.Branches[branch] == at && p.Adopted[branch] == "")
}

// Made reports whether the commit is one wo made or pushed for the task.
func (p Provenance) Made(h plumbing.Hash) bool {
	return p.PushedIt(h) || slices.ContainsFunc(p.Commits, func(c string) bool { return strings.HasPrefix(h.String(), c) })
}

// PushedIt reports whether the push step pushed the commit.
func (p Provenance) PushedIt(h plumbing.Hash) bool {
	return slices.ContainsFunc(p.Pushed, func(c string) bool { return strings.HasPrefix(h.String(), c) })
}

// Started reports whether wo made the branch at the commit: a
// branch wo switched to and has not moved since holds nothing to lose. A
// branch that wo found existing was somebody's before.
func (p Provenance) Started(branch string, h plumbing.Hash) bool {
	at := p.Branches[branch]
	return at != "" && p.Adopted[branch] == "" && strings.HasPrefix(h.String(), at)
}

// Branch reports whether the task's runs switched to or pushed the branch.
func (p Provenance) Branch(branch string) bool {
	_, ok := p.Branches[branch]
	return ok
}
