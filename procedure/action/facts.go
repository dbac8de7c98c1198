package action

import (
	"encoding/json"
	"fmt"
)

// Fact is one thing a step made or took up, as data. An action returns its
// facts in Outcome.Facts; the engine writes them in the details of the
// step's step_completed log entry ("facts"), in the same write as the
// step's end. wo undo reads them there to prove what the task's runs made:
// the note beside them is for people and may be worded any way.
//
// The log entry is the proof, not the state: the state is document text
// that anyone who can write the document can write, while the log is
// appended by wo's runs only.
type Fact struct {
	Kind FactKind `json:"kind"`
	// Branch is the branch the fact is about (FactBranch, FactAdopted,
	// FactPushed).
	Branch string `json:"branch,omitempty"`
	// SHA is the full commit the fact names: where the branch was found
	// (FactBranch, FactAdopted), the commit made (FactCommit) or pushed
	// (FactPushed).
	SHA string `json:"sha,omitempty"`
	// Path is the worktree created (FactWorktree).
	Path string `json:"path,omitempty"`
	// Number is the pull request opened or taken up (FactPullRequest).
	Number int `json:"number,omitempty"`
}

// FactKind names what a Fact records.
type FactKind string

// The kinds of facts a step records.
const (
	// FactWorktree: the step created the worktree at Path (one found
	// already there is not a fact: wo did not make it).
	FactWorktree FactKind = "worktree"
	// FactAdopted: the worktree started from (or was found on) the
	// existing branch Branch at SHA; wo did not make that branch, so it
	// is never wo's to delete.
	FactAdopted FactKind = "adopted_branch"
	// FactBranch: the step switched the worktree to Branch, found at SHA.
	FactBranch FactKind = "branch"
	// FactCommit: the step made the commit SHA.
	FactCommit FactKind = "commit"
	// FactPushed: the step pushed SHA to the remote branch Branch.
	FactPushed FactKind = "pushed"
	// FactPullRequest: the step opened, or took up, pull request Number.
	FactPullRequest FactKind = "pull_request"
)

// FactsKey is where a step_completed entry keeps its facts. An entry that
// has the key (even with no facts) was written by a wo that records facts,
// and its note is never read for proof.
const FactsKey = "facts"

// FactsOf reads the facts of a log entry's details: ok is false for an
// entry written before facts were recorded (no "facts" key). The details
// may come from the store (decoded JSON) or from memory (typed).
func FactsOf(details map[string]any) (facts []Fact, ok bool, err error) {
	raw, ok := details[FactsKey]
	if !ok {
		return nil, false, nil
	}
	if typed, isTyped := raw.([]Fact); isTyped {
		return typed, true, nil
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return nil, true, fmt.Errorf("reading the facts of a log entry: %w", err)
	}
	if err := json.Unmarshal(b, &facts); err != nil {
		return nil, true, fmt.Errorf("reading the facts of a log entry: %w", err)
	}
	return facts, true, nil
}

// FactsData is the facts as JSON-shaped data (a list of objects), the
// form the log keeps and redaction walks: a secret in a path is masked in
// the facts as in the note beside them (a masked path then proves
// nothing, which is the safe side).
func FactsData(facts []Fact) []any {
	out := []any{}
	b, err := json.Marshal(facts)
	if err == nil {
		_ = json.Unmarshal(b, &out)
	}
	return out
}

// DeliveryMarker starts the marker of every comment an agent step of the
// task delivered (the step's number and " -->" end it): wo undo
// --comments deletes wo's comments that carry it.
func DeliveryMarker(key string) string { return "<!-- wo:" + key + ":step:" }
