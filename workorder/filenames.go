package workorder

import "github.com/wo-runner/wo/internal/gitname"

// The names that mean something to git or to a tool are recognised in
// package gitname, which gitops uses too; these keep workorder's own
// callers and API as they were.

// FoldName is how the most forgiving file system reads one path
// component (gitname.FoldName).
func FoldName(name string) string { return gitname.FoldName(name) }

// IsAliasOf reports whether a file system could take the path component
// name for the file long (gitname.IsAliasOf).
func IsAliasOf(name, long string) bool { return gitname.IsAliasOf(name, long) }

// IsDotGit reports whether a file system could take name for ".git"
// (gitname.IsDotGit).
func IsDotGit(name string) bool { return gitname.IsDotGit(name) }

// IsDotGitHub reports whether a file system could take name for
// ".github" (gitname.IsDotGitHub).
func IsDotGitHub(name string) bool { return gitname.IsDotGitHub(name) }

// IsDotGitmodules reports whether a file system could take name for
// ".gitmodules" (gitname.IsDotGitmodules).
func IsDotGitmodules(name string) bool { return gitname.IsDotGitmodules(name) }
