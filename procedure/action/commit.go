package action

import (
	"context"
	"fmt"
	"strings"

	"github.com/wo-runner/wo/workorder"
)

// Commit commits what is staged in the worktree.
type Commit struct{}

func newCommit() Action { return Commit{} }

// Run commits; an index equal to HEAD is "nothing to commit", which is
// success (after a crash the commit is already there).
func (Commit) Run(ctx context.Context, sc *StepContext) (Outcome, error) {
	w, err := sc.Worktree()
	if err != nil {
		return Outcome{}, err
	}
	if _, err := ensureWorktree(ctx, sc, w); err != nil {
		return Outcome{}, err
	}
	msg, err := commitMessage(sc)
	if err != nil {
		return Outcome{}, err
	}
	repo, err := sc.Repo()
	if err != nil {
		return Outcome{}, err
	}
	author, err := repo.Identity(sc.Getenv)
	if err != nil {
		return Outcome{}, err
	}
	res, err := w.Commit(msg, author, sc.Now())
	if err != nil {
		return Outcome{}, err
	}
	sc.Fault("after_commit")
	note, facts := fmt.Sprintf("committed %s: %s", res.Hash.String()[:12], firstLine(msg)), []Fact{{Kind: FactCommit, SHA: res.Hash.String()}}
	if !res.Created {
		note, facts = fmt.Sprintf("nothing to commit: the branch is at %s", res.Hash.String()[:12]), nil
	}
	st := sc.State()
	st.CommitSHA = res.Hash.String()
	return Outcome{Note: note, Facts: facts, State: &st}, nil
}

// Check makes sure there is a message and an author to commit with.
func (Commit) Check(ctx context.Context, sc *StepContext) error {
	if _, err := commitMessage(sc); err != nil {
		return inDocument(err)
	}
	repo, err := sc.Repo()
	if err != nil {
		return err
	}
	_, err = repo.Identity(sc.Getenv)
	return err
}

// Plan shows the message.
func (Commit) Plan(sc *StepContext) string {
	msg, err := commitMessage(sc)
	if err != nil {
		return "cannot plan: " + err.Error()
	}
	return fmt.Sprintf("commit the staged files as %q", firstLine(msg))
}

// Advise warns when the commit message would silently come from elsewhere
// because the command that seems to give it cannot be read.
func (Commit) Advise(_ workorder.Document, path string, s workorder.Step) []workorder.Problem {
	return unreadable(path, s, paramsOf[commitParams](s).Message, commandMessage,
		"no -m '…' could be read from the command, so the commit message will be inputs.pr_title or the task title; set the step's \"message\" to choose it")
}

// commitParams are a commit step's own fields.
type commitParams struct {
	// Message is the template of the commit message; else the -m '…' of
	// the step's command.
	Message string `json:"message"`
}

// commitMessage is the step's message (or the -m of its command), else
// inputs.pr_title, else the task title; rendered.
func commitMessage(sc *StepContext) (string, error) {
	tmpl := typedOrCommand(paramsOf[commitParams](sc.Step).Message, commandMessage, sc.Step.Command)
	if tmpl == "" {
		tmpl = sc.Input("pr_title")
	}
	if tmpl == "" {
		tmpl = sc.Task().Title
	}
	if strings.TrimSpace(tmpl) == "" {
		return "", fmt.Errorf("task %s: no commit message: set the commit step's message, or inputs.pr_title", sc.Key())
	}
	return sc.Render(tmpl)
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
