package reviewer

import (
	"time"

	"github.com/wo-runner/wo/github"
)

// Copilot is GitHub Copilot's code review. It only ever leaves COMMENTED
// reviews (never an approval or a request for changes), posts its review
// as copilot-pull-request-reviewer[bot] and its inline comments as
// "Copilot", and reviews a new push only when it is asked again as a
// reviewer. When it cannot review (the requester's quota is used up, no
// file it can read) it says so in a COMMENTED review with no comments,
// which is not a clean review.
type Copilot struct{}

func (Copilot) Name() string  { return "copilot" }
func (Copilot) Login() string { return "copilot-pull-request-reviewer[bot]" }
func (Copilot) Is(login string) bool {
	// GraphQL names the author of its inline comments the Bot "Copilot",
	// which wo writes as REST would: Copilot[bot].
	return sameAny(login, "copilot-pull-request-reviewer[bot]", "Copilot", "Copilot[bot]")
}
func (Copilot) Wait() time.Duration              { return 15 * time.Minute }
func (Copilot) Latency() time.Duration           { return 0 }
func (Copilot) Signal(github.Comment) bool       { return false }
func (Copilot) Findings(github.Review) []Finding { return nil }

// Ask: a new head waits for a request for review; GitHub takes the bot's
// login with its "[bot]" (without it the request is refused, or accepted
// and dropped).
func (Copilot) Ask(k Kind) []Ask {
	if k == Waiting {
		return []Ask{{Reviewers: []string{"copilot-pull-request-reviewer[bot]"}}}
	}
	return nil
}

// Read: a review of the head is the answer, unless it says it could not
// review.
func (p Copilot) Read(s Signals) Reading {
	rv := reviewOf(p, s)
	if rv == nil {
		return Reading{Kind: Waiting}
	}
	if firstLineIs(rv.Body, "Copilot wasn't able to review", "Copilot was unable to review", "Copilot was not able to review") {
		return Reading{Kind: Unavailable, Said: firstLine(rv.Body), At: rv.SubmittedAt}
	}
	return Reading{Kind: Reviewed, Said: firstLine(rv.Body), At: rv.SubmittedAt, Review: rv}
}
