package procedure

import (
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

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
	// Branches maps each branch create_branch switched to onto the commit
	// (12 hex digits) it found the branch at, "" for a branch only pushed.
	Branches map[string]string
	// Adopted maps the branches create_worktree found existing (and
	// started from, or found checked out in a worktree already there) onto
	// the commit (12 hex digits) it found them at: wo did not make them,
	// so they are never wo's to delete.
	Adopted map[string]string
	// Worktrees are the paths create_worktree created.
	Worktrees []string
	// PRs are the numbers of the pull requests create_pr opened or took
	// up.
	PRs []int
}

// The notes of the steps that make things (see each action's Outcome).
var (
	notedBranch   = regexp.MustCompile(`^on branch (\S+) at ([0-9a-f]{12})$`)
	notedCommit   = regexp.MustCompile(`^committed ([0-9a-f]{12}):`)
	notedFix      = regexp.MustCompile(`^fixed \d+ review comment\(s\) in ([0-9a-f]{12}) `)
	notedPush     = regexp.MustCompile(`^pushed (\S+) to .*? \(([0-9a-f]{12})\)`)
	notedWorktree = regexp.MustCompile(`^worktree (.+) created from .* \([0-9a-f]{12}\)$`)
	notedAdopted  = regexp.MustCompile(`(?:from|at) the existing branch (\S+) \(([0-9a-f]{12})\)`)
	notedPR       = regexp.MustCompile(`^(?:opened pull request|pull request|found the open pull request) #(\d+)[: ]`)
)

// ProvenanceOf reads the step_completed entries of a task's activity log.
// Entries of another task, and entries that are not a finished step, say
// nothing.
func ProvenanceOf(key string, entries []store.LogEntry) Provenance {
	p := Provenance{Branches: map[string]string{}, Adopted: map[string]string{}}
	for _, e := range entries {
		if e.Action != "step_completed" || e.TaskKey != key {
			continue
		}
		note, _ := e.Details["note"].(string)
		action, _ := e.Details["action"].(string)
		switch action {
		case "create_branch":
			if m := notedBranch.FindStringSubmatch(note); m != nil {
				p.Branches[m[1]] = m[2]
			}
		case "commit":
			if m := notedCommit.FindStringSubmatch(note); m != nil {
				p.Commits = append(p.Commits, m[1])
			}
		case "conditional_loop":
			// A pass of the loop is complete once its fix is pushed: the
			// commit it made is one it pushed.
			if m := notedFix.FindStringSubmatch(note); m != nil {
				p.Commits = append(p.Commits, m[1])
				p.Pushed = append(p.Pushed, m[1])
			}
		case "push":
			if m := notedPush.FindStringSubmatch(note); m != nil {
				if _, ok := p.Branches[m[1]]; !ok {
					p.Branches[m[1]] = ""
				}
				p.Pushed = append(p.Pushed, m[2])
			}
		case "create_worktree":
			if m := notedWorktree.FindStringSubmatch(note); m != nil {
				p.Worktrees = append(p.Worktrees, m[1])
			}
			// Also when it found the worktree already there: the branch
			// in it is someone's all the same, unless an earlier run of
			// this task left it there (a rerun after wo reset).
			if m := notedAdopted.FindStringSubmatch(note); m != nil && !p.earlier(m[1], m[2]) {
				p.Adopted[m[1]] = m[2]
			}
		case "create_pr":
			if m := notedPR.FindStringSubmatch(note); m != nil {
				n, _ := strconv.Atoi(m[1])
				p.PRs = append(p.PRs, n)
			}
		}
	}
	return p
}

// earlier reports whether the log so far shows the branch at the commit
// because of this task's runs: a commit they made or pushed, or where
// create_branch found the branch.
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

// Started reports whether create_branch made the branch at the commit: a
// branch wo switched to and has not moved since holds nothing to lose. A
// branch that create_worktree found existing was somebody's before.
func (p Provenance) Started(branch string, h plumbing.Hash) bool {
	at := p.Branches[branch]
	return at != "" && p.Adopted[branch] == "" && strings.HasPrefix(h.String(), at)
}

// Branch reports whether the task's runs switched to or pushed the branch.
func (p Provenance) Branch(branch string) bool {
	_, ok := p.Branches[branch]
	return ok
}
