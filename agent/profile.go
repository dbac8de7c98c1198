// Package agent knows the coding agents wo runs by name: how each is
// called without a terminal with edits allowed inside its working folder
// and nothing more, how its prompt goes in, which of its own credential
// variables it reads, where its login lives, what it leaves behind, and
// how to read what it says about its run. A command line that names none
// of them is run as it is, judged by its exit code and its diff.
//
// Nothing here runs a process: the action that runs the agent asks a
// profile for the call (Profile.Call) and for the reading of its output
// (Profile.Read), and judges the run by that reading and the diff together.
package agent

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kballard/go-shellquote"
)

// PromptVia is how a profile's agent takes its prompt.
type PromptVia int

const (
	// PromptStdin: the prompt on standard input (and in WO_PROMPT_FILE).
	PromptStdin PromptVia = iota
	// PromptFile: the path of the prompt file as a flag's value.
	PromptFile
	// PromptArg: the prompt as one argument.
	PromptArg
)

// maxPromptArg bounds a prompt passed as one argument: Linux refuses an
// argument over 128 KiB. A longer prompt is replaced by a line asking the
// agent to read the prompt file.
const maxPromptArg = 100 << 10

// Profile is one coding agent.
type Profile struct {
	// Name is the name --agent takes, and Program the executable (the
	// same for all but a few).
	Name, Program string
	// Summary says in a line what the tool is, for help and docs.
	Summary string
	// Credentials are the agent's own variables that wo passes by name
	// when set (never wo's GitHub token or the store's credentials).
	Credentials []string
	// Settings are variables wo sets for the agent's run, whatever the
	// user's environment says (for example: trust the working folder).
	Settings map[string]string
	// ConfigVar is the variable that points the agent at its config and
	// login folder, and ConfigDefault that folder under the user's home.
	// wo sets the variable to the user's own folder only with
	// --agent-login; otherwise the agent's HOME is empty and only the
	// credential variables log it in.
	ConfigVar, ConfigDefault string
	// HomeFiles are files under the agent's HOME it writes on every run
	// (they land in the temporary HOME).
	HomeFiles []string
	// Leaves are the names of files and folders, at the root of the
	// worktree, that the agent writes for itself whatever its flags say:
	// wo removes those that were not there before the run.
	Leaves []string
	// Ports are the TCP ports it connects to (its model's API), where
	// Landlock alone confines it.
	Ports []int
	// Hosts are the HOST:PORT of its model's API that its box's proxy
	// lets through (${NAME} is the agent's variable: a cloud region; a
	// host whose variable is unset is left out), and GatewayVars the
	// variables that point it at a gateway instead, whose host is let
	// through when set.
	Hosts       []string
	GatewayVars []string
	// KeyRequired says the tool must not start without one of its
	// credential variables (or the user's login): without one it waits
	// for a person at a browser instead of failing.
	KeyRequired bool
	// call adds the flags of a non-interactive run with edits allowed to
	// the user's own words (args, without the program), leaving any the
	// user gave alone.
	call func(args []string, in CallInput) ([]string, PromptVia)
	// read reads its output.
	read func(stdout, stderr string, exit int) Report
}

// CallInput is what a call may need to know.
type CallInput struct {
	PromptFile string // the prompt, in a file the agent may read
	Prompt     string // the prompt itself
	StateDir   string // a folder of the agent's own for the files it keeps (histories), outside the worktree
	// MaxCostUSD is what is left of the task's cost cap, 0 for none: a
	// profile whose tool can stop itself at a budget passes it.
	MaxCostUSD float64
	// UseLogin says the user asked for their own login (--agent-login).
	UseLogin bool
	// Set reports whether a variable the agent gets is set.
	Set func(name string) bool
}

func (in CallInput) set(name string) bool { return in.Set != nil && in.Set(name) }

// Call is one run of an agent: its argv, and what goes on stdin.
type Call struct {
	Profile *Profile
	Argv    []string
	Stdin   string
}

// profiles is the table of the agents wo knows by name: a new one is one
// file and one line here.
var profiles = []*Profile{&claude, &codex, &aider, &gemini, &copilot}

// generic is the profile of a command that names no known agent.
var generic = Profile{Name: "command", Summary: "a command of your own: the prompt on stdin and in $WO_PROMPT_FILE", Ports: []int{443},
	call: func(args []string, _ CallInput) ([]string, PromptVia) { return args, PromptStdin },
	read: readGeneric}

// Names are the agents wo knows by name.
func Names() []string {
	out := make([]string, len(profiles))
	for i, p := range profiles {
		out[i] = p.Name
	}
	return out
}

// Profiles are the agents wo knows, in the table's order.
func Profiles() []*Profile { return slices.Clone(profiles) }

// ByName is the profile called name, or nil.
func ByName(name string) *Profile {
	for _, p := range profiles {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// Command is an agent command line as the user gave it: a known agent's
// name, or a command line whose program may be one.
type Command struct {
	Profile *Profile
	Words   []string // the program and the user's own arguments
}

// Parse reads --agent's value: "claude" is the claude profile's
// call; "claude -p --model X" is the same profile with the user's flags
// kept; a program wo does not know is run as it is.
func Parse(line string) (Command, error) {
	words, err := shellquote.Split(line)
	if err != nil {
		return Command{}, fmt.Errorf("agent command %q cannot be split into words: %v", line, err)
	}
	if len(words) == 0 {
		return Command{}, fmt.Errorf("agent command is empty: name an agent (%s) or a command line", strings.Join(Names(), ", "))
	}
	base := strings.TrimSuffix(filepath.Base(words[0]), ".exe")
	for _, p := range profiles {
		if p.Program == base {
			return Command{Profile: p, Words: words}, nil
		}
	}
	return Command{Profile: &generic, Words: words}, nil
}

// Known reports whether the command is one of the named agents.
func (c Command) Known() bool { return c.Profile != &generic }

// Program is the command's first word.
func (c Command) Program() string { return c.Words[0] }

// Call is the run of the command with the profile's flags.
func (c Command) Call(in CallInput) Call {
	args, via := c.Profile.call(slices.Clone(c.Words[1:]), in)
	call := Call{Profile: c.Profile, Argv: append([]string{c.Words[0]}, args...)}
	switch via {
	case PromptStdin:
		call.Stdin = in.Prompt
	case PromptArg:
		prompt := in.Prompt
		if len(prompt) > maxPromptArg {
			prompt = "Your task is in the file " + in.PromptFile + ": read it first, then do what it asks."
		}
		call.Argv = append(call.Argv, prompt)
	}
	return call
}

// Read reads what the agent said about its run.
func (c Call) Read(stdout, stderr string, exit int) Report {
	return c.Profile.read(stdout, stderr, exit).sane()
}

// hasFlag reports whether args hold one of the flags, alone or as
// --flag=value.
func hasFlag(args []string, flags ...string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		for _, f := range flags {
			if a == f || strings.HasPrefix(a, f+"=") {
				return true
			}
		}
	}
	return false
}
