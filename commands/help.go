package commands

import (
	"fmt"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/wo-runner/wo/workorder"
)

// Help as gh users expect it: each flag's default said once, the flags
// every store command shares listed once under their own heading, wo help
// COMMAND and wo version, and the command or flag that was probably meant
// when one is mistyped.

func init() { cli.FlagStringer = flagLine }

// inheritedCategory heads the flags every command that reads the store
// shares, after the command's own.
const inheritedCategory = "INHERITED OPTIONS (also before the command: wo --store FILE list)"

// flagDefault is the one default a flag's help and docs/cli.md show: its
// DefaultText, else its value when that is not the zero of its type (a
// zero says nothing: the usage says what happens without the flag).
func flagDefault(fl cli.Flag) string {
	df, ok := fl.(cli.DocGenerationFlag)
	if !ok {
		return ""
	}
	switch d := strings.Trim(df.GetDefaultText(), `"`); d {
	case "", "0", "0s", "false", "[]":
		return ""
	default:
		return d
	}
}

// flagLine is a flag's line in wo's help.
func flagLine(fl cli.Flag) string {
	df, ok := fl.(cli.DocGenerationFlag)
	if !ok {
		return ""
	}
	usage := df.GetUsage()
	var names []string
	for _, n := range fl.Names() {
		s := dashed(n)
		if df.TakesValue() {
			s += " " + placeholder(fl, usage)
		}
		names = append(names, s)
	}
	text := strings.ReplaceAll(usage, "`", "")
	if d := flagDefault(fl); d != "" {
		text += " (default: " + d + ")"
	}
	if env := envVarsOf(fl); len(env) > 0 {
		text += " [$" + strings.Join(env, ", $") + "]"
	}
	return strings.Join(names, ", ") + "\t" + text
}

// inherited marks the shared store flags of a command's help.
func inherited(flags []cli.Flag) []cli.Flag {
	for _, fl := range flags {
		switch f := fl.(type) {
		case *cli.StringFlag:
			f.Category = inheritedCategory
		case *cli.BoolFlag:
			f.Category = inheritedCategory
		case *cli.DurationFlag:
			f.Category = inheritedCategory
		}
	}
	return flags
}

// newVersionCommand is wo version, as wo --version.
func newVersionCommand(f *Factory) *cli.Command {
	return &cli.Command{
		Name:  "version",
		Usage: "print wo's version",
		Action: func(c *cli.Context) error {
			_, err := fmt.Fprintf(f.Stdout, "wo version %s\n", versionString())
			return err
		},
	}
}

// unknownCommand is the usage error for a verb wo does not have, with the
// one that was probably meant.
func unknownCommand(app *cli.App, name string) error {
	var names []string
	for _, c := range app.VisibleCommands() {
		names = append(names, c.Names()...)
	}
	msg := fmt.Sprintf("unknown command %q", name)
	if s := workorder.Suggest(name, names); s != "" {
		msg += fmt.Sprintf(": did you mean %q?", s)
	}
	return usagef(msg)
}

// unknownFlag adds the flag that was probably meant to the flag parser's
// "flag provided but not defined: -name".
func unknownFlag(flags []cli.Flag, err error) string {
	msg := err.Error()
	name, ok := strings.CutPrefix(msg, "flag provided but not defined: -")
	if !ok {
		return msg
	}
	var names []string
	for _, fl := range flags {
		names = append(names, fl.Names()...)
	}
	msg = fmt.Sprintf("unknown flag %s", dashed(name))
	if s := workorder.Suggest(name, names); s != "" {
		msg += fmt.Sprintf(": did you mean %s?", dashed(s))
	}
	return msg
}

// newHelpCommand is wo help [COMMAND], as urfave/cli's, and wo help json
// [COMMAND]: the JSON Schema of a command's --json output.
func newHelpCommand(f *Factory) *cli.Command {
	return &cli.Command{
		Name:      "help",
		Aliases:   []string{"h"},
		Usage:     "show the commands, a command's help, or (help json COMMAND) the shape of its --json output",
		ArgsUsage: "[COMMAND | json [COMMAND]]",
		HideHelp:  true,
		// Its arguments are read here, so that wo help --help (and wo help
		// json --help) is help, not a parse error.
		SkipFlagParsing: true,
		Action: func(c *cli.Context) error {
			args := c.Args().Slice()
			if len(args) > 0 && args[0] == "--" { // wo puts it before the arguments of a command that parses none
				args = args[1:]
			}
			if slices.ContainsFunc(args, func(a string) bool { return a == "--help" || a == "-h" }) {
				return cli.ShowCommandHelp(c, "help")
			}
			if len(args) > 2 || len(args) == 2 && args[0] != "json" {
				return usagef(fmt.Sprintf("wo help takes one COMMAND, or json and one COMMAND, not %q", strings.Join(args, " ")))
			}
			args = append(args, "", "") // the missing ones are ""
			switch first := args[0]; {
			case first == "json":
				return writeJSONHelp(f, args[1])
			case first != "":
				if c.App.Command(first) == nil {
					return unknownCommand(c.App, first)
				}
				return cli.ShowCommandHelp(c, first)
			}
			return cli.ShowAppHelp(c)
		},
	}
}

// writeJSONHelp prints the JSON Schema of a command's envelope, or, with
// no command, what --json prints and which commands have a schema.
func writeJSONHelp(f *Factory, command string) error {
	switch command {
	case "":
		_, err := fmt.Fprintf(f.Stdout, `With --json, a command prints one JSON envelope on stdout:

  {"success": true, "command": "show", "data": {...}, "error": null,
   "metadata": {"wo_version": "...", "timestamp": "...", "duration_ms": 12, "exit_code": 0}}

data is the command's own; on failure it is null (or says what was refused)
and error holds code, message and details. wo run --json prints its progress
events first, one JSON object a line. --jq EXPRESSION filters the envelope.

The JSON Schema of a command's envelope, data included:

  wo help json COMMAND      (and wo help json events: wo run's progress events)

Commands with --json output: %s
The schemas are also in docs/json/ of wo's source.
`, strings.Join(JSONCommands(), ", "))
		return err
	case "events":
		_, err := f.Stdout.Write(EventsSchema())
		return err
	case "tasks-json":
		_, err := f.Stdout.Write(workorder.TasksJSONSchema())
		return err
	}
	schema, ok := EnvelopeSchema(command)
	if !ok {
		msg := fmt.Sprintf("%q has no --json output", command)
		if s := workorder.Suggest(command, append(JSONCommands(), "events", "tasks-json")); s != "" {
			msg += fmt.Sprintf(": did you mean %q?", s)
		}
		return usagef(msg + " (wo help json lists those that do)")
	}
	_, err := f.Stdout.Write(schema)
	return err
}
