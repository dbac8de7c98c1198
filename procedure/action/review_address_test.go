package action

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wo-runner/wo/gitops"
	"github.com/wo-runner/wo/integration/ghstandin"
	"github.com/wo-runner/wo/internal/gittest"
	"github.com/wo-runner/wo/procedure/internal/fixture"
	"github.com/wo-runner/wo/redact"
)

// A fix addresses a thread when it touched the lines the thread shows, not
// when it changed the file somewhere else: wo replies "Addressed in" (and
// resolves, when asked) only there.
func TestAFixAddressesTheThreadsWhoseLinesItTouched(t *testing.T) {
	dir := t.TempDir()
	gittest.Run(t, dir, "init", "-q", "-b", "main")
	lines := make([]string, 30)
	for i := range lines {
		lines[i] = fmt.Sprintf("line %d", i+1)
	}
	commit := func(files map[string]string) string {
		for name, text := range files {
			if text == "" {
				os.Remove(filepath.Join(dir, name))
				continue
			}
			fixture.WriteFile(t, filepath.Join(dir, name), text)
		}
		gittest.Run(t, dir, "add", "-A")
		gittest.Run(t, dir, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-qm", "x")
		return gittest.Run(t, dir, "rev-parse", "HEAD")
	}
	before := commit(map[string]string{"long.go": strings.Join(lines, "\n") + "\n", "gone.go": "package gone\n", "top.go": "a\nb\n"})
	lines[24] = "line 25, fixed"
	after := commit(map[string]string{"long.go": strings.Join(lines, "\n") + "\n", "gone.go": "", "top.go": "A\nb\n"})
	repo, err := gitops.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer repo.Close()
	addressed := addressedBy(repo, before, after)
	for _, c := range []struct {
		path        string
		start, line int
		want        bool
	}{
		{"long.go", 0, 25, true},
		{"long.go", 0, 22, true}, // within the three lines GitHub shows around it
		{"long.go", 0, 21, false},
		{"long.go", 0, 28, true},
		{"long.go", 0, 29, false},
		{"long.go", 0, 5, false}, // the same file, far from the change
		{"long.go", 0, 0, false}, // an outdated thread has no line to place
		{"top.go", 0, 0, false},  // not even beside a change on the first line
		{"top.go", 0, 1, true},
		{"long.go", 10, 24, true},  // a comment on lines 10 to 24
		{"long.go", 2, 21, false},  // on lines 2 to 21: the change is four lines below
		{"long.go", 30, 20, false}, // a start after the end counts as the end alone
		{"gone.go", 0, 1, false},   // gone, perhaps renamed whole: not claimed
		{"new.go", 0, 1, false},    // not there before: not what the review saw
	} {
		if got := addressed(c.path, c.start, c.line); got != c.want {
			t.Errorf("%s:%d-%d addressed %v, want %v", c.path, c.start, c.line, got, c.want)
		}
	}
	if addressedBy(repo, before, strings.Repeat("0", 40))("long.go", 0, 25) {
		t.Error("a fix commit wo cannot read addresses a thread")
	}
	if addressedBy(repo, before, before)("long.go", 0, 25) {
		t.Error("an unchanged file addresses a thread")
	}
}

// A review comment can quote the token (a reviewer pasting a log): the
// agent's prompt carries the mask instead (the engine's write-back masks
// it in the state it writes: procedure's TestTheWriteBackMasksTheToken).
func TestTheTokenInAReviewCommentNeverReachesTheAgent(t *testing.T) {
	round := [][]ghstandin.Comment{{{Path: "foundation/new.go", Line: 3, Body: "The log says Authorization: token " + fixture.Token}}}
	h := newStepContext(t, stepOpts{GitHub: true, Reviews: round,
		Agent: "cat > ../prompt.txt\necho '// fixed' >> foundation/new.go\n"})
	h.upTo("wait_for_review")
	reviewRound(t, h)
	if st := h.stored(); len(st.ReviewThreads) != 1 || len(st.ReviewComments) != 1 {
		t.Errorf("threads %v, comments %v: the comment itself must still be there", st.ReviewThreads, st.ReviewComments)
	}
	h.must("conditional_loop")
	prompt := fixture.ReadFile(t, filepath.Join(h.WtRoot, "prompt.txt"))
	if strings.Contains(prompt, fixture.Token) || !strings.Contains(prompt, "Authorization: token "+redact.Mask) {
		t.Errorf("the agent's prompt:\n%s", prompt)
	}
}

// An agent that stages (or commits) its own fix has fixed something: wo
// commits what the index holds and pushes it.
func TestAFixTheAgentStagedIsCommittedAndPushed(t *testing.T) {
	for name, agent := range map[string]string{
		"staged":    "echo '// fixed' >> foundation/new.go\ngit add -A\n",
		"committed": "echo '// fixed' >> foundation/new.go\ngit -c user.name=A -c user.email=a@example.com commit -qam fix\n",
	} {
		t.Run(name, func(t *testing.T) {
			// Staging and committing write the repository's .git, which
			// the sandbox keeps the agent out of: unconfined, as where
			// there is none.
			h := newStepContext(t, stepOpts{GitHub: true, Reviews: oneRound, Agent: agent, Unconfined: true})
			h.upTo("wait_for_review")
			reviewRound(t, h)
			before := h.r.state.PushedSHA
			out := h.must("conditional_loop")
			after := gittest.Run(t, h.Remote, "rev-parse", "refs/heads/"+h.r.state.Branch)
			if after == before || !strings.HasPrefix(out.Note, "fixed 1 review comment(s) in "+after[:12]) {
				t.Errorf("remote tip %s (was %s), note %q", after[:12], before[:12], out.Note)
			}
			if got := gittest.Run(t, h.Remote, "show", after+":foundation/new.go"); !strings.HasSuffix(got, "// fixed") {
				t.Errorf("the pushed fix lacks the agent's change:\n%s", got)
			}
		})
	}
}

// A comment on lines the change removed (GitHub's LEFT side) is numbered
// as in the base file: wo cannot place it in the fix and claims nothing.
func TestACommentOnRemovedLinesGetsNoAddressedReply(t *testing.T) {
	h := newStepContext(t, stepOpts{GitHub: true, Reviews: oneRound, Agent: "echo '// fixed' >> foundation/new.go\n"})
	h.upTo("wait_for_review")
	reviewRound(t, h)
	h.setState(func(s *stateT) { s.ReviewThreads[0].Deleted = true })
	out := h.must("conditional_loop")
	if strings.Contains(out.Note, "replied") {
		t.Errorf("note %q: no thread was answered", out.Note)
	}
	if got := woReplies(threadOn(t, h, "foundation/new.go")); len(got) != 0 {
		t.Errorf("wo replied on a comment about removed lines: %q", got)
	}
}
