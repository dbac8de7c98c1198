package action

import (
	"context"
	"fmt"
	"strings"

	"github.com/wo-runner/wo/github"
	"github.com/wo-runner/wo/reviewer"
	"github.com/wo-runner/wo/termtext"
	"github.com/wo-runner/wo/workorder"
)

// CheckReview reads where the review stands and keeps it in state, so
// that an agent reading only the task document has it: every unresolved
// review thread with its conversation, each reviewer's latest verdict on
// the pushed head, the findings a reviewer kept in its review's body, and
// the conversation comments new since the watermark. Only what an awaited
// reviewer or a repository writer wrote counts (see audience); the rest is
// listed in state.review_uncounted, never sent to the agent. What keeps
// the review loop going is in state.review_comments: the unresolved
// threads that count (not outdated, unless context.outdated_threads_count),
// the body's findings outside the diff and its duplicates (and nitpicks
// when context.review.nitpicks is "fix"), the new conversation comments,
// and an awaited reviewer's request for changes on the head.
type CheckReview struct{}

func newCheckReview() Action { return CheckReview{} }

// Run reads the review threads and reviews (GraphQL) and the conversation
// comments (REST), has reviewer.Classify sort them, and keeps the result.
func (CheckReview) Run(ctx context.Context, sc *StepContext) (Outcome, error) {
	nitpicks, err := nitpickSetting(sc)
	if err != nil {
		return Outcome{}, err
	}
	client, n, me, err := prContext(ctx, sc)
	if err != nil {
		return Outcome{}, err
	}
	st := sc.State()
	snap, seen, err := readReview(ctx, client, n, st.PushedSHA, st.ReviewWatermark)
	if err != nil {
		return Outcome{}, err
	}
	aud := audienceOf(sc, me, reviewer.Signals{Head: snap.Head, Reviews: snap.Reviews, Comments: snap.Conversation})
	// GraphQL costs points and has no free conditional requests: wo asks
	// it once a check, and a check follows a wait whose REST poll (free
	// when unchanged) saw the review arrive, or a rerun someone asked for.
	rs, err := client.ReviewThreads(ctx, n)
	if err != nil {
		return Outcome{}, err
	}
	snap.Threads, snap.ThreadReviews = rs.Threads, rs.Reviews
	cl := reviewer.Classify(snap, aud, reviewer.Rules{CountOutdated: countOutdated(sc), Nitpicks: nitpicks})
	after := sc.State()
	after.ReviewComments, after.ReviewSeen, after.ReviewThreads = cl.Findings, seen, cl.Threads
	after.ReviewVerdicts, after.ChangesRequestedBy, after.ReviewCheckedSHA = cl.Verdicts, cl.ChangesBy, snap.Head
	after.ReviewUncounted = cl.Uncounted.List
	return Outcome{Note: checkNote(cl, n, sc.Key()), State: &after}, nil
}

// readReview reads the reviews, the inline comments and the conversation
// of pull request n (REST), and moves the watermark wm past all of them.
func readReview(ctx context.Context, client *github.Client, n int, head string, wm workorder.Watermark) (reviewer.Snapshot, workorder.Watermark, error) {
	reviews, err := client.Reviews(ctx, n)
	if err != nil {
		return reviewer.Snapshot{}, wm, err
	}
	inline, err := client.ReviewComments(ctx, n)
	if err != nil {
		return reviewer.Snapshot{}, wm, err
	}
	conversation, err := client.IssueComments(ctx, n)
	if err != nil {
		return reviewer.Snapshot{}, wm, err
	}
	seen := wm
	for _, c := range inline {
		seen.ReviewComment = max(seen.ReviewComment, c.ID)
	}
	for _, r := range reviews {
		seen.Review = max(seen.Review, r.ID)
	}
	for _, c := range conversation {
		seen.IssueComment = max(seen.IssueComment, c.ID)
	}
	return reviewer.Snapshot{Head: head, SeenComment: wm.IssueComment, Reviews: reviews, Conversation: conversation}, seen, nil
}

// checkNote says in a line what the check found on pull request n.
func checkNote(cl reviewer.Classification, n int, key string) string {
	note := fmt.Sprintf("%d actionable review comment(s) on #%d", len(cl.Findings), n)
	if cl.FromChangesRequested {
		note += "; changes requested by " + strings.Join(cl.ChangesBy, ", ")
	}
	if cl.FromBody > 0 {
		note += fmt.Sprintf("; %d of them from the review body (outside the diff, duplicates)", cl.FromBody)
	}
	if len(cl.Outdated) > 0 {
		note += fmt.Sprintf("; %d outdated thread(s) left open, not counted: %s", len(cl.Outdated), strings.Join(cl.Outdated, ", "))
	}
	if cl.Unkept > 0 {
		note += fmt.Sprintf("; %d more unresolved thread(s) than the %d the document keeps: they are not in the state or the agent's prompt until these are resolved", cl.Unkept, reviewer.MaxThreads)
	}
	if len(cl.Uncounted.List) > 0 {
		note += fmt.Sprintf("; %d not counted and not sent to an agent (wo show %s lists them)", cl.Uncounted.Total, key)
	}
	return note
}

// nitpickSetting is context.review.nitpicks: fix, report (the default) or
// ignore.
func nitpickSetting(sc *StepContext) (string, error) {
	review, _ := sc.Task().WorkOrder.Context["review"].(map[string]any)
	v, ok := review["nitpicks"]
	if !ok || v == nil {
		return reviewer.NitpicksReport, nil
	}
	s, _ := v.(string)
	switch s {
	case reviewer.NitpicksFix, reviewer.NitpicksReport, reviewer.NitpicksIgnore:
		return s, nil
	}
	return "", fmt.Errorf("task %s: context.review.nitpicks is %q; write fix, report or ignore", sc.Key(), termtext.Clip(fmt.Sprint(v), 40))
}

// Check refuses a nitpick setting wo does not know before the run starts.
func (CheckReview) Check(ctx context.Context, sc *StepContext) error {
	_, err := nitpickSetting(sc)
	return inDocument(err)
}

// countOutdated is context.outdated_threads_count.
func countOutdated(sc *StepContext) bool {
	b, _ := sc.Task().WorkOrder.Context["outdated_threads_count"].(bool)
	return b
}

// resolveThreads is --resolve-threads or context.resolve_threads.
func resolveThreads(sc *StepContext) bool {
	b, _ := sc.Task().WorkOrder.Context["resolve_threads"].(bool)
	return b || sc.Settings().ResolveThreads
}

// Plan names the PR.
func (CheckReview) Plan(sc *StepContext) string {
	return "read the review threads, the reviewers' verdicts and review bodies on the pushed head and the conversation of the pull request; keep the unresolved threads and the new comments by awaited reviewers and repository writers"
}

// prContext is what the review steps start from: the recorded PR, the
// client, and wo's own login (whose comments never count).
func prContext(ctx context.Context, sc *StepContext) (*github.Client, int, string, error) {
	n := sc.PRNumber()
	if n == 0 {
		return nil, 0, "", fmt.Errorf("task %s has no pull request yet: the create_pr step comes first", sc.Key())
	}
	client, err := sc.GitHub()
	if err != nil {
		return nil, 0, "", err
	}
	me, err := client.Login(ctx)
	if err != nil {
		return nil, 0, "", err
	}
	return client, n, me, nil
}
