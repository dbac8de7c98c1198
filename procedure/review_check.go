package procedure

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/wo-runner/wo/github"
	"github.com/wo-runner/wo/workorder"
)

// ReviewCheck reads where the review stands and keeps it in state, so
// that an agent reading only the task document has it: every unresolved
// review thread with its conversation, each reviewer's latest verdict on
// the pushed head, and the conversation comments new since the watermark
// and not wo's own. What keeps the review loop going is in
// state.review_comments: the unresolved threads that count (not outdated,
// unless context.outdated_threads_count), the new conversation comments,
// and an awaited reviewer's request for changes on the head.
type ReviewCheck struct{}

func newReviewCheck() Action { return ReviewCheck{} }

// Bounds on what the document keeps of a review.
const (
	maxCommentBody     = 2000 // one comment
	maxThreadComments  = 10   // one conversation: the first and the latest
	maxRecordedThreads = 100
)

// Run reads the review threads and reviews (GraphQL) and the conversation
// comments (REST).
func (ReviewCheck) Run(ctx context.Context, sc *StepContext) (Outcome, error) {
	client, n, me, err := prContext(ctx, sc)
	if err != nil {
		return Outcome{}, err
	}
	reviews, err := client.Reviews(ctx, n)
	if err != nil {
		return Outcome{}, err
	}
	inline, err := client.ReviewComments(ctx, n)
	if err != nil {
		return Outcome{}, err
	}
	conversation, err := client.IssueComments(ctx, n)
	if err != nil {
		return Outcome{}, err
	}
	st := sc.State()
	wm := st.ReviewWatermark
	seen := wm // it moves, wm does not
	for _, c := range inline {
		seen.ReviewComment = max(seen.ReviewComment, c.ID)
	}
	for _, r := range reviews {
		seen.Review = max(seen.Review, r.ID)
	}
	for _, c := range conversation {
		seen.IssueComment = max(seen.IssueComment, c.ID)
	}
	// GraphQL costs points and has no free conditional requests: wo asks
	// it once a check, and a check follows a wait whose REST poll (free
	// when unchanged) saw the review arrive, or a rerun someone asked for.
	rs, err := client.ReviewThreads(ctx, n)
	if err != nil {
		return Outcome{}, err
	}
	threads, unkept := openThreads(rs.Threads, me, countOutdated(sc))
	verdicts := headVerdicts(rs.Reviews, st.PushedSHA, me)
	found := []workorder.ReviewComment{}
	var outdated []string
	for _, t := range threads {
		if t.Counted {
			first := t.Comments[0]
			found = append(found, workorder.ReviewComment{ID: first.ID, Author: first.Author, Path: t.Path, Line: t.Line, Body: first.Body, URL: first.URL})
		} else if t.Outdated {
			outdated = append(outdated, t.Path)
		}
	}
	for _, c := range conversation {
		if c.ID > wm.IssueComment && !github.SameLogin(c.Author, me) {
			found = append(found, workorder.ReviewComment{ID: c.ID, Author: c.Author, Body: bound(c.Body), URL: c.URL})
		}
	}
	changesBy := changesRequested(verdicts, awaitedReviewers(sc))
	note := fmt.Sprintf("%d actionable review comment(s) on #%d", len(found), n)
	if len(changesBy) > 0 && len(found) == 0 {
		// A request for changes with nothing inline: its summary is what
		// to address, so it is kept (the latest, by each reviewer).
		for _, who := range changesBy {
			found = append(found, changesSummary(reviews, who, st.PushedSHA))
		}
		note = fmt.Sprintf("%d actionable review comment(s) on #%d; changes requested by %s", len(found), n, strings.Join(changesBy, ", "))
	}
	if len(outdated) > 0 {
		note += fmt.Sprintf("; %d outdated thread(s) left open, not counted: %s", len(outdated), strings.Join(outdated, ", "))
	}
	if unkept > 0 {
		note += fmt.Sprintf("; %d more unresolved thread(s) than the %d the document keeps: they are not in the state or the agent's prompt until these are resolved", unkept, maxRecordedThreads)
	}
	head := st.PushedSHA
	return Outcome{
		Note: note,
		Record: func(s *workorder.State) {
			s.ReviewComments, s.ReviewSeen, s.ReviewThreads = found, seen, threads
			s.ReviewVerdicts, s.ChangesRequestedBy, s.ReviewCheckedSHA = verdicts, changesBy, head
		},
	}, nil
}

// openThreads are the unresolved threads not opened by wo, each bounded,
// at most maxRecordedThreads of them; unkept is how many more there are.
func openThreads(all []github.ReviewThread, me string, outdatedCount bool) (kept []workorder.ReviewThread, unkept int) {
	out := []workorder.ReviewThread{}
	for _, t := range all {
		if t.Resolved || len(t.Comments) == 0 || github.SameLogin(t.Comments[0].Author, me) {
			continue
		}
		if len(out) == maxRecordedThreads {
			unkept++
			continue
		}
		rt := workorder.ReviewThread{ID: t.ID, Path: t.Path, Line: t.Line, StartLine: t.StartLine, Deleted: t.Side == "LEFT",
			Outdated: t.Outdated, Counted: !t.Outdated || outdatedCount}
		comments := t.Comments
		if len(comments) > maxThreadComments {
			rt.Omitted = len(comments) - maxThreadComments
			comments = append(comments[:1:1], comments[len(comments)-maxThreadComments+1:]...)
		}
		for _, c := range comments {
			rt.Comments = append(rt.Comments, workorder.ThreadComment{ID: c.DatabaseID, Author: c.Author, Body: bound(c.Body), URL: c.URL})
		}
		out = append(out, rt)
	}
	return out, unkept
}

// headVerdicts is each reviewer's latest verdict on the head: a COMMENTED
// review after an approval or a request for changes does not undo it, as
// on GitHub.
func headVerdicts(reviews []github.ThreadReview, head, me string) map[string]string {
	out := map[string]string{}
	for _, r := range reviews {
		if r.Author == "" || github.SameLogin(r.Author, me) || r.State == "PENDING" || (head != "" && r.Commit != head) {
			continue
		}
		if r.State == "COMMENTED" && out[r.Author] != "" {
			continue
		}
		out[r.Author] = r.State
	}
	return out
}

// changesRequested are the awaited reviewers (any, when none is named)
// whose verdict asks for changes, sorted.
func changesRequested(verdicts map[string]string, awaited []string) []string {
	var out []string
	for who, v := range verdicts {
		if v == "CHANGES_REQUESTED" && (len(awaited) == 0 || isAwaited(who, awaited)) {
			out = append(out, who)
		}
	}
	slices.Sort(out)
	return out
}

// changesSummary is the latest request for changes by who on the head.
func changesSummary(reviews []github.Review, who, head string) workorder.ReviewComment {
	c := workorder.ReviewComment{Author: who, Body: fmt.Sprintf("%s requested changes on %s", who, short(head))}
	for _, r := range reviews {
		if github.SameLogin(r.Author, who) && r.State == "CHANGES_REQUESTED" && (head == "" || r.CommitID == head) {
			c.ID, c.URL = r.ID, r.URL
			if r.Body != "" {
				c.Body = bound(r.Body)
			}
		}
	}
	return c
}

// bound cuts a comment to maxCommentBody bytes, at a character boundary.
func bound(body string) string {
	if len(body) <= maxCommentBody {
		return body
	}
	cut := maxCommentBody
	for cut > 0 && !utf8.RuneStart(body[cut]) {
		cut--
	}
	return body[:cut] + " […]"
}

// isAwaited reports whether login is one of the awaited reviewers.
func isAwaited(login string, awaited []string) bool {
	return slices.ContainsFunc(awaited, func(name string) bool { return github.IsReviewer(login, name) })
}

// awaitedReviewers are the logins named by --reviewer, else by
// context.reviewers; none means any reviewer.
func awaitedReviewers(sc *StepContext) []string {
	if len(sc.run.Reviewers) > 0 {
		return sc.run.Reviewers
	}
	v := sc.Task().WorkOrder.Context["reviewers"]
	if s, ok := v.(string); ok && s != "" {
		return []string{s}
	}
	return stringList(v)
}

// countOutdated is context.outdated_threads_count.
func countOutdated(sc *StepContext) bool {
	b, _ := sc.Task().WorkOrder.Context["outdated_threads_count"].(bool)
	return b
}

// resolveThreads is --resolve-threads or context.resolve_threads.
func resolveThreads(sc *StepContext) bool {
	b, _ := sc.Task().WorkOrder.Context["resolve_threads"].(bool)
	return b || sc.run.ResolveThreads
}

// Plan names the PR.
func (ReviewCheck) Plan(sc *StepContext) string {
	return "read the review threads, the reviewers' verdicts on the pushed head and the conversation of the pull request; keep the unresolved threads and the new comments not written by wo"
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
