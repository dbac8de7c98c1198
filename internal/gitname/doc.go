// Package gitname is how git names things, for the packages on both sides
// of the work order and git: a commit's short name as wo shows it, the
// spellings a file system reads as .git (or .github, .gitmodules), and
// what makes a path one inside a repository. It sits below workorder,
// gitops and commands, so that none of them needs another for these.
package gitname
