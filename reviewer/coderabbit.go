package reviewer

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/wo-runner/wo/github"
)

// CodeRabbit is coderabbitai[bot]. It keeps one summary comment on the
// pull request and edits it in place (its news is in updated_at), posts a
// commit status "CodeRabbit" on each head it looks at, and posts a
// COMMENTED review with its threads, some findings staying in the review
// body. A clean re-review may post no review at all: the status says
// "Review completed" and the summary "No actionable comments were
// generated". By default it skips pull requests into other branches than
// the default one, and it is rate limited and pauses after a few reviewed
// commits; each time it says so in the summary and in the status, which
// is green ("success") all the same. It is asked with commands, each a
// comment of its own.
type CodeRabbit struct{}

func (CodeRabbit) Name() string  { return "coderabbit" }
func (CodeRabbit) Login() string { return "coderabbitai[bot]" }
func (CodeRabbit) Is(login string) bool {
	return sameAny(login, "coderabbitai[bot]")
}

// stalledAfter is how long a pending status may stay unchanged before the
// review counts as lost: past CodeRabbit's worst observed latency (20
// minutes) with room.
const stalledAfter = 45 * time.Minute

// Wait: push to review takes about 7 minutes at the median, 14 at the
// 90th percentile and 20 at worst; 25 minutes covers that with room.
func (CodeRabbit) Wait() time.Duration    { return 25 * time.Minute }
func (CodeRabbit) Latency() time.Duration { return 14 * time.Minute }

// summaryMarker begins CodeRabbit's summary comment.
const summaryMarker = "summarize by coderabbit.ai -->"

// Signal: every conversation comment CodeRabbit posts is its summary, an
// acknowledgement of a command, or a chat answer; its findings are in
// reviews.
func (CodeRabbit) Signal(github.Comment) bool { return true }

// Findings are the collapsed sections of its review body.
func (CodeRabbit) Findings(r github.Review) []Finding { return ParseBody(r.Body) }

// Ask: its commands, each a comment of its own (inside prose a command is
// taken as chat and does nothing).
func (CodeRabbit) Ask(k Kind) []Ask {
	switch k {
	case Skipped, RateLimited, Aborted:
		return []Ask{{Comment: "@coderabbitai review"}}
	case Paused:
		return []Ask{{Comment: "@coderabbitai resume"}, {Comment: "@coderabbitai review"}}
	}
	return nil
}

// clockSkew is how far GitHub's clock and wo's may differ: a summary
// edited this long before wo's push may still be about it.
const clockSkew = 2 * time.Minute

// Read weighs, in order: the status on the head (per commit, so surely
// about it), a review of the head, then the summary comment when it
// names the head or was edited after the push.
func (p CodeRabbit) Read(s Signals) Reading {
	st := p.status(s)
	sum := p.summaryReading(s)
	if st != nil {
		if r, ok := readStatus(*st, s.Now); ok {
			if st.State == "pending" { // in progress, or stalled: the summary adds nothing
				return r
			}
			return sum.onto(r, s.Now)
		}
	}
	if rv := reviewOf(p, s); rv != nil {
		return Reading{Kind: Reviewed, Said: firstLine(rv.Body), At: rv.SubmittedAt, Review: rv}
	}
	if st != nil && containsAny(st.Description, "completed", "reviewed") {
		return Reading{Kind: Reviewed, Said: "status: " + st.Description, At: st.UpdatedAt}
	}
	if sum.comment != nil && sum.about {
		return sum.onto(Reading{Kind: sum.kind, Said: stanzaHeading(sum.comment.Body), At: sum.comment.UpdatedAt}, s.Now)
	}
	return Reading{Kind: Waiting}
}

// status is the bot's own latest CodeRabbit status on the head, or nil.
// Anyone who can push may post a status named CodeRabbit: only the bot's
// own counts. GitHub lists statuses newest first, to the second: on a tie
// the first listed is the newer.
func (p CodeRabbit) status(s Signals) *github.Status {
	var st *github.Status
	for i, x := range s.Statuses {
		if strings.EqualFold(strings.TrimSpace(x.Context), "CodeRabbit") && p.Is(x.Creator) && (st == nil || x.UpdatedAt.After(st.UpdatedAt)) {
			st = &s.Statuses[i]
		}
	}
	return st
}

// readStatus is what the status says, when it says something: pending (in
// progress, or stalled since long before now), skipped, rate limited,
// paused or failed.
func readStatus(st github.Status, now time.Time) (Reading, bool) {
	r := Reading{Said: "status: " + st.Description, At: st.UpdatedAt}
	switch {
	case st.State == "pending" && !now.IsZero() && now.Sub(st.UpdatedAt) > stalledAfter:
		// A review that has said nothing for this long is lost: ask
		// again rather than wait for ever.
		r.Kind, r.Said = Aborted, fmt.Sprintf("status: %s, unchanged since %s", st.Description, st.UpdatedAt.UTC().Format(time.RFC3339))
	case st.State == "pending":
		r.Kind = InProgress
	case containsAny(st.Description, "skipped"):
		r.Kind = Skipped
	case containsAny(st.Description, "rate limit", "review limit"):
		r.Kind = RateLimited
	case containsAny(st.Description, "paused"):
		r.Kind = Paused
	case st.State == "failure" || st.State == "error" || containsAny(st.Description, "failed"):
		r.Kind = Aborted
	default:
		return Reading{}, false
	}
	return r, true
}

// summaryReading is the summary comment, what it says and whether that
// is about the head.
type summaryReading struct {
	comment *github.Comment
	kind    Kind
	about   bool
}

func (p CodeRabbit) summaryReading(s Signals) summaryReading {
	c, k, about := p.summary(s)
	return summaryReading{c, k, about}
}

// onto completes a reading with what the summary adds: a skip that is a
// pause, and when the reviewer takes a request again, with its words.
func (sum summaryReading) onto(r Reading, now time.Time) Reading {
	// A skipped status may be a pause: the summary tells them apart.
	if r.Kind == Skipped && sum.kind == Paused && sum.comment != nil && sum.about {
		r.Kind = Paused
	}
	if sum.kind == r.Kind && sum.comment != nil {
		r.NotBefore = notBefore(sum.comment)
		if h := stanzaHeading(sum.comment.Body); h != "" {
			r.Said = h
		}
	}
	if r.Kind == RateLimited && r.NotBefore.IsZero() {
		r.NotBefore = r.At.Add(defaultLimitWait)
	}
	// A server clock far ahead cannot park the task for ever.
	if !now.IsZero() && r.NotBefore.After(now.Add(maxLimitWait)) {
		r.NotBefore = now.Add(maxLimitWait)
	}
	return r
}

// summary is CodeRabbit's summary comment, what its state stanza says,
// and whether that is about the head. A summary that says the head was
// reviewed counts only when its coverage marker names the head: the
// summary is edited for other reasons too (a chat answer), and an old
// "no actionable comments" would otherwise pass a head nobody reviewed.
// One that withholds a review or says it is reviewing counts when it was
// edited after the push, or when wo cannot tell (asking once more is
// cheap, and bounded).
func (p CodeRabbit) summary(s Signals) (*github.Comment, Kind, bool) {
	var c *github.Comment
	for i, x := range s.Comments {
		if p.Is(x.Author) && strings.Contains(x.Body, summaryMarker) {
			c = &s.Comments[i]
		}
	}
	if c == nil {
		return nil, Waiting, false
	}
	kind := stanza(c.Body)
	if covered, ok := coveredCommit(c.Body); ok && covered == s.Head && (kind == Waiting || kind == Reviewed) {
		return c, Reviewed, true
	}
	if kind == Reviewed || kind == Waiting {
		return c, kind, false
	}
	edited := c.UpdatedAt
	if edited.IsZero() {
		edited = c.CreatedAt
	}
	if s.Since.IsZero() {
		return c, kind, true
	}
	return c, kind, !edited.Before(s.Since.Add(-clockSkew))
}

// stanza is the state the summary is in, from its auto-generated markers
// first, then its headings. Only the part before the walkthrough is read:
// the walkthrough describes the change, and may quote any words.
func stanza(body string) Kind {
	low := strings.ToLower(stateStanza(body))
	marker := func(kind string) bool {
		return strings.Contains(low, "auto-generated comment: "+kind+" by coderabbit.ai")
	}
	switch {
	case marker("rate limited"), strings.Contains(low, "## rate limit exceeded"), strings.Contains(low, "## review limit reached"),
		strings.Contains(low, "daily quota limit"):
		return RateLimited
	case marker("review paused"), strings.Contains(low, "## reviews paused"):
		return Paused
	case marker("skip review"), strings.Contains(low, "## review skipped"):
		return Skipped
	case marker("failure"), strings.Contains(low, "## review failed"):
		return Aborted
	case marker("review in progress"), strings.Contains(low, "review in progress"):
		return InProgress
	case strings.Contains(low, "no actionable comments were generated"):
		return Reviewed
	}
	return Waiting
}

var reHeading = regexp.MustCompile(`(?m)^\s*(?:>\s*)?##\s+(.+)$`)

// stateStanza is the summary before its walkthrough, tips and internal
// state: where CodeRabbit says what it is doing.
func stateStanza(body string) string {
	for _, end := range []string{"<!-- walkthrough_start -->", "<!-- tips_start -->", "<!-- internal state start -->"} {
		if i := strings.Index(body, end); i >= 0 {
			body = body[:i]
		}
	}
	return body
}

// stanzaHeading is the summary's first heading ("Review skipped", "Rate
// limit exceeded"), for messages.
func stanzaHeading(body string) string {
	body = stateStanza(body)
	if m := reHeading.FindStringSubmatch(body); m != nil {
		return firstLine(m[1])
	}
	if strings.Contains(strings.ToLower(body), "no actionable comments were generated") {
		return "No actionable comments were generated in the recent review."
	}
	return ""
}

var reCoverage = regexp.MustCompile(`<!--\s*final_review_risk_coverage:(\{.*?\})\s*-->`)

// coveredCommit is the commit a summary's coverage marker says was
// reviewed.
func coveredCommit(body string) (string, bool) {
	m := reCoverage.FindStringSubmatch(body)
	if m == nil {
		return "", false
	}
	var v struct {
		CoveredCommitID string `json:"coveredCommitId"`
	}
	if json.Unmarshal([]byte(m[1]), &v) != nil || v.CoveredCommitID == "" {
		return "", false
	}
	return v.CoveredCommitID, true
}

// defaultLimitWait is how long to let a rate limit last when the notice
// gives no time.
const defaultLimitWait = 15 * time.Minute

// maxLimitWait bounds a wait read from a notice: a hostile or garbled
// notice cannot park a task for a year.
const maxLimitWait = 25 * time.Hour

var (
	reWaitPhrase = regexp.MustCompile(`(?i)(please wait|available in|refill in|wait up to|try again in)[^0-9]{0,12}((?:\d+\s*(?:hours?|minutes?|seconds?|h|m|s)\b[\s,and*]*)+)`)
	reWaitPart   = regexp.MustCompile(`(?i)(\d+)\s*(hours?|minutes?|seconds?|h|m|s)\b`)
)

// notBefore is when a rate-limited CodeRabbit takes a request again: the
// time its notice was written plus the wait it names ("Please wait 22
// minutes and 5 seconds", "Next review available in: 9 minutes", "wait up
// to 24 hours").
func notBefore(c *github.Comment) time.Time {
	at := c.UpdatedAt
	if at.IsZero() {
		at = c.CreatedAt
	}
	d, ok := waitIn(c.Body)
	if !ok {
		return time.Time{}
	}
	return at.Add(d)
}

// waitIn reads the first wait a notice names.
func waitIn(body string) (time.Duration, bool) {
	m := reWaitPhrase.FindStringSubmatch(strings.ReplaceAll(body, "**", ""))
	if m == nil {
		return 0, false
	}
	var d time.Duration
	for _, part := range reWaitPart.FindAllStringSubmatch(m[2], -1) {
		n, err := strconv.Atoi(part[1])
		if err != nil || n > 100000 {
			return 0, false
		}
		switch strings.ToLower(part[2])[0] {
		case 'h':
			d += time.Duration(n) * time.Hour
		case 'm':
			d += time.Duration(n) * time.Minute
		case 's':
			d += time.Duration(n) * time.Second
		}
	}
	if d <= 0 {
		return 0, false
	}
	return min(d, maxLimitWait), true
}

func containsAny(s string, words ...string) bool {
	low := strings.ToLower(s)
	for _, w := range words {
		if strings.Contains(low, w) {
			return true
		}
	}
	return false
}
