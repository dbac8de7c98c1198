package workorder

import (
	"fmt"
	"path"
	"strings"

	"github.com/kballard/go-shellquote"
)

// CommandFacts are the concrete things a procedure's display commands name.
// wo never runs those commands, but a person reads them, so where a command
// names the worktree path, the base, the branch or the remote, wo works with
// that name unless inputs or context say otherwise (and validation warns
// when the two disagree).
type CommandFacts struct {
	WorktreePath string // git worktree add PATH [BASE]
	Base         string // the BASE of git worktree add
	Branch       string // git checkout -b BRANCH, git switch -c BRANCH
	Remote       string // git push [-u] REMOTE [BRANCH]
	// Steps say which step named each fact, for messages.
	Steps map[string]int
}

// FactsOf reads the facts from the commands of a document's procedure, as
// rendered against the document. A command that names a placeholder not
// known yet, or that cannot be split into words, gives nothing.
func FactsOf(doc Document) CommandFacts {
	f := CommandFacts{Steps: map[string]int{}}
	procedure, _ := Get(doc, "work_order.procedure").([]any)
	scope := NewScope(doc)
	for _, x := range procedure {
		step, _ := x.(map[string]any)
		cmd, _ := step["command"].(string)
		if cmd == "" {
			continue
		}
		rendered, err := scope.Render(cmd)
		if err != nil {
			continue
		}
		n, _ := AsInt(step["step"])
		for _, words := range commandLines(rendered) {
			f.read(words, int(n))
		}
	}
	return f
}

// commandLines splits a command at &&, || and ; into word lists.
func commandLines(command string) [][]string {
	words, err := shellquote.Split(command)
	if err != nil {
		return nil
	}
	var out [][]string
	var cur []string
	for _, w := range words {
		switch w {
		case "&&", "||", ";":
			out, cur = append(out, cur), nil
		default:
			cur = append(cur, strings.TrimSuffix(w, ";"))
		}
	}
	return append(out, cur)
}

func (f *CommandFacts) set(field *string, name, value string, step int) {
	if *field == "" && value != "" {
		*field = value
		f.Steps[name] = step
	}
}

// read takes the facts of one git command line.
func (f *CommandFacts) read(words []string, step int) {
	if len(words) < 2 || words[0] != "git" {
		return
	}
	args := positional(words[2:])
	switch sub := words[1]; {
	case sub == "worktree" && len(args) >= 2 && args[0] == "add":
		f.set(&f.WorktreePath, "worktree_path", path.Clean(args[1]), step)
		if len(args) >= 3 {
			f.set(&f.Base, "base", args[2], step)
		}
	case sub == "checkout" || sub == "switch":
		for i, w := range words[2:] {
			if (w == "-b" || w == "-c" || w == "-B" || w == "-C") && i+3 < len(words) {
				f.set(&f.Branch, "branch", words[i+3], step)
			}
		}
	case sub == "push" && len(args) >= 1:
		f.set(&f.Remote, "remote", args[0], step)
	}
}

// positional drops flags (and -b's value) from a command's arguments.
func positional(words []string) []string {
	var out []string
	for i := 0; i < len(words); i++ {
		w := words[i]
		switch {
		case w == "-b" || w == "-B" || w == "--reason":
			i++ // the flag's value
		case strings.HasPrefix(w, "-"):
		default:
			out = append(out, w)
		}
	}
	return out
}

// commandFacts warns where the inputs or context and the commands name
// different things: a person reading the document would look in the wrong
// place.
func (v *validator) commandFacts() CommandFacts {
	f := FactsOf(v.doc)
	warn := func(fact, field, set, named string) {
		if set != "" && named != "" && set != named {
			v.warnf(field, "is %q but step %d's command names %q; wo uses %q: make the two agree so that people look where wo works",
				set, f.Steps[fact], named, set)
		}
	}
	warn("branch", "work_order.inputs.branch_name", String(v.doc, "work_order.inputs.branch_name"), f.Branch)
	warn("base", "work_order.context.base_branch", String(v.doc, "work_order.context.base_branch"), f.Base)
	warn("remote", "work_order.context.remote", String(v.doc, "work_order.context.remote"), f.Remote)
	if f.WorktreePath != "" && String(v.doc, "work_order.inputs.worktree_name") == "" {
		root := String(v.doc, "work_order.context.worktree_root")
		if !Inside(root, f.WorktreePath) {
			v.errorf(fmt.Sprintf("work_order.procedure[%d].command", f.Steps["worktree_path"]-1),
				"names the worktree %s, which is not inside work_order.context.worktree_root %q: wo creates and removes worktrees only there",
				quote(f.WorktreePath), root)
		}
	}
	if name := String(v.doc, "work_order.inputs.worktree_name"); name != "" {
		if root := String(v.doc, "work_order.context.worktree_root"); root != "" {
			warn("worktree_path", "work_order.inputs.worktree_name", path.Join(root, name), f.WorktreePath)
		}
	}
	return f
}

// String describes the facts for messages.
func (f CommandFacts) String() string {
	return fmt.Sprintf("worktree %q base %q branch %q remote %q", f.WorktreePath, f.Base, f.Branch, f.Remote)
}
