package commands

import (
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/wo-runner/wo/store"
)

func newInitCommand(f *Factory) *cli.Command {
	return &cli.Command{
		Name:  "init",
		Usage: "create the store's collections and indexes (safe to repeat)",
		Description: `For ArangoDB, makes sure persephone_tasks, persephone_edges and
persephone_logs exist (or the collections named after --collection), with
persistent indexes on parent_key and status that wo status and wo list use.
For the embedded SQLite store, creates the database file and its tables.`,
		Flags: storeFlags(),
		Action: f.action(func(c *cli.Context) (result, error) {
			var where string
			err := f.withStore(c, func(s store.Store) error {
				where = s.Describe()
				return store.Warned(s.Init(c.Context), func(w string) { fmt.Fprintln(f.Stderr, "warning:", w) })
			})
			if err != nil {
				return result{}, err
			}
			return result{data: map[string]any{"store": where}, human: func(w io.Writer) error {
				_, err := fmt.Fprintf(w, "store ready: %s\n", where)
				return err
			}}, nil
		}),
	}
}
