package commands

import (
	"context"
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/wo-runner/wo/procedure"
	"github.com/wo-runner/wo/store"
)

func newSyncCommand(f *Factory) *cli.Command { return syncCommand(f, runSync) }

// syncOptions are what wo sync is asked.
type syncOptions struct {
	Store     StoreConfig
	Key       string
	GitHubAPI string
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
the <!-- wo:stack --> markers.`,
		Flags: append(storeFlags(),
			&cli.StringFlag{Name: "github-api", EnvVars: []string{"GITHUB_API_URL"}, Usage: "GitHub API base `URL`"},
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
	return &syncOptions{Store: f.storeConfig(c), Key: key, GitHubAPI: c.String("github-api")}, nil
}

func runSync(ctx context.Context, f *Factory, o *syncOptions) (result, error) {
	var out []*procedure.SyncResult
	err := f.useStore(ctx, o.Store, func(s store.Store) error {
		e := f.engine(s, engineOptions{GitHubAPI: o.GitHubAPI})
		var err error
		if out, err = syncWith(ctx, e, s, o.Key); err != nil {
			return err
		}
		return syncStack(ctx, e, o.Key, out)
	})
	if err != nil {
		return result{}, err
	}
	return result{data: out, human: func(w io.Writer) error {
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
		return nil
	}}, nil
}

// syncTree syncs a task and its children, reading GitHub at githubAPI
// (empty: api.github.com).
func syncTree(ctx context.Context, f *Factory, s store.Store, key, githubAPI string) ([]*procedure.SyncResult, error) {
	return syncWith(ctx, f.engine(s, engineOptions{GitHubAPI: githubAPI}), s, key)
}

// syncStack refreshes the stack sections of the pull requests of key's
// epic after the sync, so that merged ones show as merged, and notes in
// each result what it did. A failure to refresh is a warning: the sync
// itself is done.
func syncStack(ctx context.Context, e *procedure.Engine, key string, out []*procedure.SyncResult) error {
	epic, err := e.StackOfTask(ctx, key)
	if err != nil || epic == "" {
		return err
	}
	ups, _, err := e.RefreshStack(ctx, epic)
	byKey := map[string]*procedure.SyncResult{}
	for _, r := range out {
		byKey[r.Key] = r
	}
	note := func(r *procedure.SyncResult, w string) {
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
func syncWith(ctx context.Context, e *procedure.Engine, s store.Store, key string) ([]*procedure.SyncResult, error) {
	children, err := s.List(ctx, store.Filter{ParentKey: key})
	if err != nil {
		return nil, err
	}
	keys := []string{key}
	for _, d := range children {
		keys = append(keys, d["_key"].(string))
	}
	var out []*procedure.SyncResult
	for _, k := range keys {
		r, err := e.Sync(ctx, k)
		if err != nil {
			return out, fmt.Errorf("syncing %s: %w", k, err)
		}
		out = append(out, r)
	}
	return out, nil
}
