package commands

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
)

func newCompletionCommand(f *Factory) *cli.Command {
	return &cli.Command{
		Name:      "completion",
		Usage:     "print a shell completion script for bash, zsh or fish",
		ArgsUsage: "bash|zsh|fish",
		Description: `Prints a script that completes wo's commands and their flags.

  bash:  source <(wo completion bash)        (add it to ~/.bashrc)
  zsh:   source <(wo completion zsh)         (add it to ~/.zshrc, after compinit)
  fish:  wo completion fish > ~/.config/fish/completions/wo.fish`,
		Action: func(c *cli.Context) error {
			if c.Args().Len() != 1 {
				return &usageError{command: "completion", msg: "name one shell: bash, zsh or fish"}
			}
			shell := c.Args().First()
			write, ok := completionWriters[shell]
			if !ok {
				return &usageError{command: "completion", msg: fmt.Sprintf("no completion for %q: use bash, zsh or fish", shell)}
			}
			if err := write(f.Stdout, completionTreeOf(c.App)); err != nil {
				return fmt.Errorf("writing the %s completion: %w", shell, err)
			}
			return nil
		},
	}
}

var completionWriters = map[string]func(io.Writer, completionTree) error{
	"bash": writeBashCompletion,
	"zsh":  writeZshCompletion,
	"fish": writeFishCompletion,
}

// completionTree is what the scripts complete: the app's own commands and
// flags, so a new flag needs no change here.
type completionTree struct {
	Global   []completionFlag
	Commands []completionCommand
}

type completionCommand struct {
	Name, Usage string
	Flags       []completionFlag
}

type completionFlag struct {
	Names      []string // long names first, then one-letter aliases
	TakesValue bool
	Usage      string
}

func completionTreeOf(app *cli.App) completionTree {
	t := completionTree{Global: completionFlags(app.VisibleFlags())}
	for _, c := range app.VisibleCommands() {
		t.Commands = append(t.Commands, completionCommand{Name: c.Name, Usage: oneLine(c.Usage), Flags: completionFlags(c.VisibleFlags())})
	}
	return t
}

func completionFlags(flags []cli.Flag) []completionFlag {
	var out []completionFlag
	for _, fl := range flags {
		names := slices.Clone(fl.Names())
		slices.SortStableFunc(names, func(a, b string) int { return len(b) - len(a) })
		cf := completionFlag{Names: names}
		if df, ok := fl.(cli.DocGenerationFlag); ok {
			cf.TakesValue = df.TakesValue()
			cf.Usage = oneLine(df.GetUsage())
		}
		out = append(out, cf)
	}
	return out
}

// oneLine is a usage text as one plain line, without urfave/cli's
// `PLACEHOLDER` quotes.
func oneLine(s string) string {
	s = strings.ReplaceAll(s, "`", "")
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}

func dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

func flagWords(flags []completionFlag) []string {
	var words []string
	for _, fl := range flags {
		for _, n := range fl.Names {
			words = append(words, dashed(n))
		}
	}
	return words
}

// valueFlags are the global flags that take a value: the scripts skip that
// value when they look for the command.
func valueFlags(flags []completionFlag) []string {
	var words []string
	for _, fl := range flags {
		if fl.TakesValue {
			for _, n := range fl.Names {
				words = append(words, dashed(n))
			}
		}
	}
	return words
}

func commandNames(t completionTree) []string {
	names := make([]string, len(t.Commands))
	for i, c := range t.Commands {
		names[i] = c.Name
	}
	return names
}

func writeBashCompletion(w io.Writer, t completionTree) error {
	var b strings.Builder
	b.WriteString(`# bash completion for wo.  Load it with:  source <(wo completion bash)
_wo() {
    local cur="${COMP_WORDS[COMP_CWORD]}" cmd="" i
    for ((i = 1; i < COMP_CWORD; i++)); do
        case "${COMP_WORDS[i]}" in
`)
	if v := valueFlags(t.Global); len(v) > 0 {
		fmt.Fprintf(&b, "            %s) ((i++)) ;;\n", strings.Join(v, "|"))
	}
	b.WriteString(`            -*) ;;
            *) cmd="${COMP_WORDS[i]}"; break ;;
        esac
    done
    local words
    case "$cmd" in
`)
	fmt.Fprintf(&b, "        \"\") words=%q ;;\n", strings.Join(append(commandNames(t), flagWords(t.Global)...), " "))
	for _, c := range t.Commands {
		fmt.Fprintf(&b, "        %s) words=%q ;;\n", c.Name, strings.Join(flagWords(c.Flags), " "))
	}
	b.WriteString(`        *) return ;;
    esac
    if [[ -z "$cmd" || "$cur" == -* ]]; then
        COMPREPLY=($(compgen -W "$words" -- "$cur"))
    else
        # Task keys from the store and the values of flags: wo knows them.
        local IFS=$'\n'
        COMPREPLY=($(wo __complete "${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null))
    fi
}
complete -o default -F _wo wo
`)
	_, err := io.WriteString(w, b.String())
	return err
}

// zshEntry is one _describe entry, NAME:DESCRIPTION, single-quoted; a
// colon in the name would end it, so it is escaped.
func zshEntry(name, desc string) string {
	s := strings.ReplaceAll(name, ":", `\:`) + ":" + desc
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func zshDescribed(b *strings.Builder, indent string, flags []completionFlag) {
	for _, fl := range flags {
		for _, n := range fl.Names {
			fmt.Fprintf(b, "%s%s\n", indent, zshEntry(dashed(n), fl.Usage))
		}
	}
}

func writeZshCompletion(w io.Writer, t completionTree) error {
	var b strings.Builder
	b.WriteString(`#compdef wo
# zsh completion for wo.  Load it with:  source <(wo completion zsh)
# (after compinit), or save it as _wo in a directory on $fpath.
_wo() {
    local -a commands flags
    local cmd i
    for (( i = 2; i < CURRENT; i++ )); do
        case $words[i] in
`)
	if v := valueFlags(t.Global); len(v) > 0 {
		fmt.Fprintf(&b, "            %s) (( i++ )) ;;\n", strings.Join(v, "|"))
	}
	b.WriteString(`            -*) ;;
            *) cmd=$words[i]; break ;;
        esac
    done
    case $cmd in
        '')
            commands=(
`)
	for _, c := range t.Commands {
		fmt.Fprintf(&b, "                %s\n", zshEntry(c.Name, c.Usage))
	}
	b.WriteString("            )\n            flags=(\n")
	zshDescribed(&b, "                ", t.Global)
	b.WriteString(`            )
            if [[ $PREFIX == -* ]]; then
                _describe -t flags 'wo flag' flags
            else
                _describe -t commands 'wo command' commands
            fi
            return ;;
`)
	for _, c := range t.Commands {
		fmt.Fprintf(&b, "        %s)\n            flags=(\n", c.Name)
		zshDescribed(&b, "                ", c.Flags)
		b.WriteString("            ) ;;\n")
	}
	b.WriteString(`        *) return 1 ;;
    esac
    if [[ $PREFIX == -* ]]; then
        _describe -t flags "wo $cmd flag" flags
    else
        # Task keys from the store and the values of flags: wo knows them.
        local -a values
        values=(${(f)"$(wo __complete ${words[2,CURRENT]} 2>/dev/null)"})
        if (( $#values )); then
            compadd -a values
        else
            _files
        fi
    fi
}
if [[ $zsh_eval_context[-1] == loadautofunc ]]; then
    _wo "$@"
else
    compdef _wo wo
fi
`)
	_, err := io.WriteString(w, b.String())
	return err
}

// fishQuote quotes s for a single-quoted fish string.
func fishQuote(s string) string {
	return "'" + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), "'", `\'`) + "'"
}

func fishFlag(b *strings.Builder, condition string, fl completionFlag) {
	fmt.Fprintf(b, "complete -c wo -n %s", fishQuote(condition))
	for _, n := range fl.Names {
		if len(n) == 1 {
			fmt.Fprintf(b, " -s %s", n)
		} else {
			fmt.Fprintf(b, " -l %s", n)
		}
	}
	if fl.TakesValue {
		b.WriteString(" -r")
	}
	fmt.Fprintf(b, " -d %s\n", fishQuote(fl.Usage))
}

func writeFishCompletion(w io.Writer, t completionTree) error {
	var b strings.Builder
	names := strings.Join(commandNames(t), " ")
	b.WriteString("# fish completion for wo.  Save it as ~/.config/fish/completions/wo.fish\n")
	for _, fl := range t.Global {
		fishFlag(&b, "not __fish_seen_subcommand_from "+names, fl)
	}
	for _, c := range t.Commands {
		fmt.Fprintf(&b, "complete -c wo -n %s -f -a %s -d %s\n", fishQuote("not __fish_seen_subcommand_from "+names), c.Name, fishQuote(c.Usage))
	}
	for _, c := range t.Commands {
		for _, fl := range c.Flags {
			fishFlag(&b, "__fish_seen_subcommand_from "+c.Name, fl)
		}
	}
	// Task keys from the store and the values of flags: wo knows them.
	b.WriteString("function __wo_complete\n    set -l tokens (commandline -opc)\n    wo __complete $tokens[2..-1] (commandline -ct) 2>/dev/null\nend\n")
	fmt.Fprintf(&b, "complete -c wo -n %s -a '(__wo_complete)'\n", fishQuote("__fish_seen_subcommand_from "+names))
	_, err := io.WriteString(w, b.String())
	return err
}
