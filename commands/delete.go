package commands

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/wo-runner/wo/internal/identity"
	"github.com/wo-runner/wo/store"
	"github.com/wo-runner/wo/termtext"
	"github.com/wo-runner/wo/workorder"
)

func newDeleteCommand(f *Factory) *cli.Command { return deleteCommand(f, runDelete) }

// deleteOptions are what wo delete is asked.
type deleteOptions struct {
	Store  StoreConfig
	Key    string
	DryRun bool
}

func deleteCommand(f *Factory, run func(context.Context, *Factory, *deleteOptions) (result, error)) *cli.Command {
	return &cli.Command{
		Name:      "delete",
		Usage:     "remove a task that never ran",
		ArgsUsage: "KEY",
		Description: `Removes the task and its dependency edges from the store; its activity log
stays, with a task_deleted entry. Only a task that never ran can go: one
whose state records no step and whose log has no run that an undo did not
take back. A task with a run history is refused: wo undo KEY first. So is
an epic that still has tasks, and a task others wait for (their blocked_by
names it). --dry-run says what would go.

To bring in a new version of a task that never ran, wo import --replace.`,
		Flags: append(storeFlags(),
			&cli.BoolFlag{Name: "dry-run", Usage: "say what would be removed; change nothing"},
		),
		Action: f.action(func(c *cli.Context) (result, error) {
			key, err := oneArg(c, "task KEY")
			if err != nil {
				return result{}, err
			}
			return run(c.Context, f, &deleteOptions{Store: f.storeConfig(c), Key: key, DryRun: c.Bool("dry-run")})
		}),
	}
}

// refusedError is a task wo will not remove or replace, and why.
type refusedError struct {
	Key, Why, Fix string
}

func (e *refusedError) Error() string {
	return fmt.Sprintf("task %s %s, so wo keeps it: %s", e.Key, e.Why, e.Fix)
}

// neverRan checks that a stored task never ran, or was undone since its
// last run, and that no runner holds it: only such a task may be removed
// or replaced. It returns the task's activity log, which it read to know,
// and whether the task ran and was undone.
func neverRan(ctx context.Context, s store.Store, doc workorder.Document) (entries []store.LogEntry, undone bool, err error) {
	key := workorder.Key(doc)
	undoFirst := fmt.Sprintf("take its runs back first with wo undo %s (wo undo %s --dry-run shows what that does)", key, key)
	st, err := workorder.StateOf(doc)
	if err != nil {
		return nil, false, err
	}
	if l := store.Current(doc); l != nil && l.ExpiresAt.After(time.Now()) {
		return nil, false, &refusedError{key, "is held by " + l.Holder, "wait for that run to end"}
	}
	if !st.NeverRan() {
		return nil, false, &refusedError{key, fmt.Sprintf("has run (step %d of its procedure is done)", st.CurrentStep), undoFirst}
	}
	entries, err = s.Logs(ctx, key)
	if err != nil {
		return nil, false, err
	}
	ran := false
	for _, e := range entries {
		switch e.Action {
		case "run_started", "step_started", "step_completed":
			ran, undone = true, false
		case "undone":
			undone = true
		}
	}
	if ran && !undone {
		return nil, false, &refusedError{key, "has a run in its activity log that no undo took back", undoFirst}
	}
	return entries, ran && undone, nil
}

// deleteOutcome is what wo delete did, or would do.
type deleteOutcome struct {
	Key        string `json:"key"`
	Title      string `json:"title"`
	LogEntries int    `json:"log_entries_kept"`
	// Undone is a task that ran, and whose runs wo undo took back.
	Undone bool `json:"undone"`
	DryRun bool `json:"dry_run"`
}

func runDelete(ctx context.Context, f *Factory, o *deleteOptions) (result, error) {
	out := deleteOutcome{Key: o.Key, DryRun: o.DryRun}
	cfg := o.Store
	cfg.ReadOnly = o.DryRun
	err := f.useStore(ctx, cfg, func(s store.Store) error {
		doc, err := s.Get(ctx, o.Key)
		if err != nil {
			return err
		}
		out.Title, _ = doc["title"].(string)
		entries, undone, err := neverRan(ctx, s, doc)
		if err != nil {
			return err
		}
		out.Undone = undone
		if err := noDependents(ctx, s, o.Key); err != nil {
			return err
		}
		out.LogEntries = len(entries)
		if o.DryRun {
			return nil
		}
		if err := removeTask(ctx, f, s, o.Key, doc, out.Title); err != nil {
			return err
		}
		out.LogEntries++
		return nil
	})
	if err != nil {
		return result{}, err
	}
	return result{data: out, human: out.write}, nil
}

// noDependents refuses to delete a task that other tasks need: the epic of
// children, or a blocker named in another's blocked_by.
func noDependents(ctx context.Context, s store.Store, key string) error {
	others, err := s.List(ctx, store.Filter{})
	if err != nil {
		return err
	}
	var children, waiting []string
	for _, d := range others {
		k := workorder.Key(d)
		if k == key {
			continue
		}
		if workorder.String(d, "parent_key") == key {
			children = append(children, k)
		}
		if slices.Contains(store.BlockedByOf(d), key) {
			waiting = append(waiting, k)
		}
	}
	if len(children) > 0 {
		return &refusedError{key, fmt.Sprintf("is the epic of %d task(s) (%s)", len(children), joinKeys(children, 5)), "delete or move them first"}
	}
	if len(waiting) > 0 {
		return &refusedError{key, fmt.Sprintf("is waited for by %s (their blocked_by names it)", joinKeys(waiting, 5)), "take it out of their blocked_by first"}
	}
	return nil
}

// removeTask removes task key, if its document is still at the revision
// read (doc), and logs it (a log that cannot be written is said, not an
// error).
func removeTask(ctx context.Context, f *Factory, s store.Store, key string, doc workorder.Document, title string) error {
	r, ok := s.(store.Replacer)
	if !ok {
		return fmt.Errorf("this store cannot remove tasks")
	}
	rev, _ := doc["_rev"].(string)
	if err := r.Replace(ctx, map[string]string{key: rev}, nil); err != nil {
		return err
	}
	entry := store.LogEntry{Action: "task_deleted", TaskKey: key, SessionKey: identity.Runner(),
		Details: map[string]any{"title": title, "command": "delete"}}
	if err := s.AppendLog(ctx, entry); err != nil {
		writeNotes(f, []string{fmt.Sprintf("%s was deleted but its activity log entry was not written: %v", key, err)})
	}
	return nil
}

// write says for a person what was (or would be) deleted.
func (out deleteOutcome) write(w io.Writer) error {
	title := ""
	if out.Title != "" {
		title = " (" + termtext.Line(out.Title) + ")"
	}
	verb := "deleted"
	if out.DryRun {
		verb = "would delete"
	}
	history := "it never ran"
	if out.Undone {
		history = "it ran, and wo undo took its runs back"
	}
	_, err := fmt.Fprintf(w, "%s %s%s: %s; its activity log (%d entr%s) stays\n", verb, termtext.Line(out.Key), title,
		history, out.LogEntries, plural(out.LogEntries, "y", "ies"))
	if err == nil && out.DryRun {
		_, err = fmt.Fprintln(w, "dry run: nothing changed")
	}
	return err
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
