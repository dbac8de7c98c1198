package action

import (
	"context"
	"fmt"

	"github.com/wo-runner/wo/github"
	"github.com/wo-runner/wo/internal/gitname"
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
			head, base, gitname.Short(st.BaseSHA))
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
