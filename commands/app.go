package commands

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
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
	started := time.Now()
	app := NewApp(f)
	if len(args) < 2 || args[1] != "__complete" { // the completion scripts' words go as typed
		args = permuteArgs(app, args)
	}
	err := runApp(ctx, app, args)
	var done exitCode
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &done):
		return int(done)
	}
	// A mistake in the command line that urfave/cli found before any
	// action ran: one line and a hint, or one envelope with --json.
	usage := &usageError{msg: err.Error()}
	errors.As(err, &usage)
	return printResult(f, usage.command, output{json: jsonRequested(args)}, started, "", result{}, usage)
}

// urfave/cli v2 writes to its package globals (the help flag, the version
// flag, the help command) while it sets an app up and parses the command
// line, so apps that run at once in one process (the command tests, in
// parallel) take turns until their command's action starts; the actions
// themselves run at the same time.
var cliSetup sync.Mutex

type setupDoneKey struct{}

// runApp runs app, holding cliSetup until a command's action starts
// (afterSetup) or, when none does (help, a usage error), until app ends.
func runApp(ctx context.Context, app *cli.App, args []string) error {
	cliSetup.Lock()
	release := sync.OnceFunc(cliSetup.Unlock)
	defer release()
	return app.RunContext(context.WithValue(ctx, setupDoneKey{}, release), args)
}

// afterSetup makes cmd's action first let the next app set up.
func afterSetup(cmd *cli.Command) {
	if cmd.Action == nil {
		return
	}
	action := cmd.Action
	cmd.Action = func(c *cli.Context) error {
		if release, ok := c.Context.Value(setupDoneKey{}).(func()); ok {
			release()
		}
		return action(c)
	}
}

// jsonRequested reports whether --json is among the flags, for errors found
// before the flags could be parsed.
func jsonRequested(args []string) bool {
	for _, a := range args[1:] {
		switch a {
		case "--":
			return false
		case "--json", "-json", "--json=true", "-json=true", "--json=1", "-json=1":
			return true
		}
	}
	return false
}

// guardUsage makes a command report its usage mistakes as one line (Run
// prints it) instead of urfave/cli's full help on stdout, and checks its
// required flags itself for the same reason.
func guardUsage(cmd *cli.Command) {
	name := cmd.Name
	cmd.OnUsageError = func(_ *cli.Context, err error, _ bool) error {
		return &usageError{command: name, msg: unknownFlag(cmd.Flags, err)}
	}
	var required []string
	for _, fl := range cmd.Flags {
		if sf, ok := fl.(*cli.StringFlag); ok && sf.Required {
			sf.Required = false
			sf.Usage += " (required)"
			required = append(required, sf.Name)
		}
	}
	if len(required) == 0 || cmd.Action == nil {
		return
	}
	action := cmd.Action
	cmd.Action = func(c *cli.Context) error {
		var missing []string
		for _, n := range required {
			if !c.IsSet(n) {
				missing = append(missing, "--"+n)
			}
		}
		if len(missing) > 0 {
			return &usageError{command: name, msg: "missing required " + strings.Join(missing, " and ")}
		}
		return action(c)
	}
}

// exitCode is returned by actions after they printed their outcome.
type exitCode int

func (e exitCode) Error() string { return fmt.Sprintf("exit %d", int(e)) }

// NewApp builds the command tree.
func NewApp(f *Factory) *cli.App {
	app := &cli.App{
		Name:      "wo",
		Usage:     "run work orders: resumable, declarative task procedures kept in the Persephone task store",
		Version:   versionString(),
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
4 another runner holds the task, 5 transient failure (rerun later),
130 interrupted (Ctrl-C; rerun to go on).`,
		HideHelpCommand:      false,
		EnableBashCompletion: true,
		ExitErrHandler:       func(*cli.Context, error) {}, // Run maps errors to exit codes
		OnUsageError: func(c *cli.Context, err error, _ bool) error {
			return usagef(unknownFlag(c.App.Flags, err))
		},
		// wo's own help command replaces urfave/cli's, which would have
		// added the --help flag with it.
		Flags: append(globalFlags(), cli.HelpFlag),
		Action: func(c *cli.Context) error {
			if c.Args().Present() {
				return unknownCommand(c.App, c.Args().First())
			}
			return cli.ShowAppHelp(c)
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
			newDeleteCommand(f),
			newUndoCommand(f),
			newLogCommand(f),
			newStatusCommand(f),
			newSyncCommand(f),
			newLandCommand(f),
			newEventCommand(f),
			newSplitCommand(f),
			newPromptCommand(f),
			newDecisionCommand(f, approveDecision),
			newDecisionCommand(f, reviseDecision),
			newDecisionCommand(f, cancelDecision),
			newCompletionCommand(f),
			newVersionCommand(f),
			newHelpCommand(f),
			completeCommand(f),
		},
	}
	for _, cmd := range app.Commands {
		guardUsage(cmd)
		f.bindEnv(cmd)
		afterSetup(cmd)
	}
	return app
}

// storeFlags are accepted by every command that reads the store; its
// help lists them once, after the command's own, as inherited.
func storeFlags() []cli.Flag { return inherited(sharedFlags()) }

func sharedFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "store", Usage: "`URL` of the store: a SQLite file path (or sqlite:PATH), arangodb+http://HOST:8529, arangodb+https://…, arangodb+unix:///PATH.sock (ARANGO_URL also works)", DefaultText: "$XDG_STATE_HOME/wo/wo.db"},
		&cli.StringFlag{Name: "database", Usage: "ArangoDB `NAME` (HADES_DATABASE also works)"},
		&cli.StringFlag{Name: "collection", Value: "persephone_tasks", Usage: "ArangoDB tasks `COLLECTION`; edges and logs are named after it"},
		&cli.DurationFlag{Name: "store-timeout", Usage: "give up on an ArangoDB operation that takes longer than this `DURATION`", DefaultText: "30s"},
		&cli.BoolFlag{Name: "json", Usage: "print one JSON envelope on stdout"},
		&cli.StringFlag{Name: "jq", Usage: "print what the jq `EXPRESSION` makes of the --json envelope (strings without quotes); implies --json"},
	}
}

// globalFlags are the store flags and --json, accepted before the verb too
// (wo --store X list): permuteArgs moves them after the verb when the
// command takes them, so the command's own flag, environment and default
// rules apply unchanged, and a flag given after the verb still wins.
func globalFlags() []cli.Flag {
	return sharedFlags()
}

// action times a command, prints its outcome once (human or --json), and
// returns the exit code for Run.
func (f *Factory) action(run func(c *cli.Context) (result, error)) cli.ActionFunc {
	return func(c *cli.Context) error {
		started := time.Now()
		jq, err := parseJQ(c.String("jq"))
		var res result
		if err == nil {
			res, err = run(c)
		}
		err = f.secrets().Error(err) // whatever a server echoed, the token is not printed
		code := printResult(f, c.Command.Name, output{json: c.Bool("json"), jq: jq}, started, f.describeStore(c), res, err)
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
// (urfave/cli v2 stops reading flags at the first positional argument), and
// moves the global flags given before the verb that the verb takes after it,
// so that "wo --store X list" works like "wo list --store X".
func permuteArgs(app *cli.App, args []string) []string {
	if len(args) < 2 {
		return args
	}
	appValue := takesValue(app.Flags)
	idx := verbIndex(args, appValue)
	if idx < 0 {
		return args
	}
	cmd := app.Command(args[idx])
	if cmd == nil {
		return args
	}
	cmdValue := takesValue(cmd.Flags)
	front, flags := splitGlobals(args[1:idx], appValue, cmdValue)
	var positional []string
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
		if name, inline := flagName(a); !inline && cmdValue[name] && i+1 < len(rest) {
			flags = append(flags, rest[i+1])
			i++
		}
	}
	out := append([]string{args[0]}, front...)
	out = append(out, args[idx])
	out = append(out, flags...)
	if len(positional) > 0 {
		out = append(out, "--")
		out = append(out, positional...)
	}
	return out
}

// verbIndex is where the command's name is in args, after the flags that
// come before it (-1 when there is none, or -- comes first).
func verbIndex(args []string, appValue map[string]bool) int {
	for i := 1; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return -1
		}
		if a == "-" || !strings.HasPrefix(a, "-") {
			return i
		}
		if name, inline := flagName(a); !inline && appValue[name] {
			i++ // its value
		}
	}
	return -1
}

// splitGlobals sorts the flags before the command's name: those the
// command knows move after it (moved), the others stay in front.
func splitGlobals(global []string, appValue, cmdValue map[string]bool) (front, moved []string) {
	for i := 0; i < len(global); i++ {
		name, inline := flagName(global[i])
		n := 1
		if !inline && appValue[name] && i+1 < len(global) {
			n = 2
		}
		if _, known := cmdValue[name]; known {
			moved = append(moved, global[i:i+n]...)
		} else {
			front = append(front, global[i:i+n]...)
		}
		i += n - 1
	}
	return front, moved
}

// takesValue maps each flag name (and alias) to whether it takes a value.
func takesValue(flags []cli.Flag) map[string]bool {
	m := map[string]bool{}
	for _, fl := range flags {
		_, isBool := fl.(*cli.BoolFlag)
		if df, ok := fl.(cli.DocGenerationFlag); ok && !isBool {
			isBool = !df.TakesValue() // a flag whose value is optional (--explain, --explain=full)
		}
		for _, n := range fl.Names() {
			m[n] = !isBool
		}
	}
	return m
}

// flagName is the name in "--name" or "--name=value", and whether the value
// is inline.
func flagName(arg string) (string, bool) {
	name := strings.TrimLeft(arg, "-")
	if i := strings.IndexByte(name, '='); i >= 0 {
		return name[:i], true
	}
	return name, false
}
