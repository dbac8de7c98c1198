package commands

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/wo-runner/wo/internal/gitname"
	"github.com/wo-runner/wo/procedure"
	"github.com/wo-runner/wo/procedure/stack"
	"github.com/wo-runner/wo/store"
	"github.com/wo-runner/wo/termtext"
)

func newSyncCommand(f *Factory) *cli.Command { return syncCommand(f, runSync) }

// syncOptions are what wo sync is asked.
type syncOptions struct {
	Store     StoreConfig
	Key       string
	GitHubAPI string
	// OntoBase and Continue are for an epic's stack (see Restack).
	OntoBase, Continue bool
}

func syncCommand(f *Factory, run func(context.Context, *Factory, *syncOptions) (result, error)) *cli.Command {
	return &cli.Command{
		Name:      "sync",
		Usage:     "bring tasks up to date with their pull requests on GitHub",
		ArgsUsage: "KEY",
		Description: `For the task, or each child of an epic, that has a pull request: a merged
PR closes the task (so tasks blocked by it can run); a PR closed without
merging blocks it with the reason. wo status --refresh does the same first.

Then, for the task's epic, it brings the stack section of each open PR's
description up to date (every PR of the epic in order, with its number,
link and state, the PR itself marked, and what it depends on), editing
only the descriptions whose section changed and only the text between
the <!-- wo:stack --> markers.

For an epic split in stacked mode it also restacks: each open PR targets
the branch under it (the base once everything under it merged), and its
branch is rebuilt to be its own change on top of that branch's head, by
construction from what it changed since the parent it was built on, so a
squash merge below it causes no phantom conflict. A fix in a lower PR
rebuilds every PR above it. A base moved by an unrelated push rebuilds
nothing unless the push touched a PR's own files or --onto-base asks. Only
what changed is pushed, with a lease on what wo pushed last; a branch
someone else pushed to is left alone and reported, with the PRs above it
(exit 3). A rebuilt PR goes back to its review wait: the next wo run asks
for a review of the new head. A conflict (a person's commit that the new
parent also changes) blocks that PR and those above, naming the files;
rebase it yourself, push, and run wo sync EPIC --continue.`,
		Flags: append(storeFlags(),
			&cli.StringFlag{Name: "github-api", Usage: "GitHub API base `URL`"},
			&cli.BoolFlag{Name: "onto-base", Usage: "rebuild the bottom of a stack onto a base that moved by an unrelated push"},
			&cli.BoolFlag{Name: "continue", Usage: "go on with a restack after a person rebased the branch it stopped at"},
		),
		Action: f.action(func(c *cli.Context) (result, error) {
			opts, err := syncOptionsFrom(c, f)
			if err != nil {
				return result{}, err
			}
			return run(c.Context, f, opts)
		}),
	}
}

// syncOptionsFrom reads the flags.
func syncOptionsFrom(c *cli.Context, f *Factory) (*syncOptions, error) {
	key, err := oneArg(c, "task KEY")
	if err != nil {
		return nil, err
	}
	return &syncOptions{Store: f.storeConfig(c), Key: key, GitHubAPI: c.String("github-api"), OntoBase: c.Bool("onto-base"), Continue: c.Bool("continue")}, nil
}

func runSync(ctx context.Context, f *Factory, o *syncOptions) (result, error) {
	var out []*stack.SyncResult
	var restack *stack.RestackResult
	var restackErr error
	err := f.useStore(ctx, o.Store, func(s store.Store) error {
		e := f.engine(s, engineOptions{GitHubAPI: o.GitHubAPI})
		var err error
		if out, err = syncWith(ctx, e, s, o.Key); err != nil {
			return err
		}
		if len(out) == 1 {
			// Not an epic (syncWith synced the task and its children):
			// there is no stack to restack.
			return syncStack(ctx, e, o.Key, out)
		}
		restack, restackErr = stack.Of(e).Restack(ctx, o.Key, stack.RestackOptions{OntoBase: o.OntoBase, Continue: o.Continue})
		var stopped *stack.RestackError
		if restackErr != nil && !errors.As(restackErr, &stopped) {
			return restackErr
		}
		return syncStack(ctx, e, o.Key, out)
	})
	if err != nil {
		return result{}, err
	}
	if restack != nil {
		for _, s := range restack.Steps {
			for _, r := range out {
				if r.Key == s.Key {
					r.Restack = &s
				}
			}
		}
	}
	res := result{data: out, human: func(w io.Writer) error {
		for _, r := range out {
			if r.Warning != "" {
				fmt.Fprintf(f.Stderr, "warning: %s\n", r.Warning)
			}
			if r.PR == 0 {
				continue
			}
			change := "unchanged"
			if r.Changed {
				change = "now " + string(r.Status)
			}
			stack := ""
			if r.StackTable != "" {
				stack = "; stack table " + r.StackTable
			}
			fmt.Fprintf(w, "%s: pull request #%d is %s; task %s%s\n", r.Key, r.PR, r.PRState, change, stack)
		}
		if restack != nil {
			writeRestack(w, restack)
		}
		return nil
	}}
	return res, restackErr
}

// writeRestack prints what a restack did, a line a PR.
func writeRestack(w io.Writer, r *stack.RestackResult) {
	for _, s := range r.Steps {
		line := fmt.Sprintf("  %s (#%d) %s: %s", s.Key, s.PR, termtext.Line(s.Branch), strings.ReplaceAll(s.Outcome, "_", " "))
		switch {
		case s.Outcome == "restacked":
			line += fmt.Sprintf(" at %s, onto %s", gitname.Short(s.Head), termtext.Line(s.Base))
		case len(s.Conflicts) > 0:
			line += ": " + termtext.Line(strings.Join(s.Conflicts, ", "))
		}
		if s.Reason != "" && s.Outcome != "conflict" {
			line += " (" + termtext.Line(s.Reason) + ")"
		}
		fmt.Fprintln(w, line)
	}
	if r.Stopped != "" {
		fmt.Fprintf(w, "restack stopped: %s\n", termtext.Line(r.Stopped))
	}
}

// syncTree syncs a task and its children, reading GitHub at githubAPI
// (empty: api.github.com).
func syncTree(ctx context.Context, f *Factory, s store.Store, key, githubAPI string) ([]*stack.SyncResult, error) {
	return syncWith(ctx, f.engine(s, engineOptions{GitHubAPI: githubAPI}), s, key)
}

// syncStack refreshes the stack sections of the pull requests of key's
// epic after the sync, so that merged ones show as merged, and notes in
// each result what it did. A failure to refresh is a warning: the sync
// itself is done.
func syncStack(ctx context.Context, e *procedure.Engine, key string, out []*stack.SyncResult) error {
	epic, err := stack.Of(e).StackOfTask(ctx, key)
	if err != nil || epic == "" {
		return err
	}
	ups, _, err := stack.Of(e).RefreshStack(ctx, epic)
	byKey := map[string]*stack.SyncResult{}
	for _, r := range out {
		byKey[r.Key] = r
	}
	note := func(r *stack.SyncResult, w string) {
		if r.Warning != "" {
			w = r.Warning + "; " + w
		}
		r.Warning = w
	}
	for _, u := range ups {
		r := byKey[u.Key]
		if r == nil {
			continue // a sibling of the task synced: its PR was refreshed too
		}
		r.StackTable = u.Result
		if u.Reason != "" {
			note(r, "the stack table of "+u.Key+" was not updated: "+u.Reason)
		}
	}
	if err != nil && len(out) > 0 {
		note(out[0], fmt.Sprintf("the stack tables of epic %s were not all updated: %v; run wo sync %s again", epic, err, epic))
	}
	return nil
}

// syncWith syncs a task and its children with the engine e.
func syncWith(ctx context.Context, e *procedure.Engine, s store.Store, key string) ([]*stack.SyncResult, error) {
	children, err := s.List(ctx, store.Filter{ParentKey: key})
	if err != nil {
		return nil, err
	}
	keys := []string{key}
	for _, d := range children {
		keys = append(keys, d["_key"].(string))
	}
	var out []*stack.SyncResult
	for _, k := range keys {
		r, err := stack.Of(e).Sync(ctx, k)
		if err != nil {
			return out, fmt.Errorf("syncing %s: %w", k, err)
		}
		out = append(out, r)
	}
	return out, nil
}
