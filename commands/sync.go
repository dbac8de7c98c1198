package commands

import (
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/wo-runner/wo/procedure"
	"github.com/wo-runner/wo/store"
)

func newSyncCommand(f *Factory) *cli.Command {
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
			key, err := oneArg(c, "task KEY")
			if err != nil {
				return result{}, err
			}
			var out []*procedure.SyncResult
			err = f.withStore(c, func(s store.Store) error {
				out, err = syncTree(c, f, s, key)
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
		}),
	}
}

// syncTree syncs a task and its children.
func syncTree(c *cli.Context, f *Factory, s store.Store, key string) ([]*procedure.SyncResult, error) {
	e := f.engine(s, engineOptionsFrom(c))
	children, err := s.List(c.Context, store.Filter{ParentKey: key})
	if err != nil {
		return nil, err
	}
	keys := []string{key}
	for _, d := range children {
		keys = append(keys, d["_key"].(string))
	}
	var out []*procedure.SyncResult
	for _, k := range keys {
		r, err := e.Sync(c.Context, k)
		if err != nil {
			return out, fmt.Errorf("syncing %s: %w", k, err)
		}
		out = append(out, r)
	}
	return out, nil
}
