// Command realisticrepo builds a repository that looks like a real
// project's clone, for benchmarking wo's git steps against the git command:
// a long history (1,200 commits of edits, additions and renames) packed by
// git gc into one packfile with delta chains, a few hundred files, a bare
// remote that already has the base branch, and on main a change of 30 edited
// and 7 new files over the base branch review-base.
//
//	go run ./scripts/realisticrepo -out DIR [-seed N] [-commits N]
//
// It writes DIR/repo (remote origin = DIR/origin.git), DIR/origin.git and
// DIR/manifest.txt (the changed paths, one a line). The same seed gives the
// same repository, byte for byte in its objects.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

func main() {
	out := flag.String("out", "", "folder to create the repository in (must not exist)")
	seed := flag.Uint64("seed", 17, "random seed: the same seed gives the same history")
	commits := flag.Int("commits", 1200, "commits of history before the change")
	files := flag.Int("files", 320, "files in the tree")
	edited := flag.Int("edited", 30, "files the change edits")
	added := flag.Int("added", 7, "files the change adds")
	flag.Parse()
	if *out == "" {
		fmt.Fprintln(os.Stderr, "realisticrepo: -out DIR is required")
		os.Exit(2)
	}
	if err := build(*out, *seed, *commits, *files, *edited, *added); err != nil {
		fmt.Fprintln(os.Stderr, "realisticrepo:", err)
		os.Exit(1)
	}
}

var words = strings.Fields(`func return if else for range package import type struct interface map
chan go defer select case switch var const error nil true false string int byte rune ctx err
value key store repo tree commit branch index entry state step task log path name`)

// history holds the tree as it evolves: path → content.
type history struct {
	rng   *rand.Rand
	files map[string][]byte
	paths []string // sorted
	n     int      // files made so far, for new names
}

func (h *history) line() string {
	var b strings.Builder
	b.WriteByte('\t')
	for i, n := 0, 3+h.rng.IntN(8); i < n; i++ {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(words[h.rng.IntN(len(words))])
	}
	b.WriteByte('\n')
	return b.String()
}

func (h *history) newFile(dir string) string {
	h.n++
	p := fmt.Sprintf("%s/file%04d.go", dir, h.n)
	var b bytes.Buffer
	fmt.Fprintf(&b, "package %s\n\n", filepath.Base(dir))
	for i, n := 0, 40+h.rng.IntN(160); i < n; i++ {
		if i%12 == 0 {
			fmt.Fprintf(&b, "}\n\nfunc f%d() {\n", i)
		}
		b.WriteString(h.line())
	}
	b.WriteString("}\n")
	h.files[p] = b.Bytes()
	h.paths = append(h.paths, p)
	slices.Sort(h.paths)
	return p
}

// edit changes a few lines in place, as most commits do: the new version
// deltifies well against the old one.
func (h *history) edit(p string) {
	lines := strings.SplitAfter(string(h.files[p]), "\n")
	for i, n := 0, 1+h.rng.IntN(4); i < n; i++ {
		at := 2 + h.rng.IntN(len(lines)-2)
		switch h.rng.IntN(3) {
		case 0:
			lines[at] = h.line()
		case 1:
			lines = slices.Insert(lines, at, h.line())
		default:
			if len(lines) > 20 {
				lines = slices.Delete(lines, at, at+1)
			}
		}
	}
	h.files[p] = []byte(strings.Join(lines, ""))
}

func (h *history) dir() string {
	return fmt.Sprintf("%s/%s", []string{"cmd", "internal", "pkg", "api", "store"}[h.rng.IntN(5)], []string{"alpha", "beta", "gamma", "delta", "core", "util", "http"}[h.rng.IntN(7)])
}

type stream struct {
	w    *bufio.Writer
	mark int
	when int64
}

func (s *stream) commit(branch, msg string, parent int, ops func(w *bufio.Writer)) int {
	s.mark++
	s.when += 3600
	fmt.Fprintf(s.w, "commit refs/heads/%s\nmark :%d\n", branch, s.mark)
	fmt.Fprintf(s.w, "author Dev <dev@example.com> %d +0000\ncommitter Dev <dev@example.com> %d +0000\n", s.when, s.when)
	fmt.Fprintf(s.w, "data %d\n%s\n", len(msg), msg)
	if parent > 0 {
		fmt.Fprintf(s.w, "from :%d\n", parent)
	}
	ops(s.w)
	s.w.WriteString("\n")
	return s.mark
}

func modify(w *bufio.Writer, p string, content []byte) {
	fmt.Fprintf(w, "M 100644 inline %s\ndata %d\n", p, len(content))
	w.Write(content)
	w.WriteString("\n")
}

func build(out string, seed uint64, commits, nfiles, edited, added int) error {
	if _, err := os.Stat(out); err == nil {
		return fmt.Errorf("%s exists: choose a new folder", out)
	}
	repo, origin := filepath.Join(out, "repo"), filepath.Join(out, "origin.git")
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	run := func(dir string, args ...string) error {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=Dev", "GIT_AUTHOR_EMAIL=dev@example.com",
			"GIT_COMMITTER_NAME=Dev", "GIT_COMMITTER_EMAIL=dev@example.com")
		if o, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git %s: %v\n%s", strings.Join(args, " "), err, o)
		}
		return nil
	}
	if err := run(out, "init", "-q", "-b", "main", repo); err != nil {
		return err
	}
	for _, kv := range [][2]string{{"user.name", "Dev"}, {"user.email", "dev@example.com"}, {"gc.auto", "0"}} {
		if err := run(repo, "config", kv[0], kv[1]); err != nil {
			return err
		}
	}

	h := &history{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), files: map[string][]byte{}}
	fi := exec.Command("git", "fast-import", "--quiet")
	fi.Dir = repo
	stdin, err := fi.StdinPipe()
	if err != nil {
		return err
	}
	var stderr bytes.Buffer
	fi.Stderr = &stderr
	if err := fi.Start(); err != nil {
		return err
	}
	s := &stream{w: bufio.NewWriterSize(stdin, 1<<20), when: 1_600_000_000}
	// The first commit: most of the tree.
	for len(h.paths) < nfiles*3/4 {
		h.newFile(h.dir())
	}
	last := s.commit("main", "initial import", 0, func(w *bufio.Writer) {
		for _, p := range h.paths {
			modify(w, p, h.files[p])
		}
	})
	// The history: edits mostly, files added until the tree is full, and
	// now and then a rename with an edit (which git's delta search still
	// pairs up by content).
	for i := 1; i < commits; i++ {
		last = s.commit("main", fmt.Sprintf("change %d", i), last, func(w *bufio.Writer) {
			if len(h.paths) < nfiles && h.rng.IntN(3) == 0 {
				p := h.newFile(h.dir())
				modify(w, p, h.files[p])
			}
			if i%15 == 0 {
				old := h.paths[h.rng.IntN(len(h.paths))]
				nu := fmt.Sprintf("%s/%s", h.dir(), filepath.Base(old))
				if _, taken := h.files[nu]; !taken {
					h.files[nu] = h.files[old]
					delete(h.files, old)
					h.paths = slices.DeleteFunc(h.paths, func(p string) bool { return p == old })
					h.paths = append(h.paths, nu)
					slices.Sort(h.paths)
					fmt.Fprintf(w, "R %s %s\n", old, nu)
					h.edit(nu)
					modify(w, nu, h.files[nu])
				}
			}
			for j, n := 0, 1+h.rng.IntN(5); j < n; j++ {
				p := h.paths[h.rng.IntN(len(h.paths))]
				h.edit(p)
				modify(w, p, h.files[p])
			}
		})
	}
	base := last
	// The change to review: edits to existing files and a few new ones.
	var manifest []string
	pick := h.rng.Perm(len(h.paths))[:edited]
	slices.Sort(pick)
	for _, i := range pick {
		manifest = append(manifest, h.paths[i])
	}
	for i := 0; i < added; i++ {
		manifest = append(manifest, h.newFile("internal/review"))
	}
	s.commit("main", "the change to review", base, func(w *bufio.Writer) {
		for _, p := range manifest {
			if !strings.HasPrefix(p, "internal/review/") {
				for k := 0; k < 5; k++ {
					h.edit(p)
				}
			}
			modify(w, p, h.files[p])
		}
	})
	fmt.Fprintf(s.w, "reset refs/heads/review-base\nfrom :%d\n\n", base)
	if err := s.w.Flush(); err != nil {
		return err
	}
	stdin.Close()
	if err := fi.Wait(); err != nil {
		return fmt.Errorf("git fast-import: %v\n%s", err, stderr.String())
	}
	for _, args := range [][]string{
		{"checkout", "-q", "-f", "main"},
		{"gc", "-q"},
		{"init", "-q", "--bare", origin},
		{"remote", "add", "origin", origin},
		{"push", "-q", "origin", "review-base"},
	} {
		if err := run(repo, args...); err != nil {
			return err
		}
	}
	if err := run(origin, "gc", "-q"); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out, "manifest.txt"), []byte(strings.Join(manifest, "\n")+"\n"), 0o644)
}
