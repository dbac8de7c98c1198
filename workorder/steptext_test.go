package workorder

import (
	"strings"
	"testing"
)

func TestStepTextPrefersTypedFieldsOverTheCommand(t *testing.T) {
	s := Step{Action: "commit", Command: "git commit -m 'from the command'"}
	if got := s.CommitMessage(); got != "from the command" {
		t.Errorf("fallback message %q", got)
	}
	s.Message = "typed <pr_title>"
	if got := s.CommitMessage(); got != "typed <pr_title>" {
		t.Errorf("typed message %q, want the message field to win", got)
	}
	pr := Step{Action: "create_pr", Command: `gh pr create --title "T from command" --body 'B from command'`}
	if pr.PRTitle() != "T from command" || pr.PRBody() != "B from command" {
		t.Errorf("fallback title %q body %q", pr.PRTitle(), pr.PRBody())
	}
	pr.Title, pr.Body = "typed title", "typed body"
	if pr.PRTitle() != "typed title" || pr.PRBody() != "typed body" {
		t.Errorf("typed title %q body %q", pr.PRTitle(), pr.PRBody())
	}
	if (Step{Command: "git commit --amend"}).CommitMessage() != "" {
		t.Error("a command without -m must give no message")
	}
}

func TestValidateWarnsWhenTheCommandCannotGiveTheText(t *testing.T) {
	check := func(steps string) []Problem {
		d := doc(t, `{"_key": "t", "title": "a title", "status": "open", "work_order": {"version": "1.0",
			"objective": "Check the step texts", "procedure": [`+steps+`]}}`)
		return Validate(d, Options{Actions: []string{"commit", "create_pr"}}).Problems
	}
	warned := func(ps []Problem, field, words string) bool {
		for _, p := range ps {
			if p.Severity == SeverityWarning && p.Path == field && strings.Contains(p.Message, words) {
				return true
			}
		}
		return false
	}
	ps := check(`{"step": 1, "action": "commit", "command": "git commit -F msg.txt"},
		{"step": 2, "action": "create_pr", "command": "gh pr create --fill"}`)
	if !warned(ps, "work_order.procedure[0].command", `set the step's "message"`) {
		t.Errorf("no warning for an unreadable commit command: %v", ps)
	}
	if !warned(ps, "work_order.procedure[1].command", `set the step's "title"`) {
		t.Errorf("no warning for an unreadable create_pr command: %v", ps)
	}
	ps = check(`{"step": 1, "action": "commit", "command": "git commit -F msg.txt", "message": "Add <nothing_known>"},
		{"step": 2, "action": "create_pr", "command": "gh pr create --title 'x'"}`)
	for _, p := range ps {
		if p.Severity == SeverityWarning && strings.HasSuffix(p.Path, ".command") {
			t.Errorf("warned although the text is known: %v", p)
		}
	}
	found := false
	for _, p := range ps {
		if p.Severity == SeverityError && p.Path == "work_order.procedure[0].message" && strings.Contains(p.Message, "nothing_known") {
			found = true
		}
	}
	if !found {
		t.Errorf("an unknown placeholder in message was not reported: %v", ps)
	}
}
