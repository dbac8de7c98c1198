package gitops

import (
	"fmt"
	"path/filepath"
	"sort"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/wo-runner/wo/internal/gitname"
	"github.com/wo-runner/wo/internal/gittest"
)

// A rewrite of a pushed branch is judged by what it takes back: going
// back to an older commit, or replacing a line without its fix, takes the
// fix's change back; an amended commit of the same files takes nothing.
func TestUndoneNamesTheChangesARewriteTakesBack(t *testing.T) {
	dir := t.TempDir()
	gittest.Run(t, dir, "init", "-q", "-b", "main")
	commit := func(msg string, files map[string]string) plumbing.Hash {
		for p, c := range files {
			if c == "" {
				gittest.Run(t, dir, "rm", "-q", p)
				continue
			}
			write(t, filepath.Join(dir, p), c)
			gittest.Run(t, dir, "add", p)
		}
		gittest.Run(t, dir, "commit", "-q", "--allow-empty", "-m", msg)
		return plumbing.NewHash(gittest.Run(t, dir, "rev-parse", "HEAD"))
	}
	base := commit("base", map[string]string{"keep.txt": "k\n"})
	a := commit("wo's commit", map[string]string{"f.go": "f1\n", "g.go": "g1\n"})
	fix := commit("review fix", map[string]string{"f.go": "f2\n", "gone.txt": "x\n"})
	late := commit("a deletion", map[string]string{"gone.txt": ""})
	gittest.Run(t, dir, "checkout", "-q", a.String())
	amended := commit("wo's commit, amended", map[string]string{"f.go": "f3\n"}) // on a: same files, new content
	gittest.Run(t, dir, "checkout", "-q", base.String())
	withoutG := commit("without g", map[string]string{"f.go": "f2\n"})
	gittest.Run(t, dir, "checkout", "-q", base.String())
	revert := commit("source again", map[string]string{"f.go": "f1\n", "g.go": "g1\n"})
	repo, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	short := func(h plumbing.Hash) string { return gitname.Short(h.String()) }
	for _, c := range []struct {
		name     string
		tip, to  plumbing.Hash
		want     []string
		max      int
		wantsErr bool
	}{
		{name: "the same commit", tip: fix, to: fix},
		{name: "a fast-forward", tip: a, to: fix},
		{name: "back to wo's commit", tip: fix, to: a, want: []string{"f.go of " + short(fix), "gone.txt of " + short(fix)}},
		{name: "back past a deletion", tip: late, to: fix, want: []string{"gone.txt of " + short(late)}},
		{name: "the fix left out of a rebuilt line", tip: fix, to: revert, want: []string{"f.go of " + short(fix), "gone.txt of " + short(fix)}},
		{name: "a file of wo's commit left out", tip: fix, to: withoutG, want: []string{"g.go of " + short(a), "gone.txt of " + short(fix)}},
		{name: "wo's commit amended", tip: a, to: amended},
		{name: "the walk's bound", tip: late, to: base, max: 2, wantsErr: true},
	} {
		max := c.max
		if max == 0 {
			max = 10
		}
		got, err := repo.Undone(c.tip, c.to, max)
		if (err != nil) != c.wantsErr {
			t.Errorf("%s: err %v", c.name, err)
			continue
		}
		var names []string
		for _, p := range got {
			names = append(names, fmt.Sprintf("%s of %s", p.Path, short(p.Commit)))
		}
		sort.Strings(names)
		sort.Strings(c.want)
		if fmt.Sprint(names) != fmt.Sprint(c.want) {
			t.Errorf("%s: undone %v, want %v", c.name, names, c.want)
		}
	}
}
