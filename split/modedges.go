package split

import (
	"bytes"
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/version"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"golang.org/x/mod/modfile"
)

// goMod is what the root go.mod says at one end of the change.
type goMod struct {
	module    string
	goVersion string            // the go directive, "1.13"; "1.16" when it has none, as the go command takes it
	require   map[string]string // module path → version
}

func readGoMod(data []byte) *goMod {
	f, err := modfile.ParseLax("go.mod", data, nil)
	if err != nil || f.Module == nil {
		return nil
	}
	m := &goMod{module: f.Module.Mod.Path, goVersion: "1.16", require: map[string]string{}}
	if f.Go != nil {
		m.goVersion = f.Go.Version
	}
	for _, r := range f.Require {
		m.require[r.Mod.Path] = r.Mod.Version
	}
	return m
}

// moduleOf is the module that go.mod requires for an import path: the
// longest required path that holds it, or "".
func (m *goMod) moduleOf(importPath string) string {
	best := ""
	for mod := range m.require {
		if len(mod) > len(best) && (importPath == mod || strings.HasPrefix(importPath, mod+"/")) {
			best = mod
		}
	}
	return best
}

// goModChanged says whether the change modifies a root go.mod that the
// base has: then what each file needs of the new go.mod orders it (the
// module edges), not a rule that every package comes after go.mod. A
// new go.mod (an initial import) comes first, before every package.
func (c *Change) goModChanged() bool {
	if c.baseMod == nil || c.sourceMod == nil {
		return false
	}
	for _, f := range c.Files {
		if f.Path == moduleUnit {
			return f.Kind == "modified"
		}
	}
	return false
}

// A tip holds go.mod as the base has it until the PR that changes it.
// Old code must not lose a module it imports, new code must not miss
// one it needs:
//
//   - a file whose old version imports a module that go.mod drops lands
//     no later than go.mod (go.mod needs it);
//   - a file whose new version needs the new go.mod lands with or after
//     it: it imports a module that go.mod adds; it uses a name of a
//     module that go.mod moves to another version, and no changed file
//     used that name at the base (it may be new in that version); it
//     uses a language feature newer than the base's go directive (type
//     parameters, any, min, range over an integer, //go:embed, …).
//
// Old code is taken to build with the newer versions of what it
// imports, as Go's compatibility promise has it; that is what lets
// go.mod land before the files that do not need it.

// langNeed is the newest Go language version a file's syntax needs, and
// what in it needs that version; "" when nothing newer than Go 1.13.
func langNeed(f *ast.File, src []byte) (need, what string) {
	raise := func(v, why string) {
		if need == "" || version.Compare("go"+v, "go"+need) > 0 {
			need, what = v, why
		}
	}
	for _, id := range f.Unresolved {
		switch id.Name {
		case "any", "comparable":
			raise("1.18", "the predeclared "+id.Name)
		case "min", "max", "clear":
			raise("1.21", "the built-in "+id.Name)
		}
	}
	unsafeName := ""
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		switch p {
		case "slices", "maps", "cmp":
			raise("1.18", "the generic functions of package "+p)
		case "iter":
			raise("1.23", "package iter (range over functions)")
		case "unsafe":
			unsafeName = "unsafe"
			if imp.Name != nil {
				unsafeName = imp.Name.Name
			}
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncType:
			if n.TypeParams != nil {
				raise("1.18", "type parameters")
			}
		case *ast.TypeSpec:
			if n.TypeParams != nil {
				raise("1.18", "type parameters")
			}
		case *ast.RangeStmt:
			if isInt(n.X, 0) {
				raise("1.22", "range over an integer")
			}
			if x, ok := n.X.(*ast.CallExpr); ok {
				if sel, ok := x.Fun.(*ast.SelectorExpr); ok && iterator(sel) {
					raise("1.23", "range over "+sel.Sel.Name+"'s iterator")
				}
			}
			if fl, ok := n.X.(*ast.FuncLit); ok && fl.Type.Params != nil && len(fl.Type.Params.List) == 1 {
				raise("1.23", "range over a function")
			}
		case *ast.SelectorExpr:
			if x, ok := n.X.(*ast.Ident); ok && unsafeName != "" && x.Name == unsafeName {
				switch n.Sel.Name {
				case "Add", "Slice":
					raise("1.17", "unsafe."+n.Sel.Name)
				case "String", "StringData", "SliceData":
					raise("1.20", "unsafe."+n.Sel.Name)
				}
			}
		}
		return true
	})
	if strings.Contains(string(src), "//go:embed") {
		raise("1.16", "//go:embed")
	}
	return need, what
}

// intTypes are the integer types' names.
var intTypes = map[string]bool{"int": true, "int8": true, "int16": true, "int32": true, "int64": true, "uint": true, "uint8": true,
	"uint16": true, "uint32": true, "uint64": true, "uintptr": true, "byte": true, "rune": true}

// intMethods are methods that return an int, as reflect's do.
var intMethods = map[string]bool{"Len": true, "Cap": true, "NumField": true, "NumMethod": true, "NumIn": true, "NumOut": true}

// isInt says whether an expression is an integer as the parser sees it,
// without types: a literal, len or cap, a conversion to an integer type,
// min or max of an integer, arithmetic with one, a reflect count
// (v.Len(), t.NumField()), b.N of a benchmark, or a name its file
// declares as one (a constant, a parameter, a variable set to one).
func isInt(e ast.Expr, depth int) bool {
	if depth > 8 {
		return false
	}
	switch x := e.(type) {
	case *ast.BasicLit:
		return x.Kind == token.INT
	case *ast.ParenExpr:
		return isInt(x.X, depth+1)
	case *ast.BinaryExpr:
		switch x.Op {
		case token.ADD, token.SUB, token.MUL, token.QUO, token.REM, token.SHL, token.SHR, token.AND, token.OR, token.XOR:
			return isInt(x.X, depth+1) || isInt(x.Y, depth+1)
		}
	case *ast.CallExpr:
		return isIntCall(x, depth)
	case *ast.SelectorExpr:
		return isBenchmarkN(x)
	case *ast.Ident:
		return isIntName(x, depth)
	}
	return false
}

// isIntCall says whether a call is an integer: len or cap, a conversion
// to an integer type, min or max of an integer, a reflect count.
func isIntCall(x *ast.CallExpr, depth int) bool {
	switch fn := x.Fun.(type) {
	case *ast.Ident:
		if fn.Obj != nil {
			return false
		}
		switch {
		case fn.Name == "len" || fn.Name == "cap" || intTypes[fn.Name]:
			return true
		case fn.Name == "min" || fn.Name == "max":
			for _, a := range x.Args {
				if isInt(a, depth+1) {
					return true
				}
			}
		}
	case *ast.SelectorExpr:
		return len(x.Args) == 0 && intMethods[fn.Sel.Name]
	}
	return false
}

// isBenchmarkN says whether a selector is b.N of a benchmark (b
// *testing.B).
func isBenchmarkN(x *ast.SelectorExpr) bool {
	id, ok := x.X.(*ast.Ident)
	if !ok || x.Sel.Name != "N" || id.Obj == nil {
		return false
	}
	f, ok := id.Obj.Decl.(*ast.Field)
	if !ok {
		return false
	}
	star, ok := f.Type.(*ast.StarExpr)
	if !ok {
		return false
	}
	sel, ok := star.X.(*ast.SelectorExpr)
	return ok && sel.Sel.Name == "B"
}

// isIntName says whether a name its file declares is an integer: a
// constant, a parameter, a variable set to one.
func isIntName(x *ast.Ident, depth int) bool {
	if x.Obj == nil {
		return false
	}
	switch d := x.Obj.Decl.(type) {
	case *ast.Field:
		t, ok := d.Type.(*ast.Ident)
		return ok && intTypes[t.Name]
	case *ast.ValueSpec:
		if t, ok := d.Type.(*ast.Ident); ok {
			return intTypes[t.Name]
		}
		for i, n := range d.Names {
			if n.Name == x.Name && i < len(d.Values) {
				return isInt(d.Values[i], depth+1)
			}
		}
	case *ast.AssignStmt:
		if len(d.Lhs) == len(d.Rhs) {
			for i, l := range d.Lhs {
				if id, ok := l.(*ast.Ident); ok && id.Name == x.Name {
					return isInt(d.Rhs[i], depth+1)
				}
			}
		}
	}
	return false
}

// rangeTargets records in s what its range statements range over that
// only other files can tell (symbols.rangeNames, rangeCalls), and its
// own package-level int constants and functions that return iterators.
func rangeTargets(f *ast.File, s *symbols) {
	own := s.own + ":" + f.Name.Name + "."
	ast.Inspect(f, func(n ast.Node) bool {
		r, ok := n.(*ast.RangeStmt)
		if !ok {
			return true
		}
		switch x := r.X.(type) {
		case *ast.Ident:
			if x.Obj == nil {
				s.rangeNames = append(s.rangeNames, own+x.Name)
			}
		case *ast.CallExpr:
			switch fn := x.Fun.(type) {
			case *ast.Ident:
				if fn.Obj == nil || fn.Obj.Kind == ast.Fun {
					s.rangeCalls = append(s.rangeCalls, fn.Name)
				}
			case *ast.SelectorExpr:
				s.rangeCalls = append(s.rangeCalls, fn.Sel.Name)
			}
		}
		return true
	})
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.GenDecl:
			if d.Tok != token.CONST {
				continue
			}
			for _, spec := range d.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if t, ok := vs.Type.(*ast.Ident); ok && intTypes[t.Name] || vs.Type == nil && i < len(vs.Values) && isInt(vs.Values[i], 0) {
						s.intConsts = append(s.intConsts, own+n.Name)
					}
				}
			}
		case *ast.FuncDecl:
			if d.Type.Results != nil && len(d.Type.Results.List) == 1 && returnsIterator(d.Type.Results.List[0].Type) {
				s.iterators = append(s.iterators, d.Name.Name)
			}
		}
	}
}

// returnsIterator says whether a result type is an iterator: iter.Seq,
// iter.Seq2, or a func(yield func(…) bool).
func returnsIterator(t ast.Expr) bool {
	switch x := t.(type) {
	case *ast.IndexExpr:
		return returnsIterator(x.X)
	case *ast.IndexListExpr:
		return returnsIterator(x.X)
	case *ast.SelectorExpr:
		id, ok := x.X.(*ast.Ident)
		return ok && id.Name == "iter" && (x.Sel.Name == "Seq" || x.Sel.Name == "Seq2")
	case *ast.FuncType:
		if x.Params == nil || len(x.Params.List) != 1 || x.Results != nil && len(x.Results.List) > 0 {
			return false
		}
		yield, ok := x.Params.List[0].Type.(*ast.FuncType)
		if !ok || yield.Results == nil || len(yield.Results.List) != 1 {
			return false
		}
		b, ok := yield.Results.List[0].Type.(*ast.Ident)
		return ok && b.Name == "bool"
	}
	return false
}

// iterator says whether a function is likely to return an iterator
// (iter.Seq): strings.SplitSeq, bytes.Lines, anything named …Seq. (The
// iterators of packages maps and slices need their import's version.)
func iterator(sel *ast.SelectorExpr) bool {
	name := sel.Sel.Name
	if x, ok := sel.X.(*ast.Ident); ok && (x.Name == "strings" || x.Name == "bytes") && name == "Lines" {
		return true
	}
	return strings.HasSuffix(name, "Seq") || strings.HasSuffix(name, "Seq2")
}

// printfNames are the functions of the standard library, and of common
// loggers, that go vet checks as printf wrappers.
var printfNames = []string{"Printf", "Sprintf", "Errorf", "Fprintf", "Fatalf", "Panicf", "Logf", "Skipf", "Debugf", "Infof",
	"Warnf", "Warningf", "Tracef"}

// vetsFormats says whether go.mod raises the go version past 1.24, from
// which go vet refuses a format that is not a constant with nothing to
// format.
func vetsFormats(baseGo, sourceGo string) bool {
	return version.Compare("go"+baseGo, "go1.24") < 0 && version.Compare("go"+sourceGo, "go1.24") >= 0
}

// printfWrappers are the names of the functions and methods of a tree's
// Go files (each read up to maxBlobRead) that take a format and its
// arguments: go vet checks their callers as it does fmt.Printf's.
func printfWrappers(ctx context.Context, st storer.EncodedObjectStorer, root *object.Tree) []string {
	found := map[string]bool{}
	walker := object.NewTreeWalker(root, true, nil)
	defer walker.Close()
	fset := token.NewFileSet()
	for ctx.Err() == nil {
		name, e, err := walker.Next()
		if err != nil {
			break
		}
		if !e.Mode.IsFile() || path.Ext(name) != ".go" {
			continue
		}
		src, err := readHead(st, e.Hash, maxBlobRead)
		if err != nil || !bytes.Contains(src, []byte("...interface{}")) && !bytes.Contains(src, []byte("...any")) {
			continue
		}
		f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
		if err != nil {
			continue
		}
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && takesFormat(fn.Type) {
				found[fn.Name.Name] = true
			}
		}
	}
	return sortedKeys(found)
}

// genericDecls are the keys of the declarations with type parameters.
func genericDecls(f *ast.File, own string, into map[string]bool) {
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil && d.Type.TypeParams != nil {
				into[own+d.Name.Name] = true
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				if t, ok := s.(*ast.TypeSpec); ok && t.TypeParams != nil {
					into[own+t.Name.Name] = true
				}
			}
		}
	}
}

// defaultImportName guesses the name a package is imported under when
// the file gives none: the last element of its path, without a major
// version suffix (/v5, .v1) or a go- prefix (go-billy → billy).
func defaultImportName(p string) string {
	parts := strings.Split(p, "/")
	name := parts[len(parts)-1]
	if len(parts) > 1 && len(name) > 1 && name[0] == 'v' && strings.Trim(name[1:], "0123456789") == "" {
		name = parts[len(parts)-2]
	}
	if i := strings.Index(name, ".v"); i > 0 {
		name = name[:i]
	}
	name = strings.TrimPrefix(name, "go-")
	name = strings.TrimSuffix(name, "-go")
	return strings.NewReplacer("-", "", ".", "").Replace(name)
}

// moduleEdges adds the module edges (above) between go.mod and the
// changed Go files, from their parsed versions.
func moduleEdges(c *Change, base, source []fileVersion, need func(from, to, why string)) {
	m := &moduleTies{c: c, base: base, source: source, need: need, baseGo: c.baseMod.goVersion, sourceGo: c.sourceMod.goVersion,
		usedAtBase: map[string]bool{}, generic: map[string]bool{}, intConst: map[string]bool{}, iterFunc: map[string]bool{}}
	m.droppedModules()
	if vetsFormats(m.baseGo, m.sourceGo) {
		m.formats()
	}
	m.index()
	for _, v := range source {
		why := ""
		if m.newer(m.sourceGo) {
			why = m.langWhy(v)
		}
		if why == "" {
			why = m.requireWhy(v)
		}
		if why != "" {
			need(v.file, moduleUnit, "needs the new go.mod: "+why)
		}
	}
}

// moduleTies works out moduleEdges: the changed Go files at both ends,
// the go directives, and what the source's files tell of each other.
type moduleTies struct {
	c                *Change
	base, source     []fileVersion
	need             func(from, to, why string)
	baseGo, sourceGo string
	// usedAtBase are the "import/path.Name" an old version selects;
	// generic the generic declarations of the source; intConst and
	// iterFunc its int constants and functions that return iterators
	// (what only the other files tell).
	usedAtBase, generic, intConst, iterFunc map[string]bool
}

// droppedModules: the old version of a file that imports a module that
// go.mod drops comes no later than go.mod.
func (m *moduleTies) droppedModules() {
	for _, v := range m.base {
		for _, imp := range v.syms.extImports {
			for _, d := range m.c.Dropped {
				if imp == d || strings.HasPrefix(imp, d+"/") {
					m.need(moduleUnit, v.file, fmt.Sprintf("the old %s imports %s, whose module go.mod drops: go.mod comes with it or after it", v.file, imp))
				}
			}
		}
	}
}

// formats: from Go 1.24 go vet refuses a format that is not a constant
// with nothing to format: old code that has one must change before
// go.mod raises the version.
func (m *moduleTies) formats() {
	wrappers := map[string]bool{}
	for _, n := range append(printfNames, m.c.printfWrappers...) {
		wrappers[n] = true
	}
	for _, versions := range [][]fileVersion{m.base, m.source} {
		for _, v := range versions {
			for _, n := range v.syms.printf {
				wrappers[n] = true
			}
		}
	}
	for _, v := range m.base {
		for _, n := range sortedKeys(v.syms.formatCalls) {
			if wrappers[n] {
				m.need(moduleUnit, v.file, fmt.Sprintf("the old %s calls %s with a format that is not a constant, which go vet refuses from Go 1.24 (go.mod goes from go %s to go %s): go.mod comes with it or after it", v.file, n, m.baseGo, m.sourceGo))
				break
			}
		}
	}
}

func (m *moduleTies) index() {
	for _, v := range m.base {
		for k := range v.syms.ext {
			m.usedAtBase[k] = true
		}
	}
	for _, v := range m.source {
		for k := range v.syms.generic {
			m.generic[k] = true
		}
	}
	for _, k := range m.c.intConsts {
		m.intConst[k] = true
	}
	for _, v := range m.source {
		for _, k := range v.syms.intConsts {
			m.intConst[k] = true
		}
		for _, n := range v.syms.iterators {
			m.iterFunc[n] = true
		}
	}
}

// newer says whether Go version v is newer than the base's go directive.
func (m *moduleTies) newer(v string) bool { return version.Compare("go"+v, "go"+m.baseGo) > 0 }

// langWhy says why a file needs the source's go directive: what it uses
// of a Go newer than the base's; "" for nothing.
func (m *moduleTies) langWhy(v fileVersion) string {
	if v.syms.lang != "" && m.newer(v.syms.lang) {
		return fmt.Sprintf("it uses %s (Go %s), and the base's go.mod says go %s", v.syms.langWhat, v.syms.lang, m.baseGo)
	}
	for _, k := range v.syms.rangeNames {
		if m.intConst[k] && m.newer("1.22") {
			return fmt.Sprintf("it ranges over the integer %s (Go 1.22), and the base's go.mod says go %s", displayKey(k), m.baseGo)
		}
	}
	for _, n := range v.syms.rangeCalls {
		if m.iterFunc[n] && m.newer("1.23") {
			return fmt.Sprintf("it ranges over the iterator %s returns (Go 1.23), and the base's go.mod says go %s", n, m.baseGo)
		}
	}
	for _, k := range sortedKeys(v.syms.refs) {
		if m.generic[k] && m.newer("1.18") {
			return fmt.Sprintf("it uses the generic %s (Go 1.18), and the base's go.mod says go %s", displayKey(k), m.baseGo)
		}
	}
	return ""
}

// requireWhy says why a file needs the source's requirements: it
// imports a module go.mod adds, or uses what an old version did not of
// one it moves; "" for nothing.
func (m *moduleTies) requireWhy(v fileVersion) string {
	for _, imp := range v.syms.extImports {
		mod := m.c.sourceMod.moduleOf(imp)
		if mod == "" {
			continue
		}
		was, now := m.c.baseMod.require[mod], m.c.sourceMod.require[mod]
		switch {
		case was == "":
			return fmt.Sprintf("it imports %s, whose module %s go.mod adds", imp, mod)
		case was != now && v.syms.extUnknown[imp]:
			return fmt.Sprintf("it imports %s (which names it uses cannot be told), and go.mod moves %s from %s to %s", imp, mod, was, now)
		case was != now:
			for _, k := range sortedKeys(v.syms.ext) {
				if p, _ := splitExt(k); p == imp && !m.usedAtBase[k] {
					return fmt.Sprintf("it uses %s, which no changed file used at the base, and go.mod moves %s from %s to %s", k, mod, was, now)
				}
			}
		}
	}
	return ""
}

// splitExt splits "import/path.Name".
func splitExt(k string) (importPath, name string) {
	i := strings.LastIndexByte(k, '.')
	if slash := strings.LastIndexByte(k, '/'); i < slash {
		return k, ""
	}
	return k[:i], k[i+1:]
}

// stdlib says whether an import path is of the standard library (its
// first element has no dot).
func stdlib(p string) bool {
	first, _, _ := strings.Cut(p, "/")
	return !strings.Contains(first, ".")
}

// externalRefs records in s the imports from outside the module and the
// names a file selects from each: how it uses another module.
func externalRefs(f *ast.File, s *symbols, dirOf func(string) string, unresolved map[*ast.Ident]bool) {
	named := map[string]string{} // the name a file gives an import → its path
	for _, imp := range f.Imports {
		p, err := strconv.Unquote(imp.Path.Value)
		if err != nil || stdlib(p) || dirOf(p) != "" {
			continue
		}
		s.extImports = append(s.extImports, p)
		n := defaultImportName(p)
		if imp.Name != nil {
			n = imp.Name.Name
		}
		switch n {
		case "_":
		case ".":
			s.extUnknown[p] = true
		default:
			named[n] = p
		}
	}
	matched := map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if x, ok := sel.X.(*ast.Ident); ok && unresolved[x] {
				if p, ok := named[x.Name]; ok {
					s.ext[p+"."+sel.Sel.Name] = true
					matched[p] = true
				}
			}
		}
		return true
	})
	for _, p := range named {
		if !matched[p] {
			// Imported under a name the guess missed: what it uses
			// cannot be told.
			s.extUnknown[p] = true
		}
	}
	sort.Strings(s.extImports)
}

// moduleFileNode is the go.mod a cut unit orders as one of its files,
// with go.sum, when the module edges order it.
func isRootModuleFile(p string) bool {
	return path.Dir(p) == "." && isModuleFile(p)
}
