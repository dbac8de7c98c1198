package workorder

import (
	"strings"
	"testing"
)

func TestCommandFactsAndDisagreements(t *testing.T) {
	d := doc(t, `{"_key": "t", "title": "a title", "status": "open", "work_order": {"version": "1.0",
		"objective": "Read what the commands name",
		"context": {"base_branch": "develop", "worktree_root": "/tmp/wt"},
		"inputs": {"branch_name": "review/01-x", "worktree_name": "wt-01"},
		"procedure": [
			{"step": 1, "action": "create_worktree", "command": "git worktree add /tmp/wt/pr-01-foundation code-review-base"},
			{"step": 2, "action": "create_branch", "command": "cd /tmp/wt/pr-01-foundation && git checkout -b review/01-foundation"},
			{"step": 3, "action": "push", "command": "git push -u upstream review/01-foundation"}]}}`)
	f := FactsOf(d)
	if f.WorktreePath != "/tmp/wt/pr-01-foundation" || f.Base != "code-review-base" || f.Branch != "review/01-foundation" || f.Remote != "upstream" {
		t.Fatalf("facts %v", f)
	}
	ps := Validate(d, Options{Actions: []string{"create_worktree", "create_branch", "push"}}).Warnings()
	for _, field := range []string{"work_order.inputs.branch_name", "work_order.context.base_branch", "work_order.inputs.worktree_name"} {
		found := false
		for _, p := range ps {
			if p.Path == field && strings.Contains(p.Message, "command names") {
				found = true
			}
		}
		if !found {
			t.Errorf("no warning on %s where it disagrees with the commands: %v", field, ps)
		}
	}
	// Templates that render to the same names agree.
	d = doc(t, `{"_key": "t", "title": "a title", "status": "open", "work_order": {"version": "1.0",
		"objective": "Read what the commands name",
		"context": {"base_branch": "develop", "worktree_root": "/tmp/wt"},
		"inputs": {"branch_name": "review/01-x", "worktree_name": "wt-01"},
		"procedure": [
			{"step": 1, "action": "create_worktree", "command": "git worktree add <worktree_root>/<worktree_name> <base_branch>"},
			{"step": 2, "action": "create_branch", "command": "git checkout -b <branch_name>"}]}}`)
	for _, p := range Validate(d, Options{Actions: []string{"create_worktree", "create_branch"}}).Warnings() {
		if strings.Contains(p.Message, "command names") {
			t.Errorf("warned although the commands agree: %v", p)
		}
	}
}

func TestTheWorkBranchIsNeverTheBaseHoweverTheyAreNamed(t *testing.T) {
	errorsAt := func(raw string) map[string]string {
		d := doc(t, raw)
		out := map[string]string{}
		for _, p := range Validate(d, Options{Actions: []string{"create_worktree", "create_branch"}}).Errors() {
			out[p.Path] = p.Message
		}
		return out
	}
	// The base named only by the worktree command, the branch by inputs.
	got := errorsAt(`{"_key": "t", "title": "a title", "status": "open", "work_order": {"version": "1.0",
		"objective": "Commit onto the base without review",
		"inputs": {"branch_name": "code-review-base"},
		"procedure": [{"step": 1, "action": "create_worktree", "command": "git worktree add /tmp/wt/x code-review-base"}]}}`)
	if !strings.Contains(got["work_order.inputs.branch_name"], "base") {
		t.Errorf("branch = base named by the command: %v", got)
	}
	// The branch named only by the checkout command.
	got = errorsAt(`{"_key": "t", "title": "a title", "status": "open", "work_order": {"version": "1.0",
		"objective": "Commit onto the base without review", "context": {"base_branch": "main"},
		"procedure": [{"step": 1, "action": "create_worktree"}, {"step": 2, "action": "create_branch", "command": "git checkout -b main"}]}}`)
	if !strings.Contains(got["work_order.procedure[1].command"], "base") {
		t.Errorf("branch named by the command = base: %v", got)
	}
	got = errorsAt(`{"_key": "t", "title": "a title", "status": "open", "work_order": {"version": "1.0",
		"objective": "A branch git refuses", "context": {"base_branch": "main"},
		"procedure": [{"step": 1, "action": "create_branch", "command": "git checkout -b a..b"}]}}`)
	if got["work_order.procedure[0].command"] == "" {
		t.Errorf("a branch git refuses, named by the command: %v", got)
	}
}

func TestACommandMayNotPutTheWorktreeOutsideItsRoot(t *testing.T) {
	for _, path := range []string{"/etc/wo", "/tmp/wt/../escape", "relative/dir", "/tmp/wt"} {
		d := doc(t, `{"_key": "t", "title": "a title", "status": "open", "work_order": {"version": "1.0",
			"objective": "Put the worktree somewhere", "context": {"worktree_root": "/tmp/wt"},
			"procedure": [{"step": 1, "action": "create_worktree", "command": "git worktree add `+path+` main"}]}}`)
		r := Validate(d, Options{Actions: []string{"create_worktree"}})
		found := false
		for _, p := range r.Errors() {
			found = found || (p.Path == "work_order.procedure[0].command" && strings.Contains(p.Message, "not inside"))
		}
		if !found {
			t.Errorf("%s: %v", path, r.Problems)
		}
	}
	if !Inside("/tmp/wt", "/tmp/wt/pr-01") || Inside("/tmp/wt", "/tmp/wtx/a") || Inside("/tmp/wt", "/tmp/wt") || Inside("", "/a/b") {
		t.Error("Inside draws the wrong line")
	}
}
