package split

import (
	"sort"
	"strings"
	"testing"
)

// One test for each rule of symbolGraph (symrules.go): a small change
// whose only tie is the rule's, the edge it makes, and the edge it must
// not make.

// edgesOf lists the edges that the symbol rules find in a change, one a
// line: "from → to: why".
func edgesOf(t *testing.T, base, source map[string]string) []string {
	t.Helper()
	var out []string
	for from, es := range symbolEdges(changeOf(t, base, source)) {
		for _, e := range es {
			out = append(out, from+" → "+e.to+": "+e.why)
		}
	}
	sort.Strings(out)
	return out
}

// hasEdge says whether edges hold from → to with a reason holding why.
func hasEdge(edges []string, from, to, why string) bool {
	for _, e := range edges {
		if strings.HasPrefix(e, from+" → "+to+": ") && strings.Contains(e, why) {
			return true
		}
	}
	return false
}

// The moved rule: F moves from a.go to b.go; the two files land
// together, or a tip would declare F twice or not at all.
func TestMovedRuleTiesBothFilesOfAMovedName(t *testing.T) {
	t.Parallel()
	edges := edgesOf(t, map[string]string{
		"go.mod": gomodM,
		"p/a.go": "package p\n\nfunc F() int { return 1 }\n\nfunc A() int { return 0 }\n",
		"p/b.go": "package p\n\nfunc B() int { return 2 }\n",
	}, map[string]string{
		"go.mod": gomodM,
		"p/a.go": "package p\n\nfunc A() int { return 0 }\n",
		"p/b.go": "package p\n\nfunc B() int { return 2 }\n\nfunc F() int { return 1 }\n",
	})
	why := "p.F moves from p/a.go to p/b.go, which land together so that it is declared once"
	if !hasEdge(edges, "p/a.go", "p/b.go", why) || !hasEdge(edges, "p/b.go", "p/a.go", why) {
		t.Errorf("want p/a.go and p/b.go tied both ways by the move of F, got:\n%s", strings.Join(edges, "\n"))
	}
	if len(edges) != 2 {
		t.Errorf("a name moved as it was ties nothing else, got:\n%s", strings.Join(edges, "\n"))
	}
}

// The changed rule: q.G's signature changes and p calls it at both ends:
// p and q land together. r called it only at the base (the removed
// rule): q comes after r, r does not wait for q.
func TestChangedRuleTiesASignatureToItsCallersAtBothEnds(t *testing.T) {
	t.Parallel()
	edges := edgesOf(t, map[string]string{
		"go.mod": gomodM,
		"q/q.go": "package q\n\nfunc G(n int) int { return n }\n",
		"p/p.go": "package p\n\nimport \"example.com/m/q\"\n\nfunc P() int { return q.G(1) }\n",
		"r/r.go": "package r\n\nimport \"example.com/m/q\"\n\nfunc R() int { return q.G(2) }\n",
	}, map[string]string{
		"go.mod": gomodM,
		"q/q.go": "package q\n\nfunc G(n int, s string) int { return n + len(s) }\n",
		"p/p.go": "package p\n\nimport \"example.com/m/q\"\n\nfunc P() int { return q.G(1, \"p\") }\n",
		"r/r.go": "package r\n\nfunc R() int { return 2 }\n",
	})
	if !hasEdge(edges, "p/p.go", "q/q.go", "uses q.G, whose signature q/q.go changes: they land together") ||
		!hasEdge(edges, "q/q.go", "p/p.go", "changes the signature of q.G, which p/p.go uses at both ends") {
		t.Errorf("want p/p.go and q/q.go tied both ways by q.G's signature, got:\n%s", strings.Join(edges, "\n"))
	}
	if hasEdge(edges, "r/r.go", "q/q.go", "") {
		t.Errorf("r/r.go no longer calls q.G: it must not wait for q/q.go, got:\n%s", strings.Join(edges, "\n"))
	}
}

// The removed rule: q drops Old, which p used at the base only: q comes
// after p (p's old code needs Old), and p does not wait for q.
func TestRemovedRulePutsTheDropAfterItsOldUsers(t *testing.T) {
	t.Parallel()
	edges := edgesOf(t, map[string]string{
		"go.mod": gomodM,
		"q/q.go": "package q\n\nfunc Old() int { return 1 }\n\nfunc Q() int { return 0 }\n",
		"p/p.go": "package p\n\nimport \"example.com/m/q\"\n\nfunc P() int { return q.Old() }\n",
	}, map[string]string{
		"go.mod": gomodM,
		"q/q.go": "package q\n\nfunc Q() int { return 0 }\n",
		"p/p.go": "package p\n\nimport \"example.com/m/q\"\n\nfunc P() int { return q.Q() }\n",
	})
	if !hasEdge(edges, "q/q.go", "p/p.go", "q/q.go drops or changes q.Old, which p/p.go used: that comes first") {
		t.Errorf("want q/q.go after p/p.go, which used q.Old, got:\n%s", strings.Join(edges, "\n"))
	}
	if hasEdge(edges, "p/p.go", "q/q.go", "") {
		t.Errorf("p/p.go needs nothing new of q/q.go, got:\n%s", strings.Join(edges, "\n"))
	}
}

// The added rule: q adds New, which p uses at the source: p comes after
// q, and q does not wait for p.
func TestAddedRulePutsAUserAfterTheNewDeclaration(t *testing.T) {
	t.Parallel()
	edges := edgesOf(t, map[string]string{
		"go.mod": gomodM,
		"q/q.go": "package q\n\nfunc Q() int { return 0 }\n",
		"p/p.go": "package p\n\nimport \"example.com/m/q\"\n\nfunc P() int { return q.Q() }\n",
	}, map[string]string{
		"go.mod": gomodM,
		"q/q.go": "package q\n\nfunc Q() int { return 0 }\n\nfunc New() int { return 1 }\n",
		"p/p.go": "package p\n\nimport \"example.com/m/q\"\n\nfunc P() int { return q.New() }\n",
	})
	if !hasEdge(edges, "p/p.go", "q/q.go", "uses q.New as q/q.go declares it") {
		t.Errorf("want p/p.go after q/q.go, which declares q.New, got:\n%s", strings.Join(edges, "\n"))
	}
	if hasEdge(edges, "q/q.go", "p/p.go", "") {
		t.Errorf("q/q.go needs nothing of p/p.go, got:\n%s", strings.Join(edges, "\n"))
	}
}

// The interface-gains rule: api.Runner, an interface of the base, gains
// Key: impl/t.go, which gives its type Key, comes first (or with it). A
// new interface (api.Fresh) asks nothing of the types that have its
// methods.
func TestInterfaceGainsRuleWaitsForTheImplementers(t *testing.T) {
	t.Parallel()
	edges := edgesOf(t, map[string]string{
		"go.mod":     gomodM,
		"api/api.go": "package api\n\ntype Runner interface {\n\tRun() int\n}\n",
		"impl/t.go":  "package impl\n\ntype T struct{}\n\nfunc (T) Run() int { return 1 }\n",
	}, map[string]string{
		"go.mod":     gomodM,
		"api/api.go": "package api\n\ntype Runner interface {\n\tRun() int\n\tKey() string\n}\n\ntype Fresh interface {\n\tFrob() string\n}\n",
		"impl/t.go":  "package impl\n\ntype T struct{}\n\nfunc (T) Run() int { return 1 }\n\nfunc (T) Key() string { return \"t\" }\n\nfunc (T) Frob() string { return \"f\" }\n",
	})
	if !hasEdge(edges, "api/api.go", "impl/t.go", "api.Runner gains Key, which the types that implement it need first") {
		t.Errorf("want api/api.go after impl/t.go, which gives T the Key that api.Runner gains, got:\n%s", strings.Join(edges, "\n"))
	}
	if hasEdge(edges, "api/api.go", "impl/t.go", "Frob") {
		t.Errorf("the new interface api.Fresh tied impl/t.go, got:\n%s", strings.Join(edges, "\n"))
	}
}

// The method-set rule: q.T gains String, a method an interface may ask
// for (fmt.Stringer): p, which uses a T, comes after it. T's new Frob
// (no interface asks for it) orders nothing.
func TestMethodSetRulePutsATypesUsersAfterItsNewMethods(t *testing.T) {
	t.Parallel()
	edges := edgesOf(t, map[string]string{
		"go.mod": gomodM,
		"q/q.go": "package q\n\ntype T struct{ N int }\n",
		"p/p.go": "package p\n\nimport (\n\t\"fmt\"\n\n\t\"example.com/m/q\"\n)\n\nfunc P() { fmt.Println(q.T{}) }\n",
	}, map[string]string{
		"go.mod": gomodM,
		"q/q.go": "package q\n\ntype T struct{ N int }\n\nfunc (T) String() string { return \"t\" }\n\nfunc (T) Frob(a, b int) {}\n",
		"p/p.go": "package p\n\nimport (\n\t\"fmt\"\n\n\t\"example.com/m/q\"\n)\n\nfunc P() { fmt.Println(q.T{}, 1) }\n",
	})
	if !hasEdge(edges, "p/p.go", "q/q.go", "uses q.T, whose method or field q.T.String comes with q/q.go") {
		t.Errorf("want p/p.go after q/q.go, which gives q.T String, got:\n%s", strings.Join(edges, "\n"))
	}
	if hasEdge(edges, "p/p.go", "q/q.go", "Frob") {
		t.Errorf("q.T's Frob, which no interface asks for, tied p/p.go, got:\n%s", strings.Join(edges, "\n"))
	}
}

// The new-type rule: a new type T and its method String in another file
// land together: t.go waits for m.go (m.go waits for t.go anyway, by the
// added rule: its receiver names T). A method in a test file does not
// hold the type back.
func TestNewTypeRuleKeepsANewTypeWithItsMethods(t *testing.T) {
	t.Parallel()
	edges := edgesOf(t, map[string]string{
		"go.mod": gomodM,
		"p/p.go": "package p\n\nfunc P() int { return 0 }\n",
	}, map[string]string{
		"go.mod":      gomodM,
		"p/p.go":      "package p\n\nfunc P() int { return 0 }\n",
		"p/t.go":      "package p\n\ntype T struct{}\n",
		"p/m.go":      "package p\n\nfunc (T) String() string { return \"t\" }\n",
		"p/m_test.go": "package p\n\nfunc (T) Error() string { return \"e\" }\n",
	})
	why := "p.T is a new type, and its method p.T.String comes with it"
	if !hasEdge(edges, "p/t.go", "p/m.go", why) || !hasEdge(edges, "p/m.go", "p/t.go", "") {
		t.Errorf("want p/t.go and p/m.go tied both ways, got:\n%s", strings.Join(edges, "\n"))
	}
	if hasEdge(edges, "p/t.go", "p/m_test.go", "") {
		t.Errorf("a test file's method tied the new type's file to it, got:\n%s", strings.Join(edges, "\n"))
	}
}

// The changed rule sees a declaration whose text stays but whose type
// changes through its file's import (go-task's templateFuncs: the same
// template.FuncMap{…}, of text/template at the base and of another
// package at the source): use.go, which passes funcs to the new
// package's Funcs, lands with funcs.go, and every tip builds and vets.
func TestAVariableWhoseTypeChangesThroughItsImportLandsWithItsUsers(t *testing.T) {
	t.Parallel()
	funcs := "\n\nvar funcs = template.FuncMap{\"up\": func(s string) string { return s }}\n"
	use := "\n\n// New parses with the funcs.\nfunc New() *template.Template { return template.New(\"x\").Funcs(funcs) }\n"
	base := map[string]string{
		"go.mod":     gomodM,
		"p/funcs.go": "package p\n\nimport \"text/template\"" + funcs,
		"p/use.go":   "package p\n\nimport \"text/template\"" + use,
		"p/other.go": "package p\n\n// Other is unrelated.\nfunc Other() int { return 1 }\n",
	}
	source := map[string]string{
		"go.mod": gomodM,
		"template/template.go": "package template\n\n// FuncMap maps names to functions.\ntype FuncMap map[string]any\n\n// Template is a template.\ntype Template struct{ funcs FuncMap }\n\n" +
			"// New makes one.\nfunc New(name string) *Template { return &Template{} }\n\n// Funcs sets its functions.\nfunc (t *Template) Funcs(m FuncMap) *Template { t.funcs = m; return t }\n",
		"p/funcs.go": "package p\n\nimport \"example.com/m/template\"" + funcs + filler("F", 14),
		"p/use.go":   "package p\n\nimport \"example.com/m/template\"" + use + filler("U", 14),
		"p/other.go": "package p\n\n// Other is unrelated.\nfunc Other() int { return 2 }\n" + filler("O", 14),
	}
	edges := edgesOf(t, base, source)
	if !hasEdge(edges, "p/use.go", "p/funcs.go", "uses p.funcs, whose declaration p/funcs.go changes") {
		t.Errorf("want p/use.go tied to p/funcs.go, whose funcs changes type through its import, got:\n%s", strings.Join(edges, "\n"))
	}
	r := repoFromTo(t, base, source)
	p := planOf(t, r, Options{MaxLines: 40, MaxFiles: 30, SplitLarge: true})
	if a, b := prNumber(t, p, "p/use.go"), prNumber(t, p, "p/funcs.go"); a != b {
		t.Errorf("p/use.go (#%d) and p/funcs.go (#%d) land apart:%s", a, b, layout(p))
	}
	if len(p.PRs) < 3 {
		t.Errorf("want the package cut (the template package, then p's parts), got %d PRs:%s", len(p.PRs), layout(p))
	}
	buildEveryTip(t, r, p)
}

// The method-set and interface rules hold for a type that a file the
// change keeps declares: T is in p/t.go, which stays as it was. p/str.go
// gives T a String method (fmt.Stringer's), so p/use.go, changed to use
// T, comes after it; q.I gains M, which p/m.go gives T, so q/i.go waits
// for p/m.go.
func TestATypeOfAKeptFileGainingMethodsOrdersItsUsersAndInterfaces(t *testing.T) {
	t.Parallel()
	kept := "package p\n\n// T is p's.\ntype T struct{ n int }\n"
	edges := edgesOf(t, map[string]string{
		"go.mod":   gomodM,
		"p/t.go":   kept,
		"p/use.go": "package p\n\n// Use is p's.\nfunc Use() int { return 1 }\n",
		"q/i.go":   "package q\n\n// I is q's.\ntype I interface{ N() int }\n",
	}, map[string]string{
		"go.mod":   gomodM,
		"p/t.go":   kept,
		"p/str.go": "package p\n\nimport \"fmt\"\n\nfunc (t T) String() string { return fmt.Sprint(t.n) }\n",
		"p/m.go":   "package p\n\n// M is T's.\nfunc (t T) M() int { return t.n }\n",
		"p/use.go": "package p\n\n// Use is p's.\nfunc Use() any { return T{} }\n",
		"q/i.go":   "package q\n\n// I is q's.\ntype I interface {\n\tN() int\n\tM() int\n}\n",
	})
	if !hasEdge(edges, "p/use.go", "p/str.go", "uses p.T, whose method or field p.T.String comes with p/str.go") {
		t.Errorf("want p/use.go after p/str.go, for T's String, got:\n%s", strings.Join(edges, "\n"))
	}
	if !hasEdge(edges, "q/i.go", "p/m.go", "q.I gains M, which the types that implement it need first") {
		t.Errorf("want q/i.go after p/m.go, for T's M, got:\n%s", strings.Join(edges, "\n"))
	}
}

// A member is reached through a variable whose type the file writes out:
// the receiver v *T reaches T's new method fixGate, though T is declared
// in the same file; f *os.File's Close is os.File's, not the new Close of
// T, so p/t.go does not wait for p/c.go (which needs t.go's new field).
func TestAMemberIsReachedThroughAVariableOfItsType(t *testing.T) {
	t.Parallel()
	edges := edgesOf(t, map[string]string{
		"go.mod": gomodM,
		"p/t.go": "package p\n\nimport \"os\"\n\n// T is p's.\ntype T struct{ n int }\n\nfunc (v *T) check() int { return v.n }\n\nfunc closeIt(f *os.File) { f.Close() }\n",
	}, map[string]string{
		"go.mod": gomodM,
		"p/t.go": "package p\n\nimport \"os\"\n\n// T is p's.\ntype T struct{ n, m int }\n\nfunc (v *T) check() int { return v.n + v.fixGate() }\n\nfunc closeIt(f *os.File) { f.Close() }\n",
		"p/c.go": "package p\n\n// Close is T's.\nfunc (t T) Close() error { _ = t.m; return nil }\n\nfunc (v *T) fixGate() int { return 1 }\n",
	})
	if !hasEdge(edges, "p/t.go", "p/c.go", "uses p.T.fixGate as p/c.go declares it") {
		t.Errorf("want p/t.go after p/c.go, for v.fixGate, got:\n%s", strings.Join(edges, "\n"))
	}
	if hasEdge(edges, "p/t.go", "p/c.go", "p.T.Close") {
		t.Errorf("f.Close() is os.File's: p/t.go must not wait for T's Close, got:\n%s", strings.Join(edges, "\n"))
	}
	// A variable made from a composite literal of T: v := &T{}.
	edges = edgesOf(t, map[string]string{
		"go.mod": gomodM,
		"p/t.go": "package p\n\n// T is p's.\ntype T struct{ n int }\n",
	}, map[string]string{
		"go.mod": gomodM,
		"p/t.go": "package p\n\n// T is p's.\ntype T struct{ n int }\n\nfunc build() int {\n\tv, w := &T{}, T{}\n\treturn v.extra() + w.n\n}\n",
		"p/c.go": "package p\n\nfunc (v *T) extra() int { return 2 }\n",
	})
	if !hasEdge(edges, "p/t.go", "p/c.go", "uses p.T.extra as p/c.go declares it") {
		t.Errorf("want p/t.go after p/c.go, for v := &T{}; v.extra(), got:\n%s", strings.Join(edges, "\n"))
	}
}
