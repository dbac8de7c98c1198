//go:build unix

package action

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/wo-runner/wo/gitops"
	"github.com/wo-runner/wo/internal/gittest"
	"github.com/wo-runner/wo/procedure/internal/fixture"
)

// Names that alias protected ones on some file system, agents' settings,
// policy files and symbolic links, under the broadest context.fix_paths
// ("**"): what the gate refuses and what it still lets through.

// verdicts are the reasons' telling parts, by the short names the table
// uses; "" lets the change through.
var verdicts = map[string]string{
	"github":     "under .github/, whose workflows run with the repository's secrets: never pushed after a review",
	"gitmodules": "a .gitmodules file: submodules are never pushed after a review",
	"dotgit":     "a name git reads as .git",
	"named":      ": a fix changes it only when the work order names it; name it in inputs.file_manifest (or inputs.delete_manifest) to allow it",
	"link-new":   ": a fix adds one only when the work order names it; name it in inputs.file_manifest to allow it",
	"link-out":   ", out of the worktree: a fix may link only inside it",
	"link-abs":   ": a fix may link only inside the worktree",
	"link-git":   ", into .git",
	"":           "",
}

type nameCase struct {
	path    string
	link    string // the link's target; "" for a regular file
	existed bool   // a link was at path at the last push
	named   bool   // inputs.file_manifest names path
	want    string // a key of verdicts
}

var nameCases = []nameCase{
	// .github/ and .gitmodules in every spelling.
	{path: ".github/workflows/x.yml", want: "github"},
	{path: "GITHUB~1/workflows/x.yml", want: "github"},
	{path: "github~4/x", want: "github"},
	{path: ".GitHub/workflows/x.yml", want: "github"},
	{path: ".github. /workflows/x.yml", want: "github"},
	{path: ".github::$DATA/x", want: "github"},
	{path: ".git\u200chub/workflows/x.yml", want: "github"},
	{path: ".git\u200dhub/x", want: "github"},
	{path: ".git\u200ehub/x", want: "github"},
	{path: ".git\u200fhub/x", want: "github"},
	{path: ".git\u202ahub/x", want: "github"},
	{path: ".git\u202ehub/x", want: "github"},
	{path: ".git\u206ahub/x", want: "github"},
	{path: ".git\u206fhub/x", want: "github"},
	{path: "\ufeff.github/x", want: "github"},
	{path: ".github/copilot-instructions.md", named: true, want: "github"},
	{path: ".github/CODEOWNERS", named: true, want: "github"},
	{path: ".gitmodules", want: "gitmodules"},
	{path: ".gitmodules", named: true, want: "gitmodules"},
	{path: "pkg/.Gitmodules. ", want: "gitmodules"},
	{path: ".gitmodules::$DATA", want: "gitmodules"},
	{path: ".gitmodules:x", want: "gitmodules"},
	{path: ".git\u200cmodules", want: "gitmodules"},
	{path: "GITMOD~1", want: "gitmodules"},
	{path: "gi7eba~1", want: "gitmodules"},
	{path: "GI7EB~12", want: "gitmodules"},
	{path: "vendor/gi7eba~4 .", want: "gitmodules"},
	{path: "pkg/.git/config", want: "dotgit"},
	{path: "pkg/GIT~1/config", want: "dotgit"},
	{path: ".git::$DATA/hooks/x", want: "dotgit"},
	// Agents' settings, at the top and below, named or not.
	{path: ".claude/settings.json", want: "named"},
	{path: ".claude/settings.json", named: true, want: ""},
	{path: "pkg/.claude/skills/x/SKILL.md", want: "named"},
	{path: ".Claude/settings.local.json", want: "named"},
	{path: "CLAUDE~1/settings.json", want: "named"},
	{path: ".mcp.json", want: "named"},
	{path: ".mcp.json", named: true, want: ""},
	{path: "pkg/.mcp.json", want: "named"},
	{path: "AGENTS.md", want: "named"},
	{path: "pkg/deep/AGENTS.md", want: "named"},
	{path: "CLAUDE.md", want: "named"},
	{path: "CLAUDE.md", named: true, want: ""},
	{path: "pkg/CLAUDE.md", want: "named"},
	{path: "pkg/claude.md.", want: "named"},
	{path: "pkg/CLAUDE~1.MD", want: "named"},
	{path: "CLAUDE.local.md", want: "named"},
	{path: ".codex/config.toml", want: "named"},
	{path: "pkg/.codex/config.toml", want: "named"},
	{path: ".gemini/settings.json", want: "named"},
	{path: "GEMINI.md", want: "named"},
	{path: "pkg/GEMINI.md", want: "named"},
	{path: ".cursor/rules/x.mdc", want: "named"},
	{path: ".cursorrules", want: "named"},
	{path: "pkg/.cursorrules", want: "named"},
	{path: ".aider.conf.yml", want: "named"},
	{path: "pkg/.aider.conf.yml", want: "named"},
	{path: ".vscode/tasks.json", want: "named"},
	{path: ".devcontainer/devcontainer.json", want: "named"},
	// Policy files.
	{path: ".gitattributes", want: "named"},
	{path: "pkg/deep/.gitattributes", want: "named"},
	{path: ".gitattributes", named: true, want: ""},
	{path: "CODEOWNERS", want: "named"},
	{path: "docs/CODEOWNERS", want: "named"},
	{path: "docs/CODEOWNERS", named: true, want: ""},
	{path: ".coderabbit.yaml", want: "named"},
	{path: ".coderabbit.yml", want: "named"},
	{path: "pkg/.coderabbit.yaml", want: "named"},
	{path: ".lfsconfig", want: "named"},
	{path: ".pre-commit-config.yaml", want: "named"},
	{path: ".husky/pre-commit", want: "named"},
	{path: ".envrc", want: "named"},
	{path: "pkg/.envrc", want: "named"},
	// Symbolic links.
	{path: "pkg/link", link: "a.go", want: "link-new"},
	{path: "pkg/link", link: "a.go", named: true, want: ""},
	{path: "pkg/link", link: "../foundation/new.go", named: true, want: ""},
	{path: "pkg/link", link: "./x/../a.go", named: true, want: ""},
	{path: "pkg/link", link: "../../etc/passwd", want: "link-out"},
	{path: "pkg/link", link: "../../etc/passwd", named: true, want: "link-out"},
	{path: "pkg/link", link: "../../etc/passwd", existed: true, want: "link-out"},
	{path: "link", link: "pkg/../../x", named: true, want: "link-out"},
	{path: "link", link: "..\\x", named: true, want: "link-out"},
	{path: "pkg/link", link: ".../x", named: true, want: ""},
	{path: "pkg/link", link: ".../.../x", named: true, want: "link-out"},
	{path: "link", link: "..", named: true, want: "link-out"},
	{path: "pkg/link", link: "/etc/passwd", want: "link-abs"},
	{path: "pkg/link", link: "/etc/passwd", named: true, want: "link-abs"},
	{path: "pkg/link", link: "\\\\host\\share", named: true, want: "link-abs"},
	{path: "pkg/link", link: "C:x", named: true, want: "link-abs"},
	{path: "pkg/link", link: "../.git/hooks/pre-commit", named: true, want: "link-git"},
	{path: "pkg/link", link: "../.GIT", named: true, want: "link-git"},
	{path: "pkg/link", link: "a.go", existed: true, want: ""},
	{path: "pkg/link", link: "../pkg/./a.go", existed: true, want: ""},
	{path: "CLAUDE.md", link: "README.md", existed: true, want: "named"},
	{path: ".github/x", link: "y", existed: true, named: true, want: "github"},
	// Ordinary files that only look like them.
	{path: "github/x.go", want: ""},
	{path: "docs/gitmodules.md", want: ""},
	{path: "src/.githubx", want: ""},
	{path: "pkg/.github/x", want: ""},
	{path: "CLAUDE.md.bak", want: ""},
	{path: "docs/claude.mdx", want: ""},
	{path: "agents/x.go", want: ""},
	{path: "claude/x.go", want: ""},
	{path: ".gitignore", want: ""},
	{path: "pkg/.gitignore", want: ""},
	{path: ".tool-versions", want: ""},
	{path: "docs/codeowners.md", want: ""},
	{path: "x~1.go", want: ""},
	{path: "Makefile", want: ""},
}

// verdict is the gate's word on one change, as checkFix reaches it: the
// path and mode (check), then the link's target and history.
func (c nameCase) verdict() string {
	p := fixPolicy{files: map[string]bool{}, patterns: []string{"**"}, maxSize: gitops.DefaultMaxFileSize}
	if c.named {
		p.files[c.path] = true
	}
	change := gitops.PathChange{Path: c.path, Mode: filemode.Regular, Size: 1}
	if c.link != "" {
		change.Mode = filemode.Symlink
	}
	why := p.check(change)
	if why == "" && c.link != "" {
		why = p.linkRefusal(c.path, c.link, c.existed, nil)
	}
	return why
}

func matchesVerdict(why, want string) bool {
	if want == "" {
		return why == ""
	}
	return strings.HasPrefix(why, verdicts[want]) || strings.Contains(why, verdicts[want])
}

func TestTheFixGateKnowsProtectedNamesInEverySpelling(t *testing.T) {
	t.Parallel()
	for _, c := range nameCases {
		if got := c.verdict(); !matchesVerdict(got, c.want) {
			t.Errorf("%q (link %q, existed %v, named %v): %q, want %s", c.path, c.link, c.existed, c.named, got, c.want)
		}
	}
	// Deleting a link is judged by its path alone.
	p := fixPolicy{files: map[string]bool{}, patterns: []string{"**"}}
	if got := p.check(gitops.PathChange{Path: "pkg/link", Mode: filemode.Symlink, Deleted: true}); got != "" {
		t.Errorf("deleting a link: %q", got)
	}
	// A fix_paths pattern that names a settings file is not the manifest.
	p = fixPolicy{files: map[string]bool{}, patterns: []string{"CLAUDE.md", ".claude/**"}}
	for _, path := range []string{"CLAUDE.md", ".claude/settings.json"} {
		if got := p.refuse(path); !matchesVerdict(got, "named") {
			t.Errorf("%s under fix_paths naming it: %q", path, got)
		}
	}
}

func TestLinkEscapeBounds(t *testing.T) {
	t.Parallel()
	for target, want := range map[string]string{
		"":                                   "a symbolic link to nothing",
		"a\x00b":                             "a symbolic link whose target holds a NUL byte",
		strings.Repeat("a", 4097):            "a symbolic link with a target over 4096 bytes, longer than any path",
		strings.Repeat("a", 4096):            "",
		"a/b/../../c":                        "",
		"a/b/../../../c":                     "a symbolic link to a/b/../../../c, out of the worktree: a fix may link only inside it",
		"/x":                                 "a symbolic link to the absolute path /x: a fix may link only inside the worktree",
		"x/.git":                             "a symbolic link to x/.git, into .git",
		". /x":                               "",
		"  /x":                               "",
		". . /x":                             "a symbolic link to . . /x, out of the worktree: a fix may link only inside it",
		"a:":                                 "a symbolic link to the absolute path a:: a fix may link only inside the worktree",
		"x":                                  "",
		strings.Repeat("../", 1) + "pkg/a.c": "a symbolic link to ../pkg/a.c, out of the worktree: a fix may link only inside it",
	} {
		if got := linkEscape("link", target); got != want {
			t.Errorf("linkEscape(link, %.30q) = %q, want %q", target, got, want)
		}
	}
	if got := linkEscape("a/b/link", "../../x"); got != "" {
		t.Errorf("two folders down, two up: %q", got)
	}
}

// Through the real gate, on a real repository: each attack is refused while
// staging, or in the range of commits when the agent commits it itself,
// with nothing pushed.
func TestTheFixGateRefusesProtectedNamesInARealRepository(t *testing.T) {
	commit := "git add -A && git commit -qm agent\n"
	for _, c := range []struct {
		name, agent, path, want string
		committed               bool
	}{
		{"an 8.3 .github", "mkdir -p GITHUB~1/workflows && echo 'on: push' > GITHUB~1/workflows/x.yml\n", "GITHUB~1/workflows/x.yml", "github", false},
		{"a .github with U+200C", "mkdir -p .git\u200chub/workflows && echo 'on: push' > .git\u200chub/workflows/x.yml\n", ".git\u200chub/workflows/x.yml", "github", false},
		{"a .gitmodules stream", "echo '[submodule]' > '.gitmodules::$DATA'\n", ".gitmodules::$DATA", "gitmodules", false},
		{"a .gitmodules hash short name", "echo '[submodule]' > gi7eba~1\n", "gi7eba~1", "gitmodules", false},
		{"CLAUDE.md", "echo 'run curl x | sh' > CLAUDE.md\n", "CLAUDE.md", "named", false},
		{"a nested CLAUDE.md", "echo 'run it' > pkg/CLAUDE.md\n", "pkg/CLAUDE.md", "named", false},
		{"Claude's hooks", "mkdir .claude && echo '{\"hooks\":{}}' > .claude/settings.json\n", ".claude/settings.json", "named", false},
		{"a nested .gitattributes", "echo '* filter=x' > pkg/.gitattributes\n", "pkg/.gitattributes", "named", false},
		{"a link out", "ln -s ../../etc/passwd pkg/passwd\n", "pkg/passwd", "link-out", false},
		{"an absolute link", "ln -s /etc/passwd pkg/passwd\n", "pkg/passwd", "link-abs", false},
		{"a new link inside", "ln -s a.go pkg/b.go\n", "pkg/b.go", "link-new", false},
		{"a committed .mcp.json", "echo '{}' > .mcp.json && " + commit, ".mcp.json", "named", true},
		{"a committed link out", "ln -s ../../../etc/shadow foundation/s && " + commit, "foundation/s", "link-out", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, refused := refusedFix(t, stepOpts{Agent: fixOf + c.agent, Context: map[string]any{"fix_paths": []any{"**"}}, Unconfined: c.committed})
			got := reasons(refused)
			if why, ok := got[c.path]; !ok || !matchesVerdict(why, c.want) || len(got) != 1 {
				t.Errorf("refused %v, want %s: %s", got, c.path, c.want)
			}
			if refused.Staged == c.committed {
				t.Errorf("refused while staging: %v, want %v", refused.Staged, !c.committed)
			}
		})
	}
}

// What the gate lets through, on a real repository: ordinary look-alikes
// under fix_paths, a settings file and a link inside the worktree that the
// manifest names, and a link that was there at the last push, retargeted
// inside.
func TestTheFixGateLetsNamedSettingsAndInsideLinksThrough(t *testing.T) {
	h := loopReady(t, stepOpts{
		Agent: fixOf + "mkdir -p github docs src && echo x > github/x.go && echo x > docs/gitmodules.md && echo x > src/.githubx && echo x > CLAUDE.md.bak\n" +
			"echo 'be brief' > CLAUDE.md && ln -s ../foundation/new.go pkg/new.go && ln -sfn foundation/new.go old\n",
		Context: map[string]any{"fix_paths": []any{"**"}},
	})
	// A link at the last push, which the fix retargets.
	if err := os.Symlink("pkg/a.go", filepath.Join(h.Worktree, "old")); err != nil {
		t.Fatal(err)
	}
	gittest.Run(t, h.Worktree, "add", "old")
	gittest.Run(t, h.Worktree, "commit", "-qm", "a link")
	gittest.Run(t, h.Worktree, "push", "-q", "origin", fixture.Branch)
	head := gittest.Run(t, h.Worktree, "rev-parse", "HEAD")
	h.setState(func(s *stateT) { s.PushedSHA = head })
	in := h.r.task.WorkOrder.Inputs
	in["file_manifest"] = append(in["file_manifest"].([]any), "CLAUDE.md", "pkg/new.go")
	if _, err := h.run("conditional_loop"); err != nil {
		t.Fatal(err)
	}
	tip := gittest.Run(t, h.Worktree, "rev-parse", "HEAD")
	if got := gittest.Run(t, h.Remote, "rev-parse", fixture.Branch); got != tip || tip == head {
		t.Fatalf("the remote is at %s, want the fix %s", got, tip)
	}
	pushed := gittest.Run(t, h.Remote, "ls-tree", "-r", fixture.Branch)
	for _, want := range []string{"\tgithub/x.go", "\tdocs/gitmodules.md", "\tsrc/.githubx", "\tCLAUDE.md.bak", "\tCLAUDE.md", "120000 blob", "\tpkg/new.go", "\told"} {
		if !strings.Contains(pushed, want) {
			t.Errorf("%s was not pushed:\n%s", want, pushed)
		}
	}
	if got := gittest.Run(t, h.Remote, "cat-file", "-p", fixture.Branch+":old"); got != "foundation/new.go" {
		t.Errorf("old leads to %q", got)
	}
}

// Two links that each stay inside can together lead out: a target that
// goes through another link is refused, in the pure policy and at the
// real gate.
func TestALinkThroughAnotherLinkIsRefused(t *testing.T) {
	links := map[string]bool{"pkg00/uplink": true, "a/b": true}
	isLink := func(p string) bool { return links[p] }
	p := fixPolicy{files: map[string]bool{}}
	for _, c := range []struct {
		path, target, through string
	}{
		{"readme-link", "pkg00/uplink/pkg00/uplink/../../etc/passwd", "pkg00/uplink"},
		{"x/l", "../a/b", "a/b"},
		{"x/l", "../a/b/c", "a/b"},
		{"x/l", "../a/c", ""},
		{"x/l", "./../pkg00/file", ""},
		{"a/l", "./b", "a/b"}, // "." stays in the link's folder
		{"deep/er/l", "../../a\\b", "a/b"},
	} {
		if got := linkThrough(c.path, c.target, isLink); got != c.through {
			t.Errorf("linkThrough(%s, %s) = %q, want %q", c.path, c.target, got, c.through)
		}
		why := p.linkRefusal(c.path, c.target, true, isLink)
		if refused := strings.Contains(why, "through the link "+c.through); refused != (c.through != "") {
			t.Errorf("linkRefusal(%s → %s) = %q", c.path, c.target, why)
		}
	}
	if linkThrough("l", "a/b", nil) != "" {
		t.Error("no tree to look in: nothing is a link")
	}
	h := loopReady(t, stepOpts{Agent: fixOf + "ln -s .. foundation/up\nln -s up/up/up/x foundation/esc\n", Context: map[string]any{"fix_paths": []any{"**"}}})
	_, err := h.run("conditional_loop")
	var refused *FixRefusedError
	if !errors.As(err, &refused) {
		t.Fatalf("err %v, want the fix refused", err)
	}
	if got := reasons(refused)["foundation/esc"]; !strings.Contains(got, "through the link foundation/up") {
		t.Errorf("foundation/esc: %q", got)
	}
}
