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
merging blocks it with the reason. wo status --refresh does the same first.`,
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
		var err error
		out, err = syncTree(ctx, f, s, o.Key, o.GitHubAPI)
		return err
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
			fmt.Fprintf(w, "%s: pull request #%d is %s; task %s\n", r.Key, r.PR, r.PRState, change)
		}
		return nil
	}}, nil
}

// syncTree syncs a task and its children, reading GitHub at githubAPI
// (empty: api.github.com).
func syncTree(ctx context.Context, f *Factory, s store.Store, key, githubAPI string) ([]*procedure.SyncResult, error) {
	e := f.engine(s, engineOptions{GitHubAPI: githubAPI})
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
