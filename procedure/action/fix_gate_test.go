//go:build unix

package action

import (
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/wo-runner/wo/gitops"
	"github.com/wo-runner/wo/internal/gittest"
	"github.com/wo-runner/wo/procedure/internal/fixture"
)

// The fix gate (issue 24, finding 2): an agent's fix is pushed only when
// every path it changed is the task's, nothing in it runs in CI or hides a
// repository, and it sits on top of the last push on the work branch. The
// agents below are shell scripts run in the worktree.

// fixOf is the fix below every agent's attack: a real change to a
// manifest file, so that only the attack can be what is refused.
const fixOf = "printf 'package foundation\\n\\n// N is exported.\\nconst N = 0\\n' > foundation/new.go\n"

// refusedFix runs the loop with the agent and checks that the fix was
// refused with nothing pushed; it returns the refusal.
func refusedFix(t *testing.T, opts stepOpts) (*stepHarness, *FixRefusedError) {
	t.Helper()
	h := loopReady(t, opts)
	pushed := gittest.Run(t, h.Remote, "rev-parse", fixture.Branch)
	refs := gittest.Run(t, h.Remote, "for-each-ref")
	_, err := h.run("conditional_loop")
	var refused *FixRefusedError
	if !errors.As(err, &refused) {
		t.Fatalf("err %v, want the fix refused", err)
	}
	if got := gittest.Run(t, h.Remote, "for-each-ref"); got != refs {
		t.Errorf("the remote changed:\n%s\nwas:\n%s", got, refs)
	}
	if refused.From != pushed || refused.Key != fixture.Key || refused.Worktree != h.Worktree {
		t.Errorf("refusal from %s key %s worktree %s", refused.From, refused.Key, refused.Worktree)
	}
	if fp := h.r.state.FixPushed; fp != nil {
		t.Errorf("state.fix_pushed %+v is kept: a rerun would push the refused fix", fp)
	}
	return h, refused
}

// reasons maps each refused path to its reason.
func reasons(r *FixRefusedError) map[string]string {
	out := map[string]string{}
	for _, x := range r.Refused {
		out[x.Path] = x.Reason
	}
	return out
}

func TestTheFixGateRefusesWhatAnAgentLeftInTheWorktree(t *testing.T) {
	for _, c := range []struct {
		name, agent, path, reason string
	}{
		{".env", "echo 'AWS_SECRET_ACCESS_KEY=x' > .env\n", ".env", "variables tools load, such as the API base an agent sends its key to: a fix changes it only when the work order names it; name it in inputs.file_manifest (or inputs.delete_manifest) to allow it"},
		{"node_modules", "mkdir -p node_modules/left-pad && echo x > node_modules/left-pad/index.js\n", "node_modules/left-pad/index.js", "outside inputs.file_manifest and context.fix_paths"},
		{"a workflow", "mkdir -p .github/workflows && echo 'on: push' > .github/workflows/evil.yml\n", ".github/workflows/evil.yml",
			"under .github/, whose workflows run with the repository's secrets: never pushed after a review"},
		{".gitmodules", "printf '[submodule \"x\"]\\n' > .gitmodules\n", ".gitmodules", "a .gitmodules file: submodules are never pushed after a review"},
		{"a nested repository", "git init -q vendor/x && echo x > vendor/x/x.go\n", "vendor/x/", "a nested git repository: wo commits neither a gitlink nor the files of another .git"},
		{"a named pipe", "mkfifo foundation/pipe\n", "foundation/pipe", "a named pipe: only regular files and symbolic links are committed"},
		{"a 200 MB file", "truncate -s 200M foundation/big.bin\n", "foundation/big.bin", "200.0 MiB, over the limit of 10.0 MiB for one file"},
		{"a deletion", "rm README.md\n", "README.md", "outside inputs.file_manifest and context.fix_paths"},
	} {
		t.Run(c.name, func(t *testing.T) {
			// fix_paths lets everything through that a pattern can: the
			// forbidden paths stay forbidden.
			fixPaths := []any{}
			if strings.HasPrefix(c.reason, "under .github") || strings.HasPrefix(c.reason, "a .gitmodules") {
				fixPaths = []any{"**"}
			}
			h, refused := refusedFix(t, stepOpts{Agent: fixOf + c.agent, Context: map[string]any{"fix_paths": fixPaths}})
			if got := reasons(refused); got[c.path] != c.reason || len(got) != 1 {
				t.Errorf("refused %v, want %s: %s", got, c.path, c.reason)
			}
			if !refused.Staged {
				t.Error("refused after staging, want before anything is committed")
			}
			if head := gittest.Run(t, h.Worktree, "rev-parse", "HEAD"); head != refused.From {
				t.Errorf("a commit was made: HEAD %s, last push %s", head, refused.From)
			}
			if staged := gittest.Run(t, h.Worktree, "diff", "--cached", "--name-only"); staged != "" {
				t.Errorf("staged after the refusal:\n%s", staged)
			}
			msg := refused.Error()
			for _, want := range []string{"the fix was not committed or pushed: 1 path(s) in worktree " + h.Worktree + " are not wo's to push: " + c.path + " (" + c.reason + ")",
				"git -C " + h.Worktree + " reset --hard " + refused.From[:12], "git -C " + h.Worktree + " checkout " + refused.From[:12] + " -- PATH",
				"run wo run " + fixture.Key + ": it takes the worktree as you leave it and does not run the agent again (--rerun-agent does)"} {
				if !strings.Contains(msg, want) {
					t.Errorf("the message does not say %q:\n%s", want, msg)
				}
			}
			// context.fix_paths is offered exactly for a path it would allow.
			offer := "add them to context.fix_paths: [\"" + c.path + "\"]"
			if allowed := strings.HasPrefix(c.reason, outsideTheTask); strings.Contains(msg, offer) != allowed {
				t.Errorf("offers %q: %v, want %v:\n%s", offer, !allowed, allowed, msg)
			}
		})
	}
}

func TestTheFixGateRefusesCommitsTheAgentMadeItself(t *testing.T) {
	commit := "git add -A && git commit -qm 'agent' && "
	for _, c := range []struct {
		name, agent, path, reason string
		opts                      stepOpts
	}{
		{"a workflow", "mkdir -p .github/workflows && echo 'on: push' > .github/workflows/ci.yml && " + commit + "git rm -q .github/workflows/ci.yml && git commit -qm 'hide it'\n",
			".github/workflows/ci.yml", "under .github/, whose workflows run with the repository's secrets: never pushed after a review", stepOpts{}},
		{"a forced-in ignored file", "echo secret > notes.env && git add -f notes.env && git commit -qm env\n", "notes.env", "outside inputs.file_manifest and context.fix_paths", stepOpts{}},
		{"a gitlink", "git update-index --add --cacheinfo 160000,$(git rev-parse HEAD),foundation/sub && git commit -qm sub\n",
			"foundation/sub", "a gitlink (a submodule's commit): never pushed after a review", stepOpts{}},
		{"a file over the limit", "head -c 1001 /dev/zero > foundation/blob && " + commit + "true\n", "foundation/blob",
			"1001 bytes, over the limit of 1000 bytes for one file",
			stepOpts{Context: map[string]any{"fix_max_file_bytes": 1000, "fix_paths": []any{"foundation/**"}}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			opts := c.opts
			opts.Agent = fixOf + c.agent
			opts.Unconfined = true // it commits: the gate is what stops it where no sandbox does
			_, refused := refusedFix(t, opts)
			got := reasons(refused)
			if r := got[c.path]; !strings.HasPrefix(r, c.reason+" (commit ") || len(got) != 1 {
				t.Errorf("refused %v, want %s: %s (commit …)", got, c.path, c.reason)
			}
			if refused.Staged {
				t.Error("refused as staged, want refused in the range of commits")
			}
		})
	}
}

func TestTheFixGateRefusesARewriteAndAnotherBranch(t *testing.T) {
	t.Run("history rewritten", func(t *testing.T) {
		h, refused := refusedFix(t, stepOpts{Agent: fixOf + "git commit -qa --amend -m 'rewritten'\n", Unconfined: true})
		r := reasons(refused)["refs/heads/"+fixture.Branch]
		if !strings.Contains(r, "its history was rewritten or merged") || !strings.Contains(r, "wo never force-pushes after a review") {
			t.Errorf("reason %q", r)
		}
		// The rewrite is still there for a person to look at.
		if got := gittest.Run(t, h.Worktree, "log", "-1", "--format=%s"); got != "rewritten" {
			t.Errorf("HEAD is %q", got)
		}
	})
	t.Run("another branch", func(t *testing.T) {
		h, refused := refusedFix(t, stepOpts{Agent: "git switch -q -c elsewhere\n" + fixOf, Unconfined: true})
		want := "the worktree is on branch elsewhere, not the work branch " + fixture.Branch + ": put it back with git -C " + h.Worktree + " switch " + fixture.Branch
		if got := reasons(refused)["HEAD"]; got != want {
			t.Errorf("reason %q, want %q", got, want)
		}
		if gittest.Run(t, h.Repo, "rev-parse", fixture.Branch) != refused.From {
			t.Error("the work branch moved")
		}
		// wo committed nothing onto the branch the agent switched to.
		if got := gittest.Run(t, h.Repo, "rev-parse", "elsewhere"); got != refused.From || !refused.Staged {
			t.Errorf("elsewhere is at %s (staged refusal %v): wo committed on the agent's branch", got, refused.Staged)
		}
	})
	t.Run("a detached HEAD", func(t *testing.T) {
		_, refused := refusedFix(t, stepOpts{Agent: "git switch -q --detach\n" + fixOf, Unconfined: true})
		if got := reasons(refused)["HEAD"]; !strings.HasPrefix(got, "the worktree is on a detached HEAD at ") {
			t.Errorf("reason %q", got)
		}
	})
	t.Run("the branch moved after the fix", func(t *testing.T) {
		h := loopReady(t, stepOpts{Agent: fixOf})
		repo, err := h.sc("conditional_loop").Repo()
		if err != nil {
			t.Fatal(err)
		}
		pushed := h.r.state.PushedSHA
		err = checkFix(h.sc("conditional_loop"), repo, pushed, strings.Repeat("1", 40))
		var refused *FixRefusedError
		if !errors.As(err, &refused) || !strings.HasPrefix(reasons(refused)["refs/heads/"+fixture.Branch], "the branch moved after the fix was committed ("+pushed[:12]+", not 111111111111)") {
			t.Errorf("err %v", err)
		}
		if err := checkFix(h.sc("conditional_loop"), repo, "", pushed); err == nil || errors.As(err, &refused) ||
			!strings.Contains(err.Error(), "no push is recorded to check the fix against") ||
			!strings.Contains(err.Error(), "wo reset "+fixture.Key+" --to-step 6, then wo run "+fixture.Key) {
			t.Errorf("no push recorded: %v", err)
		}
	})
}

func TestTheFixGateLetsTheTasksOwnFixThrough(t *testing.T) {
	// The repository ignores .env in info/exclude and node_modules/ in the
	// user's global excludes file; a new test beside the manifest's file
	// is allowed by context.fix_paths.
	xdg := t.TempDir()
	fixture.WriteFile(t, filepath.Join(xdg, "git/ignore"), "node_modules/\n")
	h := loopReady(t, stepOpts{
		Agent: fixOf + "echo 'SECRET=1' > .env\nmkdir -p node_modules/x && echo x > node_modules/x/i.js\necho 'package pkg' > pkg/a_test.go\n" +
			"echo changed > foundation/second.go && git add foundation/second.go && git commit -qm 'agent commit'\n",
		Context:    map[string]any{"fix_paths": []any{"pkg/*_test.go", "foundation/**"}},
		Env:        map[string]string{"XDG_CONFIG_HOME": xdg, "HOME": t.TempDir()},
		Unconfined: true, // it commits
	})
	fixture.WriteFile(t, filepath.Join(h.Repo, ".git/info/exclude"), ".env\n")
	if _, err := h.run("conditional_loop"); err != nil {
		t.Fatal(err)
	}
	head := gittest.Run(t, h.Worktree, "rev-parse", "HEAD")
	if got := gittest.Run(t, h.Remote, "rev-parse", fixture.Branch); got != head {
		t.Fatalf("the remote is at %s, want the fix %s", got, head)
	}
	pushed := gittest.Run(t, h.Remote, "ls-tree", "-r", "--name-only", fixture.Branch)
	for _, p := range []string{".env", "node_modules/x/i.js"} {
		if strings.Contains(pushed, p) {
			t.Errorf("the ignored %s was pushed:\n%s", p, pushed)
		}
	}
	for _, p := range []string{"pkg/a_test.go", "foundation/second.go"} {
		if !strings.Contains(pushed, p) {
			t.Errorf("the allowed %s was not pushed:\n%s", p, pushed)
		}
	}
}

func TestFixPolicy(t *testing.T) {
	p := fixPolicy{files: map[string]bool{"pkg/a.go": true, "gone.go": true}, patterns: []string{"pkg/**/*_test.go", "docs/*.md"}, maxSize: 100}
	for path, want := range map[string]string{
		"pkg/a.go":            "",
		"gone.go":             "",
		"pkg/x_test.go":       "",
		"pkg/deep/y_test.go":  "",
		"docs/a.md":           "",
		"docs/sub/a.md":       "outside inputs.file_manifest and context.fix_paths",
		"pkg/b.go":            "outside inputs.file_manifest and context.fix_paths",
		".github/workflows/x": "under .github/, whose workflows run with the repository's secrets: never pushed after a review",
		".GitHub/x":           "under .github/, whose workflows run with the repository's secrets: never pushed after a review",
		".github. /x":         "under .github/, whose workflows run with the repository's secrets: never pushed after a review",
		"pkg/.github/x":       "outside inputs.file_manifest and context.fix_paths",
		".gitmodules":         "a .gitmodules file: submodules are never pushed after a review",
		"pkg/.GITMODULES":     "a .gitmodules file: submodules are never pushed after a review",
		"GITMOD~1":            "a .gitmodules file: submodules are never pushed after a review",
		"pkg/.git/config":     "a name git reads as .git",
	} {
		if got := p.refuse(path); got != want {
			t.Errorf("refuse(%q) = %q, want %q", path, got, want)
		}
	}
	open := fixPolicy{patterns: []string{"**"}, executable: []string{"bin/*"}, maxSize: 100}
	for _, c := range []struct {
		change gitops.PathChange
		want   string
	}{
		{gitops.PathChange{Path: "a", Mode: filemode.Regular, Size: 100}, ""},
		{gitops.PathChange{Path: "a", Mode: filemode.Executable, Size: 1}, "it makes the file executable (mode 100755; a new file): a fix may change a file's text, not whether it runs; list the path in context.fix_executable to allow it"},
		{gitops.PathChange{Path: "a", Mode: filemode.Executable, Size: 1, Before: plumbing.NewHash("0123"), BeforeMode: filemode.Regular}, "it makes the file executable (mode 100755; it was 100644): a fix may change a file's text, not whether it runs; list the path in context.fix_executable to allow it"},
		{gitops.PathChange{Path: "a", Mode: filemode.Executable, Size: 1, Before: plumbing.NewHash("0123"), BeforeMode: filemode.Executable}, ""},
		{gitops.PathChange{Path: "a", Mode: filemode.Regular, Size: 1, Before: plumbing.NewHash("0123"), BeforeMode: filemode.Executable}, ""},
		{gitops.PathChange{Path: "bin/run", Mode: filemode.Executable, Size: 1}, ""}, // context.fix_executable names it
		{gitops.PathChange{Path: "a", Mode: filemode.Symlink, Size: 1}, ""},
		{gitops.PathChange{Path: "a", Mode: filemode.Deprecated, Size: 1}, ""},
		{gitops.PathChange{Path: "a", Mode: filemode.Regular, Size: 101}, "101 bytes, over the limit of 100 bytes for one file"},
		{gitops.PathChange{Path: "a", Mode: filemode.Submodule}, "a gitlink (a submodule's commit): never pushed after a review"},
		{gitops.PathChange{Path: "a", Mode: filemode.Dir}, "an entry of mode 40000, which git does not check out as a file"},
		{gitops.PathChange{Path: "a", Mode: filemode.Submodule, Deleted: true}, ""},
		{gitops.PathChange{Path: ".github/x", Mode: filemode.Regular, Deleted: true}, "under .github/, whose workflows run with the repository's secrets: never pushed after a review"},
	} {
		if got := open.check(c.change); got != c.want {
			t.Errorf("check(%+v) = %q, want %q", c.change, got, c.want)
		}
	}
	for n, want := range map[int64]string{12: "12 bytes", 1023: "1023 bytes", 1024: "1.0 KiB", 1536: "1.5 KiB", 1 << 20: "1.0 MiB", 200 << 20: "200.0 MiB"} {
		if got := byteSize(n); got != want {
			t.Errorf("byteSize(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestFixPolicyComesFromTheWorkOrder(t *testing.T) {
	h := newStepContext(t, stepOpts{Inputs: map[string]any{"delete_manifest": []any{"old.go"}},
		Context: map[string]any{"fix_paths": "docs/**", "fix_max_file_bytes": 4096}})
	p := newFixPolicy(h.sc("conditional_loop"))
	if p.maxSize != 4096 || fmt.Sprint(p.patterns) != "[docs/**]" || !p.files["pkg/a.go"] || !p.files["foundation/new.go"] || !p.files["old.go"] || len(p.files) != 3 {
		t.Errorf("policy %+v", p)
	}
	h = newStepContext(t, stepOpts{})
	// Validation refuses 0; a document changed since is still read safely.
	h.r.task.WorkOrder.Context["fix_max_file_bytes"] = 0
	if p := newFixPolicy(h.sc("conditional_loop")); p.maxSize != gitops.DefaultMaxFileSize || len(p.patterns) != 0 {
		t.Errorf("default policy %+v", p)
	}
}

// A refusal lists at most maxRefusalsListed paths and counts the rest.
func TestAFixRefusalIsBounded(t *testing.T) {
	_, refused := refusedFix(t, stepOpts{Agent: fixOf + "for i in $(seq 1 60); do echo $i > f$i; done\ngit add f* && git commit -qm many\n", Unconfined: true})
	if len(refused.Refused) != maxRefusalsListed || refused.More != 10 {
		t.Errorf("listed %d, more %d", len(refused.Refused), refused.More)
	}
	if !strings.Contains(refused.Error(), "60 path(s)") || !strings.Contains(refused.Error(), "; and 10 more") {
		t.Errorf("message: %s", refused.Error())
	}
}

// An agent that got hold of wo's token (unconfined, as where there is no
// sandbox) and wrote it into its fix: the fix is refused, nothing pushed.
func TestAFixHoldingWosTokenIsNeverPushed(t *testing.T) {
	_, refused := refusedFix(t, stepOpts{GitHub: true, Agent: "echo '// " + fixture.Token + "' >> foundation/new.go\n", Unconfined: true})
	why := reasons(refused)["foundation/new.go"]
	if !strings.HasPrefix(why, "it holds wo's GitHub token: never pushed") {
		t.Errorf("reason %q", why)
	}
	if strings.Contains(refused.Error(), fixture.Token) {
		t.Error("the refusal shows the token")
	}
}

// An agent that reached the user's credential files (unconfined) and
// hid one in its fix, or hid wo's token reversed or hex-encoded: refused,
// the kind and the line named, the secret never shown.
func TestAFixHoldingASecretInAnyEncodingIsNeverPushed(t *testing.T) {
	home := t.TempDir()
	aws := "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq81xKEYb"
	fixture.WriteFile(t, filepath.Join(home, ".aws", "credentials"), "[default]\naws_secret_access_key = "+aws+"\n")
	rev := []rune(fixture.Token)
	slices.Reverse(rev)
	for name, c := range map[string]struct{ line, kind string }{
		"aws":      {"// " + aws, "an AWS credential (~/.aws/credentials)"},
		"reversed": {"// " + string(rev), "wo's GitHub token"},
		"hex":      {"// " + hex.EncodeToString([]byte(fixture.Token)), "wo's GitHub token"},
	} {
		t.Run(name, func(t *testing.T) {
			_, refused := refusedFix(t, stepOpts{GitHub: true, Env: map[string]string{"PATH": os.Getenv("PATH"), "HOME": home},
				Agent: "printf '%s\\n' '" + c.line + "' >> foundation/new.go\n", Unconfined: true})
			why := reasons(refused)["foundation/new.go"]
			if !strings.HasPrefix(why, "it adds a secret, "+c.kind+", at line ") || !strings.Contains(why, "never pushed") {
				t.Errorf("reason %q", why)
			}
			if strings.Contains(refused.Error(), aws) || strings.Contains(refused.Error(), string(rev)) {
				t.Error("the refusal shows the secret")
			}
		})
	}
}

// A fix that makes a file executable is committed without the bit, and
// says so; one the agent committed itself is refused; context.fix_executable
// lets both.
func TestAFixThatMakesAFileExecutableKeepsItsMode(t *testing.T) {
	h := loopReady(t, stepOpts{Agent: fixOf + "chmod +x foundation/new.go\n", Unconfined: true})
	if _, err := h.run("conditional_loop"); err != nil {
		t.Fatal(err)
	}
	if mode := gittest.Run(t, h.Remote, "ls-tree", fixture.Branch, "foundation/new.go"); !strings.HasPrefix(mode, "100644") {
		t.Errorf("the remote has %s, want the file's old mode", mode)
	}
	if got := fixture.ReadFile(t, filepath.Join(h.Worktree, "foundation/new.go")); !strings.Contains(got, "// N is exported.") {
		t.Errorf("the fix's text was not kept: %q", got)
	}
	if st := gittest.Run(t, h.Worktree, "status", "--porcelain"); st != "" {
		t.Errorf("the worktree is not clean after the fix: %q", st)
	}
	if w := strings.Join(h.r.warnings, "\n"); !strings.Contains(w, "the fix made foundation/new.go executable: committed without the executable bit") {
		t.Errorf("warnings: %q", w)
	}
	_, refused := refusedFix(t, stepOpts{Agent: fixOf + "chmod +x foundation/new.go\ngit add -A && git commit -qm x\n", Unconfined: true})
	if why := reasons(refused)["foundation/new.go"]; !strings.HasPrefix(why, "it makes the file executable (mode 100755; it was 100644)") {
		t.Errorf("reason %q", why)
	}
	h = loopReady(t, stepOpts{Agent: fixOf + "chmod +x foundation/new.go\n", Unconfined: true, Context: map[string]any{"fix_executable": "foundation/*.go"}})
	if _, err := h.run("conditional_loop"); err != nil {
		t.Fatalf("with context.fix_executable: %v", err)
	}
	if mode := gittest.Run(t, h.Remote, "ls-tree", fixture.Branch, "foundation/new.go"); !strings.HasPrefix(mode, "100755") {
		t.Errorf("the remote has %s", mode)
	}
}
