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

func (Gemini) Ask(k Kind) []Ask {
	if k == Aborted {
		return []Ask{{Comment: "/gemini review"}}
	}
	return nil
}

func (p Gemini) Read(s Signals) Reading {
	for _, c := range s.Comments {
		if p.Is(c.Author) && containsAny(c.Body, "has ceased", "no longer available", "been discontinued") {
			return Reading{Kind: Unavailable, Said: firstLine(c.Body), At: c.UpdatedAt}
		}
	}
	if rv := reviewOf(p, s); rv != nil {
		return Reading{Kind: Reviewed, Said: firstLine(rv.Body), At: rv.SubmittedAt, Review: rv}
	}
	return Reading{Kind: Waiting}
}
