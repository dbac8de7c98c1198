package split

import (
	"fmt"
	"path"
	"sort"
	"strings"
	"testing"
)

// changeOf builds, without git, the change from base to source (path →
// content; a path missing at one end is added or deleted), as ReadChange
// would read it: kinds, the lines a reviewer reads, each Go file's
// package, imports and sources at both ends, and the root go.mod's.
func changeOf(t *testing.T, base, source map[string]string) *Change {
	t.Helper()
	c := &Change{BaseRef: "base", SourceRef: "main"}
	paths := map[string]bool{}
	for p := range base {
		paths[p] = true
	}
	for p := range source {
		paths[p] = true
	}
	for _, p := range sortedKeys(paths) {
		old, wasThere := base[p]
		now, isThere := source[p]
		if wasThere && isThere && old == now {
			if path.Ext(p) == ".go" {
				c.kept = append(c.kept, keptFile{p, []byte(now)})
			}
			continue
		}
		f := File{Path: p}
		switch {
		case !wasThere:
			f.Kind = "added"
			f.Lines, _ = countLines([]byte(now))
		case !isThere:
			f.Kind = "deleted"
			f.Lines, _ = countLines([]byte(old))
		default:
			f.Kind = "modified"
			f.Lines = diffLines(old, now)
		}
		if path.Ext(p) == ".go" {
			if isThere {
				f.src = []byte(now)
				f.pkg, f.Imports, f.Embeds, f.Problem = goHeader(p, f.src)
			}
			if wasThere {
				f.baseSrc = []byte(old)
				_, f.BaseImports, _, _ = goHeader(p, f.baseSrc)
			}
		}
		c.Files = append(c.Files, f)
	}
	if gomod, ok := source["go.mod"]; ok {
		c.Module = modulePath([]byte(gomod))
		c.Modules = map[string]string{c.Module: "."}
		c.sourceMod = readGoMod([]byte(gomod))
	}
	if gomod, ok := base["go.mod"]; ok {
		c.BaseModule = modulePath([]byte(gomod))
		c.baseMod = readGoMod([]byte(gomod))
		if s, ok := source["go.mod"]; ok {
			c.Dropped = droppedModules([]byte(gomod), []byte(s))
		}
	}
	if c.Module == "" {
		t.Fatal("the test change needs a go.mod at the source")
	}
	return c
}

// planChange plans a change made by changeOf.
func planChange(t *testing.T, c *Change, opts Options) *Plan {
	t.Helper()
	p, err := Make(c, opts)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// prNumber is the number of the PR that holds the file.
func prNumber(t *testing.T, p *Plan, file string) int {
	t.Helper()
	if pr := prHolding(p, file); pr != nil {
		return pr.Number
	}
	t.Fatalf("no PR holds %s", file)
	return 0
}

// layout lists the plan's PRs and their files, for a failure message.
func layout(p *Plan) string {
	var b strings.Builder
	for _, pr := range p.PRs {
		var files []string
		for _, f := range pr.Files {
			files = append(files, f.Path)
		}
		fmt.Fprintf(&b, "\n  #%d (%d lines): %s", pr.Number, pr.Lines, strings.Join(files, " "))
	}
	return b.String()
}

// body is n lines of declarations named after prefix, so that a file
// counts as a reviewer would read it.
func body(prefix string, n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "func %s%d() int { return %d }\n", prefix, i, i)
	}
	return b.String()
}

const gomodM = "module example.com/m\n\ngo 1.22\n"

// A small budget cuts package p into one file a PR, so that only what
// each tip needs orders the files; their names sort against that order.
var oneFileAPR = Options{MaxLines: 45, MaxFiles: 30, SplitLarge: true}

// A name the change adds lands no earlier than the file that declares
// it: a.go (first in the tree) calls New, which z.go adds.
func TestANewNameLandsAfterItsDeclaration(t *testing.T) {
	t.Parallel()
	c := changeOf(t, map[string]string{
		"go.mod": gomodM,
		"p/a.go": "package p\n\nfunc A() int { return 1 }\n",
		"p/z.go": "package p\n\nfunc Z() int { return 2 }\n",
	}, map[string]string{
		"go.mod": gomodM,
		"p/a.go": "package p\n\nfunc A() int { return New() }\n" + body("A", 40),
		"p/z.go": "package p\n\nfunc Z() int { return 2 }\n\nfunc New() int { return 3 }\n" + body("Z", 40),
	})
	p := planChange(t, c, oneFileAPR)
	if a, z := prNumber(t, p, "p/a.go"), prNumber(t, p, "p/z.go"); a < z {
		t.Errorf("p/a.go (PR #%d) calls New before p/z.go (PR #%d) declares it:%s", a, z, layout(p))
	}
	if why := reasonOf(p, "p/a.go"); !strings.Contains(why, "uses p.New as p/z.go declares it") {
		t.Errorf("p/a.go's reason does not say it needs New: %q", why)
	}
}

// A name the change removes goes no earlier than the changes to the
// files that used it: a.go drops Old, which z.go called at the base.
func TestARemovedNameGoesAfterItsOldUsers(t *testing.T) {
	t.Parallel()
	c := changeOf(t, map[string]string{
		"go.mod": gomodM,
		"p/a.go": "package p\n\nfunc Old() int { return 1 }\n",
		"p/z.go": "package p\n\nfunc Z() int { return Old() }\n",
	}, map[string]string{
		"go.mod": gomodM,
		"p/a.go": "package p\n" + body("A", 40),
		"p/z.go": "package p\n\nfunc Z() int { return 2 }\n" + body("Z", 40),
	})
	p := planChange(t, c, oneFileAPR)
	if a, z := prNumber(t, p, "p/a.go"), prNumber(t, p, "p/z.go"); a < z {
		t.Errorf("p/a.go (PR #%d) removes Old while the old p/z.go still calls it until PR #%d:%s", a, z, layout(p))
	}
}

// A function whose signature changes lands with its callers, and with
// no more than them: the rest of the package is cut apart.
func TestAChangedSignatureLandsWithItsCallersOnly(t *testing.T) {
	t.Parallel()
	c := changeOf(t, map[string]string{
		"go.mod":      gomodM,
		"p/a.go":      "package p\n\nfunc F(n int) int { return n }\n",
		"p/m.go":      "package p\n\nfunc M() int { return 7 }\n",
		"p/z.go":      "package p\n\nfunc Z() int { return F(1) }\n",
		"q/q.go":      "package q\n\nimport \"example.com/m/p\"\n\nfunc Q() int { return p.F(2) }\n",
		"r/r.go":      "package r\n\nfunc R() int { return 0 }\n",
		"p/x_test.go": "package p\n\nimport \"testing\"\n\nfunc TestZ(t *testing.T) { _ = Z() }\n",
	}, map[string]string{
		"go.mod":      gomodM,
		"p/a.go":      "package p\n\nfunc F(n int, s string) int { return n + len(s) }\n" + body("A", 10),
		"p/m.go":      "package p\n\nfunc M() int { return 8 }\n" + body("M", 40),
		"p/z.go":      "package p\n\nfunc Z() int { return F(1, \"z\") }\n" + body("Z", 10),
		"q/q.go":      "package q\n\nimport \"example.com/m/p\"\n\nfunc Q() int { return p.F(2, \"q\") }\n" + body("Q", 10),
		"r/r.go":      "package r\n\nfunc R() int { return 1 }\n" + body("R", 40),
		"p/x_test.go": "package p\n\nimport \"testing\"\n\nfunc TestZ(t *testing.T) { _ = Z() }\n",
	})
	p := planChange(t, c, Options{MaxLines: 60, MaxFiles: 30, SplitLarge: true})
	a := prNumber(t, p, "p/a.go")
	for _, caller := range []string{"p/z.go", "q/q.go"} {
		if n := prNumber(t, p, caller); n != a {
			t.Errorf("%s calls F, whose signature p/a.go changes, but is in PR #%d, p/a.go in #%d:%s", caller, n, a, layout(p))
		}
	}
	if why := reasonOf(p, "q/q.go"); !strings.Contains(why, "uses p.F, whose signature p/a.go changes: they land together") {
		t.Errorf("q/q.go's reason does not name the tie: %q", why)
	}
	for _, other := range []string{"p/m.go", "r/r.go"} {
		if prNumber(t, p, other) == a {
			t.Errorf("%s has nothing to do with F, yet lands with it in PR #%d:%s", other, a, layout(p))
		}
	}
}

// A declaration that moves from one file to another lands in one PR
// with both: apart, a tip would declare it twice or not at all.
func TestAMovedNameLandsWithBothFiles(t *testing.T) {
	t.Parallel()
	c := changeOf(t, map[string]string{
		"go.mod": gomodM,
		"p/a.go": "package p\n\ntype T struct{ N int }\n\nfunc A() int { return 1 }\n",
		"p/m.go": "package p\n\nfunc M() int { return 1 }\n",
		"p/z.go": "package p\n\nfunc Z() int { return 2 }\n",
	}, map[string]string{
		"go.mod": gomodM,
		"p/a.go": "package p\n\nfunc A() int { return 1 }\n" + body("A", 20),
		"p/m.go": "package p\n\nfunc M() int { return 2 }\n" + body("M", 40),
		"p/z.go": "package p\n\nfunc Z() int { return 2 }\n\ntype T struct{ N int }\n" + body("Z", 20),
	})
	p := planChange(t, c, Options{MaxLines: 50, MaxFiles: 30, SplitLarge: true})
	if a, z := prNumber(t, p, "p/a.go"), prNumber(t, p, "p/z.go"); a != z {
		t.Errorf("T moves from p/a.go (PR #%d) to p/z.go (PR #%d):%s", a, z, layout(p))
	}
	if prNumber(t, p, "p/m.go") == prNumber(t, p, "p/a.go") {
		t.Errorf("p/m.go joined the move it has no part in:%s", layout(p))
	}
	// The tie is named by its cause.
	if why := reasonOf(p, "p/a.go"); !strings.Contains(why, "p.T moves from p/a.go to p/z.go, which land together so that it is declared once") {
		t.Errorf("p/a.go's reason does not name the move: %q", why)
	}
}

// Old code that imports a module go.mod drops lands no later than
// go.mod; new code that imports a module go.mod adds, no earlier.
// Neither needs the other's package, so only go.mod orders them; aaa/,
// a small change first in the tree, would take go.mod with it.
func TestADroppedModuleTiesItsOldImportersToGoMod(t *testing.T) {
	t.Parallel()
	baseMod := "module example.com/m\n\ngo 1.22\n\nrequire example.org/old v1.0.0\n"
	sourceMod := "module example.com/m\n\ngo 1.22\n\nrequire example.org/new v1.0.0\n"
	c := changeOf(t, map[string]string{
		"go.mod":    baseMod,
		"aaa/a.go":  "package aaa\n\nfunc A() int { return 1 }\n",
		"zold/z.go": "package zold\n\nimport \"example.org/old\"\n\nfunc Z() int { return old.V }\n",
		"anew/a.go": "package anew\n\nfunc A() int { return 1 }\n",
	}, map[string]string{
		"go.mod":    sourceMod + strings.Repeat("// a comment of the new go.mod\n", 30),
		"aaa/a.go":  "package aaa\n\nfunc A() int { return 2 }\n",
		"zold/z.go": "package zold\n\nfunc Z() int { return 2 }\n" + body("Z", 40),
		"anew/a.go": "package anew\n\nimport \"example.org/new\"\n\nfunc A() int { return new.V }\n" + body("A", 40),
	})
	p := planChange(t, c, Options{MaxLines: 50, MaxFiles: 30, SplitLarge: true})
	mod := prNumber(t, p, "go.mod")
	if z := prNumber(t, p, "zold/z.go"); z > mod {
		t.Errorf("go.mod (PR #%d) drops example.org/old before zold/z.go (PR #%d) stops importing it:%s", mod, z, layout(p))
	}
	if a := prNumber(t, p, "anew/a.go"); a < mod {
		t.Errorf("anew/a.go (PR #%d) imports example.org/new before go.mod (PR #%d) adds it:%s", a, mod, layout(p))
	}
	if why := reasonOf(p, "anew/a.go"); !strings.Contains(why, "whose module example.org/new go.mod adds") {
		t.Errorf("anew/a.go's reason does not say it needs the new go.mod: %q", why)
	}
	if why := reasonOf(p, "go.mod"); !strings.Contains(why, "the old zold/z.go imports example.org/old, whose module go.mod drops") {
		t.Errorf("go.mod's reason does not say it waits for zold/z.go: %q", why)
	}
}

// Only what needs the new go.mod waits for it: lib/ (which zold/, the
// old importer of a dropped module, needs) lands before go.mod rather
// than in one PR with go.mod and zold/, over the budget.
func TestOnlyWhatNeedsTheNewGoModWaitsForIt(t *testing.T) {
	t.Parallel()
	c := changeOf(t, map[string]string{
		"go.mod":    "module example.com/m\n\ngo 1.22\n\nrequire example.org/old v1.0.0\n",
		"lib/l.go":  "package lib\n\nfunc L() int { return 1 }\n",
		"zold/z.go": "package zold\n\nimport \"example.org/old\"\n\nfunc Z() int { return old.V }\n",
	}, map[string]string{
		"go.mod":    "module example.com/m\n\ngo 1.22\n" + strings.Repeat("// a comment of the new go.mod\n", 30),
		"lib/l.go":  "package lib\n\nfunc L() int { return 1 }\n\nfunc New() int { return 2 }\n" + body("L", 40),
		"zold/z.go": "package zold\n\nimport \"example.com/m/lib\"\n\nfunc Z() int { return lib.New() }\n" + body("Z", 40),
	})
	opts := Options{MaxLines: 50, MaxFiles: 30, SplitLarge: true}
	p := planChange(t, c, opts)
	for _, pr := range p.PRs {
		if over(pr.Lines, len(pr.Files), opts) {
			t.Errorf("PR #%d has %d lines, over the budget of %d:%s", pr.Number, pr.Lines, opts.MaxLines, layout(p))
		}
	}
	// Nor are the three packages merged as a cycle.
	if pr := prHolding(p, "lib/l.go"); len(pr.Units) != 1 || pr.Units[0] != "lib" {
		t.Errorf("lib/ is in PR #%d as %q, not as a package of its own", pr.Number, pr.Units)
	}
	if l, z, mod := prNumber(t, p, "lib/l.go"), prNumber(t, p, "zold/z.go"), prNumber(t, p, "go.mod"); !(l <= z && z <= mod) {
		t.Errorf("lib/l.go #%d, zold/z.go #%d, go.mod #%d: want them in that order:%s", l, z, mod, layout(p))
	}
}

// New code that uses a language feature newer than the base's go
// directive needs the new go.mod; old code that go vet would refuse
// under the new one (a format that is not a constant, from Go 1.24)
// goes no later than it.
func TestTheGoVersionTiesWhatDependsOnIt(t *testing.T) {
	t.Parallel()
	c := changeOf(t, map[string]string{
		"go.mod":    "module example.com/m\n\ngo 1.20\n",
		"aaa/a.go":  "package aaa\n\nfunc A() int { return 1 }\n",
		"a/a.go":    "package a\n\nfunc A() int { return 1 }\n",
		"zlog/z.go": "package zlog\n\nimport \"fmt\"\n\nfunc Z(msg string) string { return fmt.Sprintf(msg) }\n",
	}, map[string]string{
		"go.mod":    "module example.com/m\n\ngo 1.24\n" + strings.Repeat("// more of the new go.mod\n", 30),
		"aaa/a.go":  "package aaa\n\nfunc A() int { return 2 }\n",
		"a/a.go":    "package a\n\nfunc A() int { return min(1, 2) }\n" + body("A", 40),
		"zlog/z.go": "package zlog\n\nfunc Z(msg string) string { return msg }\n" + body("Z", 40),
	})
	p := planChange(t, c, Options{MaxLines: 50, MaxFiles: 30, SplitLarge: true})
	mod := prNumber(t, p, "go.mod")
	if a := prNumber(t, p, "a/a.go"); a < mod {
		t.Errorf("a/a.go (PR #%d) uses min (Go 1.21) before go.mod (PR #%d) says go 1.24:%s", a, mod, layout(p))
	}
	if z := prNumber(t, p, "zlog/z.go"); z > mod {
		t.Errorf("the old zlog/z.go, which go vet refuses from Go 1.24, stays until PR #%d, after go.mod's #%d:%s", z, mod, layout(p))
	}
}

// No PR is over the budget unless it is one file: not a cut package's
// last part with the package's plain files, not a small PR that joins a
// neighbour, not go.mod's PR.
func TestNoPRIsOverTheBudgetUnlessOneFile(t *testing.T) {
	t.Parallel()
	base := map[string]string{"go.mod": gomodM}
	source := map[string]string{"go.mod": gomodM}
	for i := 0; i < 12; i++ {
		source[fmt.Sprintf("big/f%02d.go", i)] = fmt.Sprintf("package big\n\nfunc F%d() int { return %d }\n", i, i) + body(fmt.Sprintf("F%dx", i), 30)
	}
	for i := 0; i < 4; i++ {
		source[fmt.Sprintf("big/doc%d.md", i)] = strings.Repeat("a line of documentation\n", 70)
	}
	for i := 0; i < 9; i++ {
		source[fmt.Sprintf("small/s%d/s.go", i)] = fmt.Sprintf("package s%d\n", i) + body("S", 9+i*7)
	}
	source["huge/huge.go"] = "package huge\n" + body("H", 300)
	c := changeOf(t, base, source)
	opts := Options{MaxLines: 100, MaxFiles: 6, SplitLarge: true}
	p := planChange(t, c, opts)
	for _, pr := range p.PRs {
		if over(pr.Lines, len(pr.Files), opts) && len(pr.Files) > 1 {
			t.Errorf("PR #%d (%s) has %d lines in %d files, over the budget of %d lines and %d files:%s", pr.Number, pr.Title, pr.Lines, len(pr.Files), opts.MaxLines, opts.MaxFiles, layout(p))
		}
	}
	if pr := prHolding(p, "huge/huge.go"); len(pr.Files) != 1 {
		t.Errorf("huge/huge.go, over the budget alone, shares PR #%d with %d other files", pr.Number, len(pr.Files)-1)
	}
}

// A giant package that the change modifies is cut into parts within the
// budget, consecutive, each after what its files need: here a chain of
// new names, file i+1 using what file i adds.
func TestAGiantModifiedPackageIsCutAlongWhatItsFilesNeed(t *testing.T) {
	t.Parallel()
	base := map[string]string{"go.mod": gomodM}
	source := map[string]string{"go.mod": gomodM}
	const n = 24
	for i := 0; i < n; i++ {
		// Reversed names: the file that declares comes later in the tree.
		name := fmt.Sprintf("giant/f%02d.go", n-1-i)
		base[name] = fmt.Sprintf("package giant\n\nfunc Old%d() int { return %d }\n", i, i)
		use := ""
		if i > 0 {
			use = fmt.Sprintf("\nfunc Use%d() int { return New%d() }\n", i, i-1)
		}
		source[name] = fmt.Sprintf("package giant\n\nfunc Old%d() int { return %d }\n\nfunc New%d() int { return %d }\n%s", i, i, i, i, use) + body(fmt.Sprintf("G%dx", i), 20)
	}
	c := changeOf(t, base, source)
	opts := Options{MaxLines: 100, MaxFiles: 30, SplitLarge: true}
	p := planChange(t, c, opts)
	parts := map[int]bool{}
	var numbers []int
	for i := 0; i < n; i++ {
		nr := prNumber(t, p, fmt.Sprintf("giant/f%02d.go", n-1-i))
		if !parts[nr] {
			parts[nr] = true
			numbers = append(numbers, nr)
		}
		if i > 0 {
			if prev := prNumber(t, p, fmt.Sprintf("giant/f%02d.go", n-i)); prev > nr {
				t.Errorf("giant/f%02d.go (PR #%d) uses New%d before giant/f%02d.go (PR #%d) declares it", n-1-i, nr, i-1, n-i, prev)
			}
		}
	}
	if len(parts) < 5 {
		t.Errorf("a package of about %d changed lines, budget %d, is in %d PRs:%s", n*25, opts.MaxLines, len(parts), layout(p))
	}
	sort.Ints(numbers)
	for i := 1; i < len(numbers); i++ {
		if numbers[i] != numbers[i-1]+1 {
			t.Errorf("the parts of giant are not consecutive PRs: %v", numbers)
		}
	}
	for _, pr := range p.PRs {
		if pr.Lines > opts.MaxLines && len(pr.Files) > 1 {
			t.Errorf("PR #%d has %d lines, over the budget of %d", pr.Number, pr.Lines, opts.MaxLines)
		}
	}
}

// A real repository where an identifier is renamed (a function, and a
// method reached through what a constructor returns) and its callers
// follow, in the package and outside it: every tip of the stack builds
// and vets, and the renamed names land with all their callers.
func TestARenamedIdentifierAndItsCallersBuildAtEveryTip(t *testing.T) {
	t.Parallel()
	base := map[string]string{
		"go.mod": gomodM,
		"p/a.go": "package p\n\n// Old is renamed.\nfunc Old() int { return 1 }\n\n// T has a method that is renamed.\ntype T struct{ n int }\n\n// Get is renamed.\nfunc (t T) Get() int { return t.n }\n",
		"p/c.go": "package p\n\n// MakeT makes a T.\nfunc MakeT() T { return T{n: Old()} }\n",
		"p/b.go": "package p\n\n// B calls Old.\nfunc B() int { return Old() + 1 }\n",
		"p/d.go": "package p\n\n// D is unrelated.\nfunc D() int { return 4 }\n",
		"q/q.go": "package q\n\nimport \"example.com/m/p\"\n\n// Q calls Old.\nfunc Q() int { return p.Old() }\n",
		"v/v.go": "package v\n\nimport \"example.com/m/p\"\n\n// V calls the method.\nfunc V() int { return p.MakeT().Get() }\n",
		"r/r.go": "package r\n\n// R is unrelated.\nfunc R() int { return 5 }\n",
	}
	source := map[string]string{
		"go.mod": gomodM,
		"p/a.go": "package p\n\n// New was Old.\nfunc New() int { return 1 }\n\n// T has a method that is renamed.\ntype T struct{ n int }\n\n// Value was Get.\nfunc (t T) Value() int { return t.n }\n" + filler("A", 10),
		"p/c.go": "package p\n\n// MakeT makes a T.\nfunc MakeT() T { return T{n: New()} }\n" + filler("C", 10),
		"p/b.go": "package p\n\n// B calls New.\nfunc B() int { return New() + 1 }\n" + filler("Bf", 10),
		"p/d.go": "package p\n\n// D is unrelated.\nfunc D() int { return 40 }\n" + filler("D", 12),
		"q/q.go": "package q\n\nimport \"example.com/m/p\"\n\n// Q calls New.\nfunc Q() int { return p.New() }\n" + filler("Q", 10),
		"v/v.go": "package v\n\nimport \"example.com/m/p\"\n\n// V calls the method.\nfunc V() int { return p.MakeT().Value() }\n",
		"r/r.go": "package r\n\n// R is unrelated.\nfunc R() int { return 50 }\n" + filler("R", 12),
	}
	r := repoFromTo(t, base, source)
	p := planOf(t, r, Options{MaxLines: 40, MaxFiles: 30, SplitLarge: true})
	if len(p.PRs) < 3 {
		t.Errorf("the change is in %d PRs; want the rename apart from the unrelated files:%s", len(p.PRs), layout(p))
	}
	a := prNumber(t, p, "p/a.go")
	for _, caller := range []string{"p/b.go", "p/c.go", "q/q.go", "v/v.go"} {
		if prNumber(t, p, caller) != a {
			t.Errorf("%s calls what p/a.go renames, but lands apart from it:%s", caller, layout(p))
		}
	}
	for _, other := range []string{"p/d.go", "r/r.go"} {
		if prNumber(t, p, other) == a {
			t.Errorf("%s, unrelated, joined the rename:%s", other, layout(p))
		}
	}
	buildEveryTip(t, r, p)
}

// Lockfiles, generated and vendored code and test data blobs are set
// apart: they go with the code that needs them, count nothing against
// the budget, and the plan says which they are.
func TestGeneratedAndVendoredFilesAreSetApart(t *testing.T) {
	t.Parallel()
	generatedGo := "// Code generated by stringer; DO NOT EDIT.\n\npackage api\n\n" + body("Gen", 600)
	c := changeOf(t, map[string]string{"go.mod": gomodM}, map[string]string{
		"go.mod":                      gomodM + "\nrequire example.org/dep v1.0.0\n",
		"go.sum":                      strings.Repeat("example.org/dep v1.0.0 h1:abc=\n", 400),
		"api/api.go":                  "package api\n" + body("A", 60),
		"api/api.pb.go":               "package api\n" + body("Pb", 900),
		"api/kind_string.go":          generatedGo,
		"api/testdata/golden.json":    strings.Repeat("{\"a\": 1}\n", 700),
		"api/testdata/small.json":     "{}\n",
		"vendor/modules.txt":          "# example.org/dep v1.0.0\n## explicit\nexample.org/dep\n",
		"vendor/example.org/dep/d.go": "package dep\n" + body("D", 800),
		"cmd/tool/main.go":            "package main\n\nimport (\n\t_ \"example.com/m/api\"\n\t_ \"example.org/dep\"\n)\n\nfunc main() {}\n" + body("M", 60),
	})
	opts := Options{MaxLines: 100, MaxFiles: 30, SplitLarge: true}
	p := planChange(t, c, opts)
	for _, pr := range p.PRs {
		reviewed, apart := 0, 0
		for _, f := range pr.Files {
			if f.SetApart == "" {
				reviewed += f.Lines
			} else {
				apart += f.Lines
			}
		}
		if pr.Lines != reviewed || pr.SetApartLines != apart {
			t.Errorf("PR #%d counts %d lines to review and %d set apart; its files hold %d and %d", pr.Number, pr.Lines, pr.SetApartLines, reviewed, apart)
		}
		if reviewed > opts.MaxLines && len(pr.Files) > 1 {
			t.Errorf("PR #%d has %d lines to review, over the budget of %d:%s", pr.Number, reviewed, opts.MaxLines, layout(p))
		}
	}
	want := map[string]string{
		"go.sum": "a lockfile", "api/api.pb.go": "from a .proto file", "api/kind_string.go": "Code generated",
		"api/testdata/golden.json": "test data of 700 lines", "vendor/example.org/dep/d.go": "vendored code",
	}
	for file, why := range want {
		pr := prHolding(p, file)
		var f File
		for _, g := range pr.Files {
			if g.Path == file {
				f = g
			}
		}
		if !strings.Contains(f.SetApart, why) {
			t.Errorf("%s is set apart as %q, want %q", file, f.SetApart, why)
		}
		if pr.SetApartLines < f.Lines {
			t.Errorf("PR #%d holds %s (%d lines) but counts %d lines set apart", pr.Number, file, f.Lines, pr.SetApartLines)
		}
	}
	for _, file := range []string{"api/api.go", "api/testdata/small.json", "cmd/tool/main.go"} {
		if why := reasonOf(p, file); strings.Contains(why, "set apart") {
			t.Errorf("%s, which a reviewer reads, was set apart: %q", file, why)
		}
	}
	// Generated code stays with its package; the summary names each kind.
	if prHolding(p, "api/api.pb.go") != prHolding(p, "api/api.go") || prHolding(p, "api/kind_string.go") != prHolding(p, "api/api.go") {
		t.Errorf("the generated files of api left its PR:%s", layout(p))
	}
	summary := strings.Join(p.SetApart, "\n")
	for _, s := range []string{"go.sum (1 files, 400 lines): a lockfile", "api/api.pb.go (1 files, 901 lines)", "vendor/example.org/dep/d.go"} {
		if !strings.Contains(summary, s) {
			t.Errorf("the plan's list of files set apart lacks %q:\n%s", s, summary)
		}
	}
}

// A folder without Go code at the top of the module (a docs site, CI
// files) is a series of PRs of its own, within the budget, never mixed
// with code; so are the plain files of packages in a cycle.
func TestPlainFoldersArePRsOfTheirOwn(t *testing.T) {
	t.Parallel()
	for _, root := range []bool{false, true} {
		t.Run(fmt.Sprintf("root package %v", root), func(t *testing.T) { plainFolders(t, root) })
	}
}

func plainFolders(t *testing.T, rootPackage bool) {
	base := map[string]string{
		"go.mod": gomodM,
		"a/a.go": "package a\n\nfunc F(n int) int { return n }\n\nfunc UseG() int { return 0 }\n",
		"b/b.go": "package b\n\nfunc G(n int) int { return n }\n\nfunc UseF() int { return 0 }\n",
	}
	source := map[string]string{
		"go.mod":             gomodM,
		"a/a.go":             "package a\n\nimport \"example.com/m/b\"\n\nfunc F(n, m int) int { return n + m }\n\nfunc UseG() int { return b.G(1, 2) }\n" + body("A", 20),
		"b/b.go":             "package b\n\nimport \"example.com/m/a\"\n\nfunc G(n, m int) int { return n * m }\n\nfunc UseF() int { return a.F(1, 2) }\n" + body("B", 20),
		"a/README.md":        strings.Repeat("about a\n", 30),
		"app/app.go":         "package app\n" + body("App", 40),
		".github/ci.yml":     strings.Repeat("step: x\n", 20),
		"docs/index.md":      strings.Repeat("docs\n", 40),
		"docs/guide/one.md":  strings.Repeat("one\n", 60),
		"docs/guide/two.md":  strings.Repeat("two\n", 60),
		"docs/guide/tree.md": strings.Repeat("three\n", 60),
	}
	if rootPackage {
		// The docs are below the root package, the nearest above them.
		source["root.go"] = "package m\n" + body("Root", 10)
	}
	// At the base, a and b do not import each other: F and G change and
	// each package's new code calls the other's, a cycle of what each
	// tip needs, though Go sees no import cycle at either end.
	c := changeOf(t, base, source)
	opts := Options{MaxLines: 100, MaxFiles: 30, SplitLarge: true}
	p := planChange(t, c, opts)
	for _, pr := range p.PRs {
		code, plain := false, false
		for _, f := range pr.Files {
			if strings.HasSuffix(f.Path, ".go") || f.Path == "go.mod" {
				code = true
			} else {
				plain = true
			}
		}
		if code && plain && prHolding(p, "a/README.md") == pr {
			t.Errorf("PR #%d mixes a/README.md with the code of a cycle:%s", pr.Number, layout(p))
		}
		if over(pr.Lines, len(pr.Files), opts) && len(pr.Files) > 1 {
			t.Errorf("PR #%d has %d lines, over the budget:%s", pr.Number, pr.Lines, layout(p))
		}
	}
	for _, doc := range []string{".github/ci.yml", "docs/index.md", "docs/guide/one.md"} {
		pr := prHolding(p, doc)
		for _, f := range pr.Files {
			if strings.HasSuffix(f.Path, ".go") {
				t.Errorf("%s shares PR #%d with the Go file %s:%s", doc, pr.Number, f.Path, layout(p))
			}
		}
	}
	if why := reasonOf(p, "docs/guide/one.md"); !strings.Contains(why, "in docs/, a folder without Go code at the top of the module") {
		t.Errorf("the reason for a docs page: %q", why)
	}
	if pr := prHolding(p, "docs/guide/one.md"); !strings.Contains(pr.Title, "docs (files)") {
		t.Errorf("the docs PR is titled %q", pr.Title)
	}
	if why := reasonOf(p, "a/README.md"); !strings.Contains(why, "a plain file of a, which must land with 1 other packages tied to it") {
		t.Errorf("the reason for a/README.md: %q", why)
	}
	// The docs site, over the budget (220 lines), is more than one PR.
	docs := map[int]bool{}
	for _, doc := range []string{"docs/index.md", "docs/guide/one.md", "docs/guide/two.md", "docs/guide/tree.md"} {
		docs[prNumber(t, p, doc)] = true
	}
	if len(docs) < 2 {
		t.Errorf("220 lines of docs at a budget of 100 are in %d PR:%s", len(docs), layout(p))
	}
}

// Neighbours in the series that are about one thing merge while they fit
// the budget together: the last part of a cut package and the package
// that needs it, which would each be a PR of their own.
func TestRelatedNeighboursMergeWithinTheBudget(t *testing.T) {
	t.Parallel()
	base := map[string]string{"go.mod": gomodM}
	source := map[string]string{"go.mod": gomodM}
	for i := 0; i < 5; i++ {
		source[fmt.Sprintf("core/f%d.go", i)] = "package core\n" + body(fmt.Sprintf("F%dx", i), 45)
	}
	source["core/z.go"] = "package core\n" + body("Z", 8)
	source["core/user/user.go"] = "package user\n\nimport \"example.com/m/core\"\n\nfunc U() int { return core.Z0() }\n" + body("U", 20)
	c := changeOf(t, base, source)
	opts := Options{MaxLines: 100, MaxFiles: 30, SplitLarge: true}
	p := planChange(t, c, opts)
	user, last := prHolding(p, "core/user/user.go"), prHolding(p, "core/z.go")
	if user != last {
		t.Errorf("core/user (PR #%d) needs core, whose last part (PR #%d) has room for it:%s", user.Number, last.Number, layout(p))
	} else if !strings.Contains(user.Why, "merged with the PR next to it, both within the budget") {
		t.Errorf("the merged PR does not say why: %q", user.Why)
	}
	for _, pr := range p.PRs {
		if over(pr.Lines, len(pr.Files), opts) {
			t.Errorf("PR #%d has %d lines, over the budget:%s", pr.Number, pr.Lines, layout(p))
		}
	}
}

// The reviewer's rate turns the plan into the review's length, which the
// epic records for wo status; without a rate there is no estimate.
func TestTheReviewersRateGivesTheReviewsLength(t *testing.T) {
	t.Parallel()
	source := map[string]string{"go.mod": gomodM}
	for i := 0; i < 7; i++ {
		source[fmt.Sprintf("p%d/p.go", i)] = fmt.Sprintf("package p%d\n", i) + body("P", 90)
	}
	c := changeOf(t, map[string]string{"go.mod": gomodM}, source)
	p := planChange(t, c, Options{MaxLines: 100, MaxFiles: 30, ReviewsPerHour: 4})
	if len(p.PRs) != 7 {
		t.Fatalf("seven packages of 91 lines at a budget of 100 make %d PRs:%s", len(p.PRs), layout(p))
	}
	want := &Estimate{ReviewsPerHour: 4, Reviews: 14, Hours: 3.5}
	if p.Estimate == nil || *p.Estimate != *want {
		t.Fatalf("the estimate is %+v, want %+v", p.Estimate, want)
	}
	if got := p.Estimate.String(); got != "about 3.5 hours of review: 14 reviews (2 a PR: the first, and one after its fixes) at 4 an hour" {
		t.Errorf("the estimate reads %q", got)
	}
	epic, _, err := Documents(p, DocOptions{RepoPath: "/r"})
	if err != nil {
		t.Fatal(err)
	}
	s := epic["split"].(map[string]any)
	if s["estimated_hours"] != 3.5 || s["estimated_reviews"] != 14 || s["reviews_per_hour"] != 4.0 {
		t.Errorf("the epic records %v", s)
	}
	p = planChange(t, c, Options{MaxLines: 100, MaxFiles: 30})
	epic, _, _ = Documents(p, DocOptions{RepoPath: "/r"})
	if _, ok := epic["split"].(map[string]any)["estimated_hours"]; ok || p.Estimate != nil {
		t.Errorf("without a rate, an estimate: %+v", p.Estimate)
	}
}

// Files set apart still count against what GitHub shows of a diff
// (20,000 lines, 300 files): past that, no one can read the PR there.
// A deleted generated file is set apart as well, by its old header.
func TestSetApartFilesStayWithinWhatGitHubShows(t *testing.T) {
	t.Parallel()
	table := func(name string, n int) string {
		return "// Code generated by gen; DO NOT EDIT.\n\npackage tables\n\n" + body(name, n)
	}
	c := changeOf(t, map[string]string{
		"go.mod":           gomodM,
		"tables/old.go":    table("Old", 3000),
		"tables/tables.go": "package tables\n\nfunc Get() int { return 1 }\n",
	}, map[string]string{
		"go.mod":           gomodM,
		"tables/a.go":      table("A", 9000),
		"tables/b.go":      table("B", 9000),
		"tables/c.go":      table("C", 9000),
		"tables/tables.go": "package tables\n\nfunc Get() int { return A0() + B0() + C0() }\n",
	})
	opts := Options{SplitLarge: true}
	p := planChange(t, c, opts)
	for _, pr := range p.PRs {
		raw := 0
		for _, f := range pr.Files {
			raw += f.Lines
		}
		if raw > GitHubMaxLines && len(pr.Files) > 1 {
			t.Errorf("PR #%d holds %d lines in %d files, past the %d GitHub shows:%s", pr.Number, raw, len(pr.Files), GitHubMaxLines, layout(p))
		}
	}
	if len(p.PRs) < 2 {
		t.Errorf("30,000 generated lines are in %d PR:%s", len(p.PRs), layout(p))
	}
	pr := prHolding(p, "tables/old.go")
	for _, f := range pr.Files {
		if f.Path == "tables/old.go" && !strings.Contains(f.SetApart, "Code generated") {
			t.Errorf("the deleted generated file is not set apart: %q", f.SetApart)
		}
	}
}

// Only a header line before the package clause marks a Go file
// generated, as the go command's convention has it.
func TestGeneratedHeader(t *testing.T) {
	t.Parallel()
	for src, want := range map[string]bool{
		"// Code generated by protoc-gen-go. DO NOT EDIT.\n\npackage p\n":                  true,
		"//go:build linux\n\n// Code generated by mkall.go; DO NOT EDIT.\r\n\npackage p\n": true,
		"package p\n\n// Code generated by nothing. DO NOT EDIT.\n":                        false,
		"// Code generated by hand, edit freely.\npackage p\n":                             false,
		"// Package p is not generated.\npackage p\n":                                      false,
	} {
		if got := generated([]byte(src)); got != want {
			t.Errorf("generated(%q) = %v, want %v", src, got, want)
		}
	}
}

// The names a declaration's text holds, as symbol edges look them up.
func TestWordsOfADeclaration(t *testing.T) {
	t.Parallel()
	got := wordsOf("(*T,...Option,)(map[string]plumbing.Hash,error,) (x).Y")
	want := []string{"T", "Option", "map", "string", "plumbing", "plumbing.Hash", "error", "x", "Y"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("wordsOf = %q, want %q", got, want)
	}
	// As the parser's tokens write a declaration: a space between tokens.
	got = wordsOf("map [ string ] plumbing . Hash")
	want = []string{"map", "string", "plumbing", "plumbing.Hash"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("wordsOf(tokens) = %q, want %q", got, want)
	}
	// Letters and digits at the ends of their ranges are a name's.
	got = wordsOf("a0 . Z9 zA _ é . Ü")
	want = []string{"a0", "a0.Z9", "zA", "_", "é", "é.Ü"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("wordsOf(edges) = %q, want %q", got, want)
	}
}

// A package the change deletes whole goes along what its old files use
// of each other, the other way round: its tests first, a file no later
// than the files whose declarations it used, a type with its methods (a
// value of it may be used as an interface), a main package's func main
// last.
func TestADeletedPackageGoesUsersFirst(t *testing.T) {
	t.Parallel()
	base := map[string]string{
		"go.mod":         gomodM,
		"gone/a.go":      "package gone\n\nimport \"io\"\n\ntype T struct{}\n\nfunc New() io.Reader { return T{} }\n" + body("A", 30),
		"gone/m.go":      "package gone\n\nfunc M() io.Reader { return New() }\n" + body("M", 30),
		"gone/z.go":      "package gone\n\nfunc (T) Read(p []byte) (int, error) { return 0, nil }\n" + body("Z", 30),
		"gone/a_test.go": "package gone\n\nimport \"testing\"\n\nfunc TestM(t *testing.T) { _ = M() }\n" + body("Ta", 30),
		"cmd/x/main.go":  "package main\n\nfunc main() { run() }\n",
		"cmd/x/run.go":   "package main\n\nfunc run() {}\n" + body("R", 40),
		"cmd/x/zz.go":    "package main\n" + body("Zz", 40),
	}
	c := changeOf(t, base, map[string]string{"go.mod": gomodM})
	p := planChange(t, c, Options{MaxLines: 70, MaxFiles: 30, SplitLarge: true})
	order := func(before, after string) {
		if b, a := prNumber(t, p, before), prNumber(t, p, after); b > a {
			t.Errorf("%s (PR #%d) should go no later than %s (PR #%d):%s", before, b, after, a, layout(p))
		}
	}
	order("gone/a_test.go", "gone/m.go")
	order("gone/m.go", "gone/a.go")
	if prNumber(t, p, "gone/a.go") != prNumber(t, p, "gone/z.go") {
		t.Errorf("T and its method Read are deleted apart:%s", layout(p))
	}
	order("cmd/x/run.go", "cmd/x/main.go")
	order("cmd/x/zz.go", "cmd/x/main.go")
	if why := reasonOf(p, "gone/m.go"); !strings.Contains(why, "deleted with its package, no later than the files whose declarations it used") {
		t.Errorf("the reason for gone/m.go: %q", why)
	}
}

// A package whose folder is named like a unit of plain files is still a
// package: ordered by what it needs, never cut as plain files.
func TestAFolderNamedLikePlainFilesIsStillAPackage(t *testing.T) {
	t.Parallel()
	c := changeOf(t, map[string]string{"go.mod": gomodM}, map[string]string{
		"go.mod":                gomodM,
		"docs/index.md":         strings.Repeat("docs\n", 40),
		"docs (files)/a.go":     "package files\n\nfunc A() int { return B() }\n" + body("A", 40),
		"docs (files)/b.go":     "package files\n\nfunc B() int { return 1 }\n" + body("B", 40),
		"docs (files)/index.md": "x\n",
	})
	p := planChange(t, c, Options{MaxLines: 50, MaxFiles: 30, SplitLarge: true})
	if a, b := prNumber(t, p, "docs (files)/a.go"), prNumber(t, p, "docs (files)/b.go"); a < b {
		t.Errorf("a.go (PR #%d) uses B before b.go (PR #%d) declares it:%s", a, b, layout(p))
	}
	if prHolding(p, "docs/index.md") == prHolding(p, "docs (files)/a.go") {
		t.Errorf("the docs folder shares a PR with the package in \"docs (files)\":%s", layout(p))
	}
}
