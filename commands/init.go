package commands

import (
	"context"
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/wo-runner/wo/store"
)

func newInitCommand(f *Factory) *cli.Command { return initCommand(f, runInit) }

// initOptions are what wo init is asked.
type initOptions struct {
	Store StoreConfig
}

func initCommand(f *Factory, run func(context.Context, *Factory, *initOptions) (result, error)) *cli.Command {
	return &cli.Command{
		Name:  "init",
		Usage: "create the store's collections and indexes (safe to repeat)",
		Description: `For ArangoDB, makes sure persephone_tasks, persephone_edges and
persephone_logs exist (or the collections named after --collection), with
persistent indexes on parent_key and status that wo status and wo list use.
For the embedded SQLite store, creates the database file and its tables.`,
		Flags: storeFlags(),
		Action: f.action(func(c *cli.Context) (result, error) {
			opts, err := initOptionsFrom(c, f)
			if err != nil {
				return result{}, err
			}
			return run(c.Context, f, opts)
		}),
	}
}

// initOptionsFrom reads the flags.
func initOptionsFrom(c *cli.Context, f *Factory) (*initOptions, error) {
	return &initOptions{Store: f.storeConfig(c)}, nil
}

func runInit(ctx context.Context, f *Factory, o *initOptions) (result, error) {
	var where string
	err := f.useStore(ctx, o.Store, func(s store.Store) error {
		where = s.Describe()
		return store.Warned(s.Init(ctx), func(w string) { fmt.Fprintln(f.Stderr, "warning:", w) })
	})
	if err != nil {
		return result{}, err
	}
	return result{data: initData{Store: where}, human: func(w io.Writer) error {
		_, err := fmt.Fprintf(w, "store ready: %s\n", where)
		return err
	}}, nil
}

// initData is wo init's --json data: where the store is.
type initData struct {
	Store string `json:"store"`
}
