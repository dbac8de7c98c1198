// Package ghevent resumes the work order a GitHub event is about: a
// review or a comment resumes its run, a closed pull request syncs it
// (procedure/stack), an edited one records its place in GitHub's stack.
package ghevent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/wo-runner/wo/internal/gitname"
	"github.com/wo-runner/wo/procedure"
	"github.com/wo-runner/wo/procedure/stack"
	"github.com/wo-runner/wo/store"
	"github.com/wo-runner/wo/termtext"
	"github.com/wo-runner/wo/workorder"
)

// GitHub tells a workflow when something happens to a pull request; wo
// resumes the work order that waits for it instead of polling. The payload
// is untrusted: it is size-bounded by the caller, decoded strictly into the
// few fields wo reads, and only ever used to look up a work order that the
// store already records for that repository and pull request.

// ResumeEvents are the GitHub events wo resumes on. A status event is a
// review bot's news about a commit (CodeRabbit's clean re-review posts no
// review, only its status and an edit of its summary comment).
var ResumeEvents = []string{"pull_request_review", "pull_request_review_comment", "pull_request", "issue_comment", "status"}

// MaxEventSize bounds a payload file (GitHub's own are far smaller).
const MaxEventSize = 4 << 20

// GitHubEvent is what wo reads of an event payload.
type GitHubEvent struct {
	Name   string `json:"event"`
	Action string `json:"action"`
	Repo   string `json:"repository"` // owner/name
	PR     int    `json:"pull_request"`
	Head   string `json:"head_branch,omitempty"`
	Merged bool   `json:"merged,omitempty"`
	// HeadRepo is the repository the pull request's branch lives in
	// (head.repo.full_name), when the payload carries the pull request;
	// Fork says it is not Repo itself (or unknown: a deleted fork).
	HeadRepo string `json:"head_repository,omitempty"`
	Fork     bool   `json:"fork,omitempty"`
	// SHA is the commit a status event is about; Context its context.
	SHA     string `json:"sha,omitempty"`
	Context string `json:"context,omitempty"`
	// Stack is the pull request's place in one of GitHub's stacks, as a
	// pull_request event carries it; StackKnown says the payload had the
	// stack object (null: in no stack).
	Stack      *workorder.PRStack `json:"stack,omitempty"`
	StackKnown bool               `json:"-"`
}

// payload is the part of GitHub's event payloads wo reads.
type payload struct {
	Action      string `json:"action"`
	Number      int    `json:"number"`
	PullRequest *struct {
		Number int             `json:"number"`
		Merged bool            `json:"merged"`
		Stack  json.RawMessage `json:"stack"`
		Head   struct {
			Ref  string `json:"ref"`
			Repo *struct {
				FullName string `json:"full_name"`
			} `json:"repo"`
		} `json:"head"`
	} `json:"pull_request"`
	Issue *struct {
		Number      int             `json:"number"`
		PullRequest json.RawMessage `json:"pull_request"`
	} `json:"issue"`
	Repository struct {
		FullName string `json:"full_name"`
	} `json:"repository"`
	SHA     string `json:"sha"`     // status events
	Context string `json:"context"` // status events
}

// EventError is a payload wo cannot use.
type EventError struct{ Msg string }

func (e *EventError) Error() string { return e.Msg }

// Classification: the payload is wrong, as a document can be.
func (e *EventError) Classification() procedure.Classification {
	return procedure.Classification{Outcome: procedure.OutcomeInvalid, Code: "INVALID_EVENT"}
}

// ParseGitHubEvent reads an event payload of the named kind.
func ParseGitHubEvent(name string, data []byte) (*GitHubEvent, error) {
	if !slices.Contains(ResumeEvents, name) {
		return nil, &EventError{fmt.Sprintf("event %q is not one wo resumes on (%s)", name, strings.Join(ResumeEvents, ", "))}
	}
	if len(data) > MaxEventSize {
		return nil, &EventError{fmt.Sprintf("the event payload has %d bytes; at most %d", len(data), MaxEventSize)}
	}
	var p payload
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&p); err != nil {
		return nil, &EventError{fmt.Sprintf("the %s payload is not the JSON GitHub sends: %v", name, err)}
	}
	ev := &GitHubEvent{Name: name, Action: p.Action, Repo: p.Repository.FullName}
	if name == "status" {
		// About a commit, not a pull request: wo finds the work order
		// that pushed it.
		ev.SHA, ev.Context = strings.ToLower(p.SHA), termtext.Clip(p.Context, 100)
		if !validRepo(ev.Repo) || !plumbing.IsHash(ev.SHA) {
			return nil, &EventError{fmt.Sprintf("the status payload names no commit of a repository (repository %q, sha %q)", termtext.Clip(ev.Repo, 140), termtext.Clip(p.SHA, 80))}
		}
		return ev, nil
	}
	switch {
	case p.PullRequest != nil:
		ev.PR, ev.Head, ev.Merged = p.PullRequest.Number, p.PullRequest.Head.Ref, p.PullRequest.Merged
		if r := p.PullRequest.Head.Repo; r != nil {
			ev.HeadRepo = r.FullName
		}
		ev.Fork = !strings.EqualFold(ev.HeadRepo, ev.Repo)
		if err := readStack(p.PullRequest.Stack, ev); err != nil {
			return nil, err
		}
	case p.Issue != nil && len(p.Issue.PullRequest) > 0 && string(p.Issue.PullRequest) != "null":
		ev.PR = p.Issue.Number
	case p.Issue != nil:
		return nil, &EventError{fmt.Sprintf("the %s event is about issue #%d, not a pull request", name, p.Issue.Number)}
	}
	if ev.PR <= 0 && p.Number > 0 {
		ev.PR = p.Number
	}
	if !validRepo(ev.Repo) || ev.PR <= 0 {
		return nil, &EventError{fmt.Sprintf("the %s payload names no pull request of a repository (repository %q, pull request %d)", name, ev.Repo, ev.PR)}
	}
	return ev, nil
}

// readStack reads GitHub's stack object of a pull request event.
func readStack(raw json.RawMessage, ev *GitHubEvent) error {
	if len(raw) == 0 {
		return nil
	}
	ev.StackKnown = true
	if string(raw) == "null" {
		return nil
	}
	var s workorder.PRStack
	if err := json.Unmarshal(raw, &s); err != nil || s.Number <= 0 || s.Position <= 0 || s.Size < s.Position {
		return &EventError{fmt.Sprintf("the pull_request payload's stack object is not GitHub's (number, position 1 to size): %s", termtext.Clip(string(raw), 120))}
	}
	ev.Stack = &s
	return nil
}

func validRepo(s string) bool {
	owner, name, ok := strings.Cut(s, "/")
	return ok && owner != "" && name != "" && !strings.ContainsAny(s, " \t\n\\") && len(s) <= 140 && !strings.Contains(name, "/")
}

// EventResult says what an event did.
type EventResult struct {
	Event *GitHubEvent `json:"event"`
	// Key is the work order the event was for; empty when wo knows none.
	Key    string            `json:"key,omitempty"`
	Action string            `json:"action"` // resumed, synced, recorded, ignored
	Reason string            `json:"reason,omitempty"`
	Run    *procedure.Result `json:"run,omitempty"`
	Sync   *stack.SyncResult `json:"sync,omitempty"`
	// Epic is the epic run that followed, when asked for.
	Epic *procedure.EpicResult `json:"epic,omitempty"`
}

// OnGitHubEvent finds the work order whose recorded pull request the event
// names (same repository, and its PR number, or its branch while no PR is
// recorded) and resumes it; an event about a pull request from a fork
// matches none, since wo's pull requests come from branches of the
// repository itself: a merged or closed PR is synced (a merged one
// closes the task, so its dependents can start); a review or a comment
// resumes the run, which goes on from where it waits. An event for a pull
// request wo does not know is ignored, saying so.
func OnGitHubEvent(ctx context.Context, e *procedure.Engine, ev *GitHubEvent, opts procedure.RunOptions) (*EventResult, error) {
	e.FillDefaults()
	res := &EventResult{Event: ev, Action: "ignored"}
	if ev.Fork {
		from := "a repository GitHub no longer names"
		if ev.HeadRepo != "" {
			from = ev.HeadRepo
		}
		res.Reason = fmt.Sprintf("pull request #%d of %s comes from %s, not from %s itself: wo resumes only its own pull requests, whose branches are in the repository", ev.PR, ev.Repo, from, ev.Repo)
		return res, nil
	}
	docs, err := e.Store.List(ctx, store.Filter{})
	if err != nil {
		return nil, err
	}
	var match []string
	for _, d := range docs {
		if !strings.EqualFold(workorder.String(d, "work_order.context.repo"), ev.Repo) {
			continue
		}
		st, err := workorder.StateOf(d)
		if err != nil {
			continue
		}
		switch {
		case ev.SHA != "":
			if st.PushedSHA == ev.SHA && st.PRNumber > 0 {
				match = append(match, workorder.Key(d))
			}
		case st.PRNumber == ev.PR || (st.PRNumber == 0 && ev.Head != "" && workorder.String(d, "work_order.inputs.branch_name") == ev.Head):
			match = append(match, workorder.Key(d))
		}
	}
	switch len(match) {
	case 0:
		res.Reason = fmt.Sprintf("no work order records pull request #%d of %s: nothing to do", ev.PR, ev.Repo)
		if ev.SHA != "" {
			res.Reason = fmt.Sprintf("no work order of %s waits on commit %s: nothing to do", ev.Repo, gitname.Short(ev.SHA))
		}
		return res, nil
	case 1:
		res.Key = match[0]
	default:
		if ev.SHA != "" {
			return nil, &EventError{fmt.Sprintf("commit %s of %s is the pushed head of several work orders (%s): resume one with wo run KEY", gitname.Short(ev.SHA), ev.Repo, strings.Join(match, ", "))}
		}
		return nil, &EventError{fmt.Sprintf("pull request #%d of %s is recorded by several work orders (%s): resume one with wo run KEY", ev.PR, ev.Repo, strings.Join(match, ", "))}
	}
	if ev.Name == "pull_request" {
		if ev.Action != "closed" {
			if ev.StackKnown {
				return recordStackPlace(ctx, e, res, ev)
			}
			res.Reason = fmt.Sprintf("a pull_request event with action %q changes nothing wo waits for", ev.Action)
			return res, nil
		}
		res.Action = "synced"
		res.Sync, err = stack.Of(e).Sync(ctx, res.Key)
		return res, err
	}
	res.Action = "resumed"
	o := opts
	o.Key = res.Key
	res.Run, err = e.Run(ctx, o)
	return res, err
}

// recordStackPlace keeps what a pull_request event says of the pull
// request's place in GitHub's stack.
func recordStackPlace(ctx context.Context, e *procedure.Engine, res *EventResult, ev *GitHubEvent) (*EventResult, error) {
	changed := false
	err := store.RetryConflicts(ctx, func() error {
		doc, err := e.Store.Get(ctx, res.Key)
		if err != nil {
			return err
		}
		before, err := workorder.StateOf(doc)
		if err != nil {
			return err
		}
		if changed = !stack.SamePlace(before.PRStack, ev.Stack); !changed {
			return nil
		}
		after := before.Clone()
		after.PRStack = ev.Stack
		rev, _ := doc["_rev"].(string)
		_, err = e.Store.Update(ctx, res.Key, rev, workorder.StatePatch(before, after))
		return err
	})
	if err != nil {
		return nil, err
	}
	switch {
	case !changed:
		res.Reason = fmt.Sprintf("pull request #%d stands where wo knew it in GitHub's stacks: nothing to do", ev.PR)
	case ev.Stack == nil:
		res.Action, res.Reason = "recorded", fmt.Sprintf("pull request #%d is in no GitHub stack now", ev.PR)
	default:
		res.Action, res.Reason = "recorded", fmt.Sprintf("pull request #%d is %d of %d in GitHub stack %d", ev.PR, ev.Stack.Position, ev.Stack.Size, ev.Stack.Number)
	}
	return res, nil
}
