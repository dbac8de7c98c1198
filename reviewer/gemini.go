package reviewer

import (
	"time"

	"github.com/wo-runner/wo/github"
)

// Gemini is Gemini Code Assist: a summary comment, then a COMMENTED
// review; asked again with "/gemini review". Its consumer edition was
// withdrawn and now only posts a notice that its review activity has
// ceased: that reviewer is unavailable, never clean.
type Gemini struct{}

func (Gemini) Name() string  { return "gemini" }
func (Gemini) Login() string { return "gemini-code-assist[bot]" }
func (Gemini) Is(login string) bool {
	return sameAny(login, "gemini-code-assist[bot]")
}
func (Gemini) Wait() time.Duration              { return 15 * time.Minute }
func (Gemini) Latency() time.Duration           { return 0 }
func (Gemini) Signal(github.Comment) bool       { return true }
func (Gemini) Findings(github.Review) []Finding { return nil }

// Ask: Gemini reviews a pull request when it opens; a later head waits
// for "/gemini review".
func (Gemini) Ask(k Kind) []Ask {
	if k == Skipped {
		return []Ask{{Comment: geminiCommand + " review"}}
	}
	return nil
}

// Read: a review of the head is the answer; a head after one it reviewed
// is skipped until asked; its notice that review activity ceased (its
// opening words, not words in a summary of the change) is unavailable.
func (p Gemini) Read(s Signals) Reading {
	for _, c := range s.Comments {
		if p.Is(c.Author) && firstLineIs(c.Body, "Gemini Code Assist's review activity has ceased", "Gemini Code Assist has ceased", "Gemini Code Assist is no longer available") {
			return Reading{Kind: Unavailable, Said: firstLine(c.Body), At: c.UpdatedAt}
		}
	}
	if rv := reviewOf(p, s); rv != nil {
		return Reading{Kind: Reviewed, Said: firstLine(rv.Body), At: rv.SubmittedAt, Review: rv}
	}
	if reviewedBefore(p, s) {
		return Reading{Kind: Skipped, Said: "reviews a new head only when asked"}
	}
	return Reading{Kind: Waiting}
}

// geminiCommand starts the commands Gemini takes in a conversation
// comment.
const geminiCommand = "/gemini"
