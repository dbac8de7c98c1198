//go:build unix

package action

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wo-runner/wo/internal/gittest"
	"github.com/wo-runner/wo/procedure/internal/fixture"
)

// namedAgent writes script as a program of the given name (so that wo
// runs it with that agent's profile) and makes it the run's agent.
func namedAgent(t *testing.T, h *stepHarness, name, script string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	h.settings().Agent = path
	// A named agent runs only with its key in wo's environment.
	h.setenv("OPENAI_API_KEY", "sk-test")
}

// What aider leaves at the root of the worktree (its histories and tag
// cache) is gone after its run and not in the fix's commit; one of those
// files the worktree had before is the user's, and stays.
func TestAidersFilesAreRemovedAfterItsRunButNotTheUsers(t *testing.T) {
	h := loopReady(t, stepOpts{Context: map[string]any{"fix_paths": []any{"**"}}})
	fixture.WriteFile(t, filepath.Join(h.Worktree, ".aider.input.history"), "the user's own\n")
	gittest.Run(t, h.Worktree, "add", ".aider.input.history")
	gittest.Run(t, h.Worktree, "commit", "-qm", "keep my aider history")
	namedAgent(t, h, "aider", fixOf+`echo chat > .aider.chat.history.md
mkdir .aider.tags.cache.v4 && echo tags > .aider.tags.cache.v4/cache.db
`)
	if _, err := h.run("conditional_loop"); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{".aider.chat.history.md", ".aider.tags.cache.v4"} {
		if _, err := os.Lstat(filepath.Join(h.Worktree, name)); !os.IsNotExist(err) {
			t.Errorf("%s is still in the worktree after the agent's run (%v)", name, err)
		}
	}
	if got := fixture.ReadFile(t, filepath.Join(h.Worktree, ".aider.input.history")); got != "the user's own\n" {
		t.Errorf("the user's .aider.input.history: %q", got)
	}
	if got := gittest.Run(t, h.Worktree, "show", "--format=", "--name-only", "HEAD"); got != "foundation/new.go" {
		t.Errorf("the fix commit's files:\n%s", got)
	}
}

// The agent's build caches are wo's own under the user's cache folder;
// where that cannot be made, a folder of the agent's run, so that its
// checks start cold instead of failing.
func TestTheAgentsBuildCacheFallsBackToItsOwnFolder(t *testing.T) {
	check := `case "$GOCACHE" in
"$(dirname "$HOME")"/cache/GOCACHE) where=box ;;
"$XDG"/wo/agent/tasks/*/go-build) where=user ;;
*) exit 3 ;;
esac
[ "$where" = "$WANT" ] || exit 4
echo x > "$GOCACHE/probe" || exit 5
` + fixOf
	for _, want := range []string{"user", "box"} {
		t.Run(want, func(t *testing.T) {
			xdg := t.TempDir()
			if want == "box" {
				// A file where the cache folder would go: it cannot be made.
				fixture.WriteFile(t, filepath.Join(xdg, "wo"), "not a folder\n")
			}
			script := strings.NewReplacer("$XDG", xdg, "$WANT", want).Replace(check)
			h := loopReady(t, stepOpts{Env: map[string]string{"PATH": os.Getenv("PATH"), "XDG_CACHE_HOME": xdg}, Agent: script})
			if _, err := h.run("conditional_loop"); err != nil {
				t.Fatal(err)
			}
			_, err := os.Stat(filepath.Join(taskCacheRoot(func(n string) string { return map[string]string{"XDG_CACHE_HOME": xdg}[n] }, fixture.Key), "go-build", "probe"))
			if (err == nil) != (want == "user") {
				t.Errorf("the cache under the user's cache folder has the agent's file: %v", err == nil)
			}
		})
	}
}

// A named agent that needs an API key (aider) is not run without one:
// the run says which keys it takes, and pushes nothing.
func TestANamedAgentWithoutItsKeyIsNotRun(t *testing.T) {
	h := loopReady(t, stepOpts{})
	namedAgent(t, h, "aider", fixOf)
	delete(h.r.env, "OPENAI_API_KEY")
	pushed := gittest.Run(t, h.Remote, "rev-parse", fixture.Branch)
	_, err := h.run("conditional_loop")
	fixture.ErrContains(t, err, "agent aider reported a failure: no credentials: set one of OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY, DEEPSEEK_API_KEY in wo's environment (wo passes it to aider by name)")
	if strings.Contains(fixture.ReadFile(t, filepath.Join(h.Worktree, "foundation/new.go")), "// N is exported.") {
		t.Error("the agent ran without its key")
	}
	if got := gittest.Run(t, h.Remote, "rev-parse", fixture.Branch); got != pushed {
		t.Error("something was pushed")
	}
}

// An agent's program that cannot be started: wo's launcher says so, and
// the run says the agent could not run (not that it failed).
func TestAnAgentThatCannotStartIsSaidNotToHaveRun(t *testing.T) {
	h := loopReady(t, stepOpts{})
	path := filepath.Join(t.TempDir(), "fixer")
	fixture.WriteFile(t, path, "#!/bin/sh\n"+fixOf) // not executable
	h.settings().Agent = path
	_, err := h.run("conditional_loop")
	fixture.ErrContains(t, err, "agent command "+path+" could not run: ", "permission denied")
	if strings.Contains(err.Error(), "exited with status") {
		t.Errorf("the launcher's refusal is told as the agent's exit: %v", err)
	}
}
