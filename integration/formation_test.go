package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/wo-runner/wo/internal/gittest"
)

func TestSourceEventRaceMakesOneTask(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1)
	f.wo(nil, "init")
	for round := 0; round < 8; round++ {
		event := fmt.Sprintf("chat-msg-%d", round)
		var wg sync.WaitGroup
		keys := make([]string, 2)
		codes := make([]int, 2)
		for p := 0; p < 2; p++ {
			wg.Add(1)
			go func(p int) {
				defer wg.Done()
				cmd := f.cmd(nil, "create", "--description", "Summarise the incident from this chat", "--source-event-id", event, "--json")
				var out, errb bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &errb
				r := result(cmd, cmd.Run(), out.String(), errb.String())
				codes[p] = r.code
				var env struct {
					Data struct {
						TaskID string `json:"task_id"`
					}
				}
				json.Unmarshal([]byte(r.stdout), &env)
				keys[p] = env.Data.TaskID
			}(p)
		}
		wg.Wait()
		if codes[0] != 0 || codes[1] != 0 || keys[0] == "" || keys[0] != keys[1] {
			t.Fatalf("event %s: exit codes %v, keys %v", event, codes, keys)
		}
	}
	list := f.wo(nil, "list", "--json")
	var env struct{ Data []struct{ Key string } }
	json.Unmarshal([]byte(list.stdout), &env)
	if len(env.Data) != 8 {
		t.Errorf("%d tasks for 8 events: %s", len(env.Data), strings.TrimSpace(list.stdout))
	}
}

func TestApprovalGate(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 10)
	f.importTask(f.task("task_gate", gitProcedure(), func(d map[string]any) {
		d["work_order"].(map[string]any)["approval"] = map[string]any{"required": true}
	}))
	before := snapshot(t, f)
	r := f.wo(nil, "run", "task_gate")
	if r.code != 3 || !strings.Contains(r.stderr, "needs approval before step 1") || !strings.Contains(r.stderr, "5 push: git push -u origin review/01-foundation") {
		t.Fatalf("exit %d:\n%s", r.code, r.stderr)
	}
	if after := snapshot(t, f); after.repo != before.repo {
		t.Error("the gate let something change the repository")
	}
	if doc := f.doc("task_gate"); doc["status"] != "open" {
		t.Errorf("status %v", doc["status"])
	}
	if r := f.wo(nil, "revise", "task_gate", "--note", "Leave docs out of this PR"); r.code != 0 {
		t.Fatalf("revise: %s", r.stderr)
	}
	if r := f.wo(nil, "run", "task_gate"); r.code != 3 || !strings.Contains(r.stderr, "sent back for revision (Leave docs out of this PR)") {
		t.Fatalf("run after revise: exit %d %s", r.code, r.stderr)
	}
	if r := f.wo(nil, "approve", "task_gate"); r.code != 0 || !strings.Contains(r.stdout, "approved") {
		t.Fatalf("approve: %s %s", r.stdout, r.stderr)
	}
	if r := f.wo(nil, "run", "task_gate"); r.code != 0 {
		t.Fatalf("run after approval: exit %d %s", r.code, r.stderr)
	}
	f.assertGitDone("task_gate")
	st := stateOf(f.doc("task_gate"))
	approval, _ := st["approval"].(map[string]any)
	if approval["decision"] != "approved" || !strings.Contains(fmt.Sprint(approval["by"]), "@") || approval["at"] == nil {
		t.Errorf("approval recorded: %v", approval)
	}
	logs := f.wo(nil, "log", "task_gate").stdout
	for _, want := range []string{"approval_requested", "approval_revise", "approval_approved"} {
		if !strings.Contains(logs, want) {
			t.Errorf("log lacks %s:\n%s", want, logs)
		}
	}
	// Cancel closes with the reason.
	g := newFixture(t, 5)
	g.importTask(g.task("task_cancel", gitProcedure(), func(d map[string]any) {
		d["work_order"].(map[string]any)["approval"] = map[string]any{"required": true}
	}))
	if r := g.wo(nil, "cancel", "task_cancel", "--reason", "Superseded by task_other"); r.code != 0 {
		t.Fatalf("cancel: %s", r.stderr)
	}
	doc := g.doc("task_cancel")
	if doc["status"] != "closed" || fmt.Sprint(stateOf(doc)["approval"].(map[string]any)["note"]) != "Superseded by task_other" {
		t.Errorf("cancelled: status %v approval %v", doc["status"], stateOf(doc)["approval"])
	}
}

func TestEphemeralResearchDeliversToAPRComment(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 5)
	gh, env := withGitHub(t, f)
	gh.ReviewRounds = nil
	// A PR to comment on, opened by someone.
	gittest.Run(t, f.repo, "push", "-q", "origin", "main:refs/heads/feature")
	c := ghClient(t, gh)
	if _, err := c.CreatePR(testContext(), "feature", "code-review-base", "Feature", "body"); err != nil {
		t.Fatal(err)
	}
	agent := filepath.Join(f.root, "research.sh")
	writeFile(t, agent, "#!/bin/sh\necho 'Read the diff; checked three call sites.'\necho '<deliverable>The change is safe: all three callers handle the new error.</deliverable>'\n")
	os.Chmod(agent, 0o755)
	doc := map[string]any{"_key": "task_research", "title": "Research the impact of the change", "status": "open",
		"work_order": map[string]any{"version": "1.0", "objective": "Find out whether the change breaks any caller",
			"approval": map[string]any{"required": true},                      // ephemeral: never takes the gate
			"context":  map[string]any{"repo": "acme/hermes", "target_pr": 1}, // a PR someone else opened
			"procedure": []any{map[string]any{"step": 1, "action": "agent", "description": "Review the callers",
				"delivery": []any{map[string]any{"target": "pr_comment"}}}}}}
	f.importTask(doc)
	env = append(env, "WO_AGENT="+agent)
	if r := f.wo(env, "run", "task_research"); r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	// A rerun after a reset posts nothing twice.
	f.wo(nil, "reset", "task_research", "--to-start")
	if r := f.wo(env, "run", "task_research"); r.code != 0 {
		t.Fatalf("rerun: exit %d\n%s", r.code, r.stderr)
	}
	comments, err := c.IssueComments(testContext(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(comments) != 1 || !strings.HasPrefix(comments[0].Body, "The change is safe") || strings.Contains(comments[0].Body, "checked three call sites") {
		t.Errorf("comments on the PR: %+v", comments)
	}
	if list := gittest.Run(t, f.repo, "worktree", "list", "--porcelain"); strings.Count(list, "worktree ") != 1 {
		t.Errorf("an ephemeral work order took a worktree:\n%s", list)
	}
}
