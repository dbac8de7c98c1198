// Package reviewer knows how the reviewers a work order waits for signal
// their work on GitHub. A person, or a bot that behaves like one, posts a
// review of the head; the review bots teams run do not: CodeRabbit skips
// pull requests into other branches than the default one, keeps findings
// in the review body, edits one summary comment in place, reports through
// a commit status, is rate limited and pauses; Copilot reviews a new push
// only when asked again. A Profile reads what a reviewer said about one
// head and says how to ask for a review it withheld.
//
// Adding a profile is one file: a type that implements Profile, and its
// line in profiles below. docs/reviewers.md says what each reads and what
// it was modelled on.
package reviewer

import (
	"slices"
	"strings"
	"time"

	"github.com/wo-runner/wo/github"
	"github.com/wo-runner/wo/termtext"
)

// Signals are what GitHub shows of a pull request's review, read for one
// head: the reviews, the conversation and the statuses of the head.
type Signals struct {
	Head string // the commit wo pushed and waits to have reviewed
	// Since is when wo pushed Head, by wo's clock; zero when not known. A
	// comment edited before it speaks of an older head.
	Since time.Time
	// Now is the time of the look, by wo's clock: a pending review that
	// has said nothing for long is stalled. Zero: never stalled.
	Now      time.Time
	Reviews  []github.Review
	Comments []github.Comment // the conversation, oldest first
	Statuses []github.Status  // commit statuses (newest first, as GitHub lists them) and check runs of Head
}

// Kind is where a reviewer stands on a head.
type Kind string

const (
	// Waiting: nothing said about the head yet.
	Waiting Kind = "waiting"
	// InProgress: the reviewer says it is reviewing the head.
	InProgress Kind = "in_progress"
	// Reviewed: the reviewer is done with the head (with or without a
	// review object).
	Reviewed Kind = "reviewed"
	// Skipped: the reviewer will not review the head unless asked.
	Skipped Kind = "skipped"
	// Paused: the reviewer reviews nothing more until resumed.
	Paused Kind = "paused"
	// RateLimited: the reviewer will review again after NotBefore, when
	// asked.
	RateLimited Kind = "rate_limited"
	// Aborted: the review of the head was lost (the head changed while it
	// ran); ask again.
	Aborted Kind = "aborted"
	// Unavailable: the reviewer cannot review (no quota, service ended):
	// a person must step in. Never clean.
	Unavailable Kind = "unavailable"
)

// Reading is what a reviewer said about a head.
type Reading struct {
	Kind Kind
	// Said is the reviewer's own words, briefly: untrusted text, to be
	// escaped before it reaches a terminal.
	Said string
	// At is when the reviewer said it, by GitHub's clock; zero when the
	// signal carries no time.
	At time.Time
	// NotBefore is when a rate-limited reviewer takes a request again.
	NotBefore time.Time
	// Review is the review of the head, when the reviewer posted one.
	Review *github.Review
}

// Finding is a finding a reviewer left in a review's body rather than in
// a thread (outside the diff, a duplicate, a nitpick): nothing to resolve
// on GitHub, but something to address all the same.
type Finding struct {
	Section   Section `json:"section"`
	Path      string  `json:"path"`
	StartLine int     `json:"start_line,omitempty"`
	Line      int     `json:"line,omitempty"`
	Body      string  `json:"body"`
}

// Section is the part of a review body a finding comes from.
type Section string

const (
	OutsideDiff Section = "outside_diff"
	Duplicate   Section = "duplicate"
	Nitpick     Section = "nitpick"
	// Additional comments are remarks the reviewer does not ask anything
	// by (praise, notes): shown, never counted.
	Additional Section = "additional"
)

// Ask is one request for a review: a conversation comment of its own (a
// bot's command), or a request for review by logins through GitHub's
// reviewers.
type Ask struct {
	Comment   string
	Reviewers []string
}

// Profile is how one reviewer signals its work.
type Profile interface {
	// Name names the profile: coderabbit, copilot, gemini, or the login.
	Name() string
	// Login is the reviewer's login as the REST API gives it.
	Login() string
	// Is reports whether login (as the REST API gives it: a bot's ends in
	// "[bot]") is this reviewer. A bot's bare name is not: a user may
	// have registered it. Bots post under more than one name (Copilot's
	// inline comments are by "Copilot").
	Is(login string) bool
	// Read says where the reviewer stands on s.Head.
	Read(s Signals) Reading
	// Ask is what to send to have the head reviewed after a reading of
	// kind k; none when asking would not help.
	Ask(k Kind) []Ask
	// Findings are the findings a review keeps in its body.
	Findings(r github.Review) []Finding
	// Signal reports whether a conversation comment by the reviewer is a
	// signal (a summary, an acknowledgement) rather than a finding.
	Signal(c github.Comment) bool
	// Wait is how long to wait for a review when a step names no time.
	Wait() time.Duration
	// Latency is how long a review usually takes at worst (about the
	// 90th percentile from push to review); zero when not known.
	Latency() time.Duration
}

// profiles are the known reviewers, tried in order; anyone else is
// generic.
var profiles = []func() Profile{
	func() Profile { return CodeRabbit{} },
	func() Profile { return Copilot{} },
	func() Profile { return Gemini{} },
}

// For is the profile of the reviewer a work order names: a known bot by
// any of its names (with or without "[bot]"), else a generic reviewer.
func For(name string) Profile {
	for _, mk := range profiles {
		p := mk()
		if p.Is(name) || p.Is(name+"[bot]") {
			return p
		}
	}
	return Generic{login: name}
}

// Known reports whether login, exactly as GitHub reports an author (a
// bot's with its "[bot]"), is a review bot wo has a profile for. A user
// holding a bot's bare name is not.
func Known(login string) bool {
	for _, mk := range profiles {
		if mk().Is(login) {
			return true
		}
	}
	return false
}

// DefaultWait is the wait for a reviewer with no profile of its own.
const DefaultWait = 10 * time.Minute

// sameAny reports whether login is one of names, as GitHub compares
// logins (in any case).
func sameAny(login string, names ...string) bool {
	return slices.ContainsFunc(names, func(n string) bool { return github.SameLogin(login, n) })
}

// LatestReview is p's latest review of head (of any commit when head is
// empty).
func LatestReview(p Profile, reviews []github.Review, head string) *github.Review {
	var latest *github.Review
	for i, r := range reviews {
		if p.Is(r.Author) && (head == "" || r.CommitID == head) && r.State != "PENDING" {
			latest = &reviews[i]
		}
	}
	return latest
}

func reviewOf(p Profile, s Signals) *github.Review { return LatestReview(p, s.Reviews, s.Head) }

// reviewedBefore reports whether p reviewed another commit than the head:
// a bot that reviews only when asked has seen the pull request.
func reviewedBefore(p Profile, s Signals) bool {
	for _, r := range s.Reviews {
		if p.Is(r.Author) && r.CommitID != s.Head {
			return true
		}
	}
	return false
}

// firstLineIs reports whether text's first non-empty line, without markup
// and in any case, starts with one of prefixes: a notice is its opening
// words, not words anywhere in a summary of the change.
func firstLineIs(text string, prefixes ...string) bool {
	line := strings.ToLower(strings.TrimLeft(firstLine(text), "#>*_ \t"))
	for _, p := range prefixes {
		if strings.HasPrefix(line, strings.ToLower(p)) {
			return true
		}
	}
	return false
}

// firstLine is the first non-empty line of text, cut short, for messages.
func firstLine(text string) string {
	for _, l := range strings.Split(text, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return termtext.Clip(l, 160)
		}
	}
	return ""
}

// IsCommand reports whether a conversation comment is a command to a review
// bot ("@coderabbitai review", "/gemini review"): talk with the bot, not a
// finding to fix, whoever wrote it.
func IsCommand(body string) bool {
	first := strings.TrimSpace(body)
	if i := strings.IndexAny(first, " \t\r\n"); i >= 0 {
		first = first[:i]
	}
	if strings.HasPrefix(first, geminiCommand) {
		return true
	}
	name, ok := strings.CutPrefix(first, "@")
	return ok && (Known(name+"[bot]") || Known(name))
}
