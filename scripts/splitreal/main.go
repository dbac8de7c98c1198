// Command splitreal measures wo split on a real change between two
// published versions of a Go module: it lays the base version (or
// nothing) and then the source version into a fresh repository as two
// commits, plans the split in-process, prints each PR, and with -build
// stacks the PRs one by one in a worktree and runs go build ./... and go
// vet ./... at every tip, offline, as CI on each stacked PR would.
//
// The versions come from the Go module proxy through the go command (go
// mod download), and so do the dependencies the two trees need to build.
// It is run by hand (docs/BENCHMARKS.md says how), never by the tests.
//
//	go run ./scripts/splitreal -base github.com/spf13/cobra@v1.6.1 -source github.com/spf13/cobra@v1.10.2 -max-lines 8000 -build
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/wo-runner/wo/gitops"
	"github.com/wo-runner/wo/split"
)

func main() {
	base := flag.String("base", "", "MODULE@VERSION of the base (empty: an empty base, the source is one new import)")
	source := flag.String("source", "", "MODULE@VERSION of the source")
	work := flag.String("work", "", "folder for the repository (default: a new temporary folder)")
	maxLines := flag.Int("max-lines", 0, "line budget per PR (default: wo split's)")
	maxFiles := flag.Int("max-files", 0, "file budget per PR (default: wo split's)")
	perHour := flag.Float64("reviews-per-hour", split.DefaultReviewsPerHour, "the reviewer's rate, for the estimate")
	build := flag.Bool("build", false, "stack the PRs and build and vet every tip")
	verbose := flag.Bool("v", false, "print every PR")
	explain := flag.Bool("explain", false, "print why each file of a PR over the budget is where it is")
	flag.Parse()
	if *source == "" {
		fail("-source MODULE@VERSION is needed")
	}
	dir := *work
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "splitreal-"); err != nil {
			fail(err.Error())
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fail(err.Error())
	}
	repo := filepath.Join(dir, "repo")
	if err := os.RemoveAll(repo); err != nil {
		fail(err.Error())
	}
	run(dir, "git", "init", "-q", "-b", "main", repo)
	run(repo, "git", "config", "user.email", "splitreal@example.com")
	run(repo, "git", "config", "user.name", "splitreal")
	if *base != "" {
		copyModule(*base, repo)
		fetchDeps(repo)
	}
	run(repo, "git", "add", "-A")
	run(repo, "git", "commit", "-q", "--allow-empty", "-m", "base "+*base)
	run(repo, "git", "branch", "base")
	run(repo, "git", "rm", "-q", "-r", "--ignore-unmatch", ".")
	copyModule(*source, repo)
	fetchDeps(repo)
	run(repo, "git", "add", "-A")
	run(repo, "git", "commit", "-q", "-m", "source "+*source)

	r, err := gitops.Open(repo)
	if err != nil {
		fail(err.Error())
	}
	start := time.Now()
	c, err := split.ReadChange(context.Background(), r, "base", "main")
	if err != nil {
		fail(err.Error())
	}
	read := time.Since(start)
	opts := split.Options{MaxLines: *maxLines, MaxFiles: *maxFiles, SplitLarge: true, ReviewsPerHour: *perHour}
	start = time.Now()
	p, err := split.Make(c, opts)
	if err != nil {
		fail(err.Error())
	}
	planned := time.Since(start)
	opts = p.Options
	kinds := map[string]int{}
	lines := 0
	for _, f := range c.Files {
		kinds[f.Kind]++
		lines += f.Lines
	}
	fmt.Printf("change %s → %s: %d files (%v), %d lines; budget %d lines, %d files\n", orEmpty(*base), *source, len(c.Files), kinds, lines, opts.MaxLines, opts.MaxFiles)
	largest, over := 0, 0
	for _, pr := range p.PRs {
		largest = max(largest, pr.Lines)
		counted := 0 // files that count against the budget
		for _, f := range pr.Files {
			if f.SetApart == "" {
				counted++
			}
		}
		isOver := (pr.Lines > opts.MaxLines || counted > opts.MaxFiles) && len(pr.Files) > 1
		if isOver {
			over++
		}
		if *verbose || isOver {
			mark := ""
			if isOver {
				mark = "  OVER BUDGET"
			}
			apart := ""
			if pr.SetApartLines > 0 {
				apart = fmt.Sprintf(" (+%d set apart)", pr.SetApartLines)
			}
			fmt.Printf("  #%d %5d lines%s %4d files  %s%s\n", pr.Number, pr.Lines, apart, len(pr.Files), pr.Title, mark)
			if *explain && isOver {
				for _, f := range pr.Files {
					fmt.Printf("      %s (%s, %d): %s\n", f.Path, f.Kind, f.Lines, f.Reason)
				}
			}
		}
	}
	for _, w := range p.Warnings {
		fmt.Println("  warning:", w)
	}
	for _, a := range p.SetApart {
		fmt.Println("  set apart:", a)
	}
	if p.Estimate != nil {
		fmt.Println("  review:", p.Estimate)
	}
	fmt.Printf("PRs: %d; largest: %d lines; over budget (more than one file): %d; read %v, planned %v\n",
		len(p.PRs), largest, over, read.Round(time.Millisecond), planned.Round(time.Millisecond))
	if !*build {
		return
	}
	if !buildEveryTip(repo, p) {
		os.Exit(1)
	}
}

// buildEveryTip stacks the PRs on the base in a worktree and builds and
// vets every tip; the top of the stack must be the source tree.
func buildEveryTip(repo string, p *split.Plan) bool {
	wt := filepath.Join(filepath.Dir(repo), "tip")
	_ = os.RemoveAll(wt)
	_ = exec.Command("git", "-C", repo, "worktree", "prune").Run()
	run(repo, "git", "worktree", "add", "-q", "--detach", wt, "base")
	ok := true
	for _, pr := range p.PRs {
		args := []string{"checkout", "main", "--"}
		for _, f := range pr.Files {
			if f.OldPath != "" {
				run(wt, "git", "rm", "-q", "--", f.OldPath)
			}
			if f.Kind == "deleted" {
				run(wt, "git", "rm", "-q", "--", f.Path)
				continue
			}
			args = append(args, f.Path)
		}
		if len(args) > 3 {
			run(wt, "git", args...)
		}
		start := time.Now()
		result := "builds and vets"
		for _, mod := range moduleRoots(wt) {
			if out, err := offline(mod, "build", "-o", os.DevNull, "./..."); err != nil {
				result, ok = "DOES NOT BUILD in "+mod+":\n"+out, false
				break
			} else if strings.Contains(out, "matched no packages") {
				continue
			}
			if out, err := offline(mod, "vet", "./..."); err != nil {
				result, ok = "FAILS VET in "+mod+":\n"+out, false
				break
			}
		}
		fmt.Printf("  tip %d/%d (%s): %s (%v)\n", pr.Number, len(p.PRs), pr.Title, result, time.Since(start).Round(time.Second))
	}
	run(wt, "git", "add", "-A")
	diff := output(wt, "git", "diff", "--cached", "--stat", "main")
	if diff != "" {
		fmt.Printf("the top of the stack is NOT the source tree:\n%s\n", diff)
		return false
	}
	fmt.Println("the top of the stack is the source tree")
	if ok {
		fmt.Println("every tip builds and vets")
	}
	return ok
}

// copyModule lays the files of MODULE@VERSION, from the module cache
// (downloaded through the module proxy), into dir.
func copyModule(modVersion, dir string) {
	out := output(dir, "go", "mod", "download", "-json", modVersion)
	var info struct{ Dir, Error string }
	if err := json.Unmarshal([]byte(out), &info); err != nil || info.Dir == "" {
		fail(fmt.Sprintf("go mod download %s: %v %s", modVersion, err, info.Error))
	}
	err := filepath.WalkDir(info.Dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(info.Dir, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		target := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		fail(err.Error())
	}
}

// fetchDeps puts what the tree's packages and tests need into the module
// cache, so that its tips build offline.
func fetchDeps(dir string) {
	for _, mod := range moduleRoots(dir) {
		saved := map[string][]byte{}
		for _, name := range []string{"go.mod", "go.sum"} {
			if data, err := os.ReadFile(filepath.Join(mod, name)); err == nil {
				saved[name] = data
			}
		}
		for _, args := range [][]string{{"mod", "download"}, {"list", "-e", "-deps", "-test", "./..."}} {
			cmd := exec.Command("go", args...)
			cmd.Dir = mod
			cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
			if out, err := cmd.CombinedOutput(); err != nil {
				fmt.Fprintf(os.Stderr, "go %s in %s: %v\n%s\n", args[0], mod, err, out)
			}
		}
		// go list -mod=mod may have written to them: put them back.
		for name, data := range saved {
			if err := os.WriteFile(filepath.Join(mod, name), data, 0o644); err != nil {
				fail(err.Error())
			}
		}
	}
}

func offline(dir string, args ...string) (string, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOTOOLCHAIN=local", "GOPROXY=off", "GOFLAGS=-mod=mod", "GOWORK=off")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func moduleRoots(dir string) []string {
	var roots []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata" || d.Name() == "vendor") {
			return filepath.SkipDir
		}
		if !d.IsDir() && d.Name() == "go.mod" {
			roots = append(roots, filepath.Dir(p))
		}
		return nil
	})
	return roots
}

func run(dir, name string, args ...string) { output(dir, name, args...) }

func output(dir, name string, args ...string) string {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		fail(fmt.Sprintf("%s %s in %s: %v\n%s", name, strings.Join(args, " "), dir, err, stderr.String()))
	}
	return string(out)
}

func orEmpty(s string) string {
	if s == "" {
		return "(empty)"
	}
	return s
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "splitreal:", msg)
	os.Exit(2)
}
