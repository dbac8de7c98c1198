package action

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/wo-runner/wo/github"
	"github.com/wo-runner/wo/gitops"
	"github.com/wo-runner/wo/workorder"
)

// CreatePR opens the work order's pull request, or finds it: an
// open PR from the branch into the base is always looked for first, so a
// crash between GitHub creating the PR and wo recording it still ends with
// one PR. A child of an epic opens its PR with the stack section in the
// description, and then brings the stack sections of its open siblings up
// to date with its number.
type CreatePR struct{}

func newCreatePR() Action { return CreatePR{} }

// Run finds or creates the PR and records its number and URL.
func (CreatePR) Run(ctx context.Context, sc *StepContext) (Outcome, error) {
	head, err := sc.Branch()
	if err != nil {
		return Outcome{}, err
	}
	base := sc.BaseBranch()
	client, err := sc.GitHub()
	if err != nil {
		return Outcome{}, err
	}
	if n := sc.PRNumber(); n > 0 {
		pr, err := client.GetPR(ctx, n)
		if err != nil {
			return Outcome{}, err
		}
		if pr.State != github.PROpen {
			return Outcome{}, fmt.Errorf("pull request #%d (%s) is %s: reopen it on GitHub, or wo reset %s to start over", n, pr.URL, pr.Lifecycle(), sc.Key())
		}
		return sc.withStack(ctx, prOutcome(sc, "pull request #%d is open: %s", pr.Number, pr.URL), pr), nil
	}
	pr, err := client.FindOpenPR(ctx, head, base)
	if err != nil {
		return Outcome{}, err
	}
	if pr != nil {
		return sc.withStack(ctx, prOutcome(sc, "found the open pull request #%d: %s", pr.Number, pr.URL), pr), nil
	}
	// A branch with nothing on top of its base has nothing to review
	// (GitHub refuses such a PR too): say so instead of opening one.
	if st := sc.State(); st.PushedSHA != "" && st.PushedSHA == st.BaseSHA {
		return Outcome{}, fmt.Errorf("branch %s has no commits on top of %s (%s): nothing to review; the files may be on the base already, check inputs.file_manifest",
			head, base, gitops.Short(st.BaseSHA))
	}
	title, body, err := prText(sc)
	if err != nil {
		return Outcome{}, err
	}
	if body, err = sc.stackBody(ctx, body); err != nil {
		return Outcome{}, err
	}
	pr, err = client.CreatePR(ctx, head, base, title, body)
	if err != nil {
		return Outcome{}, err
	}
	sc.Fault("after_create")
	return sc.withStack(ctx, prOutcome(sc, "opened pull request #%d: %s", pr.Number, pr.URL), pr), nil
}

func prOutcome(sc *StepContext, format string, number int, url string) Outcome {
	st := sc.State()
	st.PRNumber, st.PRURL = number, &url
	return Outcome{Note: fmt.Sprintf(format, number, url), Facts: []Fact{{Kind: FactPullRequest, Number: number}}, State: &st}
}

// Plan names head, base and title.
func (CreatePR) Plan(sc *StepContext) string {
	title, _, err := prText(sc)
	if err != nil {
		return "cannot plan: " + err.Error()
	}
	return fmt.Sprintf("find an open pull request %s → %s in %s, else open one titled %q", sc.BranchName(), sc.BaseBranch(), sc.Context("repo"), title)
}

// Check needs a repository name and a token before anything changes.
func (CreatePR) Check(ctx context.Context, sc *StepContext) error {
	_, err := sc.GitHub()
	return err
}

// Advise warns when the title would silently come from elsewhere because
// the command that seems to give it cannot be read.
func (CreatePR) Advise(_ workorder.Document, path string, s workorder.Step) []workorder.Problem {
	return unreadable(path, s, paramsOf[createPRParams](s).Title, commandTitle,
		"no --title '…' could be read from the command, so the pull request title will be inputs.pr_title or the task title; set the step's \"title\" to choose it")
}

// createPRParams are a create_pr step's own fields: the templates of the
// pull request's title and body; else the --title '…' and --body '…' of
// the step's command.
type createPRParams struct {
	Title string `json:"title"`
	Body  string `json:"body"`
}

// prText renders the title and body: the step's title and body (or the
// --title/--body of its command), else inputs.pr_title (or the task title)
// and the derived body.
func prText(sc *StepContext) (string, string, error) {
	p := paramsOf[createPRParams](sc.Step)
	title, body := typedOrCommand(p.Title, commandTitle, sc.Step.Command), typedOrCommand(p.Body, commandBody, sc.Step.Command)
	if title == "" {
		title = sc.Input("pr_title")
	}
	if title == "" {
		title = sc.Task().Title
	}
	if body == "" {
		body = "<body>"
	}
	t, err := sc.Render(title)
	if err != nil {
		return "", "", err
	}
	b, err := sc.Render(body)
	if err != nil {
		return "", "", err
	}
	if t == "" {
		return "", "", fmt.Errorf("task %s: no pull request title: set inputs.pr_title", sc.Key())
	}
	return t, b, nil
}

// stackBody is the description to open the PR with: body with the
// epic's stack section, when the task is part of a stack.
func (sc *StepContext) stackBody(ctx context.Context, body string) (string, error) {
	epic := sc.Task().ParentKey
	if epic == "" {
		return body, nil
	}
	stack, err := sc.LoadStack(ctx, epic)
	if err != nil {
		return "", fmt.Errorf("reading the stack of epic %s: %w", epic, err)
	}
	out, _, err := SpliceStack(body, stack.Section(sc.Key()))
	if err != nil {
		return "", fmt.Errorf("task %s: the pull request body: %w", sc.Key(), err)
	}
	return out, nil
}

// withStack records the PR at once (so that the stack read next names
// it) and refreshes the stack sections of the epic's open PRs, or leaves
// that to the epic run that runs it (see deferStack). A refresh
// that fails does not fail the step, which has done its job: it is a
// warning, and wo sync refreshes again.
func (sc *StepContext) withStack(ctx context.Context, o Outcome, pr *github.PR) Outcome {
	epic := sc.Task().ParentKey
	if epic == "" {
		return o
	}
	if st := sc.State(); st.PRNumber != pr.Number || st.PRURL == nil || *st.PRURL != pr.URL {
		if err := sc.Checkpoint(ctx, *o.State); err != nil {
			sc.Warn("%s: the stack tables were not updated (recording #%d: %v); run wo sync %s", sc.Key(), pr.Number, err, epic)
			return o
		}
		// The state the step leaves is the one the checkpoint wrote,
		// with what another writer changed meanwhile (its write rebased
		// onto theirs): the copy taken before it would undo that.
		after := sc.State()
		o.State = &after
	}
	if sc.StackDeferred(epic) {
		o.Note += "; stack tables: updated by the epic run"
		return o
	}
	ups, coalesced, err := sc.RefreshStack(ctx, epic)
	switch {
	case coalesced:
		o.Note += "; stack tables: updated with another pull request's"
	case len(ups) > 0:
		o.Note += "; " + StackSummary(ups)
	}
	for _, u := range ups {
		if u.Result == StackSkipped {
			sc.Warn("the stack table of %s was not updated: %s", u.Key, u.Reason)
		}
	}
	if err != nil {
		sc.Warn("%s: %v; run wo sync %s to try again", sc.Key(), err, epic)
	}
	return o
}

// deliveryMarker starts the marker of every comment an agent step of this
// task delivered.
func deliveryMarker(key string) string { return "<!-- wo:" + key + ":step:" }

// undoMarker marks the comment that closes a pull request, so a rerun
// never posts it twice.
func undoMarker(key string) string { return "<!-- wo:" + key + ":undo -->" }

func undoComments(ctx context.Context, u Undo, dry bool) (*workorder.UndoStep, error) {
	if !u.Comments() {
		return nil, nil
	}
	pr, err := u.PullRequest(ctx)
	if err != nil || pr == nil {
		return nil, err
	}
	out := &workorder.UndoStep{Step: "comments", Target: fmt.Sprintf("wo's comments on pull request #%d", pr.Number)}
	if pr.Merged {
		out.Outcome, out.Reason = UndoLeft, fmt.Sprintf("pull request #%d was merged: wo does not touch a merged pull request", pr.Number)
		return out, nil
	}
	if foreign, err := u.ForeignPR(ctx); err != nil || foreign != "" {
		out.Outcome, out.Reason = UndoLeft, foreign
		return out, err
	}
	client, _ := u.StepContext().GitHub()
	me, err := client.Login(ctx)
	if err != nil {
		return nil, err
	}
	comments, err := client.IssueComments(ctx, pr.Number)
	if err != nil {
		return nil, err
	}
	var ours []int64
	for _, c := range comments {
		// Only wo's own comments with this task's delivery marker: a person
		// quoting the marker keeps their comment.
		if c.Author == me && strings.Contains(c.Body, deliveryMarker(u.StepContext().Key())) {
			ours = append(ours, c.ID)
		}
	}
	// wo's "Addressed in <sha>" replies in review threads: on wo's pull
	// request, by wo's login, with the marker answerThreads puts in them.
	threads, err := client.ReviewThreads(ctx, pr.Number)
	if err != nil {
		return nil, err
	}
	var replies []string
	for _, th := range threads.Threads {
		for _, c := range th.Comments {
			if c.Author == me && addressedReply.MatchString(c.Body) {
				replies = append(replies, c.ID)
			}
		}
	}
	what := fmt.Sprintf("%d comment(s) and %d review-thread reply(ies) that wo posted as %s", len(ours), len(replies), me)
	switch {
	case len(ours) == 0 && len(replies) == 0:
		out.Outcome, out.Reason = UndoGone, "no comment of wo's delivered for this task, and no reply of wo's in a review thread, is there"
	case dry:
		out.Outcome, out.Reason = UndoWould, "delete "+what
	default:
		for i, id := range ours {
			if err := client.DeleteIssueComment(ctx, id); err != nil {
				return nil, err
			}
			if i == 0 {
				u.Fault("undo:comments:after_first_delete")
			}
		}
		for i, id := range replies {
			if err := client.DeleteReviewComment(ctx, id); err != nil {
				return nil, err
			}
			if i == 0 {
				u.Fault("undo:comments:after_first_reply_delete")
			}
		}
		out.Outcome, out.Reason = UndoDone, "deleted "+what
	}
	return out, nil
}

// addressedReply finds the marker of wo's reply in a review thread (see
// AddressedMarker).
var addressedReply = regexp.MustCompile(strings.Replace(regexp.QuoteMeta(AddressedMarker("SHA")), "SHA", "[0-9a-f]{40}", 1))

func undoPullRequest(ctx context.Context, u Undo, dry bool) (*workorder.UndoStep, error) {
	pr, err := u.PullRequest(ctx)
	if err != nil {
		return nil, err
	}
	if pr == nil {
		if o, why := u.NotOurs(); o != nil {
			return &workorder.UndoStep{Step: "pull_request", Target: fmt.Sprintf("pull request #%d %s", o.Number, o.URL), Outcome: UndoLeft,
				Reason: why}, nil
		}
		return nil, nil
	}
	out := &workorder.UndoStep{Step: "pull_request", Target: fmt.Sprintf("pull request #%d %s", pr.Number, pr.URL)}
	foreign, err := u.ForeignPR(ctx)
	if err != nil {
		return nil, err
	}
	switch {
	case pr.Merged:
		out.Outcome, out.Reason = UndoLeft, fmt.Sprintf("it was merged into %s: wo cannot take a merge back; revert the change with a new pull request (git revert)", pr.Base)
	case foreign != "":
		out.Outcome, out.Reason = UndoLeft, foreign
	case pr.State != github.PROpen:
		if err := u.ConfirmClosed(ctx, pr); err != nil {
			return nil, err
		}
		out.Outcome, out.Reason = UndoGone, "it is closed already"
	case dry:
		out.Outcome, out.Reason = UndoWould, "close it, with a comment saying why"
	default:
		client, _ := u.StepContext().GitHub()
		why := u.Reason()
		if why == "" {
			why = "the work order was undone"
		}
		body := fmt.Sprintf("wo undo: closing this pull request, which wo opened for task %s. Reason: %s\n\n%s", u.StepContext().Key(), why, undoMarker(u.StepContext().Key()))
		if err := client.CommentOnce(ctx, pr.Number, body, undoMarker(u.StepContext().Key())); err != nil {
			return nil, err
		}
		u.Fault("undo:pull_request:after_comment")
		closed, err := client.ClosePR(ctx, pr.Number)
		if err != nil {
			return nil, err
		}
		// A server may answer a close without closing (or a proxy may
		// lie): read the pull request again and believe that.
		if closed.State == github.PRClosed {
			closed, err = client.GetPR(ctx, pr.Number)
			if err != nil {
				return nil, err
			}
		}
		if closed.State != github.PRClosed {
			return nil, Transient(fmt.Errorf("wo closed pull request #%d, but GitHub still shows it %s: close it on GitHub, or run wo undo %s again", pr.Number, closed.State, u.StepContext().Key()))
		}
		pr.State = github.PRClosed // wo's pull request, as the undo's later parts read it
		out.Outcome, out.Reason = UndoDone, "closed, with a comment saying why"
	}
	if u.FoundUnrecorded() != "" && out.Outcome != UndoLeft {
		out.Reason += "; " + u.FoundUnrecorded()
	}
	return out, nil
}

// Undoes: wo's comments on the pull request (when asked), then the pull
// request, closed with a comment saying why (never a merged one), before
// the branch it is from: deleting that first would close it without a
// word.
func (CreatePR) Undoes() []UndoPart {
	return []UndoPart{{Name: "comments", Before: []string{"pull_request"}, Do: undoComments},
		{Name: "pull_request", Before: []string{"remote_branch"}, Do: undoPullRequest}}
}
