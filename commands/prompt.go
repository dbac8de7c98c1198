package commands

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/wo-runner/wo/procedure/action"
	"github.com/wo-runner/wo/store"
	"github.com/wo-runner/wo/workorder"
)

func newPromptCommand(f *Factory) *cli.Command { return promptCommand(f, runPrompt) }

// promptOptions are what wo prompt is asked.
type promptOptions struct {
	Store  StoreConfig
	Key    string
	Format string // text, markdown or json
}

func promptCommand(f *Factory, run func(context.Context, *Factory, *promptOptions) (result, error)) *cli.Command {
	return &cli.Command{
		Name:      "prompt",
		Usage:     "print what an agent is told about a task",
		ArgsUsage: "KEY",
		Description: `Prints the agent context section (background, deliverables,
success criteria, constraints, relevant files with the "… and N more" cut,
documentation), the objective, the current step and what remains: the same
text the agent command receives. --format text (default), markdown or json.`,
		Flags: append(storeFlags(),
			&cli.StringFlag{Name: "format", Value: "text", Usage: "text, markdown or json"},
		),
		Action: f.action(func(c *cli.Context) (result, error) {
			opts, err := promptOptionsFrom(c, f)
			if err != nil {
				return result{}, err
			}
			return run(c.Context, f, opts)
		}),
	}
}

// promptOptionsFrom reads the flags.
func promptOptionsFrom(c *cli.Context, f *Factory) (*promptOptions, error) {
	key, err := oneArg(c, "task KEY")
	if err != nil {
		return nil, err
	}
	format := c.String("format")
	if format != "text" && format != "markdown" && format != "json" {
		return nil, usagef(fmt.Sprintf("--format %q: use text, markdown or json", format))
	}
	if err := oneOutput(c, "format", "text"); err != nil {
		return nil, err
	}
	return &promptOptions{Store: f.storeConfig(c), Key: key, Format: format}, nil
}

func runPrompt(ctx context.Context, f *Factory, o *promptOptions) (result, error) {
	var v *action.PromptView
	err := f.useStore(ctx, o.Store, func(s store.Store) error {
		doc, err := s.Get(ctx, o.Key)
		if err != nil {
			return err
		}
		v, err = action.Prompt(doc)
		return err
	})
	if err != nil {
		return result{}, err
	}
	return result{data: v, human: func(w io.Writer) error {
		switch o.Format {
		case "json":
			return workorder.Encode(w, v)
		case "markdown":
			_, err := io.WriteString(w, markdownPrompt(v))
			return err
		}
		_, err := io.WriteString(w, v.Text)
		return err
	}}, nil
}

// markdownPrompt renders the section headers as Markdown headings.
func markdownPrompt(v *action.PromptView) string {
	text := v.Text
	for _, r := range []struct{ from, to string }{
		{"📋 BACKGROUND CONTEXT:", "### Background context"},
		{"✅ EXPECTED DELIVERABLES:", "### Expected deliverables"},
		{"🎯 SUCCESS CRITERIA:", "### Success criteria"},
		{"⚠️ CONSTRAINTS:", "### Constraints"},
		{"📁 RELEVANT FILES TO EXAMINE:", "### Relevant files to examine"},
		{"📚 RELATED DOCUMENTATION:", "### Related documentation"},
		{"🎯 TASK CONTEXT (Provided by task creator)", "## Task context (provided by the task creator)"},
		{"  • ", "- "},
		{strings.Repeat("=", 80) + "\n", ""},
	} {
		text = strings.ReplaceAll(text, r.from, r.to)
	}
	return fmt.Sprintf("# %s (%s)\n%s", v.Title, v.Key, text)
}
