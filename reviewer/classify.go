package reviewer

import (
	"fmt"
	"slices"

	"github.com/wo-runner/wo/github"
	"github.com/wo-runner/wo/internal/gitname"
	"github.com/wo-runner/wo/termtext"
	"github.com/wo-runner/wo/workorder"
)

// Snapshot is what the review check read of a pull request's review, for
// one head: the input of Classify.
type Snapshot struct {
	Head string // the commit wo pushed
	// SeenComment is the newest conversation comment an earlier check
	// handled (the watermark): the ones up to it are not new.
	SeenComment   int64
	Reviews       []github.Review       // REST: the bodies' findings, requests for changes
	Conversation  []github.Comment      // REST, oldest first
	Threads       []github.ReviewThread // GraphQL
	ThreadReviews []github.ThreadReview // GraphQL: the verdicts, with their authors' associations
}

// Rules are the work order's choices about what counts.
type Rules struct {
	CountOutdated bool   // context.outdated_threads_count
	Nitpicks      string // context.review.nitpicks: NitpicksFix, NitpicksReport or NitpicksIgnore
}

// Nitpick settings (context.review.nitpicks).
const (
	NitpicksFix    = "fix"    // counted and sent, like any finding
	NitpicksReport = "report" // shown, not counted, not sent (the default)
	NitpicksIgnore = "ignore" // dropped
)

// Bounds on what the document keeps of a review.
const (
	MaxCommentBody    = 2000 // one comment
	MaxThreadComments = 10   // one conversation: the first and the latest
	MaxThreads        = 100
	MaxUncounted      = 100
)

// Classification is where the review stands, as the state keeps it.
type Classification struct {
	// Findings keep the review loop going: the unresolved threads that
	// count, the new conversation comments, the body's findings and,
	// when there is nothing else, the summaries of requests for changes.
	Findings []workorder.ReviewComment
	// FromBody is how many of the findings come from review bodies;
	// FromChangesRequested says the findings are the requests for changes.
	FromBody             int
	FromChangesRequested bool
	// Threads are the unresolved threads kept, Unkept how many more there
	// are than MaxThreads; Outdated the files of outdated threads that do
	// not count.
	Threads  []workorder.ReviewThread
	Unkept   int
	Outdated []string
	// Verdicts is each reviewer's latest verdict on the head; ChangesBy
	// those of them that ask for changes and count, sorted.
	Verdicts  map[string]string
	ChangesBy []string
	Uncounted Uncounted
}

// Uncounted is what the check did not count, at most MaxUncounted of it.
type Uncounted struct {
	List  []workorder.UncountedComment
	Total int
}

func (u *Uncounted) add(c workorder.UncountedComment) {
	u.Total++
	if len(u.List) < MaxUncounted {
		u.List = append(u.List, c)
	}
}

// Classify sorts what GitHub shows into what keeps the review loop going,
// what is only shown, and what does not count (see Audience).
func Classify(s Snapshot, aud Audience, r Rules) Classification {
	c := Classification{Findings: []workorder.ReviewComment{}}
	c.Threads, c.Unkept = openThreads(s.Threads, aud, r.CountOutdated, &c.Uncounted)
	c.Verdicts = headVerdicts(s.ThreadReviews, s.Head, aud)
	for _, t := range c.Threads {
		if t.Counted {
			first := t.Comments[0]
			c.Findings = append(c.Findings, workorder.ReviewComment{ID: first.ID, Author: first.Author, Path: t.Path, Line: t.Line, StartLine: t.StartLine, Body: first.Body, URL: first.URL})
		} else if t.Outdated {
			c.Outdated = append(c.Outdated, t.Path)
		}
	}
	c.Findings = append(c.Findings, conversationFindings(s, aud, &c.Uncounted)...)
	body := bodyFindings(s, aud, r.Nitpicks, &c.Uncounted)
	c.Findings, c.FromBody = append(c.Findings, body...), len(body)
	c.ChangesBy = changesRequested(c.Verdicts, aud)
	if len(c.ChangesBy) > 0 && len(c.Findings) == 0 {
		// A request for changes with nothing inline: its summary is what
		// to address, so it is kept (the latest, by each reviewer).
		for _, who := range c.ChangesBy {
			c.Findings = append(c.Findings, changesSummary(s.Reviews, who, s.Head))
		}
		c.FromChangesRequested = true
	}
	return c
}

// conversationFindings are the conversation comments new since the
// watermark that count and are neither a reviewer's signal (a summary, an
// acknowledgement: the wait reads those) nor a command to a review bot.
func conversationFindings(s Snapshot, aud Audience, out *Uncounted) []workorder.ReviewComment {
	var found []workorder.ReviewComment
	for _, c := range s.Conversation {
		if c.ID <= s.SeenComment || github.SameLogin(c.Author, aud.Me) {
			continue
		}
		if p, ok := aud.Profile(c.Author); ok && p.Signal(c) {
			continue
		}
		if !aud.Counts(c.Author, c.Association) {
			out.add(workorder.UncountedComment{Author: c.Author, Association: c.Association, Kind: "comment", URL: c.URL, Why: aud.Why(c.Author)})
			continue
		}
		if IsCommand(c.Body) {
			out.add(workorder.UncountedComment{Author: c.Author, Association: c.Association, Kind: "comment", URL: c.URL, Why: "a command to a review bot, not a finding"})
			continue
		}
		found = append(found, workorder.ReviewComment{ID: c.ID, Author: c.Author, Body: termtext.Cut(c.Body, MaxCommentBody), URL: c.URL})
	}
	return found
}

// bodyFindings are the findings the awaited reviewers kept in their latest
// review of the head: outside the diff and duplicates, and nitpicks as the
// work order says; additional remarks never count.
func bodyFindings(s Snapshot, aud Audience, nitpicks string, out *Uncounted) []workorder.ReviewComment {
	var found []workorder.ReviewComment
	for _, p := range aud.Awaited {
		rv := LatestReview(p, s.Reviews, s.Head)
		if rv == nil {
			continue
		}
		for _, f := range p.Findings(*rv) {
			switch {
			case f.Section == Additional, f.Section == Nitpick && nitpicks == NitpicksIgnore:
			case f.Section == Nitpick && nitpicks == NitpicksReport:
				out.add(workorder.UncountedComment{Author: rv.Author, Kind: "nitpick", Path: f.Path, Line: f.Line, URL: rv.URL,
					Why: "a nitpick: reported, not counted (context.review.nitpicks: report)"})
			default:
				found = append(found, workorder.ReviewComment{ID: rv.ID, Author: rv.Author, Path: f.Path, Line: f.Line, StartLine: f.StartLine,
					Body: termtext.Cut(f.Body, MaxCommentBody), URL: rv.URL, Section: string(f.Section)})
			}
		}
	}
	return found
}

// openThreads are the unresolved threads opened by someone who counts,
// each bounded, at most MaxThreads of them; unkept is how many more there
// are. In a thread that counts, a reply by someone who does not is left
// out of what is kept: it reaches neither the state nor the agent.
func openThreads(all []github.ReviewThread, aud Audience, outdatedCount bool, out *Uncounted) (kept []workorder.ReviewThread, unkept int) {
	kept = []workorder.ReviewThread{}
	for _, t := range all {
		if t.Resolved || len(t.Comments) == 0 || github.SameLogin(t.Comments[0].Author, aud.Me) {
			continue
		}
		first := t.Comments[0]
		if !aud.Counts(first.Author, first.Association) {
			out.add(workorder.UncountedComment{Author: first.Author, Association: first.Association, Kind: "thread", Path: t.Path, Line: t.Line, URL: first.URL, Why: aud.Why(first.Author)})
			continue
		}
		if len(kept) == MaxThreads {
			unkept++
			continue
		}
		rt := workorder.ReviewThread{ID: t.ID, Path: t.Path, Line: t.Line, StartLine: t.StartLine, Deleted: t.Side == "LEFT",
			Outdated: t.Outdated, Counted: !t.Outdated || outdatedCount}
		comments := threadComments(t, aud, out)
		if len(comments) > MaxThreadComments {
			rt.Omitted = len(comments) - MaxThreadComments
			comments = append(comments[:1:1], comments[len(comments)-MaxThreadComments+1:]...)
		}
		for _, c := range comments {
			rt.Comments = append(rt.Comments, workorder.ThreadComment{ID: c.DatabaseID, Author: c.Author, Body: termtext.Cut(c.Body, MaxCommentBody), URL: c.URL})
		}
		kept = append(kept, rt)
	}
	return kept, unkept
}

// threadComments are the comments of a thread that counts that are kept:
// wo's own, a writer's, an awaited reviewer's, but not an outsider's reply
// nor a bot's answer to one, which would carry the outsider's words to
// the agent.
func threadComments(t github.ReviewThread, aud Audience, out *Uncounted) []github.ThreadComment {
	var comments []github.ThreadComment
	answering := false // a bot's replies after an outsider's answer the outsider
	for i, c := range t.Comments {
		switch {
		case github.SameLogin(c.Author, aud.Me):
			comments = append(comments, c)
		case !aud.Counts(c.Author, c.Association):
			out.add(workorder.UncountedComment{Author: c.Author, Association: c.Association, Kind: "reply", Path: t.Path, Line: t.Line, URL: c.URL, Why: aud.Why(c.Author)})
			answering = true
		case github.Writer(c.Association):
			comments = append(comments, c)
			answering = false
		case i > 0 && answering:
			out.add(workorder.UncountedComment{Author: c.Author, Association: c.Association, Kind: "reply", Path: t.Path, Line: t.Line, URL: c.URL,
				Why: "a bot's answer to a comment that does not count"})
		default:
			comments = append(comments, c)
		}
	}
	return comments
}

// headVerdicts is the latest verdict on the head of each reviewer who
// counts: a COMMENTED review after an approval or a request for changes
// does not undo it, as on GitHub.
func headVerdicts(reviews []github.ThreadReview, head string, aud Audience) map[string]string {
	out := map[string]string{}
	for _, r := range reviews {
		if !aud.Counts(r.Author, r.Association) || r.State == "PENDING" || (head != "" && r.Commit != head) {
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
func changesRequested(verdicts map[string]string, aud Audience) []string {
	var out []string
	for who, v := range verdicts {
		if _, awaited := aud.Profile(who); v == "CHANGES_REQUESTED" && (!aud.Named || awaited) {
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
				c.Body = termtext.Cut(r.Body, MaxCommentBody)
			}
		}
	}
	return c
}
