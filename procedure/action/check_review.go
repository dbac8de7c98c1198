package action

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/wo-runner/wo/github"
	"github.com/wo-runner/wo/internal/gitname"
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

// Bounds on what the document keeps of a review.
const (
	maxCommentBody     = 2000 // one comment
	maxThreadComments  = 10   // one conversation: the first and the latest
	maxRecordedThreads = 100
	maxUncounted       = 100
)

// Nitpick settings (context.review.nitpicks).
const (
	nitpicksFix    = "fix"    // counted and sent, like any finding
	nitpicksReport = "report" // shown, not counted, not sent (the default)
	nitpicksIgnore = "ignore" // dropped
)

// Run reads the review threads and reviews (GraphQL) and the conversation
// comments (REST).
func (CheckReview) Run(ctx context.Context, sc *StepContext) (Outcome, error) {
	nitpicks, err := nitpickSetting(sc)
	if err != nil {
		return Outcome{}, err
	}
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
	head := st.PushedSHA
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
	aud := audienceOf(sc, me, reviewer.Signals{Head: head, Reviews: reviews, Comments: conversation})
	// GraphQL costs points and has no free conditional requests: wo asks
	// it once a check, and a check follows a wait whose REST poll (free
	// when unchanged) saw the review arrive, or a rerun someone asked for.
	rs, err := client.ReviewThreads(ctx, n)
	if err != nil {
		return Outcome{}, err
	}
	var out uncounted
	threads, unkept := openThreads(rs.Threads, aud, countOutdated(sc), &out)
	verdicts := headVerdicts(rs.Reviews, head, aud)
	found := []workorder.ReviewComment{}
	var outdated []string
	for _, t := range threads {
		if t.Counted {
			first := t.Comments[0]
			found = append(found, workorder.ReviewComment{ID: first.ID, Author: first.Author, Path: t.Path, Line: t.Line, StartLine: t.StartLine, Body: first.Body, URL: first.URL})
		} else if t.Outdated {
			outdated = append(outdated, t.Path)
		}
	}
	for _, c := range conversation {
		if c.ID <= wm.IssueComment || github.SameLogin(c.Author, me) {
			continue
		}
		if p, ok := aud.profile(c.Author); ok && p.Signal(c) {
			continue // the reviewer's summary or acknowledgement: read by the wait
		}
		if !aud.counts(c.Author, c.Association) {
			out.add(workorder.UncountedComment{Author: c.Author, Association: c.Association, Kind: "comment", URL: c.URL, Why: aud.why(c.Author)})
			continue
		}
		if reviewer.IsCommand(c.Body) {
			out.add(workorder.UncountedComment{Author: c.Author, Association: c.Association, Kind: "comment", URL: c.URL, Why: "a command to a review bot, not a finding"})
			continue
		}
		found = append(found, workorder.ReviewComment{ID: c.ID, Author: c.Author, Body: termtext.Cut(c.Body, maxCommentBody), URL: c.URL})
	}
	fromBody := 0
	for _, p := range aud.awaited {
		rv := reviewer.LatestReview(p, reviews, head)
		if rv == nil {
			continue
		}
		for _, f := range p.Findings(*rv) {
			c := workorder.ReviewComment{ID: rv.ID, Author: rv.Author, Path: f.Path, Line: f.Line, StartLine: f.StartLine,
				Body: termtext.Cut(f.Body, maxCommentBody), URL: rv.URL, Section: string(f.Section)}
			switch {
			case f.Section == reviewer.Additional, f.Section == reviewer.Nitpick && nitpicks == nitpicksIgnore:
			case f.Section == reviewer.Nitpick && nitpicks == nitpicksReport:
				out.add(workorder.UncountedComment{Author: rv.Author, Kind: "nitpick", Path: f.Path, Line: f.Line, URL: rv.URL,
					Why: "a nitpick: reported, not counted (context.review.nitpicks: report)"})
			default:
				found = append(found, c)
				fromBody++
			}
		}
	}
	changesBy := changesRequested(verdicts, aud)
	note := fmt.Sprintf("%d actionable review comment(s) on #%d", len(found), n)
	if len(changesBy) > 0 && len(found) == 0 {
		// A request for changes with nothing inline: its summary is what
		// to address, so it is kept (the latest, by each reviewer).
		for _, who := range changesBy {
			found = append(found, changesSummary(reviews, who, head))
		}
		note = fmt.Sprintf("%d actionable review comment(s) on #%d; changes requested by %s", len(found), n, strings.Join(changesBy, ", "))
	}
	if fromBody > 0 {
		note += fmt.Sprintf("; %d of them from the review body (outside the diff, duplicates)", fromBody)
	}
	if len(outdated) > 0 {
		note += fmt.Sprintf("; %d outdated thread(s) left open, not counted: %s", len(outdated), strings.Join(outdated, ", "))
	}
	if unkept > 0 {
		note += fmt.Sprintf("; %d more unresolved thread(s) than the %d the document keeps: they are not in the state or the agent's prompt until these are resolved", unkept, maxRecordedThreads)
	}
	if len(out.list) > 0 {
		note += fmt.Sprintf("; %d not counted and not sent to an agent (wo show %s lists them)", out.total, sc.Key())
	}
	after := sc.State()
	after.ReviewComments, after.ReviewSeen, after.ReviewThreads = found, seen, threads
	after.ReviewVerdicts, after.ChangesRequestedBy, after.ReviewCheckedSHA = verdicts, changesBy, head
	after.ReviewUncounted = out.list
	return Outcome{Note: note, State: &after}, nil
}

// uncounted collects what the check did not count, bounded.
type uncounted struct {
	list  []workorder.UncountedComment
	total int
}

func (u *uncounted) add(c workorder.UncountedComment) {
	u.total++
	if len(u.list) < maxUncounted {
		u.list = append(u.list, c)
	}
}

// nitpickSetting is context.review.nitpicks: fix, report (the default) or
// ignore.
func nitpickSetting(sc *StepContext) (string, error) {
	review, _ := sc.Task().WorkOrder.Context["review"].(map[string]any)
	v, ok := review["nitpicks"]
	if !ok || v == nil {
		return nitpicksReport, nil
	}
	s, _ := v.(string)
	switch s {
	case nitpicksFix, nitpicksReport, nitpicksIgnore:
		return s, nil
	}
	return "", fmt.Errorf("task %s: context.review.nitpicks is %q; write fix, report or ignore", sc.Key(), termtext.Clip(fmt.Sprint(v), 40))
}

// Check refuses a nitpick setting wo does not know before the run starts.
func (CheckReview) Check(ctx context.Context, sc *StepContext) error {
	_, err := nitpickSetting(sc)
	return inDocument(err)
}

// openThreads are the unresolved threads opened by someone who counts,
// each bounded, at most maxRecordedThreads of them; unkept is how many
// more there are. In a thread that counts, a reply by someone who does
// not is left out of what is kept: it reaches neither the state nor the
// agent.
func openThreads(all []github.ReviewThread, aud audience, outdatedCount bool, out *uncounted) (kept []workorder.ReviewThread, unkept int) {
	kept = []workorder.ReviewThread{}
	for _, t := range all {
		if t.Resolved || len(t.Comments) == 0 || github.SameLogin(t.Comments[0].Author, aud.me) {
			continue
		}
		first := t.Comments[0]
		if !aud.counts(first.Author, first.Association) {
			out.add(workorder.UncountedComment{Author: first.Author, Association: first.Association, Kind: "thread", Path: t.Path, Line: t.Line, URL: first.URL, Why: aud.why(first.Author)})
			continue
		}
		if len(kept) == maxRecordedThreads {
			unkept++
			continue
		}
		rt := workorder.ReviewThread{ID: t.ID, Path: t.Path, Line: t.Line, StartLine: t.StartLine, Deleted: t.Side == "LEFT",
			Outdated: t.Outdated, Counted: !t.Outdated || outdatedCount}
		var comments []github.ThreadComment
		answering := false // a bot's replies after an outsider's answer the outsider
		for i, c := range t.Comments {
			switch {
			case github.SameLogin(c.Author, aud.me):
				comments = append(comments, c)
			case !aud.counts(c.Author, c.Association):
				out.add(workorder.UncountedComment{Author: c.Author, Association: c.Association, Kind: "reply", Path: t.Path, Line: t.Line, URL: c.URL, Why: aud.why(c.Author)})
				answering = true
			case github.Writer(c.Association):
				comments = append(comments, c)
				answering = false
			case i > 0 && answering:
				// The bot answering an outsider would carry the outsider's
				// words to the agent.
				out.add(workorder.UncountedComment{Author: c.Author, Association: c.Association, Kind: "reply", Path: t.Path, Line: t.Line, URL: c.URL,
					Why: "a bot's answer to a comment that does not count"})
			default:
				comments = append(comments, c)
			}
		}
		if len(comments) > maxThreadComments {
			rt.Omitted = len(comments) - maxThreadComments
			comments = append(comments[:1:1], comments[len(comments)-maxThreadComments+1:]...)
		}
		for _, c := range comments {
			rt.Comments = append(rt.Comments, workorder.ThreadComment{ID: c.DatabaseID, Author: c.Author, Body: termtext.Cut(c.Body, maxCommentBody), URL: c.URL})
		}
		kept = append(kept, rt)
	}
	return kept, unkept
}

// headVerdicts is the latest verdict on the head of each reviewer who
// counts: a COMMENTED review after an approval or a request for changes
// does not undo it, as on GitHub.
func headVerdicts(reviews []github.ThreadReview, head string, aud audience) map[string]string {
	out := map[string]string{}
	for _, r := range reviews {
		if !aud.counts(r.Author, r.Association) || r.State == "PENDING" || (head != "" && r.Commit != head) {
			continue
		}
		if r.State == "COMMENTED" && out[r.Author] != "" {
			continue
		}
		out[r.Author] = r.State
	}
	return out
}

// changesRequested are the reviewers whose verdict asks for changes: the
// awaited ones when they are named, else anyone who counts; sorted.
func changesRequested(verdicts map[string]string, aud audience) []string {
	var out []string
	for who, v := range verdicts {
		if _, awaited := aud.profile(who); v == "CHANGES_REQUESTED" && (!aud.named || awaited) {
			out = append(out, who)
		}
	}
	slices.Sort(out)
	return out
}

// changesSummary is the latest request for changes by who on the head.
func changesSummary(reviews []github.Review, who, head string) workorder.ReviewComment {
	c := workorder.ReviewComment{Author: who, Body: fmt.Sprintf("%s requested changes on %s", who, gitname.Short(head))}
	for _, r := range reviews {
		if github.SameLogin(r.Author, who) && r.State == "CHANGES_REQUESTED" && (head == "" || r.CommitID == head) {
			c.ID, c.URL = r.ID, r.URL
			if r.Body != "" {
				c.Body = termtext.Cut(r.Body, maxCommentBody)
			}
		}
	}
	return c
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
