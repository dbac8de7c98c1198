package split

import (
	"strings"
	"testing"
)

// cycleModule is a package of two new files that use each other: a.go
// holds T and what uses it (aDecls, early in the file), b.go a long run
// of functions and then bDecls, T's methods at the end of the file. The
// cut must bring a method of T no later than the first declaration
// that needs it, or that tip does not build.
func cycleModule(aImports, aDecls, bDecls string) map[string]string {
	return map[string]string{
		"go.mod": "module example.com/cyc\n\ngo 1.22\n",
		"p/a.go": "package p\n" + aImports + `
// T is the package's type.
type T struct{ n int }

func fromA() int { return fromB() }
` + aDecls + filler("A", 30),
		"p/b.go": "package p\n\nfunc fromB() int { return T{}.n }\n" + filler("B", 30) + bDecls,
	}
}

// cutAndBuild plans the module with a small budget, checks that some
// file is cut along its declarations, and builds and vets every tip.
func cutAndBuild(t *testing.T, files map[string]string) {
	t.Helper()
	planAndBuild(t, files, true)
}

// planAndBuild is cutAndBuild, the cut asked for only when mustCut.
func planAndBuild(t *testing.T, files map[string]string, mustCut bool) {
	t.Helper()
	r := repoWithFiles(t, files)
	p := planOf(t, r, Options{MaxLines: 60, MaxFiles: 30, SplitLarge: true})
	cut := false
	var prs []string
	for _, pr := range p.PRs {
		for _, f := range pr.Files {
			prs = append(prs, f.Path+" "+f.Part)
			cut = cut || f.Part != ""
		}
	}
	if !cut && mustCut {
		t.Fatalf("nothing was cut along its declarations:\n%s\n%v", strings.Join(prs, "\n"), p.Warnings)
	}
	t.Logf("%s", strings.Join(prs, "\n"))
	buildEveryTip(t, r, p)
}

func TestACutBringsTheMethodsAGenericTypesConstraintAsksOfItsTypeArgument(t *testing.T) {
	t.Parallel()
	cutAndBuild(t, cycleModule("", `
// Keyer is what a Set holds.
type Keyer interface{ Key() string }

// Set holds keyed things.
type Set[E Keyer] struct{ m map[string]E }

var items Set[T]

func count() int { return len(items.m) }
`, `
// Key keys it.
func (t T) Key() string { return "" }
`))
}

func TestACutBringsTheMethodsOfACaseComparedWithAnInterface(t *testing.T) {
	t.Parallel()
	cutAndBuild(t, cycleModule("", `
// I is matched by value.
type I interface{ M() int }

func pick(i I) bool {
	switch i {
	case T{}:
		return true
	}
	return false
}
`, `
// M is T's.
func (T) M() int { return 0 }
`))
}

func TestACutBringsTheUnexportedMethodsOfAnInterfaceEmbeddingAnImportedOne(t *testing.T) {
	t.Parallel()
	cutAndBuild(t, cycleModule("\nimport \"fmt\"\n", `
// I is a Stringer with a name.
type I interface {
	fmt.Stringer
	name() string
}

func use(i I) string { return i.name() }

func run() string { return use(T{}) }
`, `
func (T) name() string { return "" }

// String shows it.
func (T) String() string { return "" }
`))
}

func TestACutBringsTheUnexportedMethodsAGenericFunctionsConstraintAsks(t *testing.T) {
	t.Parallel()
	cutAndBuild(t, cycleModule("", `
type namer interface{ name() string }

func call[X namer](x X) string { return x.name() }

func run() string { return call(T{}) }
`, `
func (T) name() string { return "" }
`))
}

func TestACutBringsTheMethodsDeclaredOnAnAliasOfTheType(t *testing.T) {
	t.Parallel()
	cutAndBuild(t, cycleModule("", `
// A is T.
type A = T

// Q asks for Q.
type Q interface{ Q() int }

var q Q = T{}

var r Q = A{}
`, `
// Q is T's, by its alias.
func (A) Q() int { return 0 }
`))
}

func TestACutKeepsTheEmbedImportOfAFileWithAnEmbeddedString(t *testing.T) {
	t.Parallel()
	files := cycleModule("\nimport \"embed\"\n", `
//go:embed v.txt
var version string
`, `
//go:embed v.txt
var static embed.FS
`)
	// static uses embed in a.go, not b.go: put both in a.go.
	files["p/a.go"] = "package p\n\nimport \"embed\"\n" + `
// T is the package's type.
type T struct{ n int }

func fromA() int { return fromB() }

//go:embed v.txt
var version string
` + filler("A", 30) + `
//go:embed v.txt
var static embed.FS
`
	files["p/b.go"] = "package p\n\nfunc fromB() int { return T{}.n }\n" + filler("B", 30)
	files["p/v.txt"] = "1\n"
	cutAndBuild(t, files)
}

func TestACutBringsTheErrorMethodOfAnErrorsAsTarget(t *testing.T) {
	t.Parallel()
	cutAndBuild(t, cycleModule("\nimport \"errors\"\n", `
func is(err error) bool {
	var e *T
	return errors.As(err, &e)
}
`, `
// Error makes T an error.
func (*T) Error() string { return "" }
`))
}

func TestACutBringsTheStringMethodOfASlicePrinted(t *testing.T) {
	t.Parallel()
	cutAndBuild(t, cycleModule("\nimport \"fmt\"\n", `
func show() string { return fmt.Sprintf("%s", []T{{}}) }
`, `
// String shows it.
func (T) String() string { return "" }
`))
}

func TestACutBringsTheMethodsOfAKeyDeleted(t *testing.T) {
	t.Parallel()
	cutAndBuild(t, cycleModule("", `
// I is a key.
type I interface{ M() int }

func drop(m map[I]bool) { delete(m, T{}) }
`, `
// M is T's.
func (T) M() int { return 0 }
`))
}

func TestACutDoesNotSplitABlockCommentBetweenDeclarations(t *testing.T) {
	t.Parallel()
	files := cycleModule("", "", "")
	files["p/b.go"] = "package p\n\nfunc fromB() int { return T{}.n } /* one\n*/ func second() int { return 2 }\n\n" +
		"/* two\n*/ func third() int { return 3 }\n" + filler("B", 30)
	// b.go may stay whole: no part can have one of its first two
	// functions without half of the comment between them.
	planAndBuild(t, files, false)
}

func TestACutBringsTheMethodsOfAValueInALiteralOfAnImportedType(t *testing.T) {
	t.Parallel()
	files := cycleModule("\nimport \"net/http\"\n", `
var srv = http.Server{Handler: T{}}
`, "")
	files["p/b.go"] += `
// ServeHTTP serves.
func (T) ServeHTTP(http.ResponseWriter, *http.Request) {}
`
	files["p/b.go"] = strings.Replace(files["p/b.go"], "package p\n", "package p\n\nimport \"net/http\"\n", 1)
	cutAndBuild(t, files)
}

func TestACutBringsTheMethodsPromotedFromAnEmbeddedPointer(t *testing.T) {
	t.Parallel()
	cutAndBuild(t, cycleModule("", `
// I asks for M.
type I interface{ M() int }

// W embeds a T.
type W struct{ *T }

var w I = W{&T{}}
`, `
// M is T's.
func (*T) M() int { return 0 }
`))
}

func TestACutBringsTheMethodsOfAValueSentOnAChannelOfInterfaces(t *testing.T) {
	t.Parallel()
	cutAndBuild(t, cycleModule("", `
// I asks for M.
type I interface{ M() int }

func send(ch chan<- I) {
	go func() { ch <- T{} }()
	select {
	case ch <- &T{}:
	default:
	}
}
`, `
// M is T's.
func (T) M() int { return 0 }
`))
}

func TestACutBringsTheFormatMethodOfAValuePrintedWithAVerbItsFieldsRefuse(t *testing.T) {
	t.Parallel()
	files := cycleModule("\nimport \"fmt\"\n", `
// S holds a word.
type S struct{ w string }

func show() string { return fmt.Sprintf("%d", S{}) }
`, "")
	files["p/b.go"] = strings.Replace(files["p/b.go"], "package p\n", "package p\n\nimport \"fmt\"\n", 1) + `
// Format prints it.
func (S) Format(f fmt.State, _ rune) { fmt.Fprint(f, 1) }
`
	cutAndBuild(t, files)
}

func TestACutOfAFileWithCRLFAndNoFinalNewlineBuilds(t *testing.T) {
	t.Parallel()
	files := cycleModule("\nimport (\n\t\"strings\"\n\t\"fmt\"\n)\n", `
func up(s string) string { return strings.ToUpper(s) }
`, "")
	files["p/a.go"] = strings.ReplaceAll(files["p/a.go"], "\n", "\r\n") + "\r\nfunc last() string { return fmt.Sprint(1) }"
	cutAndBuild(t, files)
}

func TestACutKeepsAConstBlockAndTheIotaValuesOthersUse(t *testing.T) {
	t.Parallel()
	cutAndBuild(t, cycleModule("", `
func kind() Kind { return second }
`, `
// Kind is a kind.
type Kind int

const (
	first Kind = iota
	second
)

func (k Kind) String() string { return [...]string{"first", "second"}[k] }
`))
}

func TestACutBringsTheUnexportedMethodsAnExplicitlyInstantiatedImportedFunctionAsks(t *testing.T) {
	t.Parallel()
	cutAndBuild(t, cycleModule("\nimport \"slices\"\n", `
// I has an unexported method.
type I interface{ m() int }

func has(is []I) bool { return slices.Contains[[]I, I](is, T{}) }
`, `
func (T) m() int { return 0 }
`))
}

func TestACutBringsTheMethodsOfARangeIntoAnInterfaceVariable(t *testing.T) {
	t.Parallel()
	cutAndBuild(t, cycleModule("", `
// I asks for M.
type I interface{ M() int }

func each() (n int) {
	var i I
	for _, i = range []T{{}} {
		n += i.M()
	}
	return n
}
`, `
// M is T's.
func (T) M() int { return 0 }
`))
}

func TestACutBringsTheMethodsOfAValueReturnedInATypeSwitchOnAnImportedType(t *testing.T) {
	t.Parallel()
	cutAndBuild(t, cycleModule("\nimport \"go/ast\"\n", `
// I asks for M.
type I interface{ M() int }

func visit(n ast.Node) I {
	switch n := n.(type) {
	case *ast.Ident:
		_ = n
		return T{}
	}
	return nil
}
`, `
// M is T's.
func (T) M() int { return 0 }
`))
}

// An import whose package name is not its path's last element cannot be
// told apart; a local variable of the guessed name, in a type switch
// the checker does not visit, must not pass for a use of it.
func TestACutDoesNotTakeALocalVariableForAnImportOfAnotherName(t *testing.T) {
	t.Parallel()
	base := map[string]string{
		"go.mod":       "module example.com/cyc\n\ngo 1.22\n",
		"yamlx/y.go":   "package yaml\n\n// Marshal marshals.\nfunc Marshal() int { return 1 }\n",
		"yamlx/doc.go": "// Package yaml is in yamlx.\npackage yaml\n",
	}
	source := cycleModule("\nimport (\n\t\"go/ast\"\n\n\t\"example.com/cyc/yamlx\"\n)\n", `
func g() int { return yaml.Marshal() }
`, "")
	source["p/a.go"] += `
func f(n ast.Node) int {
	switch n.(type) {
	case *ast.Ident:
		yamlx := 1
		return yamlx
	}
	return 0
}
`
	for k, v := range base {
		source[k] = v
	}
	r := repoFromTo(t, base, source)
	p := planOf(t, r, Options{MaxLines: 60, MaxFiles: 30, SplitLarge: true})
	for _, pr := range p.PRs {
		for _, f := range pr.Files {
			t.Logf("#%d %s %s", pr.Number, f.Path, f.Part)
		}
	}
	t.Log(p.Warnings)
	buildEveryTip(t, r, p)
}

// A slice the cut cannot type (an import's) given more of the package's
// values by append makes them its elements: an interface of the import.
func TestACutBringsTheMethodsOfAValueAppendedToAnImportsSlice(t *testing.T) {
	t.Parallel()
	base := map[string]string{
		"go.mod":     "module example.com/cyc\n\ngo 1.22\n",
		"lib/lib.go": "package lib\n\n// Item has a title.\ntype Item interface{ Title() string }\n\n// Items are none.\nfunc Items() []Item { return nil }\n",
	}
	source := cycleModule("\nimport \"example.com/cyc/lib\"\n", `
func add() int {
	items := lib.Items()
	items = append(items, T{})
	return len(items)
}
`, `
// Title names it.
func (T) Title() string { return "" }
`)
	for k, v := range base {
		source[k] = v
	}
	r := repoFromTo(t, base, source)
	p := planOf(t, r, Options{MaxLines: 60, MaxFiles: 30, SplitLarge: true})
	cut := false
	for _, pr := range p.PRs {
		for _, f := range pr.Files {
			cut = cut || f.Part != ""
		}
	}
	if !cut {
		t.Fatalf("nothing was cut along its declarations: %v", p.Warnings)
	}
	buildEveryTip(t, r, p)
}

func TestACutBringsTheMethodsOfAValueStoredInAnImportsSlice(t *testing.T) {
	t.Parallel()
	base := map[string]string{
		"go.mod":     "module example.com/cyc\n\ngo 1.22\n",
		"lib/lib.go": "package lib\n\n// Item has a title.\ntype Item interface{ Title() string }\n\n// Items are one.\nfunc Items() []Item { return make([]Item, 1) }\n\n// Box holds one.\ntype Box struct{ In Item }\n",
	}
	source := cycleModule("\nimport \"example.com/cyc/lib\"\n", `
func set() int {
	items := lib.Items()
	items[0] = T{}
	var b lib.Box
	b.In, items[0] = T{}, &T{}
	return len(items)
}
`, `
// Title names it.
func (T) Title() string { return "" }
`)
	for k, v := range base {
		source[k] = v
	}
	r := repoFromTo(t, base, source)
	p := planOf(t, r, Options{MaxLines: 60, MaxFiles: 30, SplitLarge: true})
	buildEveryTip(t, r, p)
}

func TestACutBringsTheMethodsOfAValueComparedWithAnImportsVariable(t *testing.T) {
	t.Parallel()
	base := map[string]string{
		"go.mod":     "module example.com/cyc\n\ngo 1.22\n",
		"lib/lib.go": "package lib\n\n// Item has a title.\ntype Item interface{ Title() string }\n\n// Current is none.\nvar Current Item\n",
	}
	source := cycleModule("\nimport \"example.com/cyc/lib\"\n", `
func current() bool { return lib.Current == T{} }
`, `
// Title names it.
func (T) Title() string { return "" }
`)
	for k, v := range base {
		source[k] = v
	}
	r := repoFromTo(t, base, source)
	p := planOf(t, r, Options{MaxLines: 60, MaxFiles: 30, SplitLarge: true})
	buildEveryTip(t, r, p)
}

func TestACutBringsTheMethodsAnImportsGenericTypeAsksOfItsTypeArguments(t *testing.T) {
	t.Parallel()
	base := map[string]string{
		"go.mod": "module example.com/cyc\n\ngo 1.22\n",
		"lib/lib.go": "package lib\n\n// Titled has a title.\ntype Titled interface{ Title() string }\n\n" +
			"// One holds one.\ntype One[V Titled] struct{ V V }\n\n// Pair holds two.\ntype Pair[K comparable, V Titled] struct {\n\tK K\n\tV V\n}\n",
	}
	source := cycleModule("\nimport \"example.com/cyc/lib\"\n", `
var one lib.One[*T]

var pair lib.Pair[string, *T]
`, `
// Title names it.
func (*T) Title() string { return "" }
`)
	for k, v := range base {
		source[k] = v
	}
	r := repoFromTo(t, base, source)
	p := planOf(t, r, Options{MaxLines: 60, MaxFiles: 30, SplitLarge: true})
	buildEveryTip(t, r, p)
}
