package action

import (
	"fmt"
	"strings"

	"github.com/wo-runner/wo/gitops"
	"github.com/wo-runner/wo/workorder"
)

// namedOnly are the files a review fix may add, change or delete only when
// the work order names them exactly (inputs.file_manifest or
// inputs.delete_manifest; a context.fix_paths pattern is not enough),
// because what they say runs: the next agent reads its settings and
// instructions at start, and git, an editor or a developer's shell runs
// what the repository's policy files name. Each is a name in folded form
// (workorder.FoldName), matched at any depth, as a folder or a file, in
// every spelling a file system takes for it (workorder.IsAliasOf): Claude
// Code reads nested CLAUDE.md and .claude folders, Codex nested AGENTS.md,
// git every .gitattributes and direnv every .envrc; for the others a
// nested copy in a fix is rare enough that naming it costs nothing.
//
// Left out on purpose: .gitignore (it hides files from staging, which wo
// checks anyway, and runs nothing); .tool-versions (it picks versions of
// tools the developer installed, and runs no code of the repository's);
// build files (Makefile, package.json): they are code, and a review reads
// them as code. Under .github/ (copilot-instructions.md, CODEOWNERS,
// workflows) nothing is pushed at all.
var namedOnly = []struct{ name, what string }{
	// Agents' settings and instructions.
	{".claude", "Claude Code's settings, whose hooks run commands"},
	{"claude.md", "instructions Claude Code follows"},
	{"claude.local.md", "instructions Claude Code follows"},
	{".mcp.json", "the MCP servers an agent starts"},
	{"agents.md", "instructions coding agents follow"},
	{".codex", "Codex's settings"},
	{".gemini", "Gemini CLI's settings"},
	{"gemini.md", "instructions Gemini CLI follows"},
	{".cursor", "Cursor's settings and rules"},
	{".cursorrules", "instructions Cursor follows"},
	{".aider.conf.yml", "Aider's settings, which can name commands to run"},
	{"agent.md", "instructions coding agents follow"},
	{".windsurfrules", "instructions Windsurf follows"},
	{".clinerules", "instructions Cline follows"},
	{".roo", "Roo Code's settings and rules"},
	{".kiro", "Kiro's settings and hooks"},
	{".continue", "Continue's settings"},
	{"opencode.json", "OpenCode's settings"},
	{".goosehints", "instructions Goose follows"},
	{".amazonq", "Amazon Q's settings and rules"},
	{".vscode", "editor settings, whose tasks can run when the folder opens"},
	{".idea", "IDE settings, whose run configurations and tools run commands"},
	{".devcontainer", "a dev container, whose commands run when it is built"},
	// The repository's policy.
	{".gitattributes", "git attributes, which pick the filters and diff drivers git runs"},
	{"codeowners", "who must approve a change"},
	{".coderabbit.yaml", "the reviewer's settings"},
	{".coderabbit.yml", "the reviewer's settings"},
	{".lfsconfig", "Git LFS's settings, such as the server it sends files to"},
	{".pre-commit-config.yaml", "the hooks pre-commit runs"},
	{".husky", "git hooks that husky installs"},
	{".envrc", "commands direnv runs on entering the folder"},
	{".env", "variables tools load, such as the API base an agent sends its key to"},
	{".githooks", "git hooks a repository points core.hooksPath at"},
	{"lefthook.yml", "the hooks lefthook runs"},
	{".npmrc", "npm's settings, such as the registry and scripts it runs"},
	{".yarnrc.yml", "Yarn's settings, whose yarnPath runs code"},
	{".cargo", "Cargo's settings, whose runner runs commands"},
	{"mise.toml", "mise's settings, whose hooks and tasks run commands"},
	{"rust-toolchain.toml", "the Rust toolchain a build downloads and runs"},
	{"conftest.py", "code pytest runs on its own"},
	// CI outside .github/, which runs with the repository's secrets.
	{".gitlab-ci.yml", "GitLab CI, which runs with the repository's secrets"},
	{".circleci", "CircleCI, which runs with the repository's secrets"},
	{".travis.yml", "Travis CI, which runs with the repository's secrets"},
	{".buildkite", "Buildkite, which runs with the repository's secrets"},
	{"jenkinsfile", "Jenkins, which runs with the repository's secrets"},
	{"azure-pipelines.yml", "Azure Pipelines, which runs with the repository's secrets"},
	{"bitbucket-pipelines.yml", "Bitbucket Pipelines, which runs with the repository's secrets"},
	{".gitpod.yml", "Gitpod, whose tasks run when a workspace opens"},
}

// protectedRefusal says why no fix may change path, whatever the work
// order names ("" when that is not so): .github/ at the top, .gitmodules
// and .git at any depth, in any spelling.
func protectedRefusal(path string) string {
	parts := strings.Split(path, "/")
	// .git and .gitmodules first: their short names (git~1, gi7eba~1)
	// have the shape of .github's too.
	for _, part := range parts {
		switch {
		case workorder.IsDotGit(part):
			return "a name git reads as .git"
		case workorder.IsDotGitmodules(part):
			return "a .gitmodules file: submodules are never pushed after a review"
		}
	}
	if workorder.IsDotGitHub(parts[0]) {
		return "under .github/, whose workflows run with the repository's secrets: never pushed after a review"
	}
	return ""
}

// namedOnlyRefusal says why a fix may change path only when the work
// order names it ("" when path is no such file).
func namedOnlyRefusal(path string) string {
	for _, part := range strings.Split(path, "/") {
		for _, f := range namedOnly {
			if workorder.IsAliasOf(part, f.name) {
				return fmt.Sprintf("%s: a fix changes it only when the work order names it; name it in inputs.file_manifest (or inputs.delete_manifest) to allow it", f.what)
			}
		}
	}
	return ""
}

// linkRefusal says why a fix must not leave a symbolic link at path with
// target ("" when it may): a link leads out of the worktree when the
// repository is checked out, or somewhere a checkout should never write
// or read, and a new one must be named in the manifest. existed is whether
// a link was at path at the last push; retargeting it is checked as well.
// isLink says whether a path of the same tree is a symbolic link: a target
// that goes through one is refused, since where it leads depends on that
// link, which a fix may retarget too (two links that each stay inside can
// together lead out).
func (p fixPolicy) linkRefusal(path, target string, existed bool, isLink func(string) bool) string {
	if why := linkEscape(path, target); why != "" {
		return why
	}
	if through := linkThrough(path, target, isLink); through != "" {
		return fmt.Sprintf("a symbolic link to %s, through the link %s: a fix may link only to a path, not through another link", target, through)
	}
	if existed || p.files[path] {
		return ""
	}
	return fmt.Sprintf("a new symbolic link (to %s): a fix adds one only when the work order names it; name it in inputs.file_manifest to allow it", target)
}

// linkThrough is the first path that the target of a link at path passes
// through (or ends at) that is itself a link, "" for none; the target
// stays inside the worktree (linkEscape).
func linkThrough(path, target string, isLink func(string) bool) string {
	if isLink == nil {
		return ""
	}
	at := strings.Split(path, "/")
	at = at[:len(at)-1] // the link's folder
	for _, part := range strings.FieldsFunc(target, func(r rune) bool { return r == '/' || r == '\\' }) {
		switch dots := strings.TrimRight(part, ". ") == ""; {
		case dots && strings.Count(part, ".") > 1:
			if len(at) > 0 {
				at = at[:len(at)-1]
			}
			continue
		case dots:
			continue
		}
		at = append(at, part)
		if joined := strings.Join(at, "/"); isLink(joined) {
			return joined
		}
	}
	return ""
}

// linkEscape says why a link at path to target leads out of the worktree or
// into .git, reading the target as every system does ('\' is a separator
// on Windows), step by step: "" when it stays inside.
func linkEscape(path, target string) string {
	switch {
	case target == "":
		return "a symbolic link to nothing"
	case len(target) > gitops.MaxLinkTarget:
		return fmt.Sprintf("a symbolic link with a target over %d bytes, longer than any path", gitops.MaxLinkTarget)
	case strings.ContainsRune(target, 0):
		return "a symbolic link whose target holds a NUL byte"
	case target[0] == '/' || target[0] == '\\' || len(target) > 1 && target[1] == ':':
		return fmt.Sprintf("a symbolic link to the absolute path %s: a fix may link only inside the worktree", target)
	}
	depth := strings.Count(path, "/") // the folders above the link
	for _, part := range strings.FieldsFunc(target, func(r rune) bool { return r == '/' || r == '\\' }) {
		// Dots and spaces alone are a step up or none: Windows drops
		// the trailing ones, and wo takes the wider reading.
		dots := strings.TrimRight(part, ". ") == ""
		switch {
		case dots && strings.Count(part, ".") > 1:
			depth--
			if depth < 0 {
				return fmt.Sprintf("a symbolic link to %s, out of the worktree: a fix may link only inside it", target)
			}
		case dots:
		case workorder.IsDotGit(part):
			return fmt.Sprintf("a symbolic link to %s, into .git", target)
		default:
			depth++
		}
	}
	return ""
}
