package gitops

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/wo-runner/wo/internal/gitname"
)

// FuzzCheckInside checks the worktree's own guard: whatever it accepts is
// inside the worktree and out of .git, and it accepts every manifest path
// the validator does, so a valid document never fails here.
func FuzzCheckInside(f *testing.F) {
	for _, s := range []string{"a/b.go", "../x", "a/../../x", "/etc/passwd", ".git/config", "a/.git/x", "a//b", "./a", "..", "a/..", "x/../.git"} {
		f.Add(s)
	}
	root := filepath.FromSlash("/work/tree")
	f.Fuzz(func(t *testing.T, p string) {
		err := checkInside(root, p)
		if gitname.CheckRelativePath(p) == nil && err != nil {
			t.Fatalf("the validator accepts %q but the worktree refuses it: %v", p, err)
		}
		if err != nil {
			return
		}
		joined := filepath.Join(root, filepath.FromSlash(p))
		if !within(joined, root) || !strings.HasPrefix(joined, root) {
			t.Fatalf("%q accepted but leads to %s", p, joined)
		}
		rel, _ := filepath.Rel(root, joined)
		for _, part := range strings.Split(rel, string(filepath.Separator)) {
			if part == ".git" {
				t.Fatalf("%q accepted but leads into .git (%s)", p, joined)
			}
		}
	})
}
