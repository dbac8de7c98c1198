package reviewer

import (
	"slices"

	"github.com/wo-runner/wo/github"
)

// Audience is who the review loop listens to. On a public repository
// anyone can comment on a pull request, and what the loop counts becomes
// an agent's prompt and keeps the loop going: a comment counts only when
// an awaited reviewer or a repository writer (owner, member, collaborator)
// wrote it, judged comment by comment, and never when wo did.
type Audience struct {
	Me string // wo's own login
	// Awaited are the reviewers the loop waits for: the ones the work
	// order or --reviewer names, or, when none is named, the review bots
	// wo knows that showed up on the pull request.
	Awaited []Profile
	Named   bool
}

// AudienceOf is the audience for what GitHub shows now: the reviewers
// named, or, when none is, the known review bots among the authors of
// reviews, comments and statuses.
func AudienceOf(me string, named []string, s Signals) Audience {
	a := Audience{Me: me}
	for _, name := range named {
		a.Awaited = append(a.Awaited, For(name))
		a.Named = true
	}
	if a.Named {
		return a
	}
	var seen []string
	note := func(login string) {
		if Known(login) && !slices.ContainsFunc(seen, func(x string) bool { return For(x).Name() == For(login).Name() }) {
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
		a.Awaited = append(a.Awaited, For(login))
	}
	return a
}

// Profile is the awaited reviewer login is, if any.
func (a Audience) Profile(login string) (Profile, bool) {
	for _, p := range a.Awaited {
		if p.Is(login) {
			return p, true
		}
	}
	return nil, false
}

// Counts reports whether a comment or review by login, whose
// author_association is association, counts: an awaited reviewer's, or a
// writer's; with no reviewer named, a known review bot's too (an app the
// repository's owners installed, whose login no outsider can take).
func (a Audience) Counts(login, association string) bool {
	if login == "" || github.SameLogin(login, a.Me) {
		return false
	}
	if _, ok := a.Profile(login); ok {
		return true
	}
	if !a.Named && Known(login) {
		return true
	}
	return github.Writer(association)
}

// Why says why a comment by login does not count.
func (a Audience) Why(login string) string {
	if github.SameLogin(login, a.Me) {
		return "wo's own"
	}
	return "not an awaited reviewer nor a repository writer"
}
