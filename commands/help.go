package commands

import (
	"fmt"
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
