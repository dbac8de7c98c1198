package action

import (
	"strings"
	"testing"

	"github.com/wo-runner/wo/workorder"
)

func TestStepTextPrefersTypedFieldsOverTheCommand(t *testing.T) {
	t.Parallel()
	if got := typedOrCommand("", commandMessage, "git commit -m 'from the command'"); got != "from the command" {
		t.Errorf("fallback message %q", got)
	}
	if got := typedOrCommand("typed <pr_title>", commandMessage, "git commit -m 'from the command'"); got != "typed <pr_title>" {
		t.Errorf("typed message %q, want the message field to win", got)
	}
	cmd := `gh pr create --title "T from command" --body 'B from command'`
	if title, body := typedOrCommand("", commandTitle, cmd), typedOrCommand("", commandBody, cmd); title != "T from command" || body != "B from command" {
		t.Errorf("fallback title %q body %q", title, body)
	}
	if title := typedOrCommand("typed title", commandTitle, cmd); title != "typed title" {
		t.Errorf("typed title %q", title)
	}
	if typedOrCommand("", commandMessage, "git commit --amend") != "" {
		t.Error("a command without -m must give no message")
	}
}

// validate checks a document of the given steps with this build's rules,
// as wo validate does.
func validate(t *testing.T, steps string) []workorder.Problem {
	t.Helper()
	d, err := workorder.DecodeDocument("test", []byte(`{"_key": "t", "title": "a title", "status": "open", "work_order": {"version": "1.0",
		"objective": "Check the step texts", "procedure": [`+steps+`]}}`))
	if err != nil {
		t.Fatal(err)
	}
	return workorder.Validate(d, workorder.Options{Actions: Names(), Conditions: Conditions(), LaterNames: LaterNames(), ReadBy: ReadBy, Advice: Advice}).Problems
}

func has(ps []workorder.Problem, severity workorder.Severity, field, words string) bool {
	for _, p := range ps {
		if p.Severity == severity && p.Path == field && strings.Contains(p.Message, words) {
			return true
		}
	}
	return false
}

func TestValidateWarnsWhenTheCommandCannotGiveTheText(t *testing.T) {
	t.Parallel()
	ps := validate(t, `{"step": 1, "action": "commit", "command": "git commit -F msg.txt"},
		{"step": 2, "action": "create_pr", "command": "gh pr create --fill"}`)
	if !has(ps, workorder.SeverityWarning, "work_order.procedure[0].command", `set the step's "message"`) {
		t.Errorf("no warning for an unreadable commit command: %v", ps)
	}
	if !has(ps, workorder.SeverityWarning, "work_order.procedure[1].command", `set the step's "title"`) {
		t.Errorf("no warning for an unreadable create_pr command: %v", ps)
	}
	ps = validate(t, `{"step": 1, "action": "commit", "command": "git commit -F msg.txt", "message": "Add <nothing_known>"},
		{"step": 2, "action": "create_pr", "command": "gh pr create --title 'x'"},
		{"step": 3, "action": "commit"}`)
	for _, p := range ps {
		if p.Severity == workorder.SeverityWarning && strings.HasSuffix(p.Path, ".command") {
			t.Errorf("warned although the text is known or no command seems to give it: %v", p)
		}
	}
	if !has(ps, workorder.SeverityError, "work_order.procedure[0].message", "nothing_known") {
		t.Errorf("an unknown placeholder in message was not reported: %v", ps)
	}
}

// The loop cannot run without its condition and the step it goes back to:
// an error from the action's own rules, which every run applies too.
func TestALoopNeedsItsConditionAndItsStep(t *testing.T) {
	t.Parallel()
	ps := validate(t, `{"step": 1, "action": "commit", "message": "m"}, {"step": 2, "action": "conditional_loop"}`)
	if !has(ps, workorder.SeverityError, "work_order.procedure[1].condition", "required for conditional_loop: one of review_comments_exist") ||
		!has(ps, workorder.SeverityError, "work_order.procedure[1].loop_to", "required for conditional_loop: the earlier step to go back to") {
		t.Errorf("problems %v", ps)
	}
	ps = validate(t, `{"step": 1, "action": "commit", "message": "m"}, {"step": 2, "action": "conditional_loop", "condition": "review_comments_exist", "loop_to": 1}`)
	for _, p := range ps {
		if p.Severity == workorder.SeverityError {
			t.Errorf("a complete loop: %v", p)
		}
	}
}

// Each action says which fields it reads (Spec.Reads): a step field
// on a step whose action does not read it is pointed out, with who does.
func TestAStepFieldItsActionDoesNotReadIsPointedOut(t *testing.T) {
	t.Parallel()
	ps := validate(t, `{"step": 1, "action": "push", "title": "x"}, {"step": 2, "action": "create_pr", "title": "y", "max_iterations": 2}`)
	if !has(ps, workorder.SeverityWarning, "work_order.procedure[0].title", "a push step does not read title (only create_pr steps do)") ||
		!has(ps, workorder.SeverityWarning, "work_order.procedure[1].max_iterations", "only conditional_loop steps do") {
		t.Errorf("problems %v", ps)
	}
	if has(ps, workorder.SeverityWarning, "work_order.procedure[1].title", "") {
		t.Errorf("create_pr reads its title: %v", ps)
	}
	if got := ReadBy("work_order.context.base_branch"); strings.Join(got, ",") != "create_worktree,create_pr,update_task" {
		t.Errorf("base_branch is read by %v", got)
	}
}
