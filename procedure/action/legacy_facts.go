package action

import (
	"regexp"
	"strconv"
)

// The legacy reader. Until steps recorded their facts as data, a
// step_completed entry carried only a note in English, and wo undo proved
// what wo made by matching these patterns against it. Entries written then
// are still read this way, so that no task run by an older wo loses its
// undo; nothing else reads notes, and no step writes an entry without
// facts any more. These patterns are the notes of that time, frozen: the
// notes steps write today may be reworded freely.
var (
	legacyBranch   = regexp.MustCompile(`^on branch (\S+) at ([0-9a-f]{12})$`)
	legacyCommit   = regexp.MustCompile(`^committed ([0-9a-f]{12}):`)
	legacyFix      = regexp.MustCompile(`^fixed \d+ review comment\(s\) in ([0-9a-f]{12}) `)
	legacyPush     = regexp.MustCompile(`^pushed (\S+) to .*? \(([0-9a-f]{12})\)`)
	legacyWorktree = regexp.MustCompile(`^worktree (.+) created from .* \([0-9a-f]{12}\)$`)
	legacyAdopted  = regexp.MustCompile(`(?:from|at) the existing branch (\S+) \(([0-9a-f]{12})\)`)
	legacyPR       = regexp.MustCompile(`^(?:opened pull request|pull request|found the open pull request) #(\d+)[: ]`)
)

// LegacyFacts reads the facts a prose-only step_completed entry's note
// states, by the action that wrote it (for an entry FactsOf finds no
// facts in).
func LegacyFacts(details map[string]any) []Fact {
	note, _ := details["note"].(string)
	name, _ := details["action"].(string)
	var facts []Fact
	switch name {
	case "create_branch":
		if m := legacyBranch.FindStringSubmatch(note); m != nil {
			facts = append(facts, Fact{Kind: FactBranch, Branch: m[1], SHA: m[2]})
		}
	case "commit":
		if m := legacyCommit.FindStringSubmatch(note); m != nil {
			facts = append(facts, Fact{Kind: FactCommit, SHA: m[1]})
		}
	case "conditional_loop":
		// A pass of the loop is complete once its fix is pushed: the
		// commit it made is one it pushed.
		if m := legacyFix.FindStringSubmatch(note); m != nil {
			facts = append(facts, Fact{Kind: FactCommit, SHA: m[1]}, Fact{Kind: FactPushed, SHA: m[1]})
		}
	case "push":
		if m := legacyPush.FindStringSubmatch(note); m != nil {
			facts = append(facts, Fact{Kind: FactPushed, Branch: m[1], SHA: m[2]})
		}
	case "create_worktree":
		if m := legacyWorktree.FindStringSubmatch(note); m != nil {
			facts = append(facts, Fact{Kind: FactWorktree, Path: m[1]})
		}
		if m := legacyAdopted.FindStringSubmatch(note); m != nil {
			facts = append(facts, Fact{Kind: FactAdopted, Branch: m[1], SHA: m[2]})
		}
	case "create_pr":
		if m := legacyPR.FindStringSubmatch(note); m != nil {
			n, _ := strconv.Atoi(m[1])
			facts = append(facts, Fact{Kind: FactPullRequest, Number: n})
		}
	}
	return facts
}
