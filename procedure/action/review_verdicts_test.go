package action

import (
	"fmt"
	"testing"

	"github.com/wo-runner/wo/github"
	"github.com/wo-runner/wo/reviewer"
)

// A reviewer's verdict on the head is their latest review of it that
// counts: a COMMENTED review after an approval or a request for changes
// does not undo it (as on GitHub), a review of another commit, a pending
// one and one by someone who does not count say nothing.
func TestTheVerdictOnTheHeadIsTheLatestReviewThatCounts(t *testing.T) {
	t.Parallel()
	const bot, head = "coderabbitai[bot]", "c0ffee"
	aud := audience{me: "wo-bot", awaited: []reviewer.Profile{reviewer.For(bot)}, named: true}
	reviews := []github.ThreadReview{
		{Author: bot, State: "CHANGES_REQUESTED", Commit: "old"},
		{Author: bot, State: "APPROVED", Commit: head},
		{Author: bot, State: "COMMENTED", Commit: head},
		{Author: "alice", Association: "MEMBER", State: "COMMENTED", Commit: head},
		{Author: "alice", Association: "MEMBER", State: "PENDING", Commit: head},
		{Author: "mallory", Association: "NONE", State: "CHANGES_REQUESTED", Commit: head},
		{Author: "wo-bot", Association: "OWNER", State: "APPROVED", Commit: head},
		{Author: "bob", Association: "COLLABORATOR", State: "APPROVED", Commit: "old"},
	}
	got := headVerdicts(reviews, head, aud)
	if fmt.Sprint(got) != "map[alice:COMMENTED coderabbitai[bot]:APPROVED]" {
		t.Errorf("verdicts on the head %v", got)
	}
	// With no head to judge, every commit's reviews count, the latest last.
	if got := headVerdicts(reviews, "", aud); fmt.Sprint(got) != "map[alice:COMMENTED bob:APPROVED coderabbitai[bot]:APPROVED]" {
		t.Errorf("verdicts on any commit %v", got)
	}
	if got := changesRequested(map[string]string{bot: "CHANGES_REQUESTED", "alice": "CHANGES_REQUESTED", "bob": "APPROVED"}, aud); fmt.Sprint(got) != "[coderabbitai[bot]]" {
		t.Errorf("changes requested by the awaited reviewer: %v", got)
	}
	if got := changesRequested(map[string]string{"carol": "CHANGES_REQUESTED", "alice": "CHANGES_REQUESTED", "bob": "APPROVED"}, audience{me: "wo-bot"}); fmt.Sprint(got) != "[alice carol]" {
		t.Errorf("changes requested, no reviewer named: %v", got)
	}
}

// The summary of a request for changes is the reviewer's latest on the
// head, with its body when it has one.
func TestAChangesSummaryIsTheLatestRequestOnTheHead(t *testing.T) {
	t.Parallel()
	reviews := []github.Review{
		{ID: 1, Author: "alice", State: "CHANGES_REQUESTED", CommitID: "c0ffee", Body: "first", URL: "u1"},
		{ID: 2, Author: "alice", State: "CHANGES_REQUESTED", CommitID: "c0ffee", Body: "", URL: "u2"},
		{ID: 3, Author: "alice", State: "CHANGES_REQUESTED", CommitID: "other", Body: "of another commit", URL: "u3"},
		{ID: 4, Author: "bob", State: "CHANGES_REQUESTED", CommitID: "c0ffee", Body: "bob's", URL: "u4"},
		{ID: 5, Author: "alice", State: "APPROVED", CommitID: "c0ffee", Body: "fine", URL: "u5"},
	}
	c := changesSummary(reviews, "alice", "c0ffee")
	if c.ID != 2 || c.URL != "u2" || c.Body != "first" {
		t.Errorf("summary %+v, want review 2 with the body of the last one that had one", c)
	}
	if c := changesSummary(reviews, "alice", ""); c.ID != 3 || c.Body != "of another commit" {
		t.Errorf("summary on any commit %+v", c)
	}
	if c := changesSummary(reviews, "carol", "c0ffee"); c.ID != 0 || c.Body != "carol requested changes on c0ffee" {
		t.Errorf("summary without a review %+v", c)
	}
}
