package stack

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wo-runner/wo/github"
	"github.com/wo-runner/wo/internal/gitname"
	"github.com/wo-runner/wo/internal/identity"
	"github.com/wo-runner/wo/procedure"
	"github.com/wo-runner/wo/procedure/action"
	"github.com/wo-runner/wo/store"
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
	// Outcome: merged, already_merged, not_ready, refused (GitHub's
	// reason), queued (in GitHub's merge queue), pending (still merging
	// when the wait ended), restack_stopped, later (above --through, or
	// after a stop).
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

// Classification: the land waits for a person.
func (e *LandError) Classification() procedure.Classification {
	return procedure.Classification{Outcome: procedure.OutcomeWaiting, Code: "LAND_STOPPED"}
}

// LandRetryError is a land that GitHub's trouble stopped (5xx, a rate
// limit, no answer): run it again later (exit 5).
type LandRetryError struct{ Err error }

func (e *LandRetryError) Error() string { return e.Err.Error() + "; run wo land again later" }
func (e *LandRetryError) Unwrap() error { return e.Err }

// Classification: GitHub's passing trouble.
func (e *LandRetryError) Classification() procedure.Classification {
	return procedure.Classification{Outcome: procedure.OutcomeRetryLater, Code: "RETRY_LATER"}
}

// landing is one wo land: the epic's stack and what the land knows.
type landing struct {
	k       *Keeper
	o       LandOptions
	stack   action.Stack
	stacked bool   // split in stacked mode: restacked between merges
	base    string // the branch the epic lands on
	last    int    // the index of the last pull request to land
	c       *github.Client
	record  *workorder.Land
	res     *LandResult
}

// Land merges an epic's pull requests bottom-up (see above). It holds the
// epic's lease throughout: a second wo land of the epic waits its turn
// (exit 4).
func (k *Keeper) Land(ctx context.Context, o LandOptions) (*LandResult, error) {
	k.e.FillDefaults()
	if o.Method == "" {
		o.Method = github.MergeSquash
	}
	if !slices.Contains([]string{github.MergeMerge, github.MergeSquash, github.MergeRebase}, o.Method) {
		return nil, &procedure.PreflightError{Key: o.Epic, Problems: []string{fmt.Sprintf("merge method %q: merge, squash or rebase", o.Method)}, Steps: []int{0}}
	}
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Minute
	}
	if o.PollEvery <= 0 {
		o.PollEvery = github.PollMergeEvery
	}
	l, err := k.newLanding(ctx, o)
	if err != nil {
		return nil, transient(err)
	}
	leases := &store.Leases{Store: k.e.Store, Now: k.e.Now}
	if _, err := leases.Acquire(ctx, o.Epic, k.e.Runner, k.e.LeaseTTL, identity.Gone); err != nil {
		return nil, err
	}
	defer leases.Release(context.WithoutCancel(ctx), o.Epic, k.e.Runner)
	err = l.run(ctx, func() error {
		_, err := leases.Renew(ctx, o.Epic, k.e.Runner, k.e.LeaseTTL)
		return err
	})
	return l.res, transient(err)
}

// transient makes GitHub's passing trouble a LandRetryError.
func transient(err error) error {
	var stop *LandError
	if err != nil && !errors.As(err, &stop) && procedure.IsTransient(err) {
		return &LandRetryError{Err: err}
	}
	return err
}

// newLanding reads the epic: its stack, the last pull request to land, the
// GitHub client and whether the repository has GitHub's stacks.
func (k *Keeper) newLanding(ctx context.Context, o LandOptions) (*landing, error) {
	children, edges, err := k.e.EpicChildren(ctx, o.Epic)
	if err != nil {
		return nil, err
	}
	l := &landing{k: k, o: o, stack: action.StackOf(children, edges), stacked: true}
	for _, d := range children {
		l.stacked = l.stacked && workorder.String(d, "work_order.context.split_mode") == "stacked"
	}
	if l.last, err = throughIndex(l.stack, o); err != nil {
		return nil, err
	}
	for _, en := range l.stack {
		if en.Repo != l.stack[0].Repo {
			return nil, &procedure.PreflightError{Key: o.Epic, Problems: []string{fmt.Sprintf("epic %s spans repositories (%s, %s): wo land merges the pull requests of one; land each repository's part by hand", o.Epic, l.stack[0].Repo, en.Repo)}, Steps: []int{0}}
		}
	}
	for _, d := range children {
		if workorder.Key(d) == l.stack[0].Key {
			l.base = workorder.String(d, "work_order.context.base_branch")
		}
	}
	if l.c, err = k.githubFor(l.stack[0].Repo); err != nil {
		return nil, err
	}
	l.res = &LandResult{Epic: o.Epic, Method: o.Method, Steps: []LandStep{}}
	if l.res.GitHubStacks, err = k.stacksEnabled(ctx, o.Epic, l.c); err != nil {
		return nil, err
	}
	return l, nil
}

func (l *landing) say(format string, args ...any) {
	if l.o.Progress != nil {
		l.o.Progress(fmt.Sprintf(format, args...))
	}
}

// run checks every pull request through the last, then merges them.
func (l *landing) run(ctx context.Context, renew func() error) error {
	var err error
	if l.record, err = l.k.startLand(ctx, l.o); err != nil {
		return err
	}
	if err := l.check(ctx); err != nil {
		return err
	}
	for i := 0; i <= l.last; i++ {
		if err := renew(); err != nil {
			return err
		}
		if l.res.Steps[i].Outcome == "already_merged" {
			if err := l.merged(ctx, i, ""); err != nil {
				return err
			}
			continue
		}
		if err := l.mergeStep(ctx, i); err != nil {
			return err
		}
	}
	l.res.Complete = true
	if _, _, err := l.k.RefreshStack(ctx, l.o.Epic); err != nil {
		l.res.Warnings = append(l.res.Warnings, fmt.Sprintf("%v; wo sync %s tries again", err, l.o.Epic))
	}
	return l.k.editEpicState(ctx, l.o.Epic, func(s *workorder.State) {
		if s.Land != nil {
			s.Land.Stopped, s.Land.Pending, s.Land.Finished = "", nil, workorder.Timestamp(l.k.e.Now())
		}
	})
}

// check is the readiness of every pull request through the last, before
// anything merges: a land that stops half-way is one a person asked for.
func (l *landing) check(ctx context.Context) error {
	var notReady []string
	for _, en := range l.stack[:l.last+1] {
		step := LandStep{Key: en.Key, PR: en.PRNumber, Title: en.Title}
		reason, merged, err := l.ready(ctx, en)
		if err != nil {
			return err
		}
		switch {
		case merged:
			step.Outcome = "already_merged"
		case reason != "":
			step.Outcome, step.Reason = "not_ready", reason
			notReady = append(notReady, fmt.Sprintf("%s (#%d): %s", en.Key, en.PRNumber, reason))
		}
		l.res.Steps = append(l.res.Steps, step)
	}
	for _, en := range l.stack[l.last+1:] {
		l.res.Steps = append(l.res.Steps, LandStep{Key: en.Key, PR: en.PRNumber, Title: en.Title, Outcome: "later"})
	}
	if len(notReady) > 0 {
		stopped := "nothing merged: not ready: " + strings.Join(notReady, "; ")
		if k := readyPrefix(l.res.Steps[:l.last+1]); k > 0 {
			stopped += fmt.Sprintf("; wo land %s --through %d lands the ready ones under it", l.o.Epic, l.res.Steps[k-1].PR)
		}
		for i := range l.res.Steps[:l.last+1] {
			if l.res.Steps[i].Outcome == "" {
				l.res.Steps[i].Outcome = "later"
			}
		}
		return l.stop(ctx, stopped)
	}
	return l.k.editEpicState(ctx, l.o.Epic, func(s *workorder.State) {
		if s.Land != nil {
			for _, st := range l.res.Steps[:l.last+1] {
				if !slices.Contains(s.Land.Checked, st.PR) {
					s.Land.Checked = append(s.Land.Checked, st.PR)
				}
			}
		}
	})
}

// ready says why one pull request may not land yet ("" when it may), or
// that it is merged already.
func (l *landing) ready(ctx context.Context, en action.StackEntry) (reason string, merged bool, err error) {
	if en.PRNumber == 0 {
		return "it has no pull request yet: run wo run " + en.Key, false, nil
	}
	pr, err := l.c.GetPR(ctx, en.PRNumber)
	if err != nil {
		return "", false, err
	}
	switch {
	case pr.Merged:
		return "", true, nil
	case pr.State != github.PROpen:
		return fmt.Sprintf("pull request #%d was closed without merging: reopen it, or land through the one under it", pr.Number), false, nil
	}
	doc, err := l.k.e.Store.Get(ctx, en.Key)
	if err != nil {
		return "", false, err
	}
	if reason, err := l.k.loopReady(doc, pr, l.record); reason != "" || err != nil {
		return reason, false, err
	}
	reason, err = l.k.githubReady(ctx, l.c, pr)
	return reason, false, err
}

// mergeStep merges the i-th pull request: restacked first in a stacked
// epic, read again, and merged only at the head wo pushed.
func (l *landing) mergeStep(ctx context.Context, i int) error {
	step := &l.res.Steps[i]
	if i > 0 && l.stacked {
		if err := l.restack(ctx, i); err != nil {
			return err
		}
	}
	pr, body, err := l.c.PRBody(ctx, step.PR)
	if err != nil {
		return err
	}
	if pr.Merged {
		step.Outcome = "already_merged"
		return l.merged(ctx, i, "")
	}
	doc, err := l.k.e.Store.Get(ctx, step.Key)
	if err != nil {
		return err
	}
	st, err := workorder.StateOf(doc)
	if err != nil {
		return err
	}
	reason := ""
	switch {
	case pr.State != github.PROpen:
		reason = fmt.Sprintf("pull request #%d was closed without merging", pr.Number)
	case pr.Base != l.base && pr.Stack == nil:
		reason = fmt.Sprintf("pull request #%d targets %s, not %s, which the one under it merged into: run wo sync %s, then wo land again", pr.Number, pr.Base, l.base, l.o.Epic)
	case pr.HeadSHA != st.PushedSHA:
		reason = fmt.Sprintf("its head %s is not %s, which wo pushed and its review loop saw: run wo run %s", gitname.Short(pr.HeadSHA), gitname.Short(st.PushedSHA), step.Key)
	case i > 0 && l.restackedHere(st, pr):
		// The restack rebuilt it onto what merged: GitHub's approval and
		// checks are asked of the new head.
		if reason, err = l.k.githubReady(ctx, l.c, pr); err != nil {
			return err
		}
		if reason != "" {
			reason = "restacked onto the merged base at " + gitname.Short(pr.HeadSHA) + ", but " + reason
		}
	}
	if reason != "" {
		step.Outcome, step.Reason = "not_ready", reason
		markLater(l.res.Steps[i+1 : l.last+1])
		return l.stop(ctx, fmt.Sprintf("stopped before #%d: %s", pr.Number, reason))
	}
	m := github.MergeRequest{Title: fmt.Sprintf("%s (#%d)", pr.Title, pr.Number), Message: action.StripStack(body), SHA: st.PushedSHA, Method: l.o.Method}
	l.say("merging #%d %s (%s)", pr.Number, pr.Title, l.o.Method)
	sha, outcome, reason, err := l.k.mergeOne(ctx, l.c, l.o, l.res.GitHubStacks || pr.Stack != nil, pr.Number, m, l.record)
	if err != nil {
		return err
	}
	if outcome != "merged" {
		step.Outcome, step.Reason = outcome, reason
		markLater(l.res.Steps[i+1 : l.last+1])
		if outcome == "refused" {
			reason = "GitHub did not merge #" + strconv.Itoa(pr.Number) + ": " + reason
		}
		return l.stop(ctx, reason)
	}
	step.Outcome, step.SHA = "merged", sha
	return l.merged(ctx, i, sha)
}

// restackedHere says whether this land's restack rebuilt the pull request
// to the head it has now.
func (l *landing) restackedHere(st workorder.State, pr *github.PR) bool {
	r := st.Restack
	return r != nil && r.Outcome == "restacked" && r.To == pr.HeadSHA && l.record != nil && r.At >= l.record.Started
}

// restack brings the pull requests above a merged one onto it.
func (l *landing) restack(ctx context.Context, i int) error {
	l.say("restacking the pull requests above #%d", l.res.Steps[i-1].PR)
	r, err := l.k.Restack(ctx, l.o.Epic, RestackOptions{})
	var stop *RestackError
	reason := ""
	switch {
	case errors.As(err, &stop):
		reason = stop.Reason
	case err != nil:
		return err
	case r.Stopped != "":
		reason = r.Stopped
	}
	if reason == "" {
		return nil
	}
	l.res.Steps[i].Outcome, l.res.Steps[i].Reason = "restack_stopped", reason
	markLater(l.res.Steps[i+1 : l.last+1])
	return l.stop(ctx, fmt.Sprintf("the restack before #%d stopped: %s", l.res.Steps[i].PR, reason))
}

// merged records a merged pull request (sha "" when it was merged
// before) and closes its task.
func (l *landing) merged(ctx context.Context, i int, sha string) error {
	step := &l.res.Steps[i]
	if err := l.k.editEpicState(ctx, l.o.Epic, func(s *workorder.State) {
		if s.Land != nil {
			if p := s.Land.Pending; p != nil && p.PR == step.PR {
				s.Land.Pending = nil
			}
			if !slices.Contains(s.Land.Merged, step.PR) {
				s.Land.Merged = append(s.Land.Merged, step.PR)
			}
		}
	}); err != nil {
		return err
	}
	if sha != "" {
		l.k.fault("land:after_merge")
		l.say("merged #%d at %s", step.PR, gitname.Short(sha))
	}
	if _, err := l.k.Sync(ctx, step.Key); err != nil {
		l.res.Warnings = append(l.res.Warnings, fmt.Sprintf("%s was not marked closed: %v; wo sync %s does it", step.Key, err, l.o.Epic))
	}
	return nil
}

// stop records why the land stopped and returns it as a LandError.
func (l *landing) stop(ctx context.Context, reason string) error {
	l.res.Stopped = reason
	return l.k.stopLand(ctx, l.o.Epic, l.res)
}

// throughIndex is the index in stack of the last pull request to land.
func throughIndex(stack action.Stack, o LandOptions) (int, error) {
	if len(stack) == 0 {
		return 0, &procedure.PreflightError{Key: o.Epic, Problems: []string{"epic " + o.Epic + " has no task that opens a pull request: nothing to land"}, Steps: []int{0}}
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
	return 0, &procedure.PreflightError{Key: o.Epic, Problems: []string{fmt.Sprintf("--through %s: no pull request of epic %s has that number, and no task of it that key; wo status %s lists them", o.Through, o.Epic, o.Epic)}, Steps: []int{0}}
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

// startLand records the land in the epic's state (keeping a rerun's
// record: its pending merge and the pull requests it checked) and returns
// it.
func (k *Keeper) startLand(ctx context.Context, o LandOptions) (*workorder.Land, error) {
	var land *workorder.Land
	err := k.editEpicState(ctx, o.Epic, func(s *workorder.State) {
		if s.Land == nil || s.Land.Finished != "" {
			s.Land = &workorder.Land{Started: workorder.Timestamp(k.e.Now())}
		}
		s.Land.Method, s.Land.Stopped = o.Method, ""
		land = s.Land
	})
	if err != nil {
		return nil, err
	}
	doc, err := k.e.Store.Get(ctx, o.Epic)
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
func (k *Keeper) stopLand(ctx context.Context, epicKey string, res *LandResult) error {
	if err := k.editEpicState(ctx, epicKey, func(s *workorder.State) {
		if s.Land != nil {
			s.Land.Stopped = res.Stopped
		}
	}); err != nil {
		return err
	}
	return &LandError{Reason: res.Stopped}
}

// loopReady says why a pull request may not land as far as wo's own
// record goes ("" when it may): its run ended with its review loop clean,
// and its head is the one wo pushed and the loop saw. A pull request this
// land checked and then restacked onto what merged is ready on wo's side:
// the restack rebuilt its own change, unchanged, and went back to its
// review wait only so that a run would ask GitHub again; the land asks
// GitHub itself.
func (k *Keeper) loopReady(doc workorder.Document, pr *github.PR, land *workorder.Land) (string, error) {
	key := workorder.Key(doc)
	st, err := workorder.StateOf(doc)
	if err != nil {
		return "", err
	}
	status := workorder.StatusOf(doc)
	r := st.Restack
	restackedByLand := land != nil && slices.Contains(land.Checked, pr.Number) && r != nil && r.Outcome == "restacked" &&
		r.To == pr.HeadSHA && r.At >= land.Started && status != workorder.StatusBlocked
	switch {
	case status != workorder.StatusInReview && !restackedByLand:
		return fmt.Sprintf("its run has not finished (status %s, step %d): run wo run %s", status, st.CurrentStep, key), nil
	case len(st.ReviewComments) > 0:
		return fmt.Sprintf("its review loop is not clean: %d review comment(s) open; run wo run %s", len(st.ReviewComments), key), nil
	case len(st.ChangesRequestedBy) > 0:
		return "its review loop is not clean: changes requested by " + strings.Join(st.ChangesRequestedBy, ", "), nil
	case pr.HeadSHA != st.PushedSHA:
		return fmt.Sprintf("its head %s is not %s, which wo pushed and its review loop saw: someone pushed to it; run wo run %s", gitname.Short(pr.HeadSHA), gitname.Short(st.PushedSHA), key), nil
	}
	return "", nil
}

// githubReady says why GitHub does not show a pull request ready ("" when
// it does): approved by someone who can push to the repository (not wo
// itself; a bot's or an outsider's approval does not count, as GitHub's
// required reviews do not count them), no changes requested, and every
// commit status and check run of its head green. A head with none is
// green: the repository runs no checks.
func (k *Keeper) githubReady(ctx context.Context, c *github.Client, pr *github.PR) (string, error) {
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
		if github.SameLogin(r.Author, me) {
			continue
		}
		if r.State == "APPROVED" && !github.Writer(r.Association) {
			continue
		}
		if r.State == "APPROVED" || r.State == "CHANGES_REQUESTED" || r.State == "DISMISSED" {
			latest[r.Author] = r.State
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
		return "GitHub shows no approving review from someone who can push to the repository", nil
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
	var current []github.Status
	for _, s := range statuses { // newest first: a context's latest counts
		if !seen[s.Context] {
			seen[s.Context] = true
			current = append(current, s)
		}
	}
	for _, s := range append(current, runs...) { // every check run counts, same names or not
		switch s.State {
		case "failure", "error":
			return fmt.Sprintf("check %q failed on %s", s.Context, gitname.Short(pr.HeadSHA)), nil
		case "pending":
			return fmt.Sprintf("check %q is still running on %s: wait for it and run wo land again", s.Context, gitname.Short(pr.HeadSHA)), nil
		}
	}
	return "", nil
}

// setPending records the asynchronous merge the land waits for (nil: none)
// in the epic's state, and in land, the land's record as this run holds it.
func (k *Keeper) setPending(ctx context.Context, epic string, land *workorder.Land, p *workorder.PendingMerge) error {
	if err := k.editEpicState(ctx, epic, func(s *workorder.State) {
		if s.Land != nil {
			s.Land.Pending = p
		}
	}); err != nil {
		return err
	}
	land.Pending = p
	return nil
}

// mergeOne merges one pull request. It returns the merge commit with
// outcome merged, or the outcome that stopped it (refused: GitHub's
// reason; queued: in the merge queue; pending: still merging when the
// wait ended) and why.
func (k *Keeper) mergeOne(ctx context.Context, c *github.Client, o LandOptions, async bool, number int, m github.MergeRequest, land *workorder.Land) (sha, outcome, reason string, err error) {
	if !async {
		sha, err := c.Merge(ctx, number, m)
		var refused *github.MergeRefusedError
		if errors.As(err, &refused) {
			return "", "refused", refused.Reason, nil
		}
		if err != nil {
			return "", "", "", err
		}
		return sha, "merged", "", nil
	}
	var r *github.MergeResult
	uuid := ""
	if p := land.Pending; p != nil && p.PR == number {
		if r, err = c.MergeAsyncResult(ctx, number, p.UUID); err != nil {
			return "", "", "", err
		}
		uuid = p.UUID
	}
	if r == nil { // none asked for, or GitHub no longer keeps it
		if r, err = c.MergeAsync(ctx, number, m); err != nil {
			return "", "", "", err
		}
		if uuid = r.UUID; uuid != "" {
			pending := &workorder.PendingMerge{PR: number, UUID: r.UUID, At: workorder.Timestamp(k.e.Now())}
			if err := k.setPending(ctx, o.Epic, land, pending); err != nil {
				return "", "", "", err
			}
		}
		k.fault("land:after_request")
	}
	if r, err = k.awaitMerge(ctx, c, o, number, uuid, r); err != nil {
		return "", "", "", err
	}
	switch r.Status {
	case github.MergeMerged:
		return r.SHA, "merged", "", nil
	case github.MergeEnqueued:
		return "", "queued", fmt.Sprintf("#%d is in the merge queue: GitHub merges it when the queue gets to it; run wo land %s again after that", number, o.Epic), nil
	case github.MergeFailed:
		if err := k.setPending(ctx, o.Epic, land, nil); err != nil {
			return "", "", "", err
		}
		return "", "refused", r.Message, nil
	}
	return "", "pending", fmt.Sprintf("GitHub's merge of #%d is still %s after %s; run wo land %s again to go on waiting", number, r.Status, o.Timeout, o.Epic), nil
}

// awaitMerge polls an asynchronous merge until it ends, is queued, or the
// wait is over. GitHub's passing trouble (5xx, a rate limit) is waited out
// within the same time.
func (k *Keeper) awaitMerge(ctx context.Context, c *github.Client, o LandOptions, number int, uuid string, r *github.MergeResult) (*github.MergeResult, error) {
	deadline := k.e.Now().Add(o.Timeout)
	for !r.Done() && r.Status != github.MergeEnqueued {
		if uuid == "" {
			return nil, fmt.Errorf("GitHub's answer to the merge of #%d is %s with no id to follow it by", number, r.Status)
		}
		if k.e.Now().After(deadline) {
			return r, nil
		}
		if err := action.SleepCtx(ctx, o.PollEvery); err != nil {
			return nil, err
		}
		next, err := c.MergeAsyncResult(ctx, number, uuid)
		switch {
		case err != nil && procedure.IsTransient(err) && k.e.Now().Before(deadline):
			continue
		case err != nil:
			return nil, err
		case next == nil:
			return nil, &LandError{Reason: fmt.Sprintf("GitHub no longer knows the merge of #%d it was asked for; run wo land %s again", number, o.Epic)}
		}
		r = next
	}
	return r, nil
}
