package workorder

import (
	"os/exec"
	"strings"
	"testing"
)

// branchNames are tricky names, checked against git itself.
var branchNames = []string{
	"main", "review/01-foundation", "HEAD", "head", "HEAD/x", "x/HEAD", "-x", "x-", "a..b", "a/.b", ".a",
	"a.lock", "x.lock.y", "a/b.lock/c", ".lock", "x/.lock", "a//b", "/a", "a/", "a/b/", "a.", "...", ".",
	"", "@", "@a", "a@", "a@b", "a@{b", "@{-1}", "a b", "a~b", "a^b", "a:b", "a?b", "a*b", "a[b", `a\b`,
	"a\x7fb", "a\tb", "a\nb", "héllo", "refs/heads/x", "a/./b", "a/../b", "a{b", "a}b", "a]b", "a!b",
}

// stricter are names git takes for a branch that wo refuses: "@" alone
// is HEAD in git's revision syntax.
var stricter = map[string]bool{"@": true}

func TestCheckBranchNameAgreesWithGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed: ", err)
	}
	dir := t.TempDir() // outside any repository: @{-1} has nothing to expand to
	for _, name := range branchNames {
		cmd := exec.Command("git", "check-ref-format", "--branch", name)
		cmd.Dir = dir
		gitOK := cmd.Run() == nil
		err := CheckBranchName(name)
		switch {
		case stricter[name]:
			if !gitOK || err == nil {
				t.Errorf("%q: git accepts %v, wo refuses %v: the exception no longer holds", name, gitOK, err)
			}
		case gitOK && err != nil:
			t.Errorf("%q: git accepts it, wo refuses: %v", name, err)
		case !gitOK && err == nil:
			t.Errorf("%q: git refuses it, wo accepts it", name)
		}
		if err != nil && !strings.Contains(err.Error(), "not a branch name git accepts") {
			t.Errorf("%q: the message does not say what is wrong: %v", name, err)
		}
	}
}

func TestWorkBranchMustDifferFromBaseAndSource(t *testing.T) {
	cases := []struct {
		work, base, source, remote string
		refused                    bool
	}{
		{"review/01", "main", "feature", "", false},
		{"main", "main", "feature", "", true},
		{"feature", "main", "feature", "", true},
		{"main", "refs/heads/main", "feature", "", true},
		{"main", "origin/main", "feature", "", true},
		{"main", "upstream/main", "feature", "upstream", true},
		{"main", "refs/remotes/origin/main", "feature", "", true},
		{"refs/heads/main", "main", "feature", "", true},
		{"main-review", "main", "feature", "", false},
	}
	for _, c := range cases {
		err := CheckWorkBranch(c.work, c.base, c.source, c.remote)
		if (err != nil) != c.refused {
			t.Errorf("work %q base %q source %q remote %q: %v, want refused=%v", c.work, c.base, c.source, c.remote, err, c.refused)
		}
	}

	// The document validator reports it on the branch name.
	for _, tc := range []struct{ branch, want string }{
		{"code-review-base", `branch_name "code-review-base" is the base_branch`},
		{"main", `branch_name "main" is the source_branch`},
		{"HEAD", `"HEAD" is not a branch name git accepts`},
	} {
		d := doc(t, `{"_key": "task_b", "title": "T", "status": "open", "work_order": {"version": "1.0",
			"objective": "Put the foundation files up for review",
			"context": {"base_branch": "code-review-base", "source_branch": "main"},
			"inputs": {"branch_name": "`+tc.branch+`"},
			"procedure": [{"step": 1, "action": "create_branch"}]}}`)
		r := Validate(d, Options{Actions: []string{"create_branch"}})
		var found bool
		for _, p := range r.Errors() {
			if p.Path == "work_order.inputs.branch_name" && strings.Contains(p.String(), tc.want) {
				found = true
			}
		}
		if !found {
			t.Errorf("branch_name %q: errors %v, want one saying %q", tc.branch, r.Errors(), tc.want)
		}
	}
}
