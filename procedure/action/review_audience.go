package action

import (
	"slices"

	"github.com/wo-runner/wo/github"
	"github.com/wo-runner/wo/reviewer"
)

// audience is who the review loop listens to. On a public repository
// anyone can comment on a pull request, and what the loop counts becomes
// an agent's prompt and keeps the loop going: a comment counts only when
// an awaited reviewer or a repository writer (owner, member, collaborator)
// wrote it, judged comment by comment, and never when wo did.
type audience struct {
	me string
	// awaited are the reviewers the loop waits for: the ones the work
	// order or --reviewer names, or, when none is named, the review bots
	// wo knows that showed up on the pull request.
	awaited []reviewer.Profile
	named   bool
}

// awaitedReviewers are the logins named by --reviewer, else by
// context.reviewers; none means the review bots that show up.
func awaitedReviewers(sc *StepContext) []string {
	if len(sc.Settings().Reviewers) > 0 {
		return sc.Settings().Reviewers
	}
	return stringOrList(sc.Task().WorkOrder.Context["reviewers"])
}

// audienceOf is the audience for what GitHub shows now: the named
// reviewers, or the known review bots among the authors of reviews,
// comments and statuses.
func audienceOf(sc *StepContext, me string, s reviewer.Signals) audience {
	a := audience{me: me}
	for _, name := range awaitedReviewers(sc) {
		a.awaited = append(a.awaited, reviewer.For(name))
		a.named = true
	}
	if a.named {
		return a
	}
	var seen []string
	note := func(login string) {
		if reviewer.Known(login) && !slices.ContainsFunc(seen, func(x string) bool { return reviewer.For(x).Name() == reviewer.For(login).Name() }) {
			seen = append(seen, login)
		}
	}
	for _, r := range s.Reviews {
		note(r.Author)
	}
	for _, c := range s.Comments {
		note(c.Author)
	}
	for _, st := range s.Statuses {
		note(st.Creator)
	}
	for _, login := range seen {
		a.awaited = append(a.awaited, reviewer.For(login))
	}
	return a
}

// profile is the awaited reviewer login is, if any.
func (a audience) profile(login string) (reviewer.Profile, bool) {
	for _, p := range a.awaited {
		if p.Is(login) {
			return p, true
		}
	}
	return nil, false
}

// counts reports whether a comment or review by login, whose
// author_association is association, counts: an awaited reviewer's, or a
// writer's; with no reviewer named, a known review bot's too (an app the
// repository's owners installed, whose login no outsider can take).
func (a audience) counts(login, association string) bool {
	if login == "" || github.SameLogin(login, a.me) {
		return false
	}
	if _, ok := a.profile(login); ok {
		return true
	}
	if !a.named && reviewer.Known(login) {
		return true
	}
	return github.Writer(association)
}

// why says why a comment by login does not count.
func (a audience) why(login string) string {
	if github.SameLogin(login, a.me) {
		return "wo's own"
	}
	return "not an awaited reviewer nor a repository writer"
}
