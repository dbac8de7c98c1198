package split

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wo-runner/wo/gitops"
	"github.com/wo-runner/wo/internal/fileparts"
	"github.com/wo-runner/wo/internal/gittest"
	"github.com/wo-runner/wo/split/splittest"
)

// repoWithFiles makes a repository whose base branch is an empty commit
// and whose main branch adds the files.
func repoWithFiles(t testing.TB, files map[string]string) *gitops.Repo {
	t.Helper()
	return repoFromTo(t, nil, files)
}

// repoFromTo makes a repository whose base branch holds the base files
// and whose main branch holds exactly the source files: what base has and
// source lacks is deleted (or renamed, where git sees a rename).
func repoFromTo(t testing.TB, base, source map[string]string) *gitops.Repo {
	t.Helper()
	root := t.TempDir()
	repo := filepath.Join(root, "repo")
	gittest.Run(t, root, "init", "-q", "-b", "main", repo)
	write := func(files map[string]string) {
		for path, content := range files {
			full := filepath.Join(repo, path)
			if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	write(base)
	gittest.Run(t, repo, "add", "-A")
	gittest.Run(t, repo, "commit", "-q", "--allow-empty", "-m", "base")
	gittest.Run(t, repo, "branch", "base")
	gittest.Run(t, repo, "rm", "-q", "-r", "--ignore-unmatch", ".")
	write(source)
	gittest.Run(t, repo, "add", "-A")
	gittest.Run(t, repo, "commit", "-q", "-m", "the change")
	r, err := gitops.Open(repo)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// filler is n lines of Go declarations, to make a file count.
func filler(prefix string, n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "\nfunc %s%d() int { return %d }\n", prefix, i, i)
	}
	return b.String()
}

// goOffline runs the go command with no network and no toolchain switch,
// in the workspace of the go.work file given, or in none.
func goOffline(dir, gowork string, args ...string) (string, error) {
	env := []string{"GOTOOLCHAIN=local", "GOPROXY=off", "GOFLAGS=-mod=mod", "GOWORK=off"}
	if gowork != "" {
		env = []string{"GOTOOLCHAIN=local", "GOPROXY=off", "GOFLAGS=", "GOWORK=" + gowork}
	} else if _, err := os.Stat(filepath.Join(dir, "vendor")); err == nil {
		env[2] = "GOFLAGS=" // built from vendor/, as the go command does by default
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// buildEveryTip stacks the plan's PRs one by one on the base in a
// worktree and runs go build ./... and go vet ./... at each tip, as CI on
// each stacked PR would; the top of the stack must be the source tree.
func buildEveryTip(t *testing.T, r *gitops.Repo, p *Plan) {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Fatalf("the go command is needed to prove each PR builds: %v", err)
	}
	wt := filepath.Join(t.TempDir(), "tip")
	gittest.Run(t, r.Path, "worktree", "add", "-q", "--detach", wt, "base")
	for _, pr := range p.PRs {
		args := []string{"checkout", "main", "--"}
		for _, f := range pr.Files {
			if f.OldPath != "" {
				gittest.Run(t, wt, "rm", "-q", "--", f.OldPath)
			}
			if f.Kind == "deleted" {
				gittest.Run(t, wt, "rm", "-q", "--", f.Path)
				continue
			}
			args = append(args, f.Path)
		}
		if len(args) > 3 {
			gittest.Run(t, wt, args...)
		}
		writeParts(t, wt, pr)
		gowork := filepath.Join(wt, "go.work")
		if _, err := os.Stat(gowork); err != nil {
			gowork = ""
		}
		for _, mod := range moduleRoots(t, wt) {
			out, err := goOffline(mod, gowork, "build", "-o", os.DevNull, "./...")
			if err != nil {
				t.Errorf("base + PRs 1..%d (%s) does not build in %s:\n%s", pr.Number, pr.Title, mod, out)
				continue
			}
			if strings.Contains(out, "matched no packages") {
				continue // a module with no code yet
			}
			if out, err := goOffline(mod, gowork, "vet", "./..."); err != nil {
				t.Errorf("base + PRs 1..%d (%s) fails go vet in %s:\n%s", pr.Number, pr.Title, mod, out)
			}
		}
	}
	gittest.Run(t, wt, "add", "-A")
	if out, err := exec.Command("git", "-C", wt, "diff", "--cached", "--stat", "main").CombinedOutput(); err != nil || len(out) > 0 {
		t.Errorf("the top of the stack is not the source tree (%v):\n%s", err, out)
	}
}

// writeParts writes the files the PR brings part of as wo run's
// checkout_files does: those lines of the file at main.
func writeParts(t *testing.T, wt string, pr *PR) {
	t.Helper()
	for _, f := range pr.Files {
		if f.Part == "" {
			continue
		}
		src, err := exec.Command("git", "-C", wt, "show", "main:"+f.Path).Output()
		if err != nil {
			t.Fatal(err)
		}
		part, err := fileparts.Cut(src, f.Part)
		if err != nil {
			t.Fatalf("PR #%d, %s: %v", pr.Number, f.Path, err)
		}
		if err := os.WriteFile(filepath.Join(wt, f.Path), part, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// moduleRoots are the folders of the go.mod files in a worktree: each
// module builds on its own.
func moduleRoots(t *testing.T, wt string) []string {
	t.Helper()
	var roots []string
	err := filepath.WalkDir(wt, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if !d.IsDir() && d.Name() == "go.mod" {
			roots = append(roots, filepath.Dir(p))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return roots
}

func planOf(t *testing.T, r *gitops.Repo, opts Options) *Plan {
	t.Helper()
	c, err := ReadChange(context.Background(), r, "base", "main")
	if err != nil {
		t.Fatal(err)
	}
	p, err := Make(c, opts)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// prHolding is the PR that holds the file.
func prHolding(p *Plan, path string) *PR {
	for _, pr := range p.PRs {
		for _, f := range pr.Files {
			if f.Path == path {
				return pr
			}
		}
	}
	return nil
}

func reasonOf(p *Plan, path string) string {
	for _, f := range prHolding(p, path).Files {
		if f.Path == path {
			return f.Reason
		}
	}
	return ""
}

func TestFoldersWithoutGoCodeGoWithTheirPackage(t *testing.T) {
	t.Parallel()
	r := repoWithFiles(t, splittest.GoModule())
	p := planOf(t, r, Options{MaxLines: 150, MaxFiles: 30, SplitLarge: true})
	// Test data at any depth goes with its package, embedded files with
	// the package that embeds them even when a nearer package sits above.
	for file, owner := range map[string]string{
		"internal/store/testdata/golden/case.json": "internal/store/store.go",
		"web/ui/dist/index.html":                   "web/server.go",
		"internal/big/schema.json":                 "internal/big/t05.go",
	} {
		if got, want := prHolding(p, file), prHolding(p, owner); got != want {
			t.Errorf("%s is in PR #%d, its owner %s in PR #%d", file, got.Number, owner, want.Number)
		}
	}
	if why := reasonOf(p, "web/ui/dist/index.html"); !strings.Contains(why, "embedded by web/server.go (//go:embed ui/dist)") {
		t.Errorf("the reason for an embedded file: %q", why)
	}
	if why := reasonOf(p, "internal/store/testdata/golden/case.json"); !strings.Contains(why, "below package internal/store, the nearest package above it") {
		t.Errorf("the reason for test data: %q", why)
	}
	// No PR is only folders: each holds Go code (or is go.mod's).
	for _, pr := range p.PRs {
		goCode := false
		for _, f := range pr.Files {
			goCode = goCode || strings.HasSuffix(f.Path, ".go") || f.Path == "go.mod"
		}
		if !goCode && !plainPR(pr) {
			t.Errorf("PR #%d (%s) holds no Go code: %v", pr.Number, pr.Title, pr.Units)
		}
	}
}

func TestOversizePackageIsCutIntoPRsThatEachBuild(t *testing.T) {
	t.Parallel()
	r := repoWithFiles(t, splittest.GoModule())
	p := planOf(t, r, Options{MaxLines: 150, MaxFiles: 30, SplitLarge: true})
	parts := map[int]bool{}
	for _, pr := range p.PRs {
		for _, f := range pr.Files {
			if strings.HasPrefix(f.Path, "internal/big/") {
				parts[pr.Number] = true
			}
		}
	}
	if len(parts) < 3 {
		t.Fatalf("internal/big (about 600 lines, budget 150) is in %d PRs: %v", len(parts), p.Warnings)
	}
	// Declarations before their uses: the chain T00 ← T01 ← … in order.
	for i := 1; i < splittest.BigFiles; i++ {
		before, after := prHolding(p, fmt.Sprintf("internal/big/t%02d.go", i-1)), prHolding(p, fmt.Sprintf("internal/big/t%02d.go", i))
		if before.Number > after.Number {
			t.Errorf("t%02d.go is in PR #%d, after t%02d.go (PR #%d) which uses it", i-1, before.Number, i, after.Number)
		}
	}
	// A cycle of files stays together; a type stays with its methods; a
	// test comes with the code it tests, the external test last.
	if prHolding(p, "internal/big/a.go") != prHolding(p, "internal/big/b.go") {
		t.Error("a.go and b.go use each other but were cut apart")
	}
	// A type's methods come with it, or (cut along declarations, where
	// no value of it becomes an interface before) after it.
	if typ, methods := prHolding(p, "internal/big/t03.go"), prHolding(p, "internal/big/t03_methods.go"); methods.Number < typ.Number {
		t.Errorf("T03's methods are in PR #%d, before the type's #%d", methods.Number, typ.Number)
	}
	if prHolding(p, "internal/big/t00_test.go") != prHolding(p, "internal/big/t00.go") {
		t.Errorf("t00_test.go is in PR #%d, the code it tests in #%d", prHolding(p, "internal/big/t00_test.go").Number, prHolding(p, "internal/big/t00.go").Number)
	}
	if why := reasonOf(p, "internal/big/a.go"); !strings.Contains(why, "internal/big/a.go, internal/big/b.go use each other in a cycle") || !strings.Contains(why, "cut because it is over the budget") {
		t.Errorf("the reason for a.go: %q", why)
	}
	last := 0
	for n := range parts {
		last = max(last, n)
	}
	if got := prHolding(p, "internal/big/big_test.go").Number; got != last {
		t.Errorf("the external test is in PR #%d, not with the last part (#%d)", got, last)
	}
	buildEveryTip(t, r, p)
}

func TestSmallPackagesArePackedByTheme(t *testing.T) {
	t.Parallel()
	r := repoWithFiles(t, splittest.GoModule())
	p := planOf(t, r, Options{MaxLines: 200, MaxFiles: 30, SplitLarge: true})
	adapters := prHolding(p, "internal/adapters/claudecode/adapter.go")
	for _, a := range []string{"codex", "gemini"} {
		if prHolding(p, "internal/adapters/"+a+"/adapter.go") != adapters {
			t.Errorf("the sibling adapter %s is not in PR #%d with claudecode", a, adapters.Number)
		}
	}
	if !strings.Contains(adapters.Title, "] internal/") || strings.HasPrefix(adapters.Slug, "internal") {
		t.Errorf("the adapters' PR is titled %q (branch slug %q)", adapters.Title, adapters.Slug)
	}
	// internal/msg (5 lines) is imported by internal/event: they go together.
	if prHolding(p, "internal/msg/msg.go") != prHolding(p, "internal/event/event.go") {
		t.Error("internal/msg is not packed with internal/event, which imports it")
	}
	for _, pr := range p.PRs {
		if pr.Lines*10 < 200 {
			t.Errorf("PR #%d (%s) has %d lines, under a tenth of the budget", pr.Number, pr.Title, pr.Lines)
		}
		if pr.Theme == "internal" || pr.Slug == "internal" {
			t.Errorf("PR #%d is named after a bare folder: %q", pr.Number, pr.Title)
		}
	}
	buildEveryTip(t, r, p)
}

// noStrandedSmallPR checks the rule that joinSmall keeps: no PR is under
// a tenth of the line budget unless neither neighbour in the series can
// take it within the budget (or one is plain files, the other code).
func noStrandedSmallPR(t *testing.T, p *Plan, opts Options) {
	t.Helper()
	limit := opts // a PR never goes over the budget to take a small one
	for i, pr := range p.PRs {
		if pr.Lines*10 >= opts.MaxLines {
			continue
		}
		for _, j := range []int{i - 1, i + 1} {
			if j < 0 || j >= len(p.PRs) {
				continue
			}
			n := p.PRs[j]
			if plainPR(pr) != plainPR(n) {
				continue
			}
			if !over(pr.Lines+n.Lines, countedFiles(pr)+countedFiles(n), limit) {
				t.Errorf("PR #%d (%s) has %d lines, under a tenth of the budget of %d, and could have joined PR #%d (%s, %d lines)",
					pr.Number, pr.Title, pr.Lines, opts.MaxLines, n.Number, n.Title, n.Lines)
			}
		}
	}
}

// plainPR says a PR holds plain files by folder only.
func plainPR(pr *PR) bool {
	for _, u := range pr.Units {
		if !strings.Contains(u, " (files)") && !strings.HasPrefix(u, "top-level files") {
			return false
		}
	}
	return true
}

// countedFiles are a PR's files that count against the budget.
func countedFiles(pr *PR) int {
	return weigh(pr.Files).files
}

// At the default budget, small sibling packages that fall between two
// packages near the budget join one of them rather than stand alone.
func TestSmallPRsJoinANeighbourAtTheDefaultBudget(t *testing.T) {
	t.Parallel()
	var pkgs []goPkg
	prev := ""
	for i := 0; i < 3; i++ {
		big := goPkg{dir: fmt.Sprintf("internal/big%d", i), files: 1, lines: 370}
		if prev != "" {
			big.imports = []string{prev + "a", prev + "b"}
		}
		pkgs = append(pkgs, big)
		for _, s := range []string{"a", "b"} {
			pkgs = append(pkgs, goPkg{dir: fmt.Sprintf("internal/small/s%d%s", i, s), files: 1, lines: 15, imports: []string{big.dir}})
		}
		prev = fmt.Sprintf("internal/small/s%d", i)
	}
	r := repoWithChange(t, pkgs, nil)
	opts := Options{MaxLines: 400, MaxFiles: 30, SplitLarge: true}
	p := plan(t, r, opts)
	noStrandedSmallPR(t, p, opts)
	if len(p.PRs) != 3 {
		var prs []string
		for _, pr := range p.PRs {
			prs = append(prs, fmt.Sprintf("#%d %v (%d lines)", pr.Number, pr.Units, pr.Lines))
		}
		t.Errorf("three packages of 370 lines and six of 15 make %d PRs: %s", len(p.PRs), strings.Join(prs, "; "))
	}
	buildEveryTip(t, r, p)
}

// The base's imports order the change: a package's old importers must
// not see it change (an API renamed, the package deleted or moved) before
// they change themselves.
func TestChangesToWhatTheBaseImportsBuildAtEveryTip(t *testing.T) {
	t.Parallel()
	gomod := "module example.com/m\n\ngo 1.22\n"
	for _, tc := range []struct {
		name         string
		base, source map[string]string
	}{
		{"an API renamed", map[string]string{
			"go.mod": gomod,
			"a/a.go": "package a\n\nfunc Old() int { return 1 }\n",
			"b/b.go": "package b\n\nimport \"example.com/m/a\"\n\nfunc B() int { return a.Old() }\n",
		}, map[string]string{
			"go.mod": gomod,
			"a/a.go": "package a\n\nfunc New() int { return 1 }\n" + filler("A", 20),
			"b/b.go": "package b\n\nimport \"example.com/m/a\"\n\nfunc B() int { return a.New() }\n" + filler("B", 20),
		}},
		{"a package deleted", map[string]string{
			"go.mod":     gomod,
			"old/old.go": "package old\n\nfunc F() int { return 1 }\n",
			"p/p.go":     "package p\n\nimport \"example.com/m/old\"\n\nfunc G() int { return old.F() }\n",
		}, map[string]string{
			"go.mod": gomod,
			"p/p.go": "package p\n\nfunc G() int { return 2 }\n" + filler("H", 20),
		}},
		{"a package moved", map[string]string{
			"go.mod":     gomod,
			"old/old.go": "package old\n\nfunc F() int { return 1 }\n" + filler("F", 20),
			"p/p.go":     "package p\n\nimport \"example.com/m/old\"\n\nfunc G() int { return old.F() }\n",
		}, map[string]string{
			"go.mod":             gomod,
			"pkg/newname/old.go": "package newname\n\nfunc F() int { return 1 }\n" + filler("F", 20),
			"p/p.go":             "package p\n\nimport \"example.com/m/pkg/newname\"\n\nfunc G() int { return newname.F() }\n",
			"p/k.go":             "package p\n" + filler("K", 20),
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := repoFromTo(t, tc.base, tc.source)
			p := planOf(t, r, Options{MaxLines: 20, MaxFiles: 30, SplitLarge: true})
			buildEveryTip(t, r, p)
		})
	}
}

// Imports across the modules of a change are edges too: a module that
// replaces another with a local folder, a go.work that uses a nested
// module, a nested module's packages importing each other.
func TestImportsAcrossModulesBuildAtEveryTip(t *testing.T) {
	t.Parallel()
	gomod := "module example.com/m\n\ngo 1.22\n"
	tools := map[string]string{
		"tools/go.mod":     "module example.com/tools\n\ngo 1.22\n",
		"tools/zlow/z.go":  "package zlow\n\nfunc Z() int { return 1 }\n" + filler("Z", 20),
		"tools/app/app.go": "package app\n\nimport \"example.com/tools/zlow\"\n\nfunc A() int { return zlow.Z() }\n" + filler("A", 20),
		"root.go":          "package m\n" + filler("R", 20),
	}
	withWork := map[string]string{"go.mod": gomod, "go.work": "go 1.22\n\nuse (\n\t.\n\t./tools\n)\n"}
	nested := map[string]string{"go.mod": gomod}
	for k, v := range tools {
		withWork[k], nested[k] = v, v
	}
	for _, tc := range []struct {
		name   string
		source map[string]string
	}{
		{"a local replace", map[string]string{
			"go.mod":     gomod + "\nrequire example.org/lib v0.0.0\n\nreplace example.org/lib => ./lib\n",
			"lib/go.mod": "module example.org/lib\n\ngo 1.22\n",
			"lib/lib.go": "package lib\n\nfunc L() int { return 1 }\n" + filler("L", 20),
			"main.go":    "package main\n\nimport \"example.org/lib\"\n\nfunc main() { println(lib.L()) }\n" + filler("M", 20),
		}},
		{"a go.work", withWork},
		{"a nested module", nested},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := repoFromTo(t, nil, tc.source)
			p := planOf(t, r, Options{MaxLines: 20, MaxFiles: 30, SplitLarge: true})
			buildEveryTip(t, r, p)
		})
	}
}

// vendor/modules.txt must agree with go.mod before anything is built from
// vendor/: it comes with go.mod, not after the vendored code.
func TestVendoredModulesBuildAtEveryTip(t *testing.T) {
	t.Parallel()
	r := repoFromTo(t, nil, map[string]string{
		"go.mod":                        "module example.com/m\n\ngo 1.22\n\nrequire example.org/dep v1.0.0\n",
		"vendor/modules.txt":            "# example.org/dep v1.0.0\n## explicit\nexample.org/dep\n",
		"vendor/example.org/dep/dep.go": "package dep\n\nfunc D() int { return 1 }\n",
		"lib/lib.go":                    "package lib\n\nfunc L() int { return 2 }\n",
		"main.go":                       "package main\n\nimport \"example.org/dep\"\n\nfunc main() { println(dep.D()) }\n" + filler("M", 20),
	})
	p := planOf(t, r, Options{MaxLines: 20, MaxFiles: 30, SplitLarge: true})
	if got, want := prHolding(p, "vendor/modules.txt"), prHolding(p, "vendor/example.org/dep/dep.go"); got.Number > want.Number {
		t.Errorf("vendor/modules.txt is in PR #%d, after the vendored code in #%d", got.Number, want.Number)
	}
	buildEveryTip(t, r, p)
}

// A folder that a package embeds may be a Go package itself: its files
// come no later than the package that embeds them.
func TestEmbeddedPackageBuildsAtEveryTip(t *testing.T) {
	t.Parallel()
	r := repoFromTo(t, nil, map[string]string{
		"go.mod":                "module example.com/m\n\ngo 1.22\n",
		"scaffold/s.go":         "package scaffold\n\nimport \"embed\"\n\n//go:embed tmpl\nvar T embed.FS\n" + filler("S", 15),
		"scaffold/tmpl/main.go": "package main\n\nfunc main() {}\n" + filler("T", 15),
	})
	buildEveryTip(t, r, planOf(t, r, Options{MaxLines: 20, MaxFiles: 30, SplitLarge: true}))
}

// go vet checks that an Example function names something the package
// declares: in a cut package, ExampleZed comes with or after Zed.
func TestExampleComesWithWhatItIsNamedAfter(t *testing.T) {
	t.Parallel()
	r := repoFromTo(t, nil, map[string]string{
		"go.mod": "module example.com/m\n\ngo 1.22\n",
		"a/a.go": "package a\n" + filler("A", 30),
		"a/z.go": "package a\n\ntype Z struct{}\n\nfunc (Z) Go() {}\n\nfunc Zed() {}\n" + filler("Zf", 30),
		"a/example_test.go": "package a\n\nimport \"fmt\"\n\nfunc ExampleZed() {\n\tfmt.Println(\"hi\")\n\t// Output: hi\n}\n\n" +
			"func ExampleZ_Go() {\n\tfmt.Println(\"x\")\n\t// Output: x\n}\n",
	})
	buildEveryTip(t, r, planOf(t, r, Options{MaxLines: 100, MaxFiles: 30, SplitLarge: true}))
}

// A Go file too big to read whole still has its imports read from its
// header: it comes after the package it imports.
func TestGoFileOverTheReadLimitIsOrderedByItsImports(t *testing.T) {
	t.Parallel()
	var big strings.Builder
	big.WriteString("package big\n\nimport \"example.com/m/low\"\n\nvar X = low.L0()\n")
	for big.Len() <= maxBlobRead {
		big.WriteString("// a generated table, far too long to read whole ...................................\n")
	}
	r := repoFromTo(t, nil, map[string]string{
		"go.mod":     "module example.com/m\n\ngo 1.22\n",
		"big/big.go": big.String(),
		"low/low.go": "package low\n" + filler("L", 30),
	})
	p := planOf(t, r, Options{MaxLines: 40, MaxFiles: 30, SplitLarge: true})
	if prHolding(p, "big/big.go").Number < prHolding(p, "low/low.go").Number {
		t.Errorf("big/big.go is in PR #%d, before low/low.go (#%d), which it imports", prHolding(p, "big/big.go").Number, prHolding(p, "low/low.go").Number)
	}
	buildEveryTip(t, r, p)
}
