package gitname

import (
	"fmt"
	"path"
	"strings"
)

// CheckRelativePath explains why p cannot name a file inside a repository:
// it must be relative, clean, and stay inside the tree.
func CheckRelativePath(p string) error {
	switch {
	case p == "":
		return fmt.Errorf("empty path")
	case strings.HasPrefix(p, "/") || (len(p) > 1 && p[1] == ':'):
		return fmt.Errorf("%q is absolute: give a path relative to the repository root", p)
	case strings.ContainsRune(p, 0):
		return fmt.Errorf("%q contains a NUL byte", p)
	case strings.Contains(p, `\`):
		return fmt.Errorf("%q contains a backslash: use '/' between directories", p)
	}
	for _, part := range strings.Split(p, "/") {
		if part == ".." {
			return fmt.Errorf("%q climbs out of the repository with '..'", p)
		}
		if IsDotGit(part) {
			return fmt.Errorf("%q points into .git (%q is .git to some file systems)", p, part)
		}
	}
	if path.Clean(p) != p {
		return fmt.Errorf("%q is not clean: write it as %q", p, path.Clean(p))
	}
	if p == "." {
		return fmt.Errorf("%q is the repository itself: list the files to bring in", p)
	}
	return nil
}
