package reviewer

import (
	"time"

	"github.com/wo-runner/wo/github"
)

// Generic is a reviewer with no profile of its own, a person or a bot that
// behaves like one: a review of the head is the answer, its verdict is
// its state, and its conversation comments are what it asks for. There is
// nothing to ask: wo waits.
type Generic struct{ login string }

func (g Generic) Name() string                   { return g.login }
func (g Generic) Login() string                  { return g.login }
func (g Generic) Is(login string) bool           { return github.IsReviewer(login, g.login) }
func (Generic) Wait() time.Duration              { return DefaultWait }
func (Generic) Latency() time.Duration           { return 0 }
func (Generic) Signal(github.Comment) bool       { return false }
func (Generic) Findings(github.Review) []Finding { return nil }
func (Generic) Ask(Kind) []Ask                   { return nil }

func (g Generic) Read(s Signals) Reading {
	if rv := reviewOf(g, s); rv != nil {
		return Reading{Kind: Reviewed, Said: rv.State, At: rv.SubmittedAt, Review: rv}
	}
	return Reading{Kind: Waiting}
}
