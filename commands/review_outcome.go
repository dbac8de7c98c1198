package commands

import (
	"fmt"
	"strings"

	"github.com/wo-runner/wo/internal/gitname"
	"github.com/wo-runner/wo/workorder"
)

// ReviewOutcome is where a task's review stood at its last check, as wo
// show and wo status present it: the unresolved threads and each
// reviewer's latest verdict on the pushed head. It is read from the task's
// state only.
type ReviewOutcome struct {
	OpenThreads []ThreadView `json:"open_threads"`
	// Counted is how many of the open threads keep the review loop going
	// (outdated ones do not, unless context.outdated_threads_count).
	Counted            int               `json:"counted"`
	Verdicts           map[string]string `json:"verdicts,omitempty"`
	ChangesRequestedBy []string          `json:"changes_requested_by,omitempty"`
	// Reviewers is where each awaited reviewer stood on the pushed head at
	// the last look of the wait (reviewed, skipped, rate limited, …).
	Reviewers []workorder.ReviewerStand `json:"reviewers,omitempty"`
	// NotBefore is when a rate-limited reviewer takes a request again.
	NotBefore string `json:"review_not_before,omitempty"`
	// Uncounted are the comments neither counted nor sent to an agent.
	Uncounted []workorder.UncountedComment `json:"not_counted,omitempty"`
}

// ThreadView is one unresolved review thread, in one line's worth.
type ThreadView struct {
	Path     string `json:"path"`
	Line     int    `json:"line,omitempty"`
	Outdated bool   `json:"outdated,omitempty"`
	Counted  bool   `json:"counted"`
	Author   string `json:"author"`  // who opened it
	Excerpt  string `json:"excerpt"` // its first comment, one line, cut
	Comments int    `json:"comments"`
	URL      string `json:"url,omitempty"`
}

// excerptLen bounds a thread's excerpt.
const excerptLen = 80

// reviewOutcomeOf is the review outcome in a task's state; nil before any
// check read the threads.
func reviewOutcomeOf(st workorder.State) *ReviewOutcome {
	if st.ReviewThreads == nil && len(st.ReviewVerdicts) == 0 && len(st.Reviewers) == 0 {
		return nil
	}
	out := &ReviewOutcome{OpenThreads: []ThreadView{}, Verdicts: st.ReviewVerdicts, ChangesRequestedBy: st.ChangesRequestedBy,
		Reviewers: st.Reviewers, NotBefore: st.ReviewNotBefore, Uncounted: st.ReviewUncounted}
	for _, t := range st.ReviewThreads {
		v := ThreadView{Path: t.Path, Line: t.Line, Outdated: t.Outdated, Counted: t.Counted, Comments: len(t.Comments) + t.Omitted}
		if len(t.Comments) > 0 {
			v.Author, v.Excerpt, v.URL = t.Comments[0].Author, excerpt(t.Comments[0].Body), t.Comments[0].URL
		}
		if t.Counted {
			out.Counted++
		}
		out.OpenThreads = append(out.OpenThreads, v)
	}
	return out
}

// excerpt is the start of a comment on one line: its lines joined, runs
// of spaces collapsed, cut at excerptLen characters.
func excerpt(body string) string {
	s := strings.Join(strings.Fields(body), " ")
	if r := []rune(s); len(r) > excerptLen {
		return string(r[:excerptLen-1]) + "…"
	}
	return s
}

// Where is path:line, or the path and "(outdated)".
func (v ThreadView) Where() string {
	switch {
	case v.Outdated:
		return v.Path + " (outdated)"
	case v.Line > 0:
		return fmt.Sprintf("%s:%d", v.Path, v.Line)
	default:
		return v.Path
	}
}

// threadsCell is the compact OPEN THREADS cell of wo status: the number
// open, and how many of those are outdated.
func threadsCell(o *ReviewOutcome) string {
	if o == nil {
		return "-"
	}
	outdated := 0
	for _, t := range o.OpenThreads {
		if t.Outdated {
			outdated++
		}
	}
	if outdated > 0 {
		return fmt.Sprintf("%d (%d outdated)", len(o.OpenThreads), outdated)
	}
	return fmt.Sprint(len(o.OpenThreads))
}

// writeReviewOutcome is wo show's section on the review.
func writeReviewOutcome(p *printer, o *ReviewOutcome) {
	if o == nil {
		return
	}
	p.line("\nReview at the last check: %d open thread(s), %d counted", len(o.OpenThreads), o.Counted)
	if len(o.Verdicts) > 0 {
		p.line("  verdicts  %s", verdictsText(o.Verdicts))
	}
	if len(o.ChangesRequestedBy) > 0 {
		p.line("  changes requested by %s", strings.Join(o.ChangesRequestedBy, ", "))
	}
	for _, t := range o.OpenThreads {
		if t.Author == "" && t.Excerpt == "" { // a thread whose comments were not kept
			p.line("  - %s", t.Where())
			continue
		}
		p.line("  - %s  %s: %s", t.Where(), t.Author, t.Excerpt)
	}
	for _, r := range o.Reviewers {
		said := ""
		if r.Said != "" {
			said = " (" + r.Said + ")"
		}
		p.line("  reviewer %s: %s on %s%s", r.Login, strings.ReplaceAll(r.Kind, "_", " "), gitname.Short(r.Head), said)
	}
	if o.NotBefore != "" {
		p.line("  rate limited: wo asks again for the review after %s", o.NotBefore)
	}
	if len(o.Uncounted) > 0 {
		p.line("  not counted, not sent to an agent: %d", len(o.Uncounted))
		for _, u := range o.Uncounted {
			where := u.Path
			if u.Line > 0 {
				where = fmt.Sprintf("%s:%d", u.Path, u.Line)
			}
			if where != "" {
				where = " on " + where
			}
			p.line("  - %s by %s%s: %s", u.Kind, u.Author, where, u.Why)
		}
	}
}
