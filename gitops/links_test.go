//go:build unix

package gitops

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/wo-runner/wo/internal/gittest"
)

func TestLinkTargetReadsALinkOfACommitAndNothingElse(t *testing.T) {
	t.Parallel()
	r, dir, _ := lineRepo(t)
	os.MkdirAll(filepath.Join(dir, "sub"), 0o755)
	os.Symlink("../a.txt", filepath.Join(dir, "sub/link"))
	// A link no file system makes, as a crafted commit holds it.
	long := filepath.Join(t.TempDir(), "target")
	write(t, long, strings.Repeat("x/", MaxLinkTarget))
	gittest.Run(t, dir, "add", "-A")
	gittest.Run(t, dir, "update-index", "--add", "--cacheinfo", "120000,"+gittest.Run(t, dir, "hash-object", "-w", long)+",long")
	gittest.Run(t, dir, "commit", "-q", "-m", "links")
	h, _ := r.Resolve("HEAD")
	for _, c := range []struct {
		path, target string
		ok           bool
	}{
		{"sub/link", "../a.txt", true},
		{"long", strings.Repeat("x/", MaxLinkTarget)[:MaxLinkTarget+1], true},
		{"a.txt", "", false},
		{"sub", "", false},
		{"missing", "", false},
		{"a.txt/under", "", false},
		{"sub/link/under", "", false},
	} {
		target, ok, err := r.LinkTarget(h, c.path)
		if err != nil || ok != c.ok || target != c.target {
			t.Errorf("LinkTarget(%s) = %.20q %v %v, want %.20q %v", c.path, target, ok, err, c.target, c.ok)
		}
	}
	if _, ok, err := r.LinkTarget(plumbing.NewHash(strings.Repeat("1", 40)), "sub/link"); err == nil || ok {
		t.Errorf("an unknown commit: %v %v", ok, err)
	}
}

func TestStageAsksAboutEachChangedLinkWithItsTarget(t *testing.T) {
	t.Parallel()
	_, w := stagedWorktree(t)
	os.Symlink("../../etc/passwd", filepath.Join(w.Path, "out"))
	os.Symlink("internal", filepath.Join(w.Path, "in"))
	write(t, filepath.Join(w.Path, "plain.txt"), "x\n")
	var asked []string
	refuseLink := func(p, target string) string {
		asked = append(asked, p+" -> "+target)
		if strings.HasPrefix(target, "..") {
			return "leaves the worktree"
		}
		return ""
	}
	_, err := w.Stage(StageOptions{Refuse: func(string) string { return "" }, RefuseLink: refuseLink})
	if got := refusedPaths(t, err); len(got) != 1 || got["out"] != "leaves the worktree" {
		t.Errorf("refused %v", got)
	}
	if strings.Join(asked, ",") != "in -> internal,out -> ../../etc/passwd" {
		t.Errorf("asked about %v", asked)
	}
	os.Remove(filepath.Join(w.Path, "out"))
	if changed, err := w.Stage(StageOptions{RefuseLink: refuseLink}); err != nil || !changed {
		t.Fatalf("Stage: %v %v", changed, err)
	}
	if got := strings.Join(staged(t, w), ","); got != "in,plain.txt" {
		t.Errorf("staged %s", got)
	}
}
