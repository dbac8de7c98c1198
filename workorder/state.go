package workorder

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"time"
)

// State is work_order.state: the fields every Persephone reader knows
// (current_step, completed_steps, review_iterations, pr_url, worktree_path,
// notes) plus what a resumed run needs, grouped by concern. The groups are
// embedded, so the stored document stays one flat object and a field reads
// as st.PRNumber whatever its group.
//
// Each group's tags give its title and what it holds; each field's tags
// are its one description (statefields.go reads them):
//
//	json   its name in the document
//	doc    what it means, for the reference in docs/work-order.md
//	wo     later: command templates may name it before a step fills it;
//	       lease: written only by the lease (store.Leases), never by a patch;
//	       and the rule its value keeps beyond its type (stateRules):
//	       version, step, steps, count, positive
//
// The validator, the reference and the template names follow from these
// tags (a test refuses a field without them); no other list of state
// fields exists. Which fields a
// rewind forgets is said by each action (action.Spec.Forgets), not here:
// this package names no action.
type State struct {
	RunState         `title:"The run" doc:"How far the run got, who holds it and what stopped it."`
	GitState         `title:"Git" doc:"What the git steps made, so that a resumed run uses the same inputs."`
	PullRequestState `title:"The pull request" doc:"The task's pull request on GitHub."`
	ReviewState      `title:"The review" doc:"The review loop: the wait, what the reviewers said, the fixes."`
	StackState       `title:"Stacks" doc:"A stacked branch's base, GitHub's own stacks of an epic, and wo land."`
	AgentState       `title:"The agent" doc:"The coding agent's process, its costs and its deliverables."`
}

// RunState is how far a run got, who holds it and what stopped it.
type RunState struct {
	Version         int               `json:"version,omitempty" wo:"version" doc:"The shape of this state, so that a wo knows whether it can read it."`
	CurrentStep     int               `json:"current_step" wo:"step" doc:"The last completed step: 0 before the first, the next run starts after it."`
	CompletedSteps  []int             `json:"completed_steps" wo:"steps" doc:"The steps done."`
	Notes           []string          `json:"notes" doc:"What the steps did, in words, oldest first; other writers' notes are kept."`
	Phase           Phase             `json:"phase,omitempty" doc:"What Persephone's status cannot say: running, waiting for a review, needs a fix, needs review of a deliverable, interrupted, failed, …"`
	Lease           *Lease            `json:"lease,omitempty" wo:"lease" doc:"The runner holding the task and until when: {holder, expires_at}."`
	LastError       *StepError        `json:"last_error,omitempty" doc:"The last failure, so that the next runner knows why: {step, action, message, attempt, at}."`
	Approval        *Approval         `json:"approval,omitempty" doc:"The decision of wo approve: {decision, by, at, note}."`
	StepDurationsMS map[string]int64  `json:"step_durations_ms,omitempty" doc:"How long each step took, in milliseconds, by step number."`
	CriteriaResults []CriterionResult `json:"criteria_results,omitempty" doc:"Each success criterion and what wo found: checked, passed, how."`
	Skipped         *Skip             `json:"skipped,omitempty" doc:"Why an epic run did not start this task (a blocker failed or waits); the next run of the task clears it."`
	Undo            *UndoRecord       `json:"undo,omitempty" doc:"The progress of a wo undo that has not finished, so that a rerun after a crash goes on from there; the final reset clears it, the activity log keeps it."`
}

// GitState is what the git steps made.
type GitState struct {
	WorktreePath *string `json:"worktree_path" wo:"later" doc:"The worktree's folder, while it exists."`
	WorktreeName string  `json:"worktree_name,omitempty" wo:"later" doc:"The worktree's name under worktree_root."`
	Branch       string  `json:"branch,omitempty" wo:"later" doc:"The review branch."`
	BaseSHA      string  `json:"base_sha,omitempty" wo:"later" doc:"The commit the worktree started from."`
	SourceSHA    string  `json:"source_sha,omitempty" wo:"later" doc:"The source branch's commit the manifest's files were copied from."`
	CommitSHA    string  `json:"commit_sha,omitempty" wo:"later" doc:"The commit wo made."`
	PushedSHA    string  `json:"pushed_sha,omitempty" wo:"later" doc:"The commit last pushed."`
	PushedAt     string  `json:"pushed_at,omitempty" doc:"When wo pushed pushed_sha, by its clock: a reviewer's summary edited before it speaks of an older head."`
	PushedTo     string  `json:"pushed_to,omitempty" doc:"The remote's URL (without credentials) of wo's first push: a later push goes there or nowhere, so that an agent that edits the shared .git/config cannot send the branch, and the token, elsewhere."`
}

// PullRequestState is the task's pull request.
type PullRequestState struct {
	PRURL    *string `json:"pr_url" wo:"later" doc:"The pull request's address."`
	PRNumber int     `json:"pr_number,omitempty" wo:"later,positive" doc:"GitHub's number of the pull request."`
	PRState  string  `json:"pr_state,omitempty" doc:"The pull request's state at the last sync: merged, or closed."`
}

// ReviewState is the review loop: the wait, what the reviewers said and
// the fixes.
type ReviewState struct {
	ReviewIterations   int                `json:"review_iterations" wo:"later,count" doc:"How many review fixes were pushed: one a pass of the loop."`
	ReviewDeadline     string             `json:"review_deadline,omitempty" doc:"When the current wait for a review ends: a resumed run waits only what is left."`
	ReviewWaitingSince string             `json:"review_waiting_since,omitempty" doc:"When a run stopped to wait for a review event instead of polling (--review-wait 0)."`
	ReviewNotBefore    string             `json:"review_not_before,omitempty" doc:"When a rate-limited reviewer takes a request again, as it said: wo asks for the review after it, and an epic opens no more pull requests for that reviewer until then."`
	Reviewers          []ReviewerStand    `json:"reviewers,omitempty" doc:"Where each awaited reviewer stood on the pushed head at the last look: reviewed, skipped, rate limited, …"`
	ReviewAsks         []ReviewAsk        `json:"review_asks,omitempty" doc:"The requests for review wo made (a command comment, a re-request), so that none is made twice for one head."`
	ReviewUncounted    []UncountedComment `json:"review_uncounted,omitempty" doc:"Comments and reviews wo did not count and did not send to the agent, with why (an outsider wrote them, a nitpick the settings only report): shown, never silently dropped."`
	ReviewComments     []ReviewComment    `json:"review_comments,omitzero" doc:"The actionable comments found at the last check; absent until a check ran, empty when it found none."`
	ReviewWatermark    Watermark          `json:"review_watermark,omitzero" doc:"The newest comment of each kind already handled: {review, review_comment, issue_comment}."`
	ReviewSeen         Watermark          `json:"review_seen,omitzero" doc:"The newest comment of each kind seen at the last check, which becomes the watermark once the comments are fixed."`
	ReviewThreads      []ReviewThread     `json:"review_threads,omitzero" doc:"The unresolved review threads at the last check, outdated ones included (marked), each with its conversation, bounded in size; absent until a check read them."`
	ReviewVerdicts     map[string]string  `json:"review_verdicts,omitempty" doc:"Each reviewer's latest verdict (APPROVED, CHANGES_REQUESTED, COMMENTED, DISMISSED) on the pushed head at the last check, by login."`
	ChangesRequestedBy []string           `json:"changes_requested_by,omitempty" doc:"The awaited reviewers whose latest verdict on the pushed head asks for changes: the loop goes on while one does."`
	ReviewCheckedSHA   string             `json:"review_checked_sha,omitempty" doc:"The pushed head the last check read: a fix pushed since makes what the check found (threads, verdicts) about an older commit."`
	FixPushed          *FixPush           `json:"fix_pushed,omitempty" doc:"The review fix of a pass of the loop that has not finished, recorded once committed ({from, to}): a rerun pushes it (when pushed_sha is still from) or goes on from the replies in the review threads (when pushed_sha is to) instead of running the agent again."`
	FixRequested       bool               `json:"fix_requested,omitempty" doc:"Set once a person was asked to fix the comments."`
	LoopIterations     map[string]int     `json:"loop_iterations,omitempty" doc:"The passes of each loop step, by step number, to bound them."`
	ReviewResult       string             `json:"review_result,omitempty" wo:"later" doc:"What the review came to, in words, as the update_task step recorded it: no comments open, or how many, or who asks for changes."`
}

// StackState is a stacked branch, GitHub's own stacks and wo land.
type StackState struct {
	StackParent  string        `json:"stack_parent,omitempty" doc:"The commit a stacked branch was last built on (its parent branch's head, or the base's); empty until the first restack, when the branch was built on base_sha."`
	StackBase    string        `json:"stack_base,omitempty" doc:"The branch a stacked branch's pull request targets; empty until the first restack, when it is context.base_branch."`
	Restack      *Restack      `json:"restack,omitempty" doc:"The last restack of the branch: what wo found and did."`
	PRStack      *PRStack      `json:"pr_stack,omitempty" doc:"Where the task's pull request stands in one of GitHub's stacks, as GitHub's stack object on the pull request said last."`
	GitHubStacks *GitHubStacks `json:"github_stacks,omitempty" doc:"On an epic's document, what wo knows of GitHub's own stacked pull requests for the epic: whether the repository has them, and the stacks wo made."`
	Land         *Land         `json:"land,omitempty" doc:"On an epic's document, the landing of its pull requests (wo land): what it merged and the merge it waits for, so that a rerun after a crash merges nothing twice."`
}

// AgentState is the coding agent's part.
type AgentState struct {
	Agent        *AgentProcess     `json:"agent,omitempty" doc:"The agent process running for this task: recorded when it starts and cleared when it ends, so that a rerun after a crash stops an agent left running before it starts its own."`
	AgentUsage   *AgentUsage       `json:"agent_usage,omitempty" doc:"What the agent's runs for this task did and cost: the caps (--max-agent-rounds, --max-agent-cost) are checked against it."`
	Deliverables map[string]string `json:"deliverables,omitempty" doc:"The agents' deliverables kept, by step number."`
}

// GitHubStacks is what wo found and did of GitHub's own stacks for an
// epic.
type GitHubStacks struct {
	// Enabled is GitHub's answer to the first stacked push: whether the
	// repository has stacked pull requests (its Stacks API answered).
	Enabled   bool   `json:"enabled"`
	CheckedAt string `json:"checked_at"`
	// Stacks are the numbers of the stacks wo made, bottom first: an epic
	// of more than 100 pull requests is consecutive stacks.
	Stacks []int `json:"stacks,omitempty"`
	// Note is what the last check of the stacks found that a person
	// should know (a repair, a refusal by GitHub).
	Note string `json:"note,omitempty"`
}

// PRStack is GitHub's stack object on a pull request.
type PRStack struct {
	Number   int `json:"number"`
	Position int `json:"position"` // 1 is the bottom
	Size     int `json:"size"`
}

// Land is the progress of wo land on an epic.
type Land struct {
	Started string `json:"started"`
	Method  string `json:"method"`
	// Merged are the pull requests it merged (or found merged), bottom
	// first.
	Merged []int `json:"merged,omitempty"`
	// Checked are the pull requests it found ready before it merged the
	// first: a restack between two merges sends the next back to its
	// review wait, which a rerun does not take for not ready.
	Checked []int `json:"checked,omitempty"`
	// Pending is the asynchronous merge asked for and not yet seen to end.
	Pending *PendingMerge `json:"pending,omitempty"`
	// Stopped is why the last land stopped before the end.
	Stopped  string `json:"stopped,omitempty"`
	Finished string `json:"finished,omitempty"`
}

// PendingMerge is an asynchronous merge GitHub was asked for.
type PendingMerge struct {
	PR   int    `json:"pr_number"`
	UUID string `json:"uuid"`
	At   string `json:"at"`
}

// NeverRan reports whether the state records no step and nothing a step
// makes: the work order has not run, or was undone since.
func (s State) NeverRan() bool {
	return s.CurrentStep == 0 && len(s.CompletedSteps) == 0 && s.Branch == "" && s.WorktreeName == "" &&
		s.CommitSHA == "" && s.PushedSHA == "" && s.PRNumber == 0 && s.Undo == nil
}

// UndoRecord is what wo undo has done so far.
type UndoRecord struct {
	By      string     `json:"by"`
	Started string     `json:"started"`
	Steps   []UndoStep `json:"steps"`
}

// UndoStep is one thing wo undo took back, found gone, or left (and why).
type UndoStep struct {
	Step    string `json:"step"` // comments, pull_request, remote_branch, worktree, local_branch, state
	Target  string `json:"target"`
	Outcome string `json:"outcome"` // undone, gone, left, would
	Reason  string `json:"reason,omitempty"`
}

// FixPush is a review fix: the commit reviewed before it and the fix
// commit.
type FixPush struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// Skip is an epic run's decision not to start a task.
type Skip struct {
	Reason string `json:"reason"`
	By     string `json:"by"`
	At     string `json:"at"`
}

// AgentProcess identifies a running agent command. It leads its own
// process group (PGID = PID), so that stopping it stops its children.
type AgentProcess struct {
	PID  int    `json:"pid"`
	Host string `json:"host"`
	// StartTicks is when the process started, in clock ticks since boot
	// (Linux), to tell it from a later process that got the same pid.
	StartTicks uint64 `json:"start_ticks,omitempty"`
	StartedAt  string `json:"started_at"`
	Step       int    `json:"step"`
}

// AgentUsage counts an agent's runs for one task. A round is a run that
// fixed something (it left a diff); a run that changed nothing or failed
// is a run, not a round.
type AgentUsage struct {
	Runs    int     `json:"runs"`
	Rounds  int     `json:"rounds"`
	CostUSD float64 `json:"cost_usd,omitempty"`
	Tokens  int64   `json:"tokens,omitempty"`
	// Last is the latest run.
	Last *AgentRunRecord `json:"last,omitempty"`
}

// AgentRunRecord is one run of the agent, as the log and wo show tell it.
type AgentRunRecord struct {
	Agent      string  `json:"agent"`
	Step       int     `json:"step"`
	Outcome    string  `json:"outcome"` // fixed, no_change, failed
	Failure    string  `json:"failure,omitempty"`
	Message    string  `json:"message,omitempty"`
	CostUSD    float64 `json:"cost_usd,omitempty"`
	Tokens     int64   `json:"tokens,omitempty"`
	DurationMS int64   `json:"duration_ms"`
	At         string  `json:"at"`
	// NotBefore is when a rate-limited agent may be asked again.
	NotBefore string `json:"not_before,omitempty"`
	// Comments is the review watermark the run was asked about: a run
	// that changed nothing is not asked the same again unless told to.
	Comments string `json:"comments,omitempty"`
}

// PRStateMerged is state.pr_state of a task whose pull request was merged.
const PRStateMerged = "merged"

// Watermark is the newest ID of each kind of review item already handled.
type Watermark struct {
	Review        int64 `json:"review"`
	ReviewComment int64 `json:"review_comment"`
	IssueComment  int64 `json:"issue_comment"`
}

// ReviewComment is one comment to address, kept in the document so that an
// agent reading only the task has it.
type ReviewComment struct {
	ID     int64  `json:"id"`
	Author string `json:"author"`
	Path   string `json:"path,omitempty"`
	Line   int    `json:"line,omitempty"`
	// StartLine is the first line of a finding on several lines.
	StartLine int    `json:"start_line,omitempty"`
	Body      string `json:"body"`
	URL       string `json:"url,omitempty"`
	// Section is where a finding kept in a review's body came from
	// (outside_diff, duplicate, nitpick); empty for threads and comments.
	Section string `json:"section,omitempty"`
}

// Restack is what wo sync did to a stacked branch whose lower neighbour
// merged, moved or changed.
type Restack struct {
	At      string `json:"at"`
	Outcome string `json:"outcome"`        // pushing, restacked, unchanged, conflict, left
	From    string `json:"from,omitempty"` // the branch's head before
	To      string `json:"to,omitempty"`   // the rebuilt head (pushing, restacked)
	Onto    string `json:"onto,omitempty"` // the new parent
	// Conflicts are the files a person must settle (outcome conflict).
	Conflicts []string `json:"conflicts,omitempty"`
	Reason    string   `json:"reason,omitempty"`
}

// ReviewerStand is where one awaited reviewer stood on a head.
type ReviewerStand struct {
	Login string `json:"login"`
	Head  string `json:"head"`
	// Kind: waiting, in_progress, reviewed, skipped, paused, rate_limited,
	// aborted, unavailable.
	Kind string `json:"kind"`
	Said string `json:"said,omitempty"` // the reviewer's words, briefly
	At   string `json:"at,omitempty"`
}

// ReviewAsk is one request for a review wo made.
type ReviewAsk struct {
	Reviewer string `json:"reviewer"`
	Head     string `json:"head"`
	Kind     string `json:"kind"`             // what it answered: skipped, rate_limited, …
	How      string `json:"how"`              // the command posted, or "re-request"
	Signal   string `json:"signal,omitempty"` // when the reviewer said it (its time)
	At       string `json:"at"`
}

// UncountedComment is a comment or review that neither counts nor reaches
// the agent, and why.
type UncountedComment struct {
	Author      string `json:"author"`
	Association string `json:"association,omitempty"`
	Kind        string `json:"kind"` // thread, reply, comment, review, nitpick
	Path        string `json:"path,omitempty"`
	Line        int    `json:"line,omitempty"`
	URL         string `json:"url,omitempty"`
	Why         string `json:"why"`
}

// ReviewThread is one unresolved review thread: a line of a file and the
// whole conversation about it, kept so that an agent reading only the task
// has it.
type ReviewThread struct {
	ID   string `json:"id"` // GitHub's node ID, to reply and resolve
	Path string `json:"path"`
	Line int    `json:"line,omitempty"` // 0 when outdated
	// StartLine is the first line of a comment on several lines (0 for
	// one line); Deleted marks a comment on lines the change removed
	// (GitHub's LEFT side), whose numbers are the base file's.
	StartLine int             `json:"start_line,omitempty"`
	Deleted   bool            `json:"deleted_side,omitempty"`
	Outdated  bool            `json:"outdated,omitempty"`
	Counted   bool            `json:"counted"` // it keeps the review loop going
	Comments  []ThreadComment `json:"comments"`
	// Omitted is how many comments of a long conversation were left out
	// (the first is always kept, then the latest).
	Omitted int `json:"omitted,omitempty"`
}

// ThreadComment is one comment of a review thread.
type ThreadComment struct {
	ID     int64  `json:"id,omitempty"`
	Author string `json:"author"`
	Body   string `json:"body"`
	URL    string `json:"url,omitempty"`
}

// CriterionResult is one success criterion and what wo found.
type CriterionResult struct {
	Criterion string `json:"criterion"`
	Checked   bool   `json:"checked"`
	Passed    bool   `json:"passed"`
	How       string `json:"how"`
}

// Approval is the decision recorded in work_order.state.approval.
type Approval struct {
	Decision Decision `json:"decision"`
	By       string   `json:"by"`
	At       string   `json:"at"`
	Note     string   `json:"note,omitempty"`
}

// Lease says which runner holds the task and until when.
type Lease struct {
	Holder    string    `json:"holder"`
	ExpiresAt time.Time `json:"expires_at"`
}

// StepError is the last failure, kept so that the next runner knows why.
type StepError struct {
	Step    int    `json:"step"`
	Action  string `json:"action"`
	Message string `json:"message"`
	Attempt int    `json:"attempt"`
	At      string `json:"at"`
}

// NewState is the state of a work order that has not started.
func NewState() State {
	return State{RunState: RunState{Version: StateVersion, CompletedSteps: []int{}, Notes: []string{}}}
}

// IsCompleted reports whether step n is in completed_steps.
func (s *State) IsCompleted(n int) bool { return slices.Contains(s.CompletedSteps, n) }

// Clone returns a deep copy, so that a saved state and a working one never
// share a map or a slice.
func (s State) Clone() State {
	var out State
	b, err := json.Marshal(s)
	if err == nil {
		err = json.Unmarshal(b, &out)
	}
	if err != nil {
		panic(fmt.Sprintf("workorder: cloning a state: %v", err)) // every field is plain JSON
	}
	out.normalize()
	return out
}

// normalize gives the lists Persephone's readers expect as arrays a
// non-nil value.
func (s *State) normalize() {
	if s.CompletedSteps == nil {
		s.CompletedSteps = []int{}
	}
	if s.Notes == nil {
		s.Notes = []string{}
	}
}

// StateOf reads work_order.state of a document; a document without one has
// the state of a work order that has not started. Validate the document
// first: StateOf reports only the first type mismatch it meets.
func StateOf(doc Document) (State, error) {
	raw, ok := Lookup(doc, "work_order.state")
	if !ok || raw == nil {
		return NewState(), nil
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return State{}, err
	}
	var s State
	if err := json.Unmarshal(b, &s); err != nil {
		return State{}, fmt.Errorf("task %s: %w", Key(doc), stateTypeError(raw, err))
	}
	s.normalize()
	return s, nil
}

// stateTypeError says which field of a state that does not decode is of
// the wrong type, by its path in the document (as wo validate says it),
// not by the Go types the state is decoded into.
func stateTypeError(raw any, err error) error {
	st, ok := raw.(map[string]any)
	if !ok {
		return fmt.Errorf("work_order.state: must be an object, not %s", jsonKind(raw))
	}
	var first error
	checkState(st, -1, func(field, msg string) {
		if first == nil {
			first = fmt.Errorf("work_order.state.%s: %s", field, msg)
		}
	})
	if first == nil {
		return fmt.Errorf("work_order.state: %w", err)
	}
	return first
}

// StatePatch is the one builder of state writes: the patch that turns the
// stored state before into after, as a top-level document patch
// ({"work_order": {"state": {...}}}), or nil when nothing changed. It names
// only the fields that changed, so fields that other tools keep in the state
// survive; inside objects it also names only what changed, with null for a
// key that went away, because stores merge objects at every level (a map
// entry that went away is thus stored as null, which reads back as the
// zero value). The lease is never part of it: only the lease writes it.
func StatePatch(before, after State) map[string]any {
	b, a := stateMap(before), stateMap(after)
	diff := diffObjects(b, a)
	if len(diff) == 0 {
		return nil
	}
	return map[string]any{"work_order": map[string]any{"state": diff}}
}

// StateMap is a state as a document holds it.
func StateMap(s State) map[string]any { return stateMap(s) }

func stateMap(s State) map[string]any {
	s.Lease = nil
	s.normalize()
	v, err := Normalize(s)
	if err != nil {
		panic(fmt.Sprintf("workorder: encoding a state: %v", err)) // every field is plain JSON
	}
	return v.(map[string]any)
}

// diffObjects returns what to merge into before to get after.
func diffObjects(before, after map[string]any) map[string]any {
	out := map[string]any{}
	for k, av := range after {
		bv, had := before[k]
		switch {
		case !had:
			out[k] = av
		case reflect.DeepEqual(av, bv):
		default:
			ao, aok := av.(map[string]any)
			bo, bok := bv.(map[string]any)
			if aok && bok {
				if d := diffObjects(bo, ao); len(d) > 0 {
					out[k] = d
				}
			} else {
				out[k] = av
			}
		}
	}
	for k := range before {
		if _, kept := after[k]; !kept {
			out[k] = nil
		}
	}
	return out
}

// MergeStates merges what another writer changed in the state (base →
// theirs) with what this run changed (base → ours), for a write that met a
// newer revision. A field this run did not change takes theirs; a field
// both changed takes ours (the run holds the lease, and its fields are its
// record of the work), except notes, which are a log: theirs, then the
// notes this run added. The lease is always theirs.
func MergeStates(base, theirs, ours State) State {
	b, t, o := stateMap(base), stateMap(theirs), stateMap(ours)
	out := map[string]any{}
	for _, m := range []map[string]any{t, o} {
		for k := range m {
			out[k] = nil
		}
	}
	for k := range out {
		ov, oHas := o[k]
		bv, bHas := b[k]
		switch {
		case oHas == bHas && reflect.DeepEqual(ov, bv):
			if tv, ok := t[k]; ok {
				out[k] = tv
			} else {
				delete(out, k)
			}
		case !oHas:
			delete(out, k)
		default:
			out[k] = ov
		}
	}
	var merged State
	raw, err := json.Marshal(out)
	if err == nil {
		err = json.Unmarshal(raw, &merged)
	}
	if err != nil {
		panic(fmt.Sprintf("workorder: merging states: %v", err)) // every field is plain JSON
	}
	if !slices.Equal(ours.Notes, base.Notes) && !slices.Equal(theirs.Notes, base.Notes) {
		merged.Notes = slices.Clone(theirs.Notes)
		if len(ours.Notes) >= len(base.Notes) && slices.Equal(ours.Notes[:len(base.Notes)], base.Notes) {
			merged.Notes = append(merged.Notes, ours.Notes[len(base.Notes):]...)
		} else {
			merged.Notes = slices.Clone(ours.Notes)
		}
	}
	merged.Lease = theirs.Lease
	merged.normalize()
	return merged
}
