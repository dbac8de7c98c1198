package action

import (
	"fmt"
	"testing"
)

// The notes of the time before facts, one of each form each action wrote,
// read as the facts they state; a note of another action, or another form,
// states none.
func TestLegacyNotesReadAsTheFactsTheyState(t *testing.T) {
	t.Parallel()
	const a, b, c = "aaaaaaaaaaaa", "bbbbbbbbbbbb", "cccccccccccc"
	for _, tc := range []struct{ action, note, want string }{
		{"create_worktree", "worktree /wt/pr 01 created from code-review-base (" + a + ")", "[{worktree /wt/pr 01}]"},
		{"create_worktree", "worktree /wt/o created from the existing branch feature/x (" + b + ")", "[{worktree /wt/o} {adopted_branch feature/x " + b + "}]"},
		{"create_worktree", "found worktree /wt/theirs already there, at the existing branch feature/y (" + c + "): wo did not create it", "[{adopted_branch feature/y " + c + "}]"},
		{"create_branch", "on branch review/01 at " + a, "[{branch review/01 " + a + "}]"},
		{"create_branch", "on branch review/01 at " + a + " (found)", "[]"},
		{"commit", "committed " + c + ": Add the foundation", "[{commit " + c + "}]"},
		{"commit", "nothing to commit: the branch is at " + c, "[]"},
		{"push", "pushed review/02 to https://github.com/acme/x.git (" + c + "); 1 file withheld", "[{pushed review/02 " + c + "}]"},
		{"push", "review/01 already at " + c + " on /origin", "[]"},
		{"conditional_loop", "fixed 2 review comment(s) in " + b + " (iteration 1); back to step 7", "[{commit " + b + "} {pushed  " + b + "}]"},
		{"create_pr", "opened pull request #3: https://github.example/acme/x/pull/3", "[{pull_request 3}]"},
		{"create_pr", "pull request #4 is open: https://github.example/acme/x/pull/4", "[{pull_request 4}]"},
		{"create_pr", "found the open pull request #5: https://github.example/acme/x/pull/5", "[{pull_request 5}]"},
		{"create_pr", "no pull request: nothing to review", "[]"},
		{"checkout_files", "committed " + c + ": not a commit step", "[]"},
		{"", "committed " + c + ": no action", "[]"},
	} {
		got := "["
		for i, f := range LegacyFacts(map[string]any{"action": tc.action, "note": tc.note}) {
			if i > 0 {
				got += " "
			}
			switch f.Kind {
			case FactWorktree:
				got += fmt.Sprintf("{%s %s}", f.Kind, f.Path)
			case FactPullRequest:
				got += fmt.Sprintf("{%s %d}", f.Kind, f.Number)
			case FactCommit:
				got += fmt.Sprintf("{%s %s}", f.Kind, f.SHA)
			default:
				got += fmt.Sprintf("{%s %s %s}", f.Kind, f.Branch, f.SHA)
			}
		}
		if got += "]"; got != tc.want {
			t.Errorf("%s %q: %s, want %s", tc.action, tc.note, got, tc.want)
		}
	}
}
