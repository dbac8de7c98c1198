package procedure

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wo-runner/wo/github"
	"github.com/wo-runner/wo/procedure/action"
	"github.com/wo-runner/wo/workorder"
)

// Landing an epic: its pull requests are merged from the bottom up, each
// only when its review loop ended clean, GitHub shows it approved and its
// checks green. On a repository with GitHub's stacks every merge goes
// through the asynchronous merge API (the synchronous one refuses stacked
// pull requests), and wo polls its result; elsewhere through the ordinary
// merge. Between two merges of a stacked epic the stack is restacked, so
// that the next pull request is its own change on top of what merged and
// no commit is replayed above a squashed one. Each merge commit's message
// is the pull request's own title and summary, without wo's stack table.
//
// Nothing merges twice: before each merge wo reads the pull request and
// skips a merged one; the asynchronous merge it asked for is recorded in
// the epic's state before wo waits for it, and GitHub answers a second
// request for the same pull request with the first one's id.

// LandOptions say what wo land is asked.
type LandOptions struct {
	Epic string
	// Through is the last pull request to land: its number, #number, or
	// its task's key; empty lands the whole epic.
	Through string
	// Method is merge, squash (the default) or rebase.
	Method string
	// Timeout bounds the wait for one asynchronous merge (default 30 minutes).
	Timeout time.Duration
	// PollEvery is how often an asynchronous merge's result is read
	// (default github.PollMergeEvery).
	PollEvery time.Duration
	// Progress, when set, hears what land is doing (for stderr).
	Progress func(string)
}

// LandStep is what wo land did with one pull request.
type LandStep struct {
	Key   string `json:"key"`
	PR    int    `json:"pr_number"`
	Title string `json:"title,omitempty"`
	// Outcome: merged, already_merged, not_ready, refused, pending,
	// restack_stopped, later (above --through or after a stop).
	Outcome string `json:"outcome"`
	SHA     string `json:"merge_sha,omitempty"`
	Reason  string `json:"reason,omitempty"`
}

// LandResult is what a wo land did.
type LandResult struct {
	Epic string `json:"epic"`
	// GitHubStacks says the repository has GitHub's stacks, so the merges
	// went through the asynchronous merge API.
	GitHubStacks bool       `json:"github_stacks"`
	Method       string     `json:"method"`
	Steps        []LandStep `json:"pull_requests"`
	// Complete is true when every pull request through the last asked for
	// is merged.
	Complete bool     `json:"complete"`
	Stopped  string   `json:"stopped,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
}

// LandError says wo land stopped where a person must act (exit 3): a pull
// request not ready, GitHub's refusal, a merge still pending.
type LandError struct{ Reason string }

func (e *LandError) Error() string { return e.Reason }

// Land merges an epic's pull requests bottom-up (see above).
func (e *Engine) Land(ctx context.Context, o LandOptions) (*LandResult, error) {
	e.defaults()
	if o.Method == "" {
		o.Method = github.MergeSquash
	}
	if !slices.Contains([]string{github.MergeMerge, github.MergeSquash, github.MergeRebase}, o.Method) {
		return nil, &PreflightError{Key: o.Epic, Problems: []string{fmt.Sprintf("merge method %q: merge, squash or rebase", o.Method)}, Steps: []int{0}}
	}
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Minute
	}
	if o.PollEvery <= 0 {
		o.PollEvery = github.PollMergeEvery
	}
	say := func(format string, args ...any) {
		if o.Progress != nil {
			o.Progress(fmt.Sprintf(format, args...))
		}
	}
	children, edges, err := e.epicChildren(ctx, o.Epic)
	if err != nil {
		return nil, err
	}
	stack := action.StackOf(children, edges)
	docs := map[string]workorder.Document{}
	stacked := true
	for _, d := range children {
		docs[workorder.Key(d)] = d
		stacked = stacked && workorder.String(d, "work_order.context.split_mode") == "stacked"
	}
	last, err := throughIndex(stack, o)
	if err != nil {
		return nil, err
	}
	res := &LandResult{Epic: o.Epic, Method: o.Method, Steps: []LandStep{}}
	c, err := e.githubFor(stack[0].Repo)
	if err != nil {
		return nil, err
	}
	if res.GitHubStacks, err = e.stacksEnabled(ctx, o.Epic, c); err != nil {
		return nil, err
	}
	land, err := e.startLand(ctx, o)
	if err != nil {
		return nil, err
	}

	// Every pull request through the last is checked before anything
	// merges: a land that stops half-way is one a person asked for.
	prs := map[int]*github.PR{}
	var notReady []string
	for _, en := range stack[:last+1] {
		step := LandStep{Key: en.Key, PR: en.PRNumber, Title: en.Title}
		if en.PRNumber == 0 {
			step.Outcome, step.Reason = "not_ready", "it has no pull request yet: run wo run "+en.Key
		} else {
			pr, err := c.GetPR(ctx, en.PRNumber)
			if err != nil {
				return nil, err
			}
			prs[en.PRNumber] = pr
			step.Title = pr.Title
			switch {
			case pr.Merged:
				step.Outcome = "already_merged"
			case pr.State != github.PROpen:
				step.Outcome, step.Reason = "not_ready", fmt.Sprintf("pull request #%d was closed without merging: reopen it, or land through the one under it", pr.Number)
			default:
				reason, err := e.landReady(ctx, c, docs[en.Key], pr, land)
				if err != nil {
					return nil, err
				}
				if reason != "" {
					step.Outcome, step.Reason = "not_ready", reason
				}
			}
		}
		if step.Outcome == "not_ready" {
			notReady = append(notReady, fmt.Sprintf("%s (#%d): %s", en.Key, en.PRNumber, step.Reason))
		}
		res.Steps = append(res.Steps, step)
	}
	for _, en := range stack[last+1:] {
		res.Steps = append(res.Steps, LandStep{Key: en.Key, PR: en.PRNumber, Title: en.Title, Outcome: "later"})
	}
	if len(notReady) > 0 {
		res.Stopped = "nothing merged: not ready: " + strings.Join(notReady, "; ")
		if k := readyPrefix(res.Steps[:last+1]); k > 0 {
			res.Stopped += fmt.Sprintf("; wo land %s --through %d lands the ready ones under it", o.Epic, res.Steps[k-1].PR)
		}
		for i := range res.Steps[:last+1] {
			if res.Steps[i].Outcome == "" {
				res.Steps[i].Outcome = "later"
			}
		}
		return res, e.stopLand(ctx, o.Epic, res)
	}
	if err := e.editEpicState(ctx, o.Epic, func(s *workorder.State) {
		if s.Land != nil {
			for _, st := range res.Steps[:last+1] {
				if !slices.Contains(s.Land.Checked, st.PR) {
					s.Land.Checked = append(s.Land.Checked, st.PR)
				}
			}
		}
	}); err != nil {
		return nil, err
	}

	for i := 0; i <= last; i++ {
		step := &res.Steps[i]
		if step.Outcome == "already_merged" {
			continue
		}
		pr, body, err := c.PRBody(ctx, step.PR)
		if err != nil {
			return res, err
		}
		if pr.Merged {
			step.Outcome = "already_merged"
			continue
		}
		m := github.MergeRequest{Title: fmt.Sprintf("%s (#%d)", pr.Title, pr.Number), Message: action.StripStack(body), SHA: pr.HeadSHA, Method: o.Method}
		say("merging #%d %s (%s)", pr.Number, pr.Title, o.Method)
		sha, reason, err := e.mergeOne(ctx, c, o, res.GitHubStacks, pr.Number, m, land)
		if err != nil {
			return res, err
		}
		if reason != "" {
			step.Outcome, step.Reason = "refused", reason
			res.Stopped = fmt.Sprintf("GitHub did not merge #%d: %s", pr.Number, reason)
			markLater(res.Steps[i+1 : last+1])
			return res, e.stopLand(ctx, o.Epic, res)
		}
		step.Outcome, step.SHA = "merged", sha
		if err := e.editEpicState(ctx, o.Epic, func(s *workorder.State) {
			if s.Land != nil {
				s.Land.Pending = nil
				if !slices.Contains(s.Land.Merged, pr.Number) {
					s.Land.Merged = append(s.Land.Merged, pr.Number)
				}
			}
		}); err != nil {
			return res, err
		}
		e.fault("land:after_merge")
		say("merged #%d at %s", pr.Number, shortSHA(sha))
		if _, err := e.Sync(ctx, step.Key); err != nil {
			res.Warnings = append(res.Warnings, fmt.Sprintf("%s was not marked closed: %v; wo sync %s does it", step.Key, err, o.Epic))
		}
		if i < last && stacked {
			say("restacking the pull requests above #%d", pr.Number)
			if _, err := e.Restack(ctx, o.Epic, RestackOptions{}); err != nil {
				var stop *RestackError
				if !errors.As(err, &stop) {
					return res, err
				}
				res.Steps[i+1].Outcome, res.Steps[i+1].Reason = "restack_stopped", stop.Reason
				res.Stopped = "the restack after #" + strconv.Itoa(pr.Number) + " stopped: " + stop.Reason
				markLater(res.Steps[i+2 : last+1])
				return res, e.stopLand(ctx, o.Epic, res)
			}
		}
	}
	res.Complete = true
	if _, _, err := e.RefreshStack(ctx, o.Epic); err != nil {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%v; wo sync %s tries again", err, o.Epic))
	}
	return res, e.editEpicState(ctx, o.Epic, func(s *workorder.State) {
		if s.Land != nil {
			s.Land.Stopped, s.Land.Finished = "", workorder.Timestamp(e.Now())
		}
	})
}

// throughIndex is the index in stack of the last pull request to land.
func throughIndex(stack action.Stack, o LandOptions) (int, error) {
	if len(stack) == 0 {
		return 0, &PreflightError{Key: o.Epic, Problems: []string{"epic " + o.Epic + " has no task that opens a pull request: nothing to land"}, Steps: []int{0}}
	}
	if o.Through == "" {
		return len(stack) - 1, nil
	}
	n, numErr := strconv.Atoi(strings.TrimPrefix(o.Through, "#"))
	for i, en := range stack {
		if en.Key == o.Through || (numErr == nil && en.PRNumber == n) {
			return i, nil
		}
	}
	return 0, &PreflightError{Key: o.Epic, Problems: []string{fmt.Sprintf("--through %s: no pull request of epic %s has that number, and no task of it that key; wo status %s lists them", o.Through, o.Epic, o.Epic)}, Steps: []int{0}}
}

// readyPrefix is how many steps from the bottom are ready or merged.
func readyPrefix(steps []LandStep) int {
	for i, s := range steps {
		if s.Outcome != "" && s.Outcome != "already_merged" {
			return i
		}
	}
	return len(steps)
}

func markLater(steps []LandStep) {
	for i := range steps {
		steps[i].Outcome = "later"
	}
}

func shortSHA(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

// stacksEnabled is the epic's recorded answer to whether the repository
// has GitHub's stacks, asking GitHub once when there is none.
func (e *Engine) stacksEnabled(ctx context.Context, epicKey string, c *github.Client) (bool, error) {
	doc, err := e.Store.Get(ctx, epicKey)
	if err != nil {
		return false, err
	}
	st, err := workorder.StateOf(doc)
	if err != nil {
		return false, err
	}
	if st.GitHubStacks != nil {
		return st.GitHubStacks.Enabled, nil
	}
	enabled, err := c.StacksEnabled(ctx)
	if err != nil {
		return false, err
	}
	return enabled, e.editEpicState(ctx, epicKey, func(s *workorder.State) {
		s.GitHubStacks = &workorder.GitHubStacks{Enabled: enabled, CheckedAt: workorder.Timestamp(e.Now())}
	})
}

// startLand records the land in the epic's state (keeping a rerun's
// record: its pending merge and the pull requests it checked) and returns
// it.
func (e *Engine) startLand(ctx context.Context, o LandOptions) (*workorder.Land, error) {
	var land *workorder.Land
	err := e.editEpicState(ctx, o.Epic, func(s *workorder.State) {
		if s.Land == nil || s.Land.Finished != "" {
			s.Land = &workorder.Land{Started: workorder.Timestamp(e.Now())}
		}
		s.Land.Method, s.Land.Stopped = o.Method, ""
		land = s.Land
	})
	if err != nil {
		return nil, err
	}
	doc, err := e.Store.Get(ctx, o.Epic)
	if err != nil {
		return nil, err
	}
	st, err := workorder.StateOf(doc)
	if err != nil || st.Land == nil {
		return land, err
	}
	return st.Land, nil
}

// stopLand records why the land stopped and returns it as a LandError.
func (e *Engine) stopLand(ctx context.Context, epicKey string, res *LandResult) error {
	if err := e.editEpicState(ctx, epicKey, func(s *workorder.State) {
		if s.Land != nil {
			s.Land.Stopped = res.Stopped
		}
	}); err != nil {
		return err
	}
	return &LandError{Reason: res.Stopped}
}

// landReady says why a pull request may not land yet ("" when it may):
// its run must have ended with its review loop clean, and GitHub must show
// it approved by someone other than wo, with no changes requested, and
// its checks green. A pull request that this land checked before and
// restacked since is ready on wo's side: the restack rebuilt it onto what
// merged, its own change unchanged.
func (e *Engine) landReady(ctx context.Context, c *github.Client, doc workorder.Document, pr *github.PR, land *workorder.Land) (string, error) {
	key := workorder.Key(doc)
	st, err := workorder.StateOf(doc)
	if err != nil {
		return "", err
	}
	restackedByLand := land != nil && slices.Contains(land.Checked, pr.Number) && st.Restack != nil && st.Restack.At >= land.Started
	if status := workorder.StatusOf(doc); status != workorder.StatusInReview && !restackedByLand {
		return fmt.Sprintf("its run has not finished (status %s, step %d): run wo run %s", status, st.CurrentStep, key), nil
	}
	if n := len(st.ReviewComments); n > 0 {
		return fmt.Sprintf("its review loop is not clean: %d review comment(s) open; run wo run %s", n, key), nil
	}
	if by := st.ChangesRequestedBy; len(by) > 0 {
		return "its review loop is not clean: changes requested by " + strings.Join(by, ", "), nil
	}
	reviews, err := c.Reviews(ctx, pr.Number)
	if err != nil {
		return "", err
	}
	me, err := c.Login(ctx)
	if err != nil {
		return "", err
	}
	latest := map[string]string{}
	for _, r := range reviews { // oldest first
		if r.State == "APPROVED" || r.State == "CHANGES_REQUESTED" || r.State == "DISMISSED" {
			if !github.SameLogin(r.Author, me) {
				latest[r.Author] = r.State
			}
		}
	}
	var approvers, blockers []string
	for who, state := range latest {
		switch state {
		case "APPROVED":
			approvers = append(approvers, who)
		case "CHANGES_REQUESTED":
			blockers = append(blockers, who)
		}
	}
	slices.Sort(blockers)
	switch {
	case len(blockers) > 0:
		return "GitHub shows changes requested by " + strings.Join(blockers, ", "), nil
	case len(approvers) == 0:
		return "GitHub shows no approving review", nil
	}
	statuses, err := c.Statuses(ctx, pr.HeadSHA)
	if err != nil {
		return "", err
	}
	runs, err := c.CheckRuns(ctx, pr.HeadSHA)
	if err != nil {
		return "", err
	}
	seen := map[string]bool{}
	for _, s := range append(statuses, runs...) { // statuses newest first
		if seen[s.Context] {
			continue
		}
		seen[s.Context] = true
		switch s.State {
		case "failure", "error":
			return fmt.Sprintf("check %q failed on %s", s.Context, shortSHA(pr.HeadSHA)), nil
		case "pending":
			return fmt.Sprintf("check %q is still running on %s: wait for it and run wo land again", s.Context, shortSHA(pr.HeadSHA)), nil
		}
	}
	return "", nil
}

// mergeOne merges one pull request and returns its merge commit, or
// GitHub's reason for not merging it.
func (e *Engine) mergeOne(ctx context.Context, c *github.Client, o LandOptions, async bool, number int, m github.MergeRequest, land *workorder.Land) (sha, reason string, err error) {
	if !async {
		sha, err := c.Merge(ctx, number, m)
		var refused *github.MergeRefusedError
		if errors.As(err, &refused) {
			return "", refused.Reason, nil
		}
		return sha, "", err
	}
	var r *github.MergeResult
	uuid := ""
	if p := land.Pending; p != nil && p.PR == number {
		if r, err = c.MergeAsyncResult(ctx, number, p.UUID); err != nil {
			return "", "", err
		}
		uuid = p.UUID
	}
	if r == nil { // none asked for, or GitHub no longer keeps it
		if r, err = c.MergeAsync(ctx, number, m); err != nil {
			return "", "", err
		}
		if uuid = r.UUID; uuid != "" {
			pending := &workorder.PendingMerge{PR: number, UUID: r.UUID, At: workorder.Timestamp(e.Now())}
			if err := e.editEpicState(ctx, o.Epic, func(s *workorder.State) {
				if s.Land != nil {
					s.Land.Pending = pending
				}
			}); err != nil {
				return "", "", err
			}
			land.Pending = pending
		}
		e.fault("land:after_request")
	}
	deadline := e.Now().Add(o.Timeout)
	for !r.Done() {
		if e.Now().After(deadline) {
			return "", "", &LandError{Reason: fmt.Sprintf("GitHub's merge of #%d is still %s after %s; run wo land %s again to go on waiting", number, r.Status, o.Timeout, o.Epic)}
		}
		if uuid == "" {
			return "", "", fmt.Errorf("GitHub's answer to the merge of #%d is %s with no id to follow it by", number, r.Status)
		}
		if err := sleepCtx(ctx, o.PollEvery); err != nil {
			return "", "", err
		}
		next, err := c.MergeAsyncResult(ctx, number, uuid)
		if err != nil {
			return "", "", err
		}
		if next == nil {
			return "", "", &LandError{Reason: fmt.Sprintf("GitHub no longer knows the merge of #%d it was asked for; run wo land %s again", number, o.Epic)}
		}
		r = next
	}
	if r.Status == github.MergeFailed {
		if err := e.editEpicState(ctx, o.Epic, func(s *workorder.State) {
			if s.Land != nil {
				s.Land.Pending = nil
			}
		}); err != nil {
			return "", "", err
		}
		land.Pending = nil
		return "", r.Message, nil
	}
	return r.SHA, "", nil
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
