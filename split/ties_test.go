package split

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// Each tie that makes packages land together is named by its cause, and
// only a cycle of imports is called an import cycle.

// planWarningsAndReasons is everything the plan tells a reader: its
// warnings and every file's reason.
func planWarningsAndReasons(p *Plan) string {
	var b strings.Builder
	for _, w := range p.Warnings {
		b.WriteString(w + "\n")
	}
	for _, pr := range p.PRs {
		b.WriteString(pr.Why + "\n")
		for _, f := range pr.Files {
			b.WriteString(f.Path + ": " + f.Reason + "\n")
		}
	}
	return b.String()
}

// An external test package (package p_test) that imports q, which
// imports p, is no import cycle (go list shows none): p, q and p's tests
// are three PRs in that order, and nothing says "cycle".
func TestAnExternalTestPackageIsNoImportCycle(t *testing.T) {
	t.Parallel()
	c := changeOf(t, map[string]string{"go.mod": gomodM}, map[string]string{
		"go.mod":      gomodM,
		"p/p.go":      "package p\n\nfunc P() int { return 1 }\n" + body("P", 30),
		"q/q.go":      "package q\n\nimport \"example.com/m/p\"\n\nfunc Q() int { return p.P() }\n" + body("Q", 30),
		"p/p_test.go": "package p_test\n\nimport (\n\t\"testing\"\n\n\t\"example.com/m/q\"\n)\n\nfunc TestQ(t *testing.T) { _ = q.Q() }\n" + body("T", 30),
	})
	p := planChange(t, c, Options{MaxLines: 45, MaxFiles: 30, SplitLarge: true})
	said := planWarningsAndReasons(p)
	if strings.Contains(said, "cycle") || strings.Contains(said, "tied") {
		t.Errorf("the plan calls an external test package's import a cycle or a tie:\n%s", said)
	}
	pp, q, tests := prNumber(t, p, "p/p.go"), prNumber(t, p, "q/q.go"), prNumber(t, p, "p/p_test.go")
	if !(pp < q && q < tests) {
		t.Errorf("want p (#%d), then q (#%d), then p's external tests (#%d), each a PR:%s", pp, q, tests, layout(p))
	}
	if why := reasonOf(p, "p/p_test.go"); !strings.Contains(why, "external test package of p") {
		t.Errorf("p/p_test.go's reason does not name its cause: %q", why)
	}
}

// p imports q, and q changes the signature of G, which p calls at both
// ends: the two land together, as a tie of a changed signature and its
// caller, not an import cycle.
func TestAChangedSignatureTieIsNamedAndIsNoImportCycle(t *testing.T) {
	t.Parallel()
	c := changeOf(t, map[string]string{
		"go.mod": gomodM,
		"q/q.go": "package q\n\nfunc G(n int) int { return n }\n",
		"p/p.go": "package p\n\nimport \"example.com/m/q\"\n\nfunc P() int { return q.G(1) }\n",
	}, map[string]string{
		"go.mod": gomodM,
		"q/q.go": "package q\n\nfunc G(n int, s string) int { return n + len(s) }\n" + body("Q", 20),
		"p/p.go": "package p\n\nimport \"example.com/m/q\"\n\nfunc P() int { return q.G(1, \"p\") }\n" + body("P", 20),
	})
	p := planChange(t, c, Options{MaxLines: 100, MaxFiles: 30, SplitLarge: true})
	if a, b := prNumber(t, p, "p/p.go"), prNumber(t, p, "q/q.go"); a != b {
		t.Fatalf("p/p.go (#%d) calls q.G, whose signature q/q.go (#%d) changes:%s", a, b, layout(p))
	}
	why := reasonOf(p, "p/p.go")
	for _, want := range []string{"need each other, though not in an import cycle", "changes the signature of q.G, which p/p.go uses at both ends"} {
		if !strings.Contains(why, want) {
			t.Errorf("the tie's reason lacks %q: %q", want, why)
		}
	}
	if strings.Contains(why, "import each other") {
		t.Errorf("a tie of a changed signature is called an import cycle: %q", why)
	}
}

// New code that uses range over an integer (Go 1.22) needs go.mod's new
// go directive, and its old version, which go vet refuses from Go 1.24,
// must go no later than go.mod: the file and go.mod land together, and
// the plan names the go directive as the cause.
func TestAGoDirectiveTieIsNamed(t *testing.T) {
	t.Parallel()
	c := changeOf(t, map[string]string{
		"go.mod":    "module example.com/m\n\ngo 1.20\n",
		"zlog/z.go": "package zlog\n\nimport \"fmt\"\n\nfunc Z(msg string) string { return fmt.Sprintf(msg) }\n",
		"aaa/a.go":  "package aaa\n\nfunc A() int { return 1 }\n",
	}, map[string]string{
		"go.mod":    "module example.com/m\n\ngo 1.24\n",
		"zlog/z.go": "package zlog\n\nfunc Z(msg string) string {\n\tfor range 3 {\n\t\tmsg += \".\"\n\t}\n\treturn msg\n}\n" + body("Z", 20),
		"aaa/a.go":  "package aaa\n\nfunc A() int { return 2 }\n" + body("A", 40),
	})
	p := planChange(t, c, Options{MaxLines: 60, MaxFiles: 30, SplitLarge: true})
	if z, mod := prNumber(t, p, "zlog/z.go"), prNumber(t, p, "go.mod"); z != mod {
		t.Fatalf("zlog/z.go (#%d) and go.mod (#%d) must land together:%s", z, mod, layout(p))
	}
	why := reasonOf(p, "zlog/z.go")
	for _, want := range []string{"need each other, though not in an import cycle", "range over an integer (Go 1.22), and the base's go.mod says go 1.20", "which go vet refuses from Go 1.24"} {
		if !strings.Contains(why, want) {
			t.Errorf("the tie's reason lacks %q: %q", want, why)
		}
	}
	if strings.Contains(why, "import each other") {
		t.Errorf("a tie through go.mod is called an import cycle: %q", why)
	}
	if a := prNumber(t, p, "aaa/a.go"); a == prNumber(t, p, "go.mod") {
		t.Errorf("aaa/a.go needs nothing of go.mod, yet shares its PR #%d:%s", a, layout(p))
	}
}

// p embeds the files of tmpl (a main package it ships as a template),
// and tmpl imports p: the embed and the import tie them, which the plan
// names; it is no import cycle.
func TestAnEmbedTieIsNamed(t *testing.T) {
	t.Parallel()
	c := changeOf(t, map[string]string{"go.mod": gomodM}, map[string]string{
		"go.mod":         gomodM,
		"p/p.go":         "package p\n\nimport \"embed\"\n\n//go:embed tmpl\nvar Tmpl embed.FS\n\nfunc P() int { return 1 }\n",
		"p/tmpl/main.go": "package main\n\nimport \"example.com/m/p\"\n\nfunc main() { println(p.P()) }\n",
	})
	p := planChange(t, c, Options{MaxLines: 100, MaxFiles: 30, SplitLarge: true})
	if a, b := prNumber(t, p, "p/p.go"), prNumber(t, p, "p/tmpl/main.go"); a != b {
		t.Fatalf("p/p.go (#%d) embeds p/tmpl/main.go (#%d):%s", a, b, layout(p))
	}
	why := reasonOf(p, "p/p.go")
	if !strings.Contains(why, "p/p.go embeds p/tmpl (//go:embed tmpl)") || !strings.Contains(why, "though not in an import cycle") {
		t.Errorf("the embed tie's reason: %q", why)
	}
}

// A true import cycle at the source (p's own tests import q, which
// imports p: the go command refuses it) is the one thing called so.
func TestOnlyAnImportCycleIsCalledOne(t *testing.T) {
	t.Parallel()
	c := changeOf(t, map[string]string{"go.mod": gomodM}, map[string]string{
		"go.mod": gomodM,
		"p/p.go": "package p\n\nimport \"example.com/m/q\"\n\nfunc P() int { return q.Q() }\n",
		"q/q.go": "package q\n\nimport \"example.com/m/p\"\n\nfunc Q() int { return p.P() }\n",
	})
	p := planChange(t, c, Options{MaxLines: 100, MaxFiles: 30, SplitLarge: true})
	if why := reasonOf(p, "p/p.go"); !strings.Contains(why, "p, q import each other in a cycle, which the go command refuses") {
		t.Errorf("an import cycle's reason: %q", why)
	}
}

// Packages tied together and cut: a file one of them embeds goes with
// the file that embeds it, whose folder the pattern is relative to (the
// tied unit's name is no folder; the file went after all the code).
func TestAFileEmbeddedInATiedGroupGoesWithItsEmbedder(t *testing.T) {
	t.Parallel()
	c := changeOf(t, map[string]string{
		"go.mod": gomodM,
		"q/q.go": "package q\n\nfunc G(n int) int { return n }\n",
		"p/p.go": "package p\n\nimport \"example.com/m/q\"\n\nfunc P() int { return q.G(1) }\n",
		"q/z.go": "package q\n\nfunc Z() int { return 1 }\n",
	}, map[string]string{
		"go.mod":         gomodM,
		"q/q.go":         "package q\n\nfunc G(n int, s string) int { return n + len(s) }\n" + body("Q", 10),
		"p/p.go":         "package p\n\nimport (\n\t\"embed\"\n\n\t\"example.com/m/q\"\n)\n\n//go:embed themes/*.xml\nvar Themes embed.FS\n\nfunc P() int { return q.G(1, \"p\") }\n" + body("P", 10),
		"p/themes/a.xml": strings.Repeat("<theme/>\n", 10),
		"q/z.go":         "package q\n\nfunc Z() int { return 2 }\n" + body("Z", 40),
		"q/zz.go":        "package q\n\nfunc ZZ() int { return 2 }\n" + body("ZZ", 40),
	})
	p := planChange(t, c, Options{MaxLines: 50, MaxFiles: 30, SplitLarge: true})
	if e, x := prNumber(t, p, "p/p.go"), prNumber(t, p, "p/themes/a.xml"); x > e {
		t.Errorf("p/p.go embeds themes/*.xml in PR #%d, but p/themes/a.xml lands in #%d:%s", e, x, layout(p))
	}
}

// Range over an integer (Go 1.22) or an iterator (Go 1.23) needs go.mod's
// new go directive, though the parser alone does not see an integer in
// `range n`: a constant, a parameter, arithmetic, a reflect count, a
// package-level constant of another file, an iterator another file
// returns. A range over a slice needs nothing of it.
func TestRangeOverAnIntegerOrIteratorNeedsTheNewGoDirective(t *testing.T) {
	t.Parallel()
	old := map[string]string{"go.mod": "module example.com/m\n\ngo 1.20\n"}
	source := map[string]string{
		"go.mod":      "module example.com/m\n\ngo 1.23\n",
		"a/a.go":      "package a\n\nfunc A() (s int) {\n\tconst n = 3\n\tfor i := range n {\n\t\ts += i\n\t}\n\treturn\n}\n",
		"b/b.go":      "package b\n\nfunc B(count int) (s int) {\n\tfor range count - 1 {\n\t\ts++\n\t}\n\treturn\n}\n",
		"c/consts.go": "package c\n\nconst maxSignals = 3\n",
		"c/c.go":      "package c\n\nfunc C() (s int) {\n\tfor range maxSignals {\n\t\ts++\n\t}\n\treturn\n}\n",
		"d/d.go":      "package d\n\nimport \"reflect\"\n\nfunc D(v reflect.Value) (s int) {\n\tfor i := range v.NumField() {\n\t\ts += i\n\t}\n\treturn\n}\n",
		"e/iter.go":   "package e\n\nimport \"iter\"\n\ntype T struct{ xs []int }\n\nfunc (t T) Values() iter.Seq[int] {\n\treturn func(yield func(int) bool) {\n\t\tfor _, x := range t.xs {\n\t\t\tif !yield(x) {\n\t\t\t\treturn\n\t\t\t}\n\t\t}\n\t}\n}\n",
		"f/f.go":      "package f\n\nimport \"example.com/m/e\"\n\nfunc F(t e.T) (s int) {\n\tfor x := range t.Values() {\n\t\ts += x\n\t}\n\treturn\n}\n",
		"z/z.go":      "package z\n\nfunc Z(items []string) (s int) {\n\tfor i := range items {\n\t\ts += i\n\t}\n\treturn\n}\n",
	}
	p := planChange(t, changeOf(t, old, source), Options{MaxLines: 8000, MaxFiles: 150, SplitLarge: true})
	for file, want := range map[string]string{
		"a/a.go": "range over an integer (Go 1.22)",
		"b/b.go": "range over an integer (Go 1.22)",
		"c/c.go": "it ranges over the integer c.maxSignals (Go 1.22)",
		"d/d.go": "range over an integer (Go 1.22)",
		"f/f.go": "it ranges over the iterator Values returns (Go 1.23)",
	} {
		if why := reasonOf(p, file); !strings.Contains(why, want) {
			t.Errorf("%s's reason lacks %q: %q", file, want, why)
		}
	}
	if why := reasonOf(p, "z/z.go"); strings.Contains(why, "go.mod") {
		t.Errorf("z/z.go ranges over a slice, yet: %q", why)
	}
}

// A Go file that embeds another Go file of its package (x/tools'
// modernize.go embeds its doc.go) lands with or after it when the
// package is cut.
func TestAnEmbeddedGoFileComesNoLaterThanItsEmbedder(t *testing.T) {
	t.Parallel()
	c := changeOf(t, map[string]string{"go.mod": gomodM}, map[string]string{
		"go.mod": gomodM,
		"p/a.go": "package p\n\nimport _ \"embed\"\n\n//go:embed z.go\nvar Doc string\n" + body("A", 30),
		"p/m.go": "package p\n" + body("M", 30),
		"p/z.go": "// Package p is documented here, and shows it.\npackage p\n" + body("Z", 30),
	})
	p := planChange(t, c, Options{MaxLines: 45, MaxFiles: 30, SplitLarge: true})
	if a, z := prNumber(t, p, "p/a.go"), prNumber(t, p, "p/z.go"); z > a {
		t.Errorf("p/a.go embeds z.go in PR #%d, but p/z.go lands in #%d:%s", a, z, layout(p))
	}
}

// Files that must land together over the budget are named with one cycle
// of their ties, each by its cause, and how many ties of each cause there
// are.
func TestAGroupOverTheBudgetSaysWhyByItsTies(t *testing.T) {
	t.Parallel()
	c := changeOf(t, map[string]string{
		"go.mod": gomodM,
		"p/a.go": "package p\n\nfunc F(n int) int { return n }\n",
		"p/b.go": "package p\n\nfunc B() int { return F(1) }\n",
	}, map[string]string{
		"go.mod": gomodM,
		"p/a.go": "package p\n\nfunc F(n int, s string) int { return n + len(s) }\n" + body("A", 40),
		"p/b.go": "package p\n\nfunc B() int { return F(1, \"b\") }\n" + body("B", 40),
	})
	p := planChange(t, c, Options{MaxLines: 50, MaxFiles: 30, SplitLarge: true})
	pr := prHolding(p, "p/a.go")
	if pr != prHolding(p, "p/b.go") || pr.OverBudget == "" {
		t.Fatalf("p/a.go and p/b.go must land together, over the budget, and say why:%s", layout(p))
	}
	for _, want := range []string{"2 files (", "one cycle of their ties: p/a.go → p/b.go (changes the signature of p.F, which p/b.go uses at both ends: they land together); p/b.go → p/a.go (uses p.F, whose signature p/a.go changes: they land together)",
		"their 2 ties by cause: 2 of a changed signature or declaration and its users"} {
		if !strings.Contains(pr.OverBudget, want) {
			t.Errorf("the group's reason lacks %q: %q", want, pr.OverBudget)
		}
	}
}

// New code whose files name each other's declarations in a cycle over
// the budget, where the declarations themselves need each other (A calls
// B, B calls A), says so, with one cycle of them: not even a cut along
// the declarations can part them.
func TestNewCodeInACycleOverTheBudgetSaysWhich(t *testing.T) {
	t.Parallel()
	steps := strings.Repeat("\tn++\n", 40)
	a := "package p\n\nfunc A(n int) int {\n" + steps + "\treturn B(n)\n}\n"
	b := "package p\n\nfunc B(n int) int {\n" + steps + "\tif n > 100 {\n\t\treturn n\n\t}\n\treturn A(n)\n}\n"
	c := changeOf(t, map[string]string{"go.mod": gomodM}, map[string]string{"go.mod": gomodM, "p/a.go": a, "p/b.go": b})
	p := planChange(t, c, Options{MaxLines: 50, MaxFiles: 30, SplitLarge: true})
	pr := prHolding(p, "p/a.go")
	want := fmt.Sprintf("2 files (%d lines) use each other's declarations in a cycle, so no tip can hold some of them and build: p/a.go and p/b.go; one cycle of them: p/a.go → p/b.go → p/a.go",
		strings.Count(a+b, "\n"))
	if pr.OverBudget == "" || !strings.Contains(pr.OverBudget, want) {
		t.Errorf("the group's reason: %q, want it to hold %q", pr.OverBudget, want)
	}
}

// Every tip builds and vets where the ties above meet in one change: a
// changed signature and its caller, a file they embed, the go directive
// raised for a range over a constant of another file, an external test
// package importing what imports its package, old code that go vet
// refuses under the new directive; the change is cut small.
func TestEveryTipOfTiedChangesBuilds(t *testing.T) {
	t.Parallel()
	base := map[string]string{
		"go.mod": "module example.com/m\n\ngo 1.20\n",
		"q/q.go": "package q\n\n// G is q's.\nfunc G(n int) int { return n }\n",
		"p/p.go": "package p\n\nimport \"example.com/m/q\"\n\n// P is p's.\nfunc P() int { return q.G(1) }\n",
		// Old code that go vet refuses from Go 1.24: go.mod waits for it.
		"zlog/z.go": "package zlog\n\nimport \"fmt\"\n\n// Z is zlog's.\nfunc Z(msg string) string { return fmt.Sprintf(msg) }\n",
		// maxN stays as it is: only the go directive orders c/c.go.
		"c/consts.go": "package c\n\nconst maxN = 3\n",
		"c/c.go":      "package c\n\n// C is c's.\nfunc C() (s int) {\n\tfor i := 0; i < maxN; i++ {\n\t\ts++\n\t}\n\treturn\n}\n",
	}
	source := map[string]string{
		"go.mod":            "module example.com/m\n\ngo 1.24\n",
		"zlog/z.go":         "package zlog\n\n// Z is zlog's.\nfunc Z(msg string) string { return msg }\n" + body("Z", 20),
		"q/q.go":            "package q\n\n// G is q's.\nfunc G(n int, s string) int { return n + len(s) }\n" + body("Q", 20),
		"p/p.go":            "package p\n\nimport (\n\t\"embed\"\n\n\t\"example.com/m/q\"\n)\n\n// Themes are p's.\n//\n//go:embed themes/*.xml\nvar Themes embed.FS\n\n// P is p's.\nfunc P() int { return q.G(1, \"p\") }\n" + body("P", 20),
		"p/themes/dark.xml": strings.Repeat("<theme/>\n", 20),
		"p/p_test.go":       "package p_test\n\nimport (\n\t\"testing\"\n\n\t\"example.com/m/r\"\n)\n\nfunc TestR(t *testing.T) {\n\tif r.R() != 2 {\n\t\tt.Fatal(r.R())\n\t}\n}\n",
		"r/r.go":            "package r\n\nimport \"example.com/m/p\"\n\n// R is r's.\nfunc R() int { return p.P() }\n" + body("R", 20),
		"c/consts.go":       "package c\n\nconst maxN = 3\n" + body("K", 20),
		"aaa/a.go":          "package aaa\n" + body("A", 20),
		"c/c.go":            "package c\n\n// C is c's.\nfunc C() (s int) {\n\tfor range maxN {\n\t\ts++\n\t}\n\treturn\n}\n" + body("C", 20),
	}
	for k, v := range base {
		if _, ok := source[k]; !ok {
			source[k] = v
		}
	}
	r := repoFromTo(t, base, source)
	p := planOf(t, r, Options{MaxLines: 30, MaxFiles: 30, SplitLarge: true})
	if len(p.PRs) < 3 {
		t.Fatalf("the change is %d PRs, too few to test the ties between them:%s", len(p.PRs), layout(p))
	}
	t.Log(layout(p))
	buildEveryTip(t, r, p)
}

// A range over an integer constant that a file of the package the change
// leaves alone declares (the parser sees a constant only in its own file)
// still needs the go.mod that raises the go directive.
func TestRangeOverAConstantOfAnUnchangedFileNeedsTheNewGoDirective(t *testing.T) {
	t.Parallel()
	base := map[string]string{
		"go.mod":      "module example.com/m\n\ngo 1.20\n",
		"c/consts.go": "package c\n\nconst maxN = 3\n",
		"c/c.go":      "package c\n\n// C is c's.\nfunc C() (s int) {\n\tfor i := 0; i < maxN; i++ {\n\t\ts++\n\t}\n\treturn\n}\n",
	}
	source := map[string]string{
		"go.mod":      "module example.com/m\n\ngo 1.22\n",
		"c/consts.go": base["c/consts.go"],
		"c/c.go":      "package c\n\n// C is c's.\nfunc C() (s int) {\n\tfor range maxN {\n\t\ts++\n\t}\n\treturn\n}\n",
	}
	p := planOf(t, repoFromTo(t, base, source), Options{SplitLarge: true})
	if why := reasonOf(p, "c/c.go"); !strings.Contains(why, "it ranges over the integer c.maxN (Go 1.22), and the base's go.mod says go 1.20") {
		t.Errorf("c/c.go's reason: %q", why)
	}
}

// A method is a member of its type wherever the type is reached: through
// the receiver of the file that declares the type (v.check calls
// v.fixGate, which a new file declares), and through a field of a type
// that a file the change keeps declares (c.Step is a w.Step, so
// c.Step.Message is w.Step's, which the change drops). Each tip builds.
func TestAMethodReachedThroughAReceiverOrAKeptFieldOrdersItsFiles(t *testing.T) {
	t.Parallel()
	base := map[string]string{
		"go.mod":        "module example.com/m\n\ngo 1.22\n",
		"w/step.go":     "package w\n\n// Step is w's.\ntype Step struct{ Body string }\n\n// Message is the step's.\nfunc (s Step) Message() string { return s.Body }\n",
		"w/validate.go": "package w\n\ntype validator struct{ n int }\n\nfunc (v *validator) check() int { return v.n }\n\n// V is w's.\nfunc V() int { return (&validator{}).check() }\n",
		"p/ctx.go":      "package p\n\nimport \"example.com/m/w\"\n\n// Ctx is p's.\ntype Ctx struct{ Step w.Step }\n",
		"p/use.go":      "package p\n\n// Use is p's.\nfunc Use(c *Ctx) string { return c.Step.Message() }\n",
	}
	source := map[string]string{
		"go.mod":        base["go.mod"],
		"w/step.go":     "package w\n\n// Step is w's.\ntype Step struct{ Body string }\n" + body("S", 20),
		"w/validate.go": "package w\n\ntype validator struct{ n int }\n\nfunc (v *validator) check() int { return v.n + v.fixGate() }\n\n// V is w's.\nfunc V() int { return (&validator{}).check() }\n" + body("V", 20),
		"w/fixgate.go":  "package w\n\nfunc (v *validator) fixGate() int { return 1 }\n" + body("F", 20),
		"p/ctx.go":      base["p/ctx.go"],
		"p/use.go":      "package p\n\n// Use is p's.\nfunc Use(c *Ctx) string { return c.Step.Body }\n" + body("U", 20),
	}
	r := repoFromTo(t, base, source)
	p := planOf(t, r, Options{MaxLines: 30, MaxFiles: 30, SplitLarge: true})
	if why := reasonOf(p, "w/validate.go"); !strings.Contains(why, "uses w.validator.fixGate as w/fixgate.go declares it") {
		t.Errorf("w/validate.go's reason: %q", why)
	}
	if why := reasonOf(p, "w/step.go"); !strings.Contains(why, "w/step.go drops or changes w.Step.Message, which p/use.go used: that comes first") {
		t.Errorf("w/step.go's reason: %q", why)
	}
	t.Log(layout(p))
	buildEveryTip(t, r, p)
}

// A test that uses another test file's helper comes with or after it,
// also where the helper's file is too big to join its code's part and
// the test is small enough to: go vet builds the tests of every tip.
func TestATestComesNoEarlierThanTheHelperItUses(t *testing.T) {
	t.Parallel()
	source := map[string]string{
		"go.mod":           "module example.com/m\n\ngo 1.22\n",
		"p/a.go":           "package p\n\n// A is p's.\nfunc A() int { return 1 }\n" + body("A", 8),
		"p/helper_test.go": "package p\n\nimport \"testing\"\n\nfunc mustA(t *testing.T) int {\n\tt.Helper()\n\treturn A()\n}\n" + body("H", 20),
		"p/use_test.go":    "package p\n\nimport \"testing\"\n\nfunc TestA(t *testing.T) {\n\tif mustA(t) != 1 {\n\t\tt.Fatal()\n\t}\n}\n",
		"p/b.go":           "package p\n\n// B is p's.\nfunc B() int { return A() }\n" + body("B", 8),
	}
	r := repoFromTo(t, map[string]string{"go.mod": source["go.mod"]}, source)
	p := planOf(t, r, Options{MaxLines: 30, MaxFiles: 30, SplitLarge: true})
	t.Log(layout(p))
	at := map[string]int{}
	for _, pr := range p.PRs {
		for _, f := range pr.Files {
			at[f.Path] = pr.Number
		}
	}
	if at["p/use_test.go"] < at["p/helper_test.go"] {
		t.Errorf("p/use_test.go is in PR %d, before the helper it uses (PR %d):%s", at["p/use_test.go"], at["p/helper_test.go"], layout(p))
	}
	buildEveryTip(t, r, p)
}

// A Go file of the source that does not parse makes its PR, and those
// stacked on it, unable to build: the plan says so. One under testdata
// is test data, which the go command never reads as code.
func TestAPRWhoseSourceDoesNotParseIsNamedButTestdataIsNot(t *testing.T) {
	t.Parallel()
	source := map[string]string{
		"go.mod":                    "module example.com/m\n\ngo 1.22\n",
		"p/p.go":                    "package p\n\n// P is p's.\nfunc P() int { return 1 }\n",
		"p/broken.go":               "package p\n\nimport \"fmt\n",
		"q/testdata/mod/x.com/a.go": "package x.com\n",
		"q/q.go":                    "package q\n\n// Q is q's.\nfunc Q() int { return 2 }\n",
	}
	p := planOf(t, repoWithFiles(t, source), Options{SplitLarge: true})
	var broken, testdata int
	for _, w := range p.Warnings {
		if strings.Contains(w, "cannot build, nor can the PRs stacked on it, because the source itself does not: p/broken.go does not parse") {
			broken++
		}
		if strings.Contains(w, "testdata") {
			testdata++
		}
	}
	if broken != 1 || testdata != 0 {
		t.Errorf("want one warning for p/broken.go and none for the test data, got:\n%s", strings.Join(p.Warnings, "\n"))
	}
}

// The kept files that tie are read where the changed files can see them:
// in the packages they import at the base (p/use.go's old code reaches
// w.Step through c.Ctx, a kept file's) and at the source (q/q.go reaches
// it through d.Box).
func TestKeptFilesOfImportedPackagesAtEitherEndTieTheirUsers(t *testing.T) {
	t.Parallel()
	base := map[string]string{
		"go.mod":    "module example.com/m\n\ngo 1.22\n",
		"w/step.go": "package w\n\n// Step is w's.\ntype Step struct{ Body string }\n\n// Message is the step's.\nfunc (s Step) Message() string { return s.Body }\n",
		"c/ctx.go":  "package c\n\nimport \"example.com/m/w\"\n\n// Ctx is c's.\ntype Ctx struct{ Step w.Step }\n",
		"d/box.go":  "package d\n\nimport \"example.com/m/w\"\n\n// Box is d's.\ntype Box struct{ Step w.Step }\n",
		"p/use.go":  "package p\n\nimport \"example.com/m/c\"\n\n// Use is p's.\nfunc Use(x *c.Ctx) string { return x.Step.Message() }\n",
		"q/q.go":    "package q\n\n// Q is q's.\nfunc Q() string { return \"\" }\n",
	}
	source := map[string]string{
		"go.mod":    base["go.mod"],
		"w/step.go": "package w\n\n// Step is w's.\ntype Step struct{ Body string }\n\n// Text is the step's.\nfunc (s Step) Text() string { return s.Body }\n",
		"c/ctx.go":  base["c/ctx.go"],
		"d/box.go":  base["d/box.go"],
		"p/use.go":  "package p\n\n// Use is p's.\nfunc Use() string { return \"\" }\n",
		"q/q.go":    "package q\n\nimport \"example.com/m/d\"\n\n// Q is q's.\nfunc Q(b d.Box) string { return b.Step.Text() }\n",
	}
	p := planOf(t, repoFromTo(t, base, source), Options{SplitLarge: true})
	if why := reasonOf(p, "w/step.go"); !strings.Contains(why, "w/step.go drops or changes w.Step.Message, which p/use.go used: that comes first") {
		t.Errorf("w/step.go's reason: %q", why)
	}
	if why := reasonOf(p, "q/q.go"); !strings.Contains(why, "uses w.Step.Text as w/step.go declares it") {
		t.Errorf("q/q.go's reason: %q", why)
	}
}

// An interface of a kept file asks its methods of the types used as it:
// kept T gains Frob, which kept Store asks for, and p/use.go starts to
// return a T as a Store, so it waits for the file that gives T Frob.
func TestAKeptInterfaceAsksItsMethodsOfAKeptType(t *testing.T) {
	t.Parallel()
	base := map[string]string{
		"go.mod":     "module example.com/m\n\ngo 1.22\n",
		"p/store.go": "package p\n\n// Store is p's.\ntype Store interface{ Frob() int }\n",
		"p/t.go":     "package p\n\n// T is p's.\ntype T struct{ n int }\n",
		"p/use.go":   "package p\n\n// Use is p's.\nfunc Use() int { return 0 }\n",
	}
	source := map[string]string{
		"go.mod":     base["go.mod"],
		"p/store.go": base["p/store.go"],
		"p/t.go":     base["p/t.go"],
		"p/zget.go":  "package p\n\n// Frob is T's.\nfunc (t T) Frob() int { return t.n }\n" + body("Z", 8),
		"p/use.go":   "package p\n\n// Use is p's.\nfunc Use() Store { return T{} }\n" + body("U", 8),
	}
	r := repoFromTo(t, base, source)
	p := planOf(t, r, Options{MaxLines: 20, MaxFiles: 30, SplitLarge: true})
	if why := reasonOf(p, "p/use.go"); !strings.Contains(why, "uses p.T, whose method or field p.T.Frob comes with p/zget.go") {
		t.Errorf("p/use.go's reason: %q%s", why, layout(p))
	}
	buildEveryTip(t, r, p)
}

// The files a change keeps are read where its Go files can see them, its
// own folders first, an imported package's code but not its tests, and no
// further than maxKeptRead: the plan says where it stopped.
func TestKeptFilesAreReadOwnFoldersFirstAndNoFurtherThanTheBound(t *testing.T) {
	base := map[string]string{
		"go.mod":        "module example.com/m\n\ngo 1.22\n",
		"p/use.go":      "package p\n\nimport \"example.com/m/q\"\n\n// Use is p's.\nfunc Use() int { return q.Q() }\n",
		"p/a.go":        "package p\n\n// A is p's.\nfunc A() int { return 1 }\n",
		"p/a_test.go":   "package p\n\nimport \"testing\"\n\nfunc TestA(t *testing.T) {}\n",
		"q/q.go":        "package q\n\n// Q is q's.\nfunc Q() int { return 2 }\n",
		"q/q_test.go":   "package q\n\nimport \"testing\"\n\nfunc TestQ(t *testing.T) {}\n",
		"r/r.go":        "package r\n\n// R is r's, imported by no changed file.\nfunc R() int { return 3 }\n",
		"z/z.go":        "package z\n\n// Z is z's.\nfunc Z() int { return 4 }\n",
		"q/zz/other.go": "package zz\n",
	}
	source := map[string]string{}
	for k, v := range base {
		source[k] = v
	}
	source["p/use.go"] = "package p\n\nimport \"example.com/m/q\"\n\n// Use is p's.\nfunc Use() int { return q.Q() + 1 }\n"
	r := repoFromTo(t, base, source)
	read := func() (*Change, []string) {
		c, err := ReadChange(context.Background(), r, "base", "main")
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, f := range c.kept {
			got = append(got, f.path)
		}
		return c, got
	}
	if _, got := read(); strings.Join(got, " ") != "p/a.go p/a_test.go q/q.go" {
		t.Errorf("kept files read: %q, want p's (tests too) and q's code", got)
	}
	old := maxKeptRead
	maxKeptRead = int64(len(base["p/a.go"]) + len(base["p/a_test.go"]))
	t.Cleanup(func() { maxKeptRead = old })
	c, got := read()
	if strings.Join(got, " ") != "p/a.go p/a_test.go" {
		t.Errorf("kept files read within the bound: %q, want p's alone", got)
	}
	p, err := Make(c, Options{SplitLarge: true})
	if err != nil {
		t.Fatal(err)
	}
	want := "the Go files the change leaves as they are, in the folders it touches and imports, hold over 0 MiB: split read them up to q/q.go and no further"
	if !strings.Contains(strings.Join(p.Warnings, "\n"), want) {
		t.Errorf("want the plan to say where it stopped reading, got:\n%s", strings.Join(p.Warnings, "\n"))
	}
}

// A file that moves to another folder is read at the base in its old one,
// where its package's kept files are: a/x.go's old code reaches w.Step
// through a/ctx.go's Ctx, so w/step.go, which drops Step.Message, waits
// for the move to b/x.go.
func TestAMovedFilesOldFolderKeepsItsTies(t *testing.T) {
	t.Parallel()
	filler := body("X", 12)
	base := map[string]string{
		"go.mod":    "module example.com/m\n\ngo 1.22\n",
		"w/step.go": "package w\n\n// Step is w's.\ntype Step struct{ Body string }\n\n// Message is the step's.\nfunc (s Step) Message() string { return s.Body }\n",
		"a/ctx.go":  "package a\n\nimport \"example.com/m/w\"\n\n// Ctx is a's.\ntype Ctx struct{ Step w.Step }\n",
		"a/x.go":    "package a\n\n// X is a's.\nfunc X(c *Ctx) string { return c.Step.Message() }\n" + filler,
	}
	source := map[string]string{
		"go.mod":    base["go.mod"],
		"w/step.go": "package w\n\n// Step is w's.\ntype Step struct{ Body string }\n",
		"a/ctx.go":  base["a/ctx.go"],
		"b/x.go":    "package b\n\n// X is b's.\nfunc X() string { return \"\" }\n" + filler,
	}
	p := planOf(t, repoFromTo(t, base, source), Options{SplitLarge: true})
	for _, f := range prHolding(p, "b/x.go").Files {
		if f.Path == "b/x.go" && f.OldPath != "a/x.go" {
			t.Fatalf("want b/x.go read as a/x.go moved, got %s (from %q)", f.Kind, f.OldPath)
		}
	}
	if why := reasonOf(p, "w/step.go"); !strings.Contains(why, "w/step.go drops or changes w.Step.Message, which b/x.go used: that comes first") {
		t.Errorf("w/step.go's reason: %q", why)
	}
}
