package split

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/wo-runner/wo/internal/gittest"
)

// These tests split hostile repositories: each builds a small Go module
// whose shape wo split must not get wrong, and checks what a reviewer
// would see on the PR branches (they build, nothing is lost).

// padded is a Go file of package pkg with n lines of constants after the
// body, so that budgets can force packages apart; no two calls declare
// the same constant.
func padded(pkg, body string, n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "package %s\n\n%s\n", pkg, body)
	file := padFiles.Add(1)
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "const pad%d_%d = %d\n", file, i, i)
	}
	return b.String()
}

var padFiles atomic.Int64

// stackEveryTip is buildEveryTip for changes with deletions and renames,
// with the go command's GOFLAGS; at the end the stack must
// equal the source tree, and no file may be in two PRs or in none.
func stackEveryTip(t *testing.T, dir string, p *Plan, goflags string) {
	t.Helper()
	// A file is in one PR, or in several when all but the last bring
	// part of it.
	seen := map[string]int{}
	part := map[string]bool{}
	for _, pr := range p.PRs {
		for _, f := range pr.Files {
			if prev, dup := seen[f.Path]; dup && !part[f.Path] {
				t.Errorf("%q is in PR #%d and PR #%d", f.Path, prev, pr.Number)
			}
			seen[f.Path], part[f.Path] = pr.Number, f.Part != ""
		}
	}
	for _, f := range p.Change.Files {
		if _, ok := seen[f.Path]; !ok {
			t.Errorf("%q (%s) is in no PR", f.Path, f.Kind)
		}
		if part[f.Path] {
			t.Errorf("%q: its last PR brings only part of it", f.Path)
		}
	}
	wt := filepath.Join(t.TempDir(), "tip")
	gittest.Run(t, dir, "worktree", "add", "-q", "--detach", wt, "base")
	for _, pr := range p.PRs {
		checkout := []string{"checkout", "main", "--"}
		remove := []string{"rm", "-q", "--"}
		for _, f := range pr.Files {
			if f.Kind == "deleted" {
				remove = append(remove, f.Path)
				continue
			}
			checkout = append(checkout, f.Path)
			if f.OldPath != "" {
				remove = append(remove, f.OldPath)
			}
		}
		if len(remove) > 3 {
			gittest.Run(t, wt, remove...)
		}
		if len(checkout) > 3 {
			gittest.Run(t, wt, checkout...)
		}
		writeParts(t, wt, pr)
		for _, args := range [][]string{{"build", "./..."}, {"vet", "./..."}} {
			if out, err := goWith(wt, goflags, args...); err != nil {
				t.Errorf("base + PRs 1..%d (%s): go %s fails:\n%s", pr.Number, pr.Title, args[0], out)
				break
			}
		}
	}
	if out, err := gitOut(wt, "diff", "--cached", "--name-status", "main"); err != nil || out != "" {
		t.Errorf("the top of the stack differs from the source (%v):\n%s", err, out)
	}
}

func gitOut(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// goWith runs the go command offline with the given GOFLAGS.
func goWith(dir, goflags string, args ...string) (string, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOTOOLCHAIN=local", "GOPROXY=off", "GOFLAGS="+goflags, "GOWORK=off")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// A //go:embed pattern may be quoted, and then may hold spaces: the file
// it names must be in the PR of the package that embeds it, even when it
// sits in the folder of another package that comes later.
func TestQuotedEmbedPatternKeepsTheFileWithItsEmbedder(t *testing.T) {
	t.Parallel()
	for name, directive := range map[string]string{
		"double quotes": `//go:embed "sub/my data.txt"`,
		"back quotes":   "//go:embed `sub/my data.txt`",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := repoWithFiles(t, map[string]string{
				"go.mod":            "module example.com/r\n\ngo 1.21\n",
				"p/p.go":            padded("p", "import _ \"embed\"\n\n"+directive+"\nvar S string\n", 60),
				"p/sub/sub.go":      padded("sub", "", 60),
				"p/sub/my data.txt": "hello\n",
			})
			p := planOf(t, r, Options{MaxLines: 80, MaxFiles: 30})
			if got, want := prHolding(p, "p/sub/my data.txt"), prHolding(p, "p/p.go"); got != want {
				t.Errorf("p/sub/my data.txt is in PR #%d, p/p.go which embeds it in PR #%d", got.Number, want.Number)
			}
			stackEveryTip(t, r.Path, p, "-mod=mod")
		})
	}
}

// A cut package: a file embedded through a quoted pattern must go into
// the part of the file that embeds it, not the last part.
func TestQuotedEmbedPatternInACutPackage(t *testing.T) {
	t.Parallel()
	files := map[string]string{
		"go.mod":          "module example.com/r\n\ngo 1.21\n",
		"big/a.go":        padded("big", "import _ \"embed\"\n\n//go:embed \"my data.txt\"\nvar S string\n", 60),
		"big/my data.txt": "hello\n",
	}
	for i := 0; i < 4; i++ {
		files[fmt.Sprintf("big/f%d.go", i)] = padded("big", fmt.Sprintf("func F%d() string { return S }", i), 60)
	}
	r := repoWithFiles(t, files)
	p := planOf(t, r, Options{MaxLines: 100, MaxFiles: 30, SplitLarge: true})
	if got, want := prHolding(p, "big/my data.txt"), prHolding(p, "big/a.go"); got != want {
		t.Errorf("big/my data.txt is in PR #%d, big/a.go which embeds it in PR #%d", got.Number, want.Number)
	}
	stackEveryTip(t, r.Path, p, "-mod=mod")
}

// A second module in a subfolder is not part of the root module: while
// its packages are in the tree without its go.mod, the root module's
// go build ./... compiles them as its own (here under the root's older
// language version), so its go.mod must come no later than they do.
func TestNestedModuleGoModTravelsWithItsPackages(t *testing.T) {
	t.Parallel()
	r := repoWithFiles(t, map[string]string{
		"go.mod":            "module example.com/r\n\ngo 1.21\n",
		"a/a.go":            padded("a", "", 60),
		"tools/go.mod":      "module example.com/r/tools\n\ngo 1.22\n",
		"tools/main.go":     padded("main", "import \"example.com/r/tools/lib\"\n\nfunc main() { lib.Count() }", 60),
		"tools/lib/lib.go":  padded("lib", "func Count() (n int) {\n\tfor i := range 3 {\n\t\tn += i\n\t}\n\treturn n\n}", 60),
		"tools/lib/more.go": padded("lib", "", 10),
	})
	p := planOf(t, r, Options{MaxLines: 80, MaxFiles: 30})
	mod := prHolding(p, "tools/go.mod")
	for _, f := range []string{"tools/main.go", "tools/lib/lib.go"} {
		if pr := prHolding(p, f); pr.Number < mod.Number {
			t.Errorf("%s is in PR #%d, before tools/go.mod (PR #%d) of its module", f, pr.Number, mod.Number)
		}
	}
	stackEveryTip(t, r.Path, p, "-mod=mod")
}

// A Go package in a folder named test or tests (integration helpers) is
// a package in its own right: it must not be folded into the module's
// go.mod, whose PR every package needs, which makes one cycle of the
// whole change and one PR of it.
func TestPackageInATestsFolderDoesNotCollapseThePlan(t *testing.T) {
	t.Parallel()
	r := repoWithFiles(t, map[string]string{
		"go.mod":                    "module example.com/r\n\ngo 1.21\n",
		"a/a.go":                    padded("a", "func A() {}", 100),
		"b/b.go":                    padded("b", "func B() {}", 100),
		"c/c.go":                    padded("c", "func C() {}", 100),
		"internal/tests/helpers.go": padded("tests", "import (\n\t\"example.com/r/a\"\n\t\"example.com/r/b\"\n\t\"example.com/r/c\"\n)\n\nfunc H() { a.A(); b.B(); c.C() }", 10),
	})
	p := planOf(t, r, Options{MaxLines: 150, MaxFiles: 30})
	if len(p.PRs) < 3 {
		var units []string
		for _, pr := range p.PRs {
			units = append(units, fmt.Sprintf("#%d %v (%d lines)", pr.Number, pr.Units, pr.Lines))
		}
		t.Errorf("three 100-line packages with a budget of 150 make %d PRs: %s; warnings: %v", len(p.PRs), strings.Join(units, "; "), p.Warnings)
	}
	stackEveryTip(t, r.Path, p, "-mod=mod")
}

// A change that adds vendored packages: with vendor/modules.txt in the
// tree the go command builds from vendor/, so a package must not land
// before the vendored copy of what it imports.
func TestVendoredPackageComesNoLaterThanItsImporter(t *testing.T) {
	t.Parallel()
	r := repoWithFiles(t, map[string]string{
		"go.mod":                      "module example.com/r\n\ngo 1.21\n\nrequire example.com/dep v1.0.0\n",
		"vendor/modules.txt":          "# example.com/dep v1.0.0\n## explicit\nexample.com/dep\n",
		"vendor/example.com/dep/d.go": padded("dep", "func D() {}", 60),
		"a/a.go":                      padded("a", "import \"example.com/dep\"\n\nfunc A() { dep.D() }", 60),
	})
	p := planOf(t, r, Options{MaxLines: 80, MaxFiles: 30})
	if got, imp := prHolding(p, "vendor/example.com/dep/d.go"), prHolding(p, "a/a.go"); got.Number > imp.Number {
		t.Errorf("the vendored example.com/dep is in PR #%d, after a/a.go (PR #%d) which imports it", got.Number, imp.Number)
	}
	stackEveryTip(t, r.Path, p, "-mod=vendor")
}

// Paths are untrusted: whatever git can hold (escapes, newlines, tabs)
// must reach the work order's manifest as it is; a manifest that names
// another file loses it.
func TestOddPathsSurviveTheWorkOrderDocuments(t *testing.T) {
	t.Parallel()
	odd := []string{"docs/new\nline.txt", "docs/\x1b[31mred.txt", "docs/tab\there.txt"}
	files := map[string]string{"go.mod": "module example.com/r\n\ngo 1.21\n", "a/a.go": padded("a", "", 5)}
	for _, o := range odd {
		files[o] = "x\n"
	}
	r := repoWithFiles(t, files)
	c, err := ReadChange(context.Background(), r, "base", "main")
	if err != nil {
		t.Fatal(err)
	}
	p, err := Make(c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, tasks, err := Documents(p, DocOptions{RepoPath: r.Path})
	if err != nil {
		t.Fatal(err)
	}
	// The store keeps documents as JSON.
	data, err := json.Marshal(tasks)
	if err != nil {
		t.Fatal(err)
	}
	var stored []struct {
		WorkOrder struct {
			Inputs struct {
				Manifest []string `json:"file_manifest"`
			} `json:"inputs"`
		} `json:"work_order"`
	}
	if err := json.Unmarshal(data, &stored); err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, s := range stored {
		for _, m := range s.WorkOrder.Inputs.Manifest {
			listed[m] = true
		}
	}
	for _, o := range odd {
		if !listed[o] {
			t.Errorf("%q is in no stored manifest: the PR that should hold it will not", o)
		}
	}
}

// A path that is not UTF-8 cannot travel in a JSON document (it would
// come back with U+FFFD and name no file): the plan refuses it, naming it.
func TestNonUTF8PathIsRefusedByName(t *testing.T) {
	t.Parallel()
	r := repoWithFiles(t, map[string]string{"go.mod": "module example.com/r\n\ngo 1.21\n", "docs/caf\xe9.txt": "x\n"})
	_, err := ReadChange(context.Background(), r, "base", "main")
	if err == nil || !strings.Contains(err.Error(), `"docs/caf\xe9.txt"`) || !strings.Contains(err.Error(), "rename") {
		t.Fatalf("a non-UTF-8 path: %v", err)
	}
}

// A file over the size wo reads whole is counted as it streams by: its
// lines as diff counts them, or binary by a NUL near its start; of a Go
// file, only the header is read.
func TestLargeFilesAreCountedNotHeld(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("0123456789abcdef0123456789abcdef0123456789abcdef012345678\n", maxBlobRead/58+100) + "no newline at the end"
	r := repoWithFiles(t, map[string]string{
		"go.mod":        "module example.com/r\n\ngo 1.21\n",
		"a/a.go":        padded("a", "", 5),
		"data/big.txt":  big,
		"data/big.bin":  "\x00" + big,
		"a/huge_gen.go": "package a\n\n" + strings.Repeat("// generated\n", maxBlobRead/13+10),
	})
	c, err := ReadChange(context.Background(), r, "base", "main")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]File{"data/big.txt": {Lines: strings.Count(big, "\n") + 1}, "data/big.bin": {Binary: true}}
	for _, f := range c.Files {
		if w, ok := want[f.Path]; ok && (f.Lines != w.Lines || f.Binary != w.Binary) {
			t.Errorf("%s: %d lines, binary %v; want %d, %v", f.Path, f.Lines, f.Binary, w.Lines, w.Binary)
		}
		if f.Path == "a/huge_gen.go" && (f.src != nil || f.pkg != "a" || f.Problem != "") {
			t.Errorf("a Go file over the bound was held (%d bytes), or its header not read (package %q, problem %q)", len(f.src), f.pkg, f.Problem)
		}
	}
}

// An external test package (p_test) may import a package that imports p:
// the go command allows it, since nothing imports p_test. Counted as p's
// own imports, that edge made one cycle, and one PR, of p and q; on
// go-git it made one PR of sixteen packages and 60,000 lines.
func TestExternalTestImportDoesNotMergePackages(t *testing.T) {
	t.Parallel()
	r := repoWithFiles(t, map[string]string{
		"go.mod": "module example.com/r\n\ngo 1.21\n",
		"p/p.go": padded("p", "// P is p's.\nfunc P() int { return 1 }", 60),
		"q/q.go": padded("q", "import \"example.com/r/p\"\n\n// Q uses p.\nfunc Q() int { return p.P() + 1 }", 60),
		"p/p_test.go": "package p_test\n\nimport (\n\t\"testing\"\n\n\t\"example.com/r/p\"\n\t\"example.com/r/q\"\n)\n\n" +
			"func TestPQ(t *testing.T) {\n\tif q.Q() != p.P()+1 {\n\t\tt.Fatal(\"no\")\n\t}\n}\n",
		"p/internal_test.go": "package p\n\nimport \"testing\"\n\nfunc TestP(t *testing.T) {\n\tif P() != 1 {\n\t\tt.Fatal(\"no\")\n\t}\n}\n",
	})
	p := planOf(t, r, Options{MaxLines: 80, MaxFiles: 30})
	pp, q, ext, internal := prHolding(p, "p/p.go"), prHolding(p, "q/q.go"), prHolding(p, "p/p_test.go"), prHolding(p, "p/internal_test.go")
	if pp == q {
		t.Fatalf("p and q share PR #%d (%v): only p's external test imports q", pp.Number, pp.Units)
	}
	if !(pp.Number < q.Number && q.Number <= ext.Number) {
		t.Errorf("p in #%d, q in #%d, p's external test in #%d: the test must come after both", pp.Number, q.Number, ext.Number)
	}
	if internal != pp {
		t.Errorf("p's own test file is in PR #%d, p in #%d", internal.Number, pp.Number)
	}
	if why := reasonOf(p, "p/p_test.go"); !strings.Contains(why, "external test package of p") {
		t.Errorf("the reason for the external test: %q", why)
	}
	stackEveryTip(t, r.Path, p, "-mod=mod")
}

// A Go package in a folder named test (shared test helpers) is a package
// of its own. Folded into the nearest package above it (here the root),
// it gave that package the helpers' importers as dependents: p's tests
// import the helpers, the root imports p, and root and p became one cycle.
func TestHelperPackageInATestFolderIsItsOwnUnit(t *testing.T) {
	t.Parallel()
	r := repoWithFiles(t, map[string]string{
		"go.mod":                 "module example.com/r\n\ngo 1.21\n",
		"r.go":                   padded("r", "import \"example.com/r/p\"\n\n// R uses p.\nfunc R() int { return p.P() }", 60),
		"p/p.go":                 padded("p", "// P is p's.\nfunc P() int { return 1 }", 60),
		"internal/test/check.go": padded("test", "// Check says whether ok.\nfunc Check(ok bool) bool { return ok }", 10),
		"p/p_test.go": "package p\n\nimport (\n\t\"testing\"\n\n\t\"example.com/r/internal/test\"\n)\n\n" +
			"func TestP(t *testing.T) {\n\tif !test.Check(P() == 1) {\n\t\tt.Fatal(\"no\")\n\t}\n}\n",
	})
	p := planOf(t, r, Options{MaxLines: 80, MaxFiles: 30})
	root, pp, helpers := prHolding(p, "r.go"), prHolding(p, "p/p.go"), prHolding(p, "internal/test/check.go")
	if root == pp {
		t.Fatalf("the root package and p share PR #%d (%v): p's test imports internal/test, which imports neither", pp.Number, pp.Units)
	}
	if !(helpers.Number <= pp.Number && pp.Number < root.Number) {
		t.Errorf("internal/test in #%d, p in #%d, the root in #%d", helpers.Number, pp.Number, root.Number)
	}
	stackEveryTip(t, r.Path, p, "-mod=mod")
}

// p's tests import q and q's tests import p: the go command allows it
// (neither package imports the other), so the plan must not make one PR
// of them. One package's tests come after both.
func TestTestsThatImportEachOthersPackageDoNotMergeThem(t *testing.T) {
	t.Parallel()
	test := func(pkg, other string) string {
		return fmt.Sprintf("package %s\n\nimport (\n\t\"testing\"\n\n\t\"example.com/r/%s\"\n)\n\n"+
			"func TestWith(t *testing.T) {\n\tif %s.V() != V() {\n\t\tt.Fatal(\"no\")\n\t}\n}\n", pkg, other, other)
	}
	r := repoWithFiles(t, map[string]string{
		"go.mod":      "module example.com/r\n\ngo 1.21\n",
		"p/p.go":      padded("p", "// V is 1.\nfunc V() int { return 1 }", 60),
		"q/q.go":      padded("q", "// V is 1.\nfunc V() int { return 1 }", 60),
		"p/p_test.go": test("p", "q"),
		"q/q_test.go": test("q", "p"),
	})
	p := planOf(t, r, Options{MaxLines: 80, MaxFiles: 30})
	pp, q := prHolding(p, "p/p.go"), prHolding(p, "q/q.go")
	if pp == q {
		t.Fatalf("p and q share PR #%d (%v): only their tests import each other", pp.Number, pp.Units)
	}
	for _, f := range []string{"p/p_test.go", "q/q_test.go"} {
		if pr := prHolding(p, f); pr.Number < max(pp.Number, q.Number) && pr != prHolding(p, strings.Replace(f, "_test", "", 1)) {
			t.Errorf("%s is in PR #%d, before the package it imports", f, pr.Number)
		}
	}
	moved := 0
	for _, f := range []string{"p/p_test.go", "q/q_test.go"} {
		if strings.Contains(reasonOf(p, f), "its tests come after them") {
			moved++
		}
	}
	if moved != 1 {
		t.Errorf("%d packages' tests were moved after the other, want 1", moved)
	}
	stackEveryTip(t, r.Path, p, "-mod=mod")
}

// A cut package's parts are consecutive PRs that hold nothing else: on
// go-git, parts of plumbing landed in PRs #7, #13, #14 and #15, with other
// packages' parts between them, because a part that did not fit left
// room that the next ready piece (another package's part) filled.
func TestCutPackagePartsAreConsecutivePRsOfTheirOwn(t *testing.T) {
	t.Parallel()
	files := map[string]string{"go.mod": "module example.com/r\n\ngo 1.21\n"}
	for i := 0; i < 4; i++ {
		files[fmt.Sprintf("a/f%d.go", i)] = padded("a", fmt.Sprintf("// A%d is a's.\nfunc A%d() {}", i, i), 55)
	}
	for i, n := range []int{15, 135, 135} {
		files[fmt.Sprintf("x/deep/b/f%d.go", i)] = padded("b", fmt.Sprintf("// B%d is b's.\nfunc B%d() {}", i, i), n)
	}
	r := repoWithFiles(t, files)
	p := planOf(t, r, Options{MaxLines: 150, MaxFiles: 30, SplitLarge: true})
	for _, pkg := range []string{"a/", "x/deep/b/"} {
		first, last := 0, 0
		for _, pr := range p.PRs {
			for _, f := range pr.Files {
				if strings.HasPrefix(f.Path, pkg) {
					first, last = cmpOr(first, pr.Number), pr.Number
				}
			}
		}
		if first == last {
			t.Fatalf("%s was not cut: %v", pkg, p.Warnings)
		}
		for _, pr := range p.PRs[first-1 : last] {
			for _, f := range pr.Files {
				if !strings.HasPrefix(f.Path, pkg) && f.Path != "go.mod" {
					t.Errorf("PR #%d, between the parts of %s (#%d to #%d), holds %s", pr.Number, pkg, first, last, f.Path)
				}
			}
		}
	}
	stackEveryTip(t, r.Path, p, "-mod=mod")
}

func cmpOr(a, b int) int {
	if a != 0 {
		return a
	}
	return b
}

// A generator beside a package (//go:build ignore, package main, run by
// go generate) is in no build: it must neither tie its imports to the
// package (x/text: a false cycle, one PR of 103,832 lines) nor stop the
// package from being cut ("a main package needs its func main in every
// part"). It goes with its folder's package as a plain file.
func TestIgnoredGeneratorIsAPlainFileOfItsPackage(t *testing.T) {
	t.Parallel()
	files := map[string]string{
		"go.mod":         "module example.com/r\n\ngo 1.21\n",
		"user/user.go":   padded("user", "import \"example.com/r/tbl\"\n\n// U uses the table.\nfunc U() int { return tbl.T0() }", 20),
		"tbl/gen.go":     "//go:build ignore\n\n// gen writes the tables.\npackage main\n\nimport (\n\t\"fmt\"\n\n\t\"example.com/r/user\"\n)\n\nfunc main() { fmt.Println(user.U()) }\n",
		"tbl/gen_old.go": "// Copyright 2024.\n\n// +build ignore\n\npackage main\n\nimport \"example.com/r/user\"\n\nfunc main() { _ = user.U() }\n",
	}
	for i := 0; i < 5; i++ {
		files[fmt.Sprintf("tbl/t%d.go", i)] = padded("tbl", fmt.Sprintf("// T%d is a table.\nfunc T%d() int { return %d }", i, i, i), 100)
	}
	r := repoWithFiles(t, files)
	p := planOf(t, r, Options{MaxLines: 400, MaxFiles: 30, SplitLarge: true})
	parts := map[*PR]bool{}
	for i := 0; i < 5; i++ {
		parts[prHolding(p, fmt.Sprintf("tbl/t%d.go", i))] = true
	}
	if len(parts) < 2 {
		t.Errorf("tbl (5 files of 105 lines, budget 400) is in %d PR: %v", len(parts), p.Warnings)
	}
	for _, gen := range []string{"tbl/gen.go", "tbl/gen_old.go"} {
		if !parts[prHolding(p, gen)] {
			t.Errorf("%s is in PR #%d, with no part of its folder's package", gen, prHolding(p, gen).Number)
		}
		if why := reasonOf(p, gen); !strings.Contains(why, "excluded from every build") {
			t.Errorf("the reason for %s: %q", gen, why)
		}
	}
	if u := prHolding(p, "user/user.go"); parts[u] && len(parts) == 1 {
		t.Errorf("user shares the table's only PR #%d: the generator's import tied them", u.Number)
	}
	for _, w := range p.Warnings {
		if strings.Contains(w, "main") {
			t.Errorf("warning: %s", w)
		}
	}
	stackEveryTip(t, r.Path, p, "-mod=mod")
}

func TestExcludedFromEveryBuild(t *testing.T) {
	t.Parallel()
	for src, excluded := range map[string]bool{
		"//go:build ignore\n\npackage main\n":                               true,
		"// Copyright.\n\n// +build ignore\n\npackage main\n":               true,
		"/* licence\n   text */\n//go:build ignore && linux\n\npackage x\n": true,
		"//go:build ignore || linux\n\npackage x\n":                         false,
		"//go:build !ignore\n\npackage x\n":                                 false,
		"//go:build tools\n\npackage tools\n":                               false,
		"//go:build linux\n// +build ignore\n\npackage x\n":                 false, // //go:build wins
		"package x\n\n//go:build ignore\n":                                  false, // after the package clause
		"/* a */ package x\n//go:build ignore\n":                            false,
		"//go:build ignore":                                                 true,
	} {
		if got := excludedFromEveryBuild([]byte(src)) != ""; got != excluded {
			t.Errorf("%q: excluded %v, want %v", src, got, excluded)
		}
	}
}

// Git accepts a folder whose name holds ESC or BEL; go-git's tree diff
// looks each folder up by path and refuses such a name, which stopped wo
// split with "directory not found". The change is read whole.
func TestFolderNamesWithControlCharactersAreRead(t *testing.T) {
	t.Parallel()
	odd := []string{"docs/\x1b[31mred/a.txt", "bell\x07/b.txt", "bell\x07/deeper/c.txt"}
	files := map[string]string{"go.mod": "module example.com/r\n\ngo 1.21\n", "a/a.go": padded("a", "", 5)}
	for _, o := range odd {
		files[o] = "x\n"
	}
	r := repoWithFiles(t, files)
	c, err := ReadChange(context.Background(), r, "base", "main")
	if err != nil {
		t.Fatalf("reading a change with control characters in folder names: %v", err)
	}
	got := map[string]bool{}
	for _, f := range c.Files {
		got[f.Path] = f.Kind == "added"
	}
	for _, o := range odd {
		if !got[o] {
			t.Errorf("%q is not in the change as added: %v", o, got)
		}
	}
	// Renames and modifications below such a folder are still seen.
	gittest.Run(t, r.Path, "mv", "bell\x07/b.txt", "bell\x07/renamed.txt")
	if err := os.WriteFile(filepath.Join(r.Path, "bell\x07/deeper/c.txt"), []byte("y\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gittest.Run(t, r.Path, "commit", "-q", "-am", "more")
	gittest.Run(t, r.Path, "branch", "-f", "base", "main~1")
	c, err = ReadChange(context.Background(), r, "base", "main")
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]string{}
	for _, f := range c.Files {
		kinds[f.Path] = f.Kind + " " + f.OldPath
	}
	want := map[string]string{"bell\x07/renamed.txt": "renamed bell\x07/b.txt", "bell\x07/deeper/c.txt": "modified "}
	if !reflect.DeepEqual(kinds, want) {
		t.Errorf("the second change reads %q, want %q", kinds, want)
	}
}

// A symbolic link named .go holds its target's path, not Go source:
// parsed as Go, it gave a false "cannot build" warning. It goes with its
// folder's package as a plain file.
func TestSymlinkedGoFileIsAPlainFile(t *testing.T) {
	t.Parallel()
	r := repoWithFiles(t, map[string]string{
		"go.mod":        "module example.com/r\n\ngo 1.21\n",
		"p/p.go":        padded("p", "// P is p's.\nfunc P() int { return Alias }", 20),
		"p/alias.go.in": "package p\n\n// Alias is shared.\nconst Alias = 1\n",
	})
	if err := os.Symlink("alias.go.in", filepath.Join(r.Path, "p/alias.go")); err != nil {
		t.Fatal(err)
	}
	gittest.Run(t, r.Path, "add", "-A")
	gittest.Run(t, r.Path, "commit", "-q", "--amend", "-m", "the change")
	p := planOf(t, r, Options{MaxLines: 400, MaxFiles: 30})
	if len(p.Warnings) > 0 {
		t.Errorf("warnings: %v", p.Warnings)
	}
	if prHolding(p, "p/alias.go") != prHolding(p, "p/p.go") {
		t.Errorf("the link is in PR #%d, its folder's package in #%d", prHolding(p, "p/alias.go").Number, prHolding(p, "p/p.go").Number)
	}
	if why := reasonOf(p, "p/alias.go"); !strings.Contains(why, "symbolic link") {
		t.Errorf("the reason for the link: %q", why)
	}
	stackEveryTip(t, r.Path, p, "-mod=mod")
}

// Files whose code uses each other in a cycle over the budget are cut
// along their declarations (or are one part however large); their tests
// need not make the code's last part larger (go-git's root package: 7,700
// lines of code and 12,000 of tests in one PR). The tests come in the
// next parts; so do those of code within the budget that would take its
// part over the budget, and no part is over it.
func TestTestsOfAnOversizeCycleOfCodeComeInTheNextParts(t *testing.T) {
	t.Parallel()
	test := func(pkg, fn string, n int) string {
		return padded(pkg, fmt.Sprintf("import \"testing\"\n\nfunc Test%s%d(t *testing.T) {\n\tif !%s(2) {\n\t\tt.Fatal(\"no\")\n\t}\n}", fn, n, fn), n)
	}
	r := repoWithFiles(t, map[string]string{
		"go.mod":              "module example.com/r\n\ngo 1.21\n",
		"cyc/even.go":         padded("cyc", "// Even says whether n is even.\nfunc Even(n int) bool { return n == 0 || Odd(n-1) }", 100),
		"cyc/odd.go":          padded("cyc", "// Odd says whether n is odd.\nfunc Odd(n int) bool { return n != 0 && Even(n-1) }", 100),
		"cyc/even_test.go":    test("cyc", "Even", 60),
		"cyc/odd_test.go":     test("cyc", "Odd", 60),
		"whole/whole.go":      padded("whole", "// Even says whether n is even.\nfunc Even(n int) bool { return n%2 == 0 }", 100),
		"whole/whole_test.go": test("whole", "Even", 80),
	})
	p := planOf(t, r, Options{MaxLines: 150, MaxFiles: 30, SplitLarge: true})
	// The code's last part: where both files are whole.
	var code *PR
	for _, pr := range p.PRs {
		for _, f := range pr.Files {
			if strings.HasPrefix(f.Path, "cyc/") && !strings.HasSuffix(f.Path, "_test.go") && f.Part == "" {
				code = pr
			}
		}
	}
	if code == nil {
		t.Fatal("no PR holds cyc's code whole")
	}
	for _, f := range []string{"cyc/even_test.go", "cyc/odd_test.go"} {
		if pr := prHolding(p, f); pr.Number != code.Number && pr.Number != code.Number+1 {
			t.Errorf("%s is in PR #%d, want the code's last part's #%d or the next", f, pr.Number, code.Number)
		}
	}
	// whole.go (100 lines) and its test (80) are over 150 together.
	if code, tests := prHolding(p, "whole/whole.go"), prHolding(p, "whole/whole_test.go"); tests.Number != code.Number+1 {
		t.Errorf("whole's tests are in PR #%d, want the next after its code's #%d", tests.Number, code.Number)
	}
	for _, pr := range p.PRs {
		if pr.Lines > 150 {
			t.Errorf("PR #%d (%s) has %d lines, over the budget of 150: %v", pr.Number, pr.Title, pr.Lines, pr.Units)
		}
	}
	stackEveryTip(t, r.Path, p, "-mod=mod")
}
