package commands

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/urfave/cli/v2"
)

// Main runs wo with the given arguments and streams and returns the exit
// code. main.go calls it and nothing else.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return Run(ctx, NewFactory(stdin, stdout, stderr), args)
}

// Run runs wo with a prepared factory; tests call it directly.
func Run(ctx context.Context, f *Factory, args []string) int {
	app := NewApp(f)
	err := app.RunContext(ctx, permuteArgs(app, args))
	var done exitCode
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &done):
		return int(done)
	default:
		// Flag parsing and other usage mistakes that urfave/cli reports.
		fmt.Fprintf(f.Stderr, "wo: %v\nRun 'wo --help' for usage.\n", err)
		return ExitInvalid
	}
}

// exitCode is returned by actions after they printed their outcome.
type exitCode int

func (e exitCode) Error() string { return fmt.Sprintf("exit %d", int(e)) }

// NewApp builds the command tree.
func NewApp(f *Factory) *cli.App {
	return &cli.App{
		Name:      "wo",
		Usage:     "run work orders: resumable, declarative task procedures kept in the Persephone task store",
		Version:   Version,
		Reader:    f.Stdin,
		Writer:    f.Stdout,
		ErrWriter: f.Stderr,
		Description: `A work order is a Persephone task (ArangoDB collection persephone_tasks)
whose work_order field holds an objective, context, inputs and an ordered
procedure. wo validates, shows and runs it, writing work_order.state back after
every step, so any runner holding only the task key can resume it.

Store: --store or WO_STORE (default: SQLite at $XDG_STATE_HOME/wo/wo.db);
arangodb+http://HOST:8529 with --database/WO_DATABASE for ArangoDB.

Time limits: --store-timeout / WO_STORE_TIMEOUT bounds each ArangoDB operation
(default 30s); wo run's --git-timeout / WO_GIT_TIMEOUT bounds a push (default
5m) and --agent-timeout / WO_AGENT_TIMEOUT an agent run (default 30m).

Exit codes: 0 done, 1 failed, 2 bad usage or invalid document, 3 waiting,
4 another runner holds the task, 5 transient failure (rerun later).`,
		HideHelpCommand:      true,
		EnableBashCompletion: true,
		ExitErrHandler:       func(*cli.Context, error) {}, // Run maps errors to exit codes
		OnUsageError: func(_ *cli.Context, err error, _ bool) error {
			return usagef(err.Error())
		},
		Commands: []*cli.Command{
			newInitCommand(f),
			newCreateCommand(f),
			newImportCommand(f),
			newExportCommand(f),
			newShowCommand(f),
			newListCommand(f),
			newValidateCommand(f),
			newRunCommand(f),
			newResetCommand(f),
			newLogCommand(f),
			newStatusCommand(f),
			newSyncCommand(f),
			newEventCommand(f),
			newSplitCommand(f),
			newPromptCommand(f),
			newDecisionCommand(f, approveDecision),
			newDecisionCommand(f, reviseDecision),
			newDecisionCommand(f, cancelDecision),
		},
	}
}

// storeFlags are accepted by every command that reads the store.
func storeFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "store", EnvVars: []string{"WO_STORE"}, Usage: "`URL` of the store: a SQLite file path, or arangodb+http://HOST:8529, arangodb+https://…, arangodb+unix:///PATH.sock (default: $XDG_STATE_HOME/wo/wo.db; ARANGO_URL also works)"},
		&cli.StringFlag{Name: "database", EnvVars: []string{"WO_DATABASE"}, Usage: "ArangoDB `NAME` (HADES_DATABASE also works)"},
		&cli.StringFlag{Name: "collection", EnvVars: []string{"WO_COLLECTION"}, Value: "persephone_tasks", Usage: "ArangoDB tasks `COLLECTION`; edges and logs are named after it"},
		&cli.DurationFlag{Name: "store-timeout", EnvVars: []string{"WO_STORE_TIMEOUT"}, Usage: "give up on an ArangoDB operation that takes longer than this `DURATION` (0: the default, 30s)"},
		&cli.BoolFlag{Name: "json", Usage: "print one JSON envelope on stdout"},
	}
}

// action times a command, prints its outcome once (human or --json), and
// returns the exit code for Run.
func (f *Factory) action(run func(c *cli.Context) (result, error)) cli.ActionFunc {
	return func(c *cli.Context) error {
		started := time.Now()
		res, err := run(c)
		err = f.secrets().Error(err) // whatever a server echoed, the token is not printed
		code := printResult(f, c.Command.Name, c.Bool("json"), started, f.describeStore(c), res, err)
		if code == ExitOK {
			return nil
		}
		return exitCode(code)
	}
}

// describeStore names the configured store for the metadata, without
// opening it and without secrets.
func (f *Factory) describeStore(c *cli.Context) string {
	if c.Command == nil || !hasFlag(c.Command, "store") {
		return ""
	}
	cfg := f.storeConfig(c)
	if IsArangoURL(cfg.URL) {
		return cfg.URL + " database " + cfg.Database
	}
	if cfg.URL == "" {
		return "sqlite (default path)"
	}
	return "sqlite:" + strings.TrimPrefix(cfg.URL, "sqlite:")
}

func hasFlag(cmd *cli.Command, name string) bool {
	for _, fl := range cmd.Flags {
		for _, n := range fl.Names() {
			if n == name {
				return true
			}
		}
	}
	return false
}

// oneArg returns the single positional argument a command takes.
func oneArg(c *cli.Context, what string) (string, error) {
	switch c.Args().Len() {
	case 1:
		return c.Args().First(), nil
	case 0:
		return "", usagef(fmt.Sprintf("missing %s: usage: wo %s %s", what, c.Command.Name, c.Command.ArgsUsage))
	default:
		return "", usagef(fmt.Sprintf("expected one %s, got %d arguments: %s", what, c.Args().Len(), strings.Join(c.Args().Slice(), " ")))
	}
}

// permuteArgs moves a subcommand's flags in front of its positional
// arguments, so that "wo show KEY --json" works like "wo show --json KEY"
// (urfave/cli v2 stops reading flags at the first positional argument).
func permuteArgs(app *cli.App, args []string) []string {
	if len(args) < 2 {
		return args
	}
	var cmd *cli.Command
	idx := -1
	for i := 1; i < len(args); i++ {
		if strings.HasPrefix(args[i], "-") {
			continue
		}
		cmd = app.Command(args[i])
		idx = i
		break
	}
	if cmd == nil {
		return args
	}
	takesValue := map[string]bool{}
	for _, fl := range cmd.Flags {
		_, isBool := fl.(*cli.BoolFlag)
		for _, n := range fl.Names() {
			takesValue[n] = !isBool
		}
	}
	var flags, positional []string
	rest := args[idx+1:]
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		if a == "--" {
			positional = append(positional, rest[i+1:]...)
			break
		}
		if a == "-" || !strings.HasPrefix(a, "-") {
			positional = append(positional, a)
			continue
		}
		flags = append(flags, a)
		name := strings.TrimLeft(a, "-")
		if !strings.Contains(name, "=") && takesValue[name] && i+1 < len(rest) {
			flags = append(flags, rest[i+1])
			i++
		}
	}
	out := append([]string{}, args[:idx+1]...)
	out = append(out, flags...)
	if len(positional) > 0 {
		out = append(out, "--")
		out = append(out, positional...)
	}
	return out
}
