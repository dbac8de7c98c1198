package stack

import (
	"context"
	"fmt"

	"github.com/wo-runner/wo/github"
	"github.com/wo-runner/wo/store"
	"github.com/wo-runner/wo/workorder"
)

// SyncResult says what Sync found on GitHub and did.
type SyncResult struct {
	Key     string           `json:"key"`
	PR      int              `json:"pr_number,omitempty"`
	PRState string           `json:"pr_state,omitempty"` // open, merged, closed
	Status  workorder.Status `json:"status"`
	Changed bool             `json:"changed"`
	// StackTable is what wo sync did to the stack section of the pull
	// request's description: updated, unchanged or skipped (Warning says
	// why); empty when the task is in no stack or its PR is not open.
	StackTable string `json:"stack_table,omitempty"`
	// Warning is a loss that did not stop the sync: the activity log
	// entry that could not be written.
	Warning string `json:"warning,omitempty"`
	// Restack is what the restack of its epic's stack did to its PR.
	Restack *RestackStep `json:"restack,omitempty"`
}

// Sync reads the task's pull request on GitHub: a merged PR closes the task
// (through Persephone's transitions), so that its dependents can run; a PR
// closed without merging is recorded in the state and blocks the task with
// the reason. Tasks without a PR are left alone. Sync takes no lease: it
// changes only the status, which a running runner reads afresh, and every
// write is conditional, so a conflict rereads and decides again.
func (k *Keeper) Sync(ctx context.Context, key string) (*SyncResult, error) {
	e := k.e
	e.FillDefaults()
	var res *SyncResult
	var client *github.Client
	err := store.RetryConflicts(ctx, func() error {
		doc, err := e.Store.Get(ctx, key)
		if err != nil {
			return err
		}
		before, err := workorder.StateOf(doc)
		if err != nil {
			return err
		}
		res = &SyncResult{Key: key, Status: workorder.StatusOf(doc), PR: before.PRNumber}
		if res.PR == 0 || res.Status == workorder.StatusClosed {
			return nil
		}
		if client == nil {
			// The engine's client: the stack refresh after the sync reads
			// the same pull request again, conditionally.
			if client, err = k.githubFor(workorder.String(doc, "work_order.context.repo")); err != nil {
				return err
			}
		}
		pr, err := client.GetPR(ctx, res.PR)
		if err != nil {
			return err
		}
		res.PRState = pr.Lifecycle()
		after := before.Clone()
		after.PRStack = prStackOf(pr)
		if res.PRState == github.PROpen || before.PRState == res.PRState {
			if SamePlace(after.PRStack, before.PRStack) {
				return nil
			}
			// Only where it stands in GitHub's stack changed.
			rev, _ := doc["_rev"].(string)
			_, err := e.Store.Update(ctx, key, rev, workorder.StatePatch(before, after))
			return err
		}
		target, reason := workorder.StatusClosed, ""
		if res.PRState == github.PRClosed {
			target, reason = workorder.StatusBlocked, fmt.Sprintf("pull request #%d was closed without merging: reopen it, or close this task", res.PR)
		}
		after.PRState = res.PRState
		rev, _ := doc["_rev"].(string)
		from := res.Status
		for _, hop := range workorder.StatusPath(from, target) {
			patch := map[string]any{"status": string(hop), "updated_at": workorder.Timestamp(e.Now())}
			if hop == workorder.StatusBlocked {
				patch["block_reason"] = reason
			} else if from == workorder.StatusBlocked {
				patch["block_reason"] = nil
			}
			if hop == target {
				store.Merge(patch, workorder.StatePatch(before, after))
			}
			if rev, err = e.Store.Update(ctx, key, rev, patch); err != nil {
				return err
			}
			from = hop
		}
		res.Status, res.Changed = target, true
		return nil
	})
	if err != nil {
		return nil, err
	}
	if res.Changed {
		if err := e.Store.AppendLog(ctx, store.LogEntry{Action: "synced", TaskKey: key, SessionKey: e.Runner, CreatedAt: e.Now(),
			Details: map[string]any{"pr_number": res.PR, "pr_state": res.PRState, "status": string(res.Status)}}); err != nil {
			res.Warning = fmt.Sprintf("the activity log of %s was not written: %v", key, err)
		}
	}
	return res, nil
}

// prStackOf is GitHub's stack object of a pull request as the state keeps
// it; nil when it is in no stack.
func prStackOf(pr *github.PR) *workorder.PRStack {
	if pr.Stack == nil {
		return nil
	}
	return &workorder.PRStack{Number: pr.Stack.Number, Position: pr.Stack.Position, Size: pr.Stack.Size}
}

// SamePlace says whether two places in GitHub's stacks are the same.
func SamePlace(a, b *workorder.PRStack) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}
