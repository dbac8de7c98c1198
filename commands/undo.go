package commands

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/wo-runner/wo/procedure/action"
	"github.com/wo-runner/wo/procedure/undo"
	"github.com/wo-runner/wo/store"
)

func newUndoCommand(f *Factory) *cli.Command { return undoCommand(f, runUndo) }

// undoOptions are what wo undo is asked: one task, or an epic's children.
type undoOptions struct {
	Store  StoreConfig
	Undo   undo.Options
	Epic   string
	Engine engineOptions
}

func undoCommand(f *Factory, run func(context.Context, *Factory, *undoOptions) (result, error)) *cli.Command {
	return &cli.Command{
		Name:      "undo",
		Usage:     "take back what a work order's runs did: PR, branches, worktree, state",
		ArgsUsage: "KEY",
		Description: `Takes back, newest first, what the task's runs did, using only what wo
recorded in the task's state and activity log, and only where wo can prove it
made the thing and nobody changed it since:

  comments       with --comments, deletes the comments wo posted on the pull
                 request (deliveries) and wo's "Addressed in <sha>" replies
                 in review threads; a person's comments stay
  pull request   closes the pull request wo opened, with a comment saying why
                 (--reason); a merged one is never touched. One a run opened
                 but did not record (it stopped first) is closed too when it
                 is open from the task's branch into its base and wo's login
                 opened it; one someone else opened stays
  remote branch  deletes it only while it is at a commit that this task's
                 runs logged pushing or making; the remote checks this as it
                 deletes. If someone else pushed, it stays and undo says so
  worktree       removes it when its admin files carry this task's mark
                 (or the log records making it), with the ownership checks
                 of the step that cleans it up; one with uncommitted changes stays
  local branch   deletes it only while it points at a commit wo logged
                 making, or where wo started it
  state          resets work_order.state to before step 1 and the status to
                 open (closed with --close); the activity log keeps the history

The proof is the task's activity log, never the state alone: the state is
document text that anyone who can write the document can write, so a branch
or worktree the state names but the log does not is LEFT. A branch that
another task of a stack builds on (its base_branch) stays until that task
is undone.

When the pull request was merged, undo removes the worktree and local branch
and says what it cannot take back: the pull request, the remote branch and the
task's state stay. A task with nothing to undo is left untouched, whatever
its status.

Undo takes the task's lease (exit 4 if a runner holds it; with --epic, a
held child is reported as running elsewhere, the others are undone and the
exit is 3, as with wo run --epic) and writes its progress after every step:
kill it anywhere and run it again to finish; exit 5 when GitHub or the store
still fails after retries, or gives answers that disagree (run it again
later).

Something left (someone else pushed, a merged pull request) is marked LEFT
with the reason and does not fail the command: undo did all it may, and a
rerun would not change it. When what is left is yours to deal with (changes
not committed, the branch checked out elsewhere, a task stacked on this
one), the state and status are kept ("pending" in --json): deal with it and
run wo undo KEY again to finish. Until an undo finishes, wo run refuses the
task (exit 3, UNDO_UNFINISHED); wo reset KEY --to-step 0 gives the undo up.

A CI job checks "complete" in the --json data:
  wo undo KEY --json | jq -e .data.complete
exits 1 when something was left or an error stopped the undo ("stopped"
names the step; the output then says NOT finished, never undone); for
--epic, .data.complete is false when any child left something, failed or
was kept.

--epic KEY undoes an epic's children in reverse dependency order (the top of
a stack of pull requests first). --dry-run prints the plan, with the work
order's rollback hints, and changes nothing.`,
		Flags: append(storeFlags(),
			&cli.BoolFlag{Name: "dry-run", Usage: "print what would be taken back; change nothing"},
			&cli.StringFlag{Name: "epic", Usage: "undo the children of epic `KEY`, in reverse dependency order"},
			&cli.StringFlag{Name: "reason", Usage: "say this `TEXT` in the comment that closes the pull request"},
			&cli.BoolFlag{Name: "comments", Usage: "also delete the comments wo posted on the pull request"},
			&cli.BoolFlag{Name: "close", Usage: "end with status closed instead of open"},
			&cli.StringFlag{Name: "repo", Usage: "the repository's main checkout `PATH`", DefaultText: "context.repo_path"},
			&cli.StringFlag{Name: "github-api", Usage: "GitHub API base `URL` (GitHub Enterprise: https://HOST/api/v3/)"},
			&cli.DurationFlag{Name: "git-timeout", Value: action.DefaultGitTimeout, Usage: "give up on a git network operation that takes longer than this `DURATION`"},
			&cli.DurationFlag{Name: "git-stall", Value: action.DefaultGitStall, Usage: "give up on a git remote that sends and takes no byte for this `DURATION` (a slow transfer that moves is never cut off)"},
		),
		Action: f.action(func(c *cli.Context) (result, error) {
			opts, err := undoOptionsFrom(c, f)
			if err != nil {
				return result{}, err
			}
			return run(c.Context, f, opts)
		}),
	}
}

// undoOptionsFrom reads the flags.
func undoOptionsFrom(c *cli.Context, f *Factory) (*undoOptions, error) {
	o := &undoOptions{
		Store: f.storeConfig(c), Epic: c.String("epic"),
		Undo: undo.Options{Reason: c.String("reason"), Comments: c.Bool("comments"), Close: c.Bool("close"),
			DryRun: c.Bool("dry-run"), RepoPath: c.String("repo")},
		Engine: engineOptions{GitHubAPI: c.String("github-api"), GitTimeout: c.Duration("git-timeout"), GitStall: c.Duration("git-stall")},
	}
	if o.Engine.GitTimeout < 0 || o.Engine.GitStall < 0 {
		return nil, usagef(fmt.Sprintf("--git-timeout %s, --git-stall %s: a time cannot be negative", o.Engine.GitTimeout, o.Engine.GitStall))
	}
	if o.Epic != "" {
		if c.Args().Len() > 0 {
			return nil, usagef("give either a task KEY or --epic KEY, not both")
		}
		return o, nil
	}
	key, err := oneArg(c, "task KEY")
	if err != nil {
		return nil, err
	}
	o.Undo.Key = key
	return o, nil
}

func runUndo(ctx context.Context, f *Factory, o *undoOptions) (result, error) {
	var res result
	err := f.useStore(ctx, o.Store, func(s store.Store) error {
		eng := f.engine(s, o.Engine)
		if o.Epic != "" {
			out, err := undo.Epic(ctx, eng, o.Epic, o.Undo)
			if out != nil {
				res = result{data: out, always: true, human: func(w io.Writer) error { return writeEpicUndo(w, out) }}
			}
			return err
		}
		out, err := undo.Task(ctx, eng, o.Undo)
		if out != nil {
			res = result{data: out, always: true, human: func(w io.Writer) error { return writeUndo(w, out) }}
		}
		return err
	})
	return res, err
}

var undoWords = map[string]string{
	undo.Done: "undone", undo.Gone: "gone  ", undo.Left: "LEFT  ", undo.Would: "would ",
}

func writeUndo(w io.Writer, r *undo.Result) error {
	pr := &printer{w: w}
	switch {
	case r.NothingToUndo:
		pr.line("%s: nothing to undo (status %s, no step recorded)", r.Key, string(r.Status))
		return pr.err
	case r.DryRun:
		pr.line("Undo plan for %s (status %s) — dry run, nothing will change:", r.Key, string(r.Status))
	case r.AsRecorded:
		pr.line("Undo of %s finished before; nothing changed since. What it recorded:", r.Key)
	default:
		pr.line("Undo of %s:", r.Key)
	}
	for _, s := range r.Steps {
		pr.line("  %s %s: %s", undoWords[s.Outcome], s.Target, s.Reason)
	}
	if len(r.RollbackHints) > 0 {
		pr.line("Rollback hints from the work order:")
		for _, h := range r.RollbackHints {
			pr.line("  - %s", h)
		}
	}
	switch {
	case r.DryRun:
	case r.Stopped != "":
		pr.line("%s: NOT finished: an error stopped the undo at its %s step (below); what is listed above was done and is recorded, and wo undo %s goes on from there",
			r.Key, strings.ReplaceAll(r.Stopped, "_", " "), r.Key)
	case r.Pending:
		pr.line("%s: NOT finished: deal with what is LEFT above as it says, then run wo undo %s again to finish (the state is kept until then; status %s)",
			r.Key, r.Key, string(r.Status))
	case r.Complete:
		pr.line("%s: undone; status %s", r.Key, string(r.Status))
	default:
		pr.line("%s: undone where wo could; what is LEFT stays, for the reason given (status %s)", r.Key, string(r.Status))
	}
	return pr.err
}

func writeEpicUndo(w io.Writer, r *undo.EpicResult) error {
	pr := &printer{w: w}
	pr.line("Undo of epic %s, dependents first:", r.Epic)
	for _, u := range r.Unstacked {
		pr.line("%s", u)
	}
	for _, t := range r.Tasks {
		if t.Undo != nil {
			if err := writeUndo(w, t.Undo); err != nil {
				return err
			}
		}
		if t.Reason != "" {
			pr.line("%s: %s: %s", t.Key, string(t.Outcome), t.Reason)
		}
	}
	return pr.err
}
