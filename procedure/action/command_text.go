package action

import (
	"regexp"

	"github.com/wo-runner/wo/workorder"
)

// The text a commit or create_pr step writes comes from typed step fields:
// message (commit), title and body (create_pr). For documents written before
// those fields, the display command is read as a fallback: the -m '…' of a
// git commit, the --title '…' and --body '…' of gh pr create. When neither
// gives the text, the commit message and the PR title are inputs.pr_title,
// else the task's title; wo validate warns (each action's Advise) when a
// command is there but cannot be read, so that nobody is surprised by the
// title used.
var (
	commandMessage = regexp.MustCompile(`-m\s+(?:'([^']*)'|"([^"]*)")`)
	commandTitle   = regexp.MustCompile(`--title\s+(?:'([^']*)'|"([^"]*)")`)
	commandBody    = regexp.MustCompile(`--body\s+(?:'([^']*)'|"([^"]*)")`)
)

// fromCommand is the quoted argument the pattern finds in the command.
func fromCommand(re *regexp.Regexp, command string) (string, bool) {
	m := re.FindStringSubmatch(command)
	if m == nil {
		return "", false
	}
	return m[1] + m[2], true
}

// typedOrCommand is the step's typed text, else what the pattern reads
// from its command; "" when neither says.
func typedOrCommand(typed string, re *regexp.Regexp, command string) string {
	if typed != "" {
		return typed
	}
	t, _ := fromCommand(re, command)
	return t
}

// unreadable warns, at the step's command, when the step has no typed
// text and its command does not give it either.
func unreadable(path string, s workorder.Step, typed string, re *regexp.Regexp, what string) []workorder.Problem {
	if typed != "" || s.Command == "" {
		return nil
	}
	if _, ok := fromCommand(re, s.Command); ok {
		return nil
	}
	return []workorder.Problem{{Path: path + ".command", Severity: workorder.SeverityWarning, Message: what}}
}
