package workorder

import (
	"errors"
	"regexp"
	"slices"
)

// The text a commit or create_pr step writes comes from typed step fields:
// message (commit), title and body (create_pr). For documents written before
// those fields, the display command is read as a fallback: the -m '…' of a
// git commit, the --title '…' and --body '…' of gh pr create. When neither
// gives the text, the commit message and the PR title are inputs.pr_title,
// else the task's title; wo validate warns when a command is there but
// cannot be read, so that nobody is surprised by the title used.
var (
	commandMessage = regexp.MustCompile(`-m\s+(?:'([^']*)'|"([^"]*)")`)
	commandTitle   = regexp.MustCompile(`--title\s+(?:'([^']*)'|"([^"]*)")`)
	commandBody    = regexp.MustCompile(`--body\s+(?:'([^']*)'|"([^"]*)")`)
)

func fromCommand(re *regexp.Regexp, command string) (string, bool) {
	m := re.FindStringSubmatch(command)
	if m == nil {
		return "", false
	}
	return m[1] + m[2], true
}

// CommitMessage is the template of the commit message a commit step gives:
// its message field, else the -m of its command; "" when neither says.
func (s Step) CommitMessage() string {
	if s.Message != "" {
		return s.Message
	}
	m, _ := fromCommand(commandMessage, s.Command)
	return m
}

// PRTitle is the template of the pull request title a create_pr step gives:
// its title field, else the --title of its command; "" when neither says.
func (s Step) PRTitle() string {
	if s.Title != "" {
		return s.Title
	}
	t, _ := fromCommand(commandTitle, s.Command)
	return t
}

// PRBody is the template of the pull request body: the body field, else the
// --body of the command; "" when neither says.
func (s Step) PRBody() string {
	if s.Body != "" {
		return s.Body
	}
	b, _ := fromCommand(commandBody, s.Command)
	return b
}

// stepText checks a step's message, title and body fields, and warns when
// the text would silently come from elsewhere because the command that
// seems to give it cannot be read.
func (v *validator) stepText(path, action string, s map[string]any) {
	for _, f := range []string{"message", "title", "body"} {
		text, ok := v.optString(s, path, f)
		if !ok {
			continue
		}
		var unknown *UnknownPlaceholderError
		if _, err := NewScope(v.doc).Render(text); errors.As(err, &unknown) {
			unknown.Names = slices.DeleteFunc(unknown.Names, func(n string) bool { return slices.Contains(v.opts.LaterNames, n) })
			if len(unknown.Names) > 0 {
				v.errorf(path+"."+f, "%v", unknown)
			}
		}
	}
	command, _ := s["command"].(string)
	if command == "" {
		return
	}
	switch action {
	case "commit":
		if _, typed := s["message"]; !typed {
			if _, ok := fromCommand(commandMessage, command); !ok {
				v.warnf(path+".command", "no -m '…' could be read from the command, so the commit message will be inputs.pr_title or the task title; set the step's \"message\" to choose it")
			}
		}
	case "create_pr":
		if _, typed := s["title"]; !typed {
			if _, ok := fromCommand(commandTitle, command); !ok {
				v.warnf(path+".command", "no --title '…' could be read from the command, so the pull request title will be inputs.pr_title or the task title; set the step's \"title\" to choose it")
			}
		}
	}
}
