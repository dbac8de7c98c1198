package undo

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/wo-runner/wo/github"
	"github.com/wo-runner/wo/procedure/action"
	"github.com/wo-runner/wo/workorder"
)

// undoComments deletes, when asked (--comments), the comments wo posted
// on its pull request for this task (an agent step's deliveries) and wo's
// "Addressed in <sha>" replies in its review threads; a person's stay,
// and a merged pull request is not touched.
func undoComments(ctx context.Context, u *undo) (*workorder.UndoStep, error) {
	if !u.opts.Comments {
		return nil, nil
	}
	pr, err := u.pullRequest(ctx)
	if err != nil || pr == nil {
		return nil, err
	}
	out := &workorder.UndoStep{Step: "comments", Target: fmt.Sprintf("wo's comments on pull request #%d", pr.Number)}
	if pr.Merged {
		out.Outcome, out.Reason = Left, fmt.Sprintf("pull request #%d was merged: wo does not touch a merged pull request", pr.Number)
		return out, nil
	}
	if foreign, err := u.foreignPR(ctx); err != nil || foreign != "" {
		out.Outcome, out.Reason = Left, foreign
		return out, err
	}
	client, _ := u.sc.GitHub()
	me, err := client.Login(ctx)
	if err != nil {
		return nil, err
	}
	ours, replies, err := wosComments(ctx, client, pr.Number, me, u.sc.Key())
	if err != nil {
		return nil, err
	}
	what := fmt.Sprintf("%d comment(s) and %d review-thread reply(ies) that wo posted as %s", len(ours), len(replies), me)
	switch {
	case len(ours) == 0 && len(replies) == 0:
		out.Outcome, out.Reason = Gone, "no comment of wo's delivered for this task, and no reply of wo's in a review thread, is there"
	case u.dry:
		out.Outcome, out.Reason = Would, "delete "+what
	default:
		if err := u.deleteComments(ctx, client, ours, replies); err != nil {
			return nil, err
		}
		out.Outcome, out.Reason = Done, "deleted "+what
	}
	return out, nil
}

// wosComments are the comments on the pull request that wo (login me)
// delivered for the task, and wo's replies in its review threads.
func wosComments(ctx context.Context, client *github.Client, number int, me, key string) (ours []int64, replies []string, err error) {
	comments, err := client.IssueComments(ctx, number)
	if err != nil {
		return nil, nil, err
	}
	for _, c := range comments {
		// Only wo's own comments with this task's delivery marker: a person
		// quoting the marker keeps their comment.
		if c.Author == me && strings.Contains(c.Body, action.DeliveryMarker(key)) {
			ours = append(ours, c.ID)
		}
	}
	// wo's "Addressed in <sha>" replies in review threads: on wo's pull
	// request, by wo's login, with the marker answerThreads puts in them.
	threads, err := client.ReviewThreads(ctx, number)
	if err != nil {
		return nil, nil, err
	}
	for _, th := range threads.Threads {
		for _, c := range th.Comments {
			if c.Author == me && addressedReply.MatchString(c.Body) {
				replies = append(replies, c.ID)
			}
		}
	}
	return ours, replies, nil
}

// deleteComments deletes the comments, then the replies.
func (u *undo) deleteComments(ctx context.Context, client *github.Client, ours []int64, replies []string) error {
	for i, id := range ours {
		if err := client.DeleteIssueComment(ctx, id); err != nil {
			return err
		}
		if i == 0 {
			u.ed.Fault("undo:comments:after_first_delete")
		}
	}
	for i, id := range replies {
		if err := client.DeleteReviewComment(ctx, id); err != nil {
			return err
		}
		if i == 0 {
			u.ed.Fault("undo:comments:after_first_reply_delete")
		}
	}
	return nil
}

// addressedReply finds the marker of wo's reply in a review thread (see
// action.AddressedMarker).
var addressedReply = regexp.MustCompile(strings.Replace(regexp.QuoteMeta(action.AddressedMarker("SHA")), "SHA", "[0-9a-f]{40}", 1))
