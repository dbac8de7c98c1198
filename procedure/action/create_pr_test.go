package action

import (
	"fmt"
	"strings"
	"testing"

	"github.com/wo-runner/wo/integration/ghstandin"
	"github.com/wo-runner/wo/procedure/internal/fixture"
)

const prURL1 = "https://github.example/" + fixture.Repo + "/pull/1"

// prsOf lists the stand-in's PRs as "#n state head→base title".
func prsOf(gh *ghstandin.Server) []string {
	var out []string
	for _, p := range gh.PullRequests(fixture.Repo) {
		head, base := p["head"].(map[string]any), p["base"].(map[string]any)
		out = append(out, fmt.Sprintf("#%v %v %v→%v %v", p["number"], p["state"], head["ref"], base["ref"], p["title"]))
	}
	return out
}

func TestPullRequestCreateOpensOnePR(t *testing.T) {
	h := newStepContext(t, stepOpts{GitHub: true})
	h.pushBranch()
	out, err := h.run("create_pr")
	if err != nil {
		t.Fatal(err)
	}
	want := "[#1 open " + fixture.Branch + "→" + fixture.Base + " " + fixture.Title + "]"
	if got := fmt.Sprint(prsOf(h.GH)); got != want {
		t.Fatalf("PRs on GitHub: %s, want %s", got, want)
	}
	body := h.GH.PullRequests(fixture.Repo)[0]["body"].(string)
	if !strings.Contains(body, "Put the foundation files up for review") {
		t.Errorf("PR body %q does not carry the objective", body)
	}
	st := h.recorded(out)
	if st.PRNumber != 1 || st.PRURL == nil || *st.PRURL != prURL1 {
		t.Errorf("recorded pr_number %d pr_url %v", st.PRNumber, st.PRURL)
	}
	if want := "opened pull request #1: " + prURL1; out.Note != want {
		t.Errorf("note %q, want %q", out.Note, want)
	}

	// A crash before the number was recorded: the open PR is found.
	found, err := h.run("create_pr")
	if err != nil {
		t.Fatalf("rerun before recording: %v", err)
	}
	if want := "found the open pull request #1: " + prURL1; found.Note != want {
		t.Errorf("note %q, want %q", found.Note, want)
	}
	if st := h.recorded(found); st.PRNumber != 1 {
		t.Errorf("rerun records pr_number %d", st.PRNumber)
	}

	// A rerun after recording it.
	h.keep(out)
	again, err := h.run("create_pr")
	if err != nil {
		t.Fatalf("rerun after recording: %v", err)
	}
	if want := "pull request #1 is open: " + prURL1; again.Note != want {
		t.Errorf("note %q, want %q", again.Note, want)
	}
	if n := len(h.GH.PullRequests(fixture.Repo)); n != 1 {
		t.Errorf("%d PRs after three runs, want 1: %v", n, prsOf(h.GH))
	}
}

func TestPullRequestCreateTitleFromTheCommand(t *testing.T) {
	h := newStepContext(t, stepOpts{GitHub: true, Procedure: []any{
		map[string]any{"step": 1, "action": "create_pr", "command": `gh pr create --title "Review of <branch_name>" --body 'Files for <task_key>'`},
	}})
	if got, want := h.plan("create_pr"), "find an open pull request "+fixture.Branch+" → "+fixture.Base+" in "+fixture.Repo+", else open one titled \"Review of "+fixture.Branch+"\""; got != want {
		t.Errorf("plan %q, want %q", got, want)
	}
	h.pushBranch()
	h.must("create_pr")
	p := h.GH.PullRequests(fixture.Repo)[0]
	if p["title"] != "Review of "+fixture.Branch || p["body"] != "Files for "+fixture.Key {
		t.Errorf("title %q body %q", p["title"], p["body"])
	}
}

func TestPullRequestCreateRefusesAMergedPR(t *testing.T) {
	h := newStepContext(t, stepOpts{GitHub: true})
	h.openPR()
	h.GH.Merge(fixture.Repo, 1)
	_, err := h.run("create_pr")
	fixture.ErrContains(t, err, "pull request #1 ("+prURL1+") is merged: reopen it on GitHub, or wo reset "+fixture.Key+" to start over")
	if n := len(h.GH.PullRequests(fixture.Repo)); n != 1 {
		t.Errorf("a second PR was opened: %v", prsOf(h.GH))
	}
}

func TestPullRequestCreateErrors(t *testing.T) {
	t.Run("the branch is not pushed", func(t *testing.T) {
		h := newStepContext(t, stepOpts{GitHub: true})
		_, err := h.run("create_pr")
		fixture.ErrContains(t, err, "creating the pull request "+fixture.Branch+" → "+fixture.Base, "head "+fixture.Branch+" does not exist")
		if n := len(h.GH.PullRequests(fixture.Repo)); n != 0 {
			t.Errorf("PRs: %v", prsOf(h.GH))
		}
	})
	t.Run("no token", func(t *testing.T) {
		h := newStepContext(t, stepOpts{GitHub: true, Env: map[string]string{"GITHUB_TOKEN": ""}})
		want := "no GitHub token: set GITHUB_TOKEN (or GH_TOKEN)"
		fixture.ErrContains(t, h.check("create_pr"), want)
		h.pushBranch()
		_, err := h.run("create_pr")
		fixture.ErrContains(t, err, want)
	})
	t.Run("GH_TOKEN serves when GITHUB_TOKEN is not set", func(t *testing.T) {
		h := newStepContext(t, stepOpts{GitHub: true, Env: map[string]string{"GITHUB_TOKEN": "", "GH_TOKEN": fixture.Token}})
		if err := h.check("create_pr"); err != nil {
			t.Fatal(err)
		}
		h.pushBranch()
		h.must("create_pr")
	})
	t.Run("a token GitHub refuses is never shown", func(t *testing.T) {
		secret := "ghp_WRONG_secret_1234"
		h := newStepContext(t, stepOpts{GitHub: true, Env: map[string]string{"GITHUB_TOKEN": secret}})
		h.pushBranch()
		_, err := h.run("create_pr")
		fixture.ErrContains(t, err, "GitHub refused the token (401", "set GITHUB_TOKEN (or GH_TOKEN) to a valid token")
		if err != nil && strings.Contains(err.Error(), secret) {
			t.Errorf("the error shows the token: %v", err)
		}
	})
	t.Run("a repository that is not owner/name", func(t *testing.T) {
		h := newStepContext(t, stepOpts{GitHub: true, Context: map[string]any{"repo": nil}, Procedure: fixture.BareSteps("create_pr")})
		fixture.ErrContains(t, h.check("create_pr"), `GitHub repository "": set work_order.context.repo to owner/name`)
	})
}
