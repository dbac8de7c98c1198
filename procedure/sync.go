package procedure

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
}

// Sync reads the task's pull request on GitHub: a merged PR closes the task
// (through Persephone's transitions), so that its dependents can run; a PR
// closed without merging is recorded in the state and blocks the task with
// the reason. Tasks without a PR are left alone.
func (e *Engine) Sync(ctx context.Context, key string) (*SyncResult, error) {
	e.defaults()
	for attempt := 0; ; attempt++ {
		doc, err := e.Store.Get(ctx, key)
		if err != nil {
			return nil, err
		}
		res := &SyncResult{Key: key, Status: workorder.StatusOf(doc)}
		n, _ := workorder.AsInt(workorder.Get(doc, "work_order.state.pr_number"))
		if n == 0 || res.Status == workorder.StatusClosed {
			return res, nil
		}
		res.PR = int(n)
		client, err := github.New(github.Config{BaseURL: e.GitHubAPI, Token: githubToken(e.Getenv), Repo: workorder.String(doc, "work_order.context.repo")})
		if err != nil {
			return nil, err
		}
		pr, err := client.GetPR(ctx, res.PR)
		if err != nil {
			return nil, err
		}
		res.PRState = pr.State
		if pr.Merged {
			res.PRState = "merged"
		}
		if res.PRState == "open" || workorder.String(doc, "work_order.state.pr_state") == res.PRState {
			return res, nil
		}
		target, reason := workorder.StatusClosed, ""
		if res.PRState == "closed" {
			target, reason = workorder.StatusBlocked, fmt.Sprintf("pull request #%d was closed without merging: reopen it, or close this task", res.PR)
		}
		rev, _ := doc["_rev"].(string)
		from := res.Status
		var werr error
		for _, hop := range workorder.StatusPath(from, target) {
			patch := map[string]any{"status": string(hop), "updated_at": workorder.Timestamp(e.Now())}
			if hop == workorder.StatusBlocked {
				patch["block_reason"] = reason
			} else if from == workorder.StatusBlocked {
				patch["block_reason"] = nil
			}
			if hop == target {
				store.Merge(patch, store.Nest("work_order.state", map[string]any{"pr_state": res.PRState}))
			}
			if rev, werr = e.Store.Update(ctx, key, rev, patch); werr != nil {
				break
			}
			from = hop
		}
		if store.IsConflict(werr) && attempt < 5 {
			continue
		}
		if werr != nil {
			return nil, werr
		}
		res.Status, res.Changed = target, true
		e.Store.AppendLog(ctx, store.LogEntry{Action: "synced", TaskKey: key, SessionKey: e.Runner, CreatedAt: e.Now(),
			Details: map[string]any{"pr_number": res.PR, "pr_state": res.PRState, "status": string(target)}})
		return res, nil
	}
}
