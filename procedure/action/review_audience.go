package action

import "github.com/wo-runner/wo/reviewer"

// awaitedReviewers are the logins named by --reviewer, else by
// context.reviewers; none means the review bots that show up.
func awaitedReviewers(sc *StepContext) []string {
	if len(sc.Settings().Reviewers) > 0 {
		return sc.Settings().Reviewers
	}
	return stringOrList(sc.Task().WorkOrder.Context["reviewers"])
}

// audienceOf is who the review loop listens to for what GitHub shows now
// (reviewer.Audience): the reviewers the work order names, or the known
// review bots that showed up.
func audienceOf(sc *StepContext, me string, s reviewer.Signals) reviewer.Audience {
	return reviewer.AudienceOf(me, awaitedReviewers(sc), s)
}
