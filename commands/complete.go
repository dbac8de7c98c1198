package commands

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/wo-runner/wo/store"
	"github.com/wo-runner/wo/workorder"
)

// Dynamic completion: the completion scripts ask wo itself, with the words
// typed so far, for the values of a flag and for task keys from the store
// the command line (or the environment) names. Commands and flag names
// are in the scripts; this answers what only a running wo knows.

// completeCommand is the hidden verb the scripts call:
//
//	wo __complete WORD… CURRENT
//
// It prints one candidate a line, and nothing (exit 0) when it has none,
// so that the shell falls back to file names. It never prints an error.
func completeCommand(f *Factory) *cli.Command {
	return &cli.Command{
		Name:            "__complete",
		Hidden:          true,
		SkipFlagParsing: true,
		Action: func(c *cli.Context) error {
			words := c.Args().Slice()
			if len(words) == 0 {
				return nil
			}
			for _, w := range f.complete(c.Context, c.App, words[:len(words)-1], words[len(words)-1]) {
				fmt.Fprintln(f.Stdout, w)
			}
			return nil
		},
	}
}

// flagValues are the values of flags that take one of a few.
var flagValues = map[string][]string{
	"status.format": {"table", "markdown", "mermaid", "dot"},
	"prompt.format": {"text", "markdown", "json"},
	"export.format": {"documents", "tasks-json"},
	"import.format": {"documents", "tasks-json"},
	"list.status":   workorder.StatusNames(),
	"split.mode":    {"independent", "stacked"},
	"split.by":      {"package", "dir"},
}

// argValues are the values of a command's positional arguments after the
// first, or of its first when it takes no KEY.
var argValues = map[string][][]string{
	"completion": {{"bash", "zsh", "fish"}},
	"event":      {nil, {"clarify", "plan_progress"}},
}

// maxKeys bounds how many task keys one completion lists.
const maxKeys = 2000

func (f *Factory) complete(ctx context.Context, app *cli.App, before []string, cur string) []string {
	var line typedLine
	if !line.read(app, before) {
		return nil
	}
	if strings.HasPrefix(cur, "-") {
		return nil // the scripts list flags themselves
	}
	cmd, pending := line.cmd, line.pending
	var out []string
	switch {
	case pending != nil:
		name := pending.Names()[0]
		if cmd != nil {
			out = flagValues[cmd.Name+"."+name]
		}
		if out == nil && takesKey(pending) {
			out = f.taskKeys(ctx, line.given, cur)
		}
	case cmd == nil:
		return nil
	case strings.HasPrefix(cmd.ArgsUsage, "KEY") && len(line.positional) == 0:
		out = f.taskKeys(ctx, line.given, cur)
	default:
		if lists := argValues[cmd.Name]; len(line.positional) < len(lists) {
			out = lists[len(line.positional)]
		}
	}
	return slices.DeleteFunc(slices.Clone(out), func(s string) bool { return !strings.HasPrefix(s, cur) })
}

// typedLine is what the words typed before the one being completed say:
// the command, its arguments so far, the store flags given, and a flag
// whose value comes next.
type typedLine struct {
	cmd        *cli.Command
	positional []string
	given      map[string]string
	pending    cli.Flag
}

// read reads the words; false when one names no command wo has.
func (l *typedLine) read(app *cli.App, before []string) bool {
	l.given = map[string]string{}
	flagsOf := func() []cli.Flag {
		if l.cmd != nil {
			return l.cmd.Flags
		}
		return app.Flags
	}
	for _, w := range before {
		if l.pending != nil {
			l.given[l.pending.Names()[0]] = w
			l.pending = nil
			continue
		}
		if strings.HasPrefix(w, "-") && w != "-" {
			name, inline := flagName(w)
			if fl := findFlag(flagsOf(), name); fl != nil {
				if df, ok := fl.(cli.DocGenerationFlag); ok && df.TakesValue() {
					if !inline {
						l.pending = fl
					} else {
						l.given[fl.Names()[0]] = w[strings.IndexByte(w, '=')+1:]
					}
				}
			}
			continue
		}
		if l.cmd == nil {
			if l.cmd = app.Command(w); l.cmd == nil {
				return false
			}
			continue
		}
		l.positional = append(l.positional, w)
	}
	return true
}

func findFlag(flags []cli.Flag, name string) cli.Flag {
	for _, fl := range flags {
		if slices.Contains(fl.Names(), name) {
			return fl
		}
	}
	return nil
}

// takesKey reports whether a flag's value is a task key: its placeholder
// says KEY.
func takesKey(fl cli.Flag) bool {
	df, ok := fl.(cli.DocGenerationFlag)
	return ok && placeholder(fl, df.GetUsage()) == "KEY"
}

// taskKeys lists the keys of the store the command line names (else the
// environment's, else the default), read-only and briefly.
func (f *Factory) taskKeys(ctx context.Context, given map[string]string, prefix string) []string {
	// __complete parses no flags, so no flag took its variable (bindEnv).
	cfg := f.storeFrom(cmp.Or(given["store"], f.Getenv(flagEnv["store"])), cmp.Or(given["database"], f.Getenv(flagEnv["database"])),
		cmp.Or(given["collection"], f.Getenv(flagEnv["collection"]), "persephone_tasks"), 2*time.Second)
	cfg.ReadOnly = true
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	s, err := f.OpenStore(ctx, cfg)
	if err != nil {
		return nil
	}
	defer s.Close()
	var docs []map[string]any
	if sl, ok := s.(store.SummaryLister); ok {
		docs, err = sl.ListSummaries(ctx, store.Filter{})
	} else {
		docs, err = s.List(ctx, store.Filter{})
	}
	if err != nil {
		return nil
	}
	var keys []string
	for _, d := range docs {
		// A key another tool wrote may hold anything: only a valid one is
		// handed to the shell.
		if k := workorder.Key(d); strings.HasPrefix(k, prefix) && workorder.CheckKey(k) == nil && !strings.ContainsAny(k, " \t\n") {
			keys = append(keys, k)
			if len(keys) == maxKeys {
				break
			}
		}
	}
	return keys
}
