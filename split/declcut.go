package split

import (
	"container/heap"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/wo-runner/wo/internal/fileparts"
)

// A cycle of new files too large for one PR is cut along its
// declarations: each part brings whole declarations of the files (with
// the imports they use), after the declarations they need, and the file
// is whole in the part that completes it. Which declaration needs which
// comes from the type checker run on the package alone, its imports
// standing for nothing: a name, a field or a method of the package used,
// a method's receiver, and the methods a value of the package's type
// needs where it becomes an interface (those the interface names, or,
// where the checker cannot tell the target, every method and
// those of the types it embeds). What the checker cannot resolve is tied
// by name, to every declaration of that name, as the files are.

// declCut cuts the files of cycle (paths into files, all added) into
// parts of at most budget lines each where the declarations allow, the
// first of at most room (what is left of the part being filled). It
// returns no parts, and why, when the files cannot be cut this way.
func declCut(cycle []string, files map[string]parsedFile, budget, room int) ([][]File, string) {
	dc, why := newDeclCutter(cycle, files)
	if why != "" {
		return nil, why
	}
	dc.link()
	return dc.cut(budget, room), ""
}

// declNode is one top-level declaration of a file of the cycle.
type declNode struct {
	decl     ast.Decl
	file     int
	from, to int // its lines, doc comment and the blank line after it included
	imports  []int
	names    []string // the package-level names, methods (Type.M) and fields it declares
	needs    []int
}

// cutFile is a file of the cycle: its lines and what of them every part
// of it keeps.
type cutFile struct {
	File
	lines   []string
	header  int // the lines up to the package clause
	imports []importLines
	decls   []int
}

// importLines are an import's lines, and the lines that open and close
// its block.
type importLines struct {
	open, close, from, to int
	always                bool // a blank import: its effect is not a name
}

type declCutter struct {
	fset  *token.FileSet
	files []*cutFile
	asts  []*ast.File
	nodes []*declNode
	info  *types.Info
	pkg   *types.Package
	// byName are the declarations of each name (T, T.M, f); byShort of
	// each last part of a name (M of T.M).
	byName, byShort map[string][]int
}

func newDeclCutter(cycle []string, files map[string]parsedFile) (*declCutter, string) {
	dc := &declCutter{fset: token.NewFileSet(), byName: map[string][]int{}, byShort: map[string][]int{}}
	dir, pkgName := files[cycle[0]].Dir(), files[cycle[0]].pkg
	var others []*ast.File
	for _, name := range sortedKeys(files) {
		f := files[name]
		if f.Dir() != dir || f.pkg != pkgName || strings.HasSuffix(name, "_test.go") || name == moduleUnit {
			continue
		}
		a, err := parser.ParseFile(dc.fset, name, f.src, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return nil, fmt.Sprintf("%s does not parse", name)
		}
		if !slices.Contains(cycle, name) {
			if !constrained(name, a) {
				others = append(others, a)
			}
			continue
		}
		if f.Kind != "added" {
			return nil, fmt.Sprintf("%s is not new (a modified file is cut whole)", name)
		}
		if constrained(name, a) {
			return nil, fmt.Sprintf("%s builds only for some systems", name)
		}
		cf, why := dc.readFile(f.File, a)
		if why != "" {
			return nil, why
		}
		dc.files = append(dc.files, cf)
		dc.asts = append(dc.asts, a)
	}
	dc.info = &types.Info{Types: map[ast.Expr]types.TypeAndValue{}, Defs: map[*ast.Ident]types.Object{}, Uses: map[*ast.Ident]types.Object{},
		Implicits: map[ast.Node]types.Object{}, Selections: map[*ast.SelectorExpr]*types.Selection{}, Instances: map[*ast.Ident]types.Instance{}}
	conf := types.Config{Importer: emptyImporter{}, Error: func(error) {}, FakeImportC: true}
	dc.pkg, _ = conf.Check(pkgName, dc.fset, append(slices.Clone(dc.asts), others...), dc.info)
	// Every import of the source is used: one that looks unused here
	// has a package name other than its path's (an import the checker
	// cannot tell apart), and what a declaration uses of it is unknown.
	// (The checker leaves some code unvisited, a type switch on what it
	// cannot type: a name there that is an import's is a use of it.)
	for i, a := range dc.asts {
		used := map[types.Object]bool{}
		unresolved := map[string]bool{}
		ast.Inspect(a, func(x ast.Node) bool {
			if id, ok := x.(*ast.Ident); ok {
				if obj, ok := dc.info.Uses[id].(*types.PkgName); ok {
					used[obj] = true
				} else if dc.unresolved(id) {
					unresolved[id.Name] = true
				}
			}
			return true
		})
		for _, spec := range a.Imports {
			if name := importName(spec); name != "_" && !used[dc.importObj(spec)] && !unresolved[name] {
				return nil, fmt.Sprintf("%s imports %s under a name its path does not tell", dc.files[i].Path, spec.Path.Value)
			}
		}
	}
	return dc, ""
}

// constrained says whether a file builds only for some systems or tags.
func constrained(name string, a *ast.File) bool {
	for _, g := range a.Comments {
		if g.Pos() > a.Package {
			break
		}
		for _, c := range g.List {
			if strings.HasPrefix(c.Text, "//go:build") || strings.HasPrefix(c.Text, "// +build") {
				return true
			}
		}
	}
	parts := strings.Split(strings.TrimSuffix(path.Base(name), ".go"), "_")
	last := parts[len(parts)-1]
	return len(parts) > 1 && (knownOS[last] || knownArch[last])
}

var knownOS = map[string]bool{"aix": true, "android": true, "darwin": true, "dragonfly": true, "freebsd": true, "hurd": true, "illumos": true,
	"ios": true, "js": true, "linux": true, "nacl": true, "netbsd": true, "openbsd": true, "plan9": true, "solaris": true, "wasip1": true, "windows": true, "zos": true}

var knownArch = map[string]bool{"386": true, "amd64": true, "arm": true, "arm64": true, "loong64": true, "mips": true, "mipsle": true, "mips64": true,
	"mips64le": true, "ppc64": true, "ppc64le": true, "riscv64": true, "s390x": true, "wasm": true}

// emptyImporter stands an empty package for every import: the cut needs
// what the package's own declarations use of each other, and nothing
// outside the change is read for it.
type emptyImporter struct{}

func (emptyImporter) Import(p string) (*types.Package, error) {
	pkg := types.NewPackage(p, guessName(p))
	pkg.MarkComplete()
	return pkg, nil
}

// guessName is the package name an import path most likely has: its
// last element, without a major version, a ".vN" or a "go-" prefix.
func guessName(p string) string {
	elems := strings.Split(p, "/")
	name := elems[len(elems)-1]
	if len(elems) > 1 && len(name) > 1 && name[0] == 'v' && strings.Trim(name[1:], "0123456789") == "" {
		name = elems[len(elems)-2]
	}
	if i := strings.Index(name, ".v"); i > 0 {
		name = name[:i]
	}
	name = strings.TrimPrefix(strings.TrimPrefix(name, "go-"), "go.")
	return strings.Map(func(r rune) rune {
		if r == '-' || r == '.' {
			return -1
		}
		return r
	}, name)
}

func importName(spec *ast.ImportSpec) string {
	if spec.Name != nil {
		return spec.Name.Name
	}
	p, _ := strconv.Unquote(spec.Path.Value)
	return guessName(p)
}

func (dc *declCutter) importObj(spec *ast.ImportSpec) types.Object {
	if spec.Name != nil {
		return dc.info.Defs[spec.Name]
	}
	return dc.info.Implicits[spec]
}

// readFile reads a file's lines: the header, each import and each
// declaration on lines of its own, or the file cannot be cut.
func (dc *declCutter) readFile(f File, a *ast.File) (*cutFile, string) {
	cf := &cutFile{File: f, lines: strings.SplitAfter(string(f.src), "\n")}
	if cf.lines[len(cf.lines)-1] == "" {
		cf.lines = cf.lines[:len(cf.lines)-1]
	}
	line := func(p token.Pos) int { return dc.fset.PositionFor(p, false).Line }
	cf.header = line(a.Name.End())
	taken := map[int]int{} // the line's owner, from 1 (the header's lines: -1)
	owners := 0
	take := func(from, to int) bool {
		owners++
		for l := from; l <= to; l++ {
			if taken[l] != 0 || l <= cf.header {
				return false
			}
			taken[l] = owners
		}
		return true
	}
	// The blank line after a declaration goes with it.
	blankAfter := func(to int) int {
		if to < len(cf.lines) && strings.TrimSpace(cf.lines[to]) == "" {
			return to + 1
		}
		return to
	}
	for _, d := range a.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.IMPORT {
			open, close := line(g.Lparen), line(g.Rparen)
			if !g.Lparen.IsValid() {
				open, close = 0, 0
			} else if !take(open, open) || !take(close, close) {
				return nil, fmt.Sprintf("%s has an import block that shares its lines", f.Path)
			}
			for _, s := range g.Specs {
				spec := s.(*ast.ImportSpec)
				name := importName(spec)
				if name == "." || spec.Path.Value == `"C"` {
					return nil, fmt.Sprintf("%s imports %s, whose uses cannot be told", f.Path, spec.Path.Value)
				}
				from, to := line(spec.Pos()), line(spec.End())
				if spec.Doc != nil {
					from = line(spec.Doc.Pos())
				}
				if !g.Lparen.IsValid() {
					from, to = line(g.Pos()), blankAfter(line(g.End()))
				}
				if !take(from, to) {
					return nil, fmt.Sprintf("%s has imports that share a line", f.Path)
				}
				cf.imports = append(cf.imports, importLines{open: open, close: close, from: from, to: to, always: name == "_"})
			}
			continue
		}
		from, to := line(d.Pos()), blankAfter(line(d.End()))
		if doc := declDoc(d); doc != nil {
			from = line(doc.Pos())
		}
		if !take(from, to) {
			return nil, fmt.Sprintf("%s has declarations that share a line", f.Path)
		}
		cf.decls = append(cf.decls, len(dc.nodes))
		dc.nodes = append(dc.nodes, &declNode{decl: d, file: len(dc.files), from: from, to: to})
	}
	// A comment over several lines is on the lines of one owner, or
	// a part would have half of it.
	for l := 1; l <= cf.header; l++ {
		taken[l] = -1
	}
	for _, g := range a.Comments {
		for _, c := range g.List {
			from, to := line(c.Pos()), line(c.End())
			for l := from + 1; l <= to; l++ {
				if taken[l] != taken[from] {
					return nil, fmt.Sprintf("%s has a comment that shares lines with a declaration it is not part of", f.Path)
				}
			}
		}
	}
	return cf, ""
}

func declDoc(d ast.Decl) *ast.CommentGroup {
	switch d := d.(type) {
	case *ast.FuncDecl:
		return d.Doc
	case *ast.GenDecl:
		return d.Doc
	}
	return nil
}

// content is the file with the declarations in keep: its header, the
// imports they use and the declarations, as lines of the file, and
// all of them is the file whole.
func (cf *cutFile) content(keep map[int]bool, dc *declCutter) (lines []int) {
	want := map[int]bool{}
	for l := 1; l <= cf.header; l++ {
		want[l] = true
	}
	needed := map[int]bool{}
	for _, n := range cf.decls {
		if keep[n] {
			for l := dc.nodes[n].from; l <= dc.nodes[n].to; l++ {
				want[l] = true
			}
			for _, i := range dc.nodes[n].imports {
				needed[i] = true
			}
		}
	}
	for i, im := range cf.imports {
		if needed[i] || im.always {
			for l := im.from; l <= im.to; l++ {
				want[l] = true
			}
			if im.open > 0 {
				want[im.open], want[im.close] = true, true
			}
		}
	}
	for l := range want {
		if l <= len(cf.lines) {
			lines = append(lines, l)
		}
	}
	sort.Ints(lines)
	return lines
}

// link finds what each declaration needs.
func (dc *declCutter) link() {
	nodeAt := func(p token.Pos) int {
		for i, a := range dc.asts {
			if dc.fset.File(a.Pos()) != dc.fset.File(p) {
				continue
			}
			l := dc.fset.PositionFor(p, false).Line
			for _, n := range dc.files[i].decls {
				if dc.nodes[n].from <= l && l <= dc.nodes[n].to {
					return n
				}
			}
		}
		return -1
	}
	for n, node := range dc.nodes {
		node.names = declNames(node.decl)
		for _, name := range node.names {
			dc.byName[name] = append(dc.byName[name], n)
			_, short, ok := strings.Cut(name, ".")
			if !ok {
				short = name
			}
			dc.byShort[short] = append(dc.byShort[short], n)
		}
	}
	for n, node := range dc.nodes {
		need := map[int]bool{}
		dc.uses(n, nodeAt, need)
		(&flows{dc: dc, need: need}).walk(node.decl)
		delete(need, n)
		for m := range need {
			if m >= 0 {
				node.needs = append(node.needs, m)
			}
		}
		sort.Ints(node.needs)
	}
	for i, cf := range dc.files {
		for _, n := range cf.decls {
			dc.directives(n, i)
		}
	}
}

// declNames are the names a declaration declares at package level, its
// methods as Type.M and its struct fields as Type.F.
func declNames(d ast.Decl) []string {
	var names []string
	switch d := d.(type) {
	case *ast.FuncDecl:
		if d.Recv != nil && len(d.Recv.List) == 1 {
			return []string{receiverType(d.Recv.List[0].Type) + "." + d.Name.Name}
		}
		return []string{d.Name.Name}
	case *ast.GenDecl:
		for _, s := range d.Specs {
			switch s := s.(type) {
			case *ast.TypeSpec:
				names = append(names, s.Name.Name)
				if st, ok := s.Type.(*ast.StructType); ok {
					for _, f := range st.Fields.List {
						for _, n := range f.Names {
							names = append(names, s.Name.Name+"."+n.Name)
						}
						if len(f.Names) == 0 {
							names = append(names, s.Name.Name+"."+receiverType(f.Type))
						}
					}
				}
				if it, ok := s.Type.(*ast.InterfaceType); ok {
					for _, f := range it.Methods.List {
						for _, n := range f.Names {
							names = append(names, s.Name.Name+"."+n.Name)
						}
					}
				}
			case *ast.ValueSpec:
				for _, n := range s.Names {
					names = append(names, n.Name)
				}
			}
		}
	}
	return names
}

// uses adds the declarations whose names, fields and methods d uses, and
// its receiver's type; a name the checker did not resolve needs every
// declaration of that name.
func (dc *declCutter) uses(n int, nodeAt func(token.Pos) int, need map[int]bool) {
	d, file := dc.nodes[n].decl, dc.nodes[n].file
	qualified := map[*ast.Ident]bool{} // Sel of pkg.Sel: a name of another package
	ast.Inspect(d, func(x ast.Node) bool {
		if sel, ok := x.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok {
				if _, isImport := dc.info.Uses[id].(*types.PkgName); isImport {
					qualified[sel.Sel] = true
				}
			}
		}
		id, ok := x.(*ast.Ident)
		if !ok || qualified[id] {
			return true
		}
		if obj, ok := dc.info.Uses[id]; ok {
			if obj.Pkg() == dc.pkg && (obj.Parent() == dc.pkg.Scope() || isMember(obj)) {
				need[nodeAt(obj.Pos())] = true
			}
			if _, isImport := obj.(*types.PkgName); isImport {
				dc.useImport(n, file, obj)
			}
			return true
		}
		if !dc.unresolved(id) {
			return true
		}
		for i, spec := range dc.asts[file].Imports {
			if importName(spec) == id.Name && !slices.Contains(dc.nodes[n].imports, i) {
				dc.nodes[n].imports = append(dc.nodes[n].imports, i)
			}
		}
		for _, m := range dc.byShort[id.Name] {
			need[m] = true
		}
		return true
	})
}

// unresolved says whether the checker left a name unresolved: neither a
// use nor a declaration.
func (dc *declCutter) unresolved(id *ast.Ident) bool {
	_, used := dc.info.Uses[id]
	return !used && dc.info.Defs[id] == nil && id.Name != "_"
}

// directiveImports are the imports a directive in a file asks for,
// whether or not the file names them.
var directiveImports = map[string]string{"//go:embed": `"embed"`, "//go:linkname": `"unsafe"`}

// directives adds to node n the imports its directives ask for: a
// //go:embed var builds only in a file importing embed, a //go:linkname
// only in one importing unsafe. A blank import is always kept; a named
// one builds only where a declaration uses it, so n needs those that do.
func (dc *declCutter) directives(n, file int) {
	for _, g := range dc.asts[file].Comments {
		for _, c := range g.List {
			l := dc.fset.PositionFor(c.Pos(), false).Line
			if l < dc.nodes[n].from || l > dc.nodes[n].to {
				continue
			}
			word, _, _ := strings.Cut(c.Text, " ")
			want, ok := directiveImports[word]
			if !ok {
				continue
			}
			for i, spec := range dc.asts[file].Imports {
				if spec.Path.Value != want || importName(spec) == "_" {
					continue
				}
				for _, m := range dc.files[file].decls {
					if m != n && slices.Contains(dc.nodes[m].imports, i) && !slices.Contains(dc.nodes[n].needs, m) {
						dc.nodes[n].needs = append(dc.nodes[n].needs, m)
					}
				}
				sort.Ints(dc.nodes[n].needs)
			}
		}
	}
}

func (dc *declCutter) useImport(n, file int, obj types.Object) {
	for i, spec := range dc.asts[file].Imports {
		if dc.importObj(spec) == obj && !slices.Contains(dc.nodes[n].imports, i) {
			dc.nodes[n].imports = append(dc.nodes[n].imports, i)
		}
	}
}

// isMember says whether obj is a method or a field.
func isMember(obj types.Object) bool {
	switch o := obj.(type) {
	case *types.Func:
		sig, _ := o.Type().(*types.Signature)
		return sig != nil && sig.Recv() != nil
	case *types.Var:
		return o.IsField()
	}
	return false
}

// flows finds where a value of the package's types becomes an interface
// (an argument, a result, an assignment, an element, a send, a
// comparison, an assertion) and adds the methods that needs.
type flows struct {
	dc      *declCutter
	need    map[int]bool
	results []*types.Tuple // of the functions being walked, innermost last
}

func (fl *flows) walk(d ast.Decl) {
	// A generic type or function instantiated anywhere in d (a
	// signature included) needs of each type argument what its
	// constraint asks.
	ast.Inspect(d, func(x ast.Node) bool {
		if id, ok := x.(*ast.Ident); ok {
			fl.instance(id)
		}
		return true
	})
	ast.Inspect(d, func(x ast.Node) bool {
		switch x := x.(type) {
		case *ast.FuncDecl, *ast.FuncLit:
			var sig *types.Signature
			if fd, ok := x.(*ast.FuncDecl); ok {
				if obj := fl.dc.info.Defs[fd.Name]; obj != nil {
					sig, _ = obj.Type().(*types.Signature)
				}
			} else {
				sig, _ = fl.dc.info.Types[x.(*ast.FuncLit)].Type.(*types.Signature)
			}
			var res *types.Tuple
			if sig != nil {
				res = sig.Results()
			}
			inner := &flows{dc: fl.dc, need: fl.need, results: append(slices.Clone(fl.results), res)}
			switch x := x.(type) {
			case *ast.FuncDecl:
				if x.Body != nil {
					inner.walkNode(x.Body)
				}
			case *ast.FuncLit:
				inner.walkNode(x.Body)
			}
			return false
		}
		fl.site(x)
		return true
	})
}

// instance: an instantiation's type arguments become their constraints.
func (fl *flows) instance(id *ast.Ident) {
	inst, ok := fl.dc.info.Instances[id]
	if !ok || inst.TypeArgs == nil {
		return
	}
	var params *types.TypeParamList
	switch o := fl.dc.info.Uses[id].(type) {
	case *types.TypeName:
		if n, ok := types.Unalias(o.Type()).(*types.Named); ok {
			params = n.TypeParams()
		}
	case *types.Func:
		if sig, ok := o.Type().(*types.Signature); ok {
			params = sig.TypeParams()
		}
	}
	for i := 0; params != nil && i < params.Len() && i < inst.TypeArgs.Len(); i++ {
		if c, ok := params.At(i).Constraint().Underlying().(*types.Interface); ok && c.NumMethods() == 0 && !unknownEmbeds(c) {
			continue // any, comparable, a union: no method asked
		}
		fl.need2(inst.TypeArgs.At(i), params.At(i).Constraint())
	}
}

// unknownEmbeds says whether an interface embeds what the checker could
// not tell (an imported interface).
func unknownEmbeds(u *types.Interface) bool {
	for i := 0; i < u.NumEmbeddeds(); i++ {
		if u.EmbeddedType(i) == unknown || u.EmbeddedType(i).Underlying() == unknown {
			return true
		}
	}
	return false
}

func (fl *flows) walkNode(n ast.Node) {
	ast.Inspect(n, func(x ast.Node) bool {
		if lit, ok := x.(*ast.FuncLit); ok {
			sig, _ := fl.dc.info.Types[lit].Type.(*types.Signature)
			var res *types.Tuple
			if sig != nil {
				res = sig.Results()
			}
			(&flows{dc: fl.dc, need: fl.need, results: append(slices.Clone(fl.results), res)}).walkNode(lit.Body)
			return false
		}
		fl.site(x)
		return true
	})
}

func (fl *flows) typeOf(e ast.Expr) types.Type {
	if tv, ok := fl.dc.info.Types[e]; ok {
		return tv.Type
	}
	if id, ok := e.(*ast.Ident); ok {
		if obj := fl.dc.info.Uses[id]; obj != nil {
			return obj.Type()
		}
		if obj := fl.dc.info.Defs[id]; obj != nil {
			return obj.Type()
		}
	}
	return nil
}

// exprType is e's type, or the type it names, where the checker did not
// record it (the type arguments of an import's generic).
func (fl *flows) exprType(e ast.Expr) types.Type {
	if t := fl.typeOf(e); t != nil {
		return t
	}
	switch e := e.(type) {
	case *ast.ParenExpr:
		return fl.exprType(e.X)
	case *ast.StarExpr:
		if t := fl.exprType(e.X); t != nil {
			return types.NewPointer(t)
		}
	case *ast.Ident:
		if tn, ok := fl.dc.pkg.Scope().Lookup(e.Name).(*types.TypeName); ok {
			return tn.Type()
		}
	}
	return nil
}

// targetOf is e's type as a target: unknown where the checker recorded
// none (an import's variable, which stands for nothing).
func (fl *flows) targetOf(e ast.Expr) types.Type {
	if t := fl.typeOf(e); t != nil {
		return t
	}
	return unknown
}

// unknown stands for a target the checker could not tell.
var unknown = types.Typ[types.Invalid]

func (fl *flows) site(x ast.Node) {
	switch x := x.(type) {
	case *ast.CallExpr:
		fl.call(x)
	case *ast.ReturnStmt:
		fl.ret(x)
	case *ast.AssignStmt:
		fl.assign(x)
	case *ast.ValueSpec:
		if x.Type != nil {
			t := fl.typeOf(x.Type)
			targets := make([]types.Type, len(x.Names))
			for i := range targets {
				targets[i] = t
			}
			fl.flowAll(x.Values, targets)
		}
	case *ast.CompositeLit:
		fl.composite(x)
	case *ast.SendStmt:
		if ch, ok := under(fl.typeOf(x.Chan)).(*types.Chan); ok {
			fl.flow(x.Value, ch.Elem())
		} else {
			fl.flow(x.Value, unknown)
		}
	case *ast.BinaryExpr:
		if x.Op == token.EQL || x.Op == token.NEQ {
			fl.flow(x.X, fl.targetOf(x.Y))
			fl.flow(x.Y, fl.targetOf(x.X))
		}
	case *ast.TypeAssertExpr:
		if x.Type != nil {
			fl.need2(fl.typeOf(x.Type), fl.targetOf(x.X))
		}
	case *ast.TypeSwitchStmt:
		fl.typeSwitch(x)
	case *ast.SwitchStmt:
		fl.switchCases(x)
	case *ast.RangeStmt:
		if x.Tok == token.ASSIGN {
			fl.rangeInto(x)
		}
	case *ast.IndexExpr, *ast.IndexListExpr:
		fl.index(x.(ast.Expr))
	}
}

// assign: each value becomes its variable's type (a new variable takes
// the value's).
func (fl *flows) assign(x *ast.AssignStmt) {
	var targets []types.Type
	for _, l := range x.Lhs {
		t := fl.typeOf(l)
		id, isIdent := l.(*ast.Ident)
		switch {
		case isIdent && (fl.dc.info.Defs[id] != nil || id.Name == "_"):
			t = nil // a new variable takes the value's type
		case t == nil:
			t = unknown // an element or field of what the checker cannot type
		}
		targets = append(targets, t)
	}
	fl.flowAll(x.Rhs, targets)
}

// switchCases: each case is compared with the tag.
func (fl *flows) switchCases(x *ast.SwitchStmt) {
	if x.Tag == nil {
		return
	}
	for _, c := range x.Body.List {
		for _, e := range c.(*ast.CaseClause).List {
			fl.flow(e, fl.targetOf(x.Tag))
			fl.flow(x.Tag, fl.targetOf(e))
		}
	}
}

// index: a map's key becomes its key type; an index into what the
// checker cannot type (an import's map or generic) needs what is unknown.
func (fl *flows) index(x ast.Expr) {
	switch x := x.(type) {
	case *ast.IndexExpr:
		switch t := under(fl.typeOf(x.X)); t := t.(type) {
		case *types.Map:
			fl.flow(x.Index, t.Key())
		case nil:
			fl.need2(fl.exprType(x.Index), unknown) // an import's map or generic, maybe
		default:
			if t == unknown {
				fl.need2(fl.exprType(x.Index), unknown)
			}
		}
	case *ast.IndexListExpr:
		// An import's generic: what its constraints ask is unknown.
		if t := under(fl.typeOf(x.X)); t == nil || t == unknown {
			for _, e := range x.Indices {
				fl.need2(fl.exprType(e), unknown)
			}
		}
	}
}

// call: the arguments become the parameters (a conversion's its type; an
// unknown function's, unknown).
func (fl *flows) call(x *ast.CallExpr) {
	tv := fl.dc.info.Types[x.Fun]
	switch {
	case tv.IsType():
		if len(x.Args) == 1 {
			fl.flow(x.Args[0], tv.Type)
		}
		return
	case tv.IsBuiltin():
		fl.builtin(x)
		return
	}
	sig, _ := under(tv.Type).(*types.Signature)
	if sig == nil || fl.generic(x.Fun) {
		for _, a := range x.Args {
			fl.flow(a, unknown)
		}
	}
	if sig == nil {
		return
	}
	params := sig.Params()
	for i, a := range x.Args {
		switch {
		case sig.Variadic() && i >= params.Len()-1 && x.Ellipsis == token.NoPos:
			if s, ok := params.At(params.Len() - 1).Type().(*types.Slice); ok {
				fl.flow(a, s.Elem())
			}
		case i < params.Len():
			fl.flow(a, params.At(i).Type())
		case len(x.Args) == 1 && params.Len() > 1:
			fl.flowTuple(a, params)
		}
	}
}

// builtin: append's elements become the slice's, panic's value an
// empty interface.
func (fl *flows) builtin(x *ast.CallExpr) {
	id, ok := ast.Unparen(x.Fun).(*ast.Ident)
	if !ok {
		return
	}
	switch {
	case id.Name == "append" && len(x.Args) > 1 && x.Ellipsis == token.NoPos:
		// A slice the checker cannot type (an import's) may hold an
		// interface: its elements' target is unknown.
		elem := types.Type(unknown)
		if s, ok := under(fl.typeOf(x.Args[0])).(*types.Slice); ok {
			elem = s.Elem()
		}
		for _, a := range x.Args[1:] {
			fl.flow(a, elem)
		}
	case id.Name == "delete" && len(x.Args) == 2:
		key := types.Type(unknown)
		if m, ok := under(fl.typeOf(x.Args[0])).(*types.Map); ok {
			key = m.Key()
		}
		fl.flow(x.Args[1], key)
	case id.Name == "panic" && len(x.Args) == 1:
		fl.flow(x.Args[0], types.NewInterfaceType(nil, nil))
	}
}

// ret: the results become the function's.
func (fl *flows) ret(x *ast.ReturnStmt) {
	if len(fl.results) == 0 || fl.results[len(fl.results)-1] == nil {
		return
	}
	res := fl.results[len(fl.results)-1]
	if len(x.Results) == res.Len() {
		for i, r := range x.Results {
			fl.flow(r, res.At(i).Type())
		}
	} else if len(x.Results) == 1 {
		fl.flowTuple(x.Results[0], res)
	}
}

// rangeInto: a range assigning to variables declared before it makes
// its keys and elements their types.
func (fl *flows) rangeInto(x *ast.RangeStmt) {
	var key, elem types.Type
	t := under(fl.typeOf(x.X))
	if p, ok := t.(*types.Pointer); ok {
		t = under(p.Elem())
	}
	switch u := t.(type) {
	case *types.Slice:
		elem = u.Elem()
	case *types.Array:
		elem = u.Elem()
	case *types.Map:
		key, elem = u.Key(), u.Elem()
	case *types.Chan:
		key = u.Elem()
	}
	if x.Key != nil && key != nil {
		fl.need2(key, fl.typeOf(x.Key))
	}
	if x.Value != nil && elem != nil {
		fl.need2(elem, fl.typeOf(x.Value))
	}
}

// typeSwitch: each case's type must be one the switched value can hold.
func (fl *flows) typeSwitch(x *ast.TypeSwitchStmt) {
	var subject ast.Expr
	switch a := x.Assign.(type) {
	case *ast.AssignStmt:
		subject = a.Rhs[0].(*ast.TypeAssertExpr).X
	case *ast.ExprStmt:
		subject = a.X.(*ast.TypeAssertExpr).X
	}
	for _, c := range x.Body.List {
		for _, t := range c.(*ast.CaseClause).List {
			fl.need2(fl.typeOf(t), fl.targetOf(subject))
		}
	}
}

// generic says whether a call instantiates a generic function: a type
// argument must have what its constraint asks.
func (fl *flows) generic(fun ast.Expr) bool {
	switch f := ast.Unparen(fun).(type) {
	case *ast.Ident:
		_, ok := fl.dc.info.Instances[f]
		return ok
	case *ast.SelectorExpr:
		_, ok := fl.dc.info.Instances[f.Sel]
		return ok
	case *ast.IndexExpr:
		return fl.generic(f.X)
	case *ast.IndexListExpr:
		return fl.generic(f.X)
	}
	return false
}

func (fl *flows) composite(x *ast.CompositeLit) {
	t := fl.typeOf(x)
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	switch u := under(t).(type) {
	case *types.Struct:
		for i, e := range x.Elts {
			if kv, ok := e.(*ast.KeyValueExpr); ok {
				if id, ok := kv.Key.(*ast.Ident); ok {
					for j := 0; j < u.NumFields(); j++ {
						if u.Field(j).Name() == id.Name {
							fl.flow(kv.Value, u.Field(j).Type())
						}
					}
				}
			} else if i < u.NumFields() {
				fl.flow(e, u.Field(i).Type())
			}
		}
	case *types.Slice, *types.Array, *types.Map:
		var key, elem types.Type
		switch u := u.(type) {
		case *types.Slice:
			elem = u.Elem()
		case *types.Array:
			elem = u.Elem()
		case *types.Map:
			key, elem = u.Key(), u.Elem()
		}
		for _, e := range x.Elts {
			if kv, ok := e.(*ast.KeyValueExpr); ok {
				if key != nil {
					fl.flow(kv.Key, key)
				}
				e = kv.Value
			}
			if lit, ok := e.(*ast.CompositeLit); ok && lit.Type == nil {
				continue // its type is elem's: walked as a literal of its own
			}
			fl.flow(e, elem)
		}
	default:
		for _, e := range x.Elts {
			if kv, ok := e.(*ast.KeyValueExpr); ok {
				e = kv.Value
			}
			fl.flow(e, unknown)
		}
	}
}

func (fl *flows) flowAll(values []ast.Expr, targets []types.Type) {
	if len(values) == len(targets) {
		for i, v := range values {
			if targets[i] != nil {
				fl.flow(v, targets[i])
			}
		}
		return
	}
	if len(values) == 1 {
		if tuple, ok := fl.typeOf(values[0]).(*types.Tuple); ok {
			for i := 0; i < tuple.Len() && i < len(targets); i++ {
				if targets[i] != nil {
					fl.need2(tuple.At(i).Type(), targets[i])
				}
			}
		}
	}
}

func (fl *flows) flowTuple(v ast.Expr, targets *types.Tuple) {
	if tuple, ok := fl.typeOf(v).(*types.Tuple); ok {
		for i := 0; i < tuple.Len() && i < targets.Len(); i++ {
			fl.need2(tuple.At(i).Type(), targets.At(i).Type())
		}
	}
}

func (fl *flows) flow(v ast.Expr, target types.Type) {
	fl.need2(fl.typeOf(v), target)
}

// need2 adds the methods a value of type from needs to be a to.
func (fl *flows) need2(from, to types.Type) {
	if from == nil || to == nil {
		return
	}
	named := fl.dc.ownType(from)
	if named != nil {
		if _, ok := named.Underlying().(*types.Interface); ok {
			return
		}
	}
	// nil: every method. Where the target is not known, the value may
	// become an interface of the package's, an unexported method of it
	// too (slices.Contains[[]I, I](is, t)).
	var names []string
	// deep: what the value holds is looked into as well, as fmt and
	// vet's printf and errorsas checks do with a value they are given.
	deep := false
	switch u := to.Underlying().(type) {
	case *types.Interface:
		if unknownEmbeds(u) {
			break
		}
		names = []string{}
		for i := 0; i < u.NumMethods(); i++ {
			names = append(names, u.Method(i).Name())
		}
		if u.NumMethods() == 0 {
			// fmt and vet ask these of a value behind an empty interface.
			names = fmtMethods
			deep = true
		}
	default:
		if to != unknown && to.Underlying() != unknown {
			if _, isParam := to.(*types.TypeParam); !isParam {
				return
			}
		} else {
			// Every method of the value's own type; of what it holds,
			// what fmt and vet look for (every method of all it holds
			// tied whole packages into one group).
			if named != nil {
				fl.needMethods(named, nil, map[*types.Named]bool{})
			}
			fl.deep(from, fmtMethods, map[types.Type]bool{})
			return
		}
	}
	if deep {
		fl.deep(from, names, map[types.Type]bool{})
		return
	}
	if named != nil {
		fl.needMethods(named, names, map[*types.Named]bool{})
	}
}

// fmtMethods are what fmt and vet ask of a value behind an empty
// interface.
var fmtMethods = []string{"String", "Error", "Format", "GoString"}

// deep adds the methods (names, nil for every one) of the
// package's types a value of type t holds: t itself, what it points to,
// its elements, keys and fields.
func (fl *flows) deep(t types.Type, names []string, seen map[types.Type]bool) {
	if t == nil || seen[t] {
		return
	}
	seen[t] = true
	t = types.Unalias(t)
	if n, ok := t.(*types.Named); ok {
		if n.Obj().Pkg() != fl.dc.pkg {
			return // another package's: nothing of it is known
		}
		if _, isIface := n.Underlying().(*types.Interface); !isIface {
			fl.needMethods(n, names, map[*types.Named]bool{})
		}
		fl.deep(n.Underlying(), names, seen)
		return
	}
	switch u := t.(type) {
	case *types.Pointer:
		fl.deep(u.Elem(), names, seen)
	case *types.Slice:
		fl.deep(u.Elem(), names, seen)
	case *types.Array:
		fl.deep(u.Elem(), names, seen)
	case *types.Map:
		fl.deep(u.Key(), names, seen)
		fl.deep(u.Elem(), names, seen)
	case *types.Struct:
		for i := 0; i < u.NumFields(); i++ {
			fl.deep(u.Field(i).Type(), names, seen)
		}
	}
}

func (fl *flows) needMethods(t *types.Named, names []string, seen map[*types.Named]bool) {
	if seen[t] {
		return
	}
	seen[t] = true
	name := t.Obj().Name()
	for full, decls := range fl.dc.byName {
		typ, method, ok := strings.Cut(full, ".")
		if !ok || typ != name && !fl.dc.aliasOf(typ, t) {
			continue
		}
		if names != nil && !slices.Contains(names, method) {
			continue
		}
		for _, n := range decls {
			if _, isFunc := fl.dc.nodes[n].decl.(*ast.FuncDecl); isFunc {
				fl.need[n] = true
			}
		}
	}
	// What it embeds lends it methods.
	if s, ok := t.Underlying().(*types.Struct); ok {
		for i := 0; i < s.NumFields(); i++ {
			if f := s.Field(i); f.Embedded() {
				if e := fl.dc.ownType(f.Type()); e != nil {
					fl.needMethods(e, names, seen)
				}
			}
		}
	}
}

// aliasOf says whether name is the package's alias of t (a method
// declared on the alias is t's).
func (dc *declCutter) aliasOf(name string, t *types.Named) bool {
	tn, ok := dc.pkg.Scope().Lookup(name).(*types.TypeName)
	return ok && tn.IsAlias() && types.Identical(types.Unalias(tn.Type()), t)
}

// ownType is t (or what t points to) when it is a named type of the
// package.
func (dc *declCutter) ownType(t types.Type) *types.Named {
	if t == nil {
		return nil
	}
	t = types.Unalias(t)
	if p, ok := t.(*types.Pointer); ok {
		t = types.Unalias(p.Elem())
	}
	n, ok := t.(*types.Named)
	if !ok || n.Obj().Pkg() != dc.pkg {
		return nil
	}
	return n
}

func under(t types.Type) types.Type {
	if t == nil {
		return nil
	}
	return t.Underlying()
}

// cut orders the declarations, each after what it needs (those that need
// each other together), a file's declarations kept close, and fills parts
// within the budget. A file is whole in the part that completes it.
func (dc *declCutter) cut(budget, room int) [][]File {
	order := dc.order()
	var parts [][]int
	var cur []int
	ps := newPartSize(dc) // the lines of the declarations had so far
	done, limit := 0, room
	for _, scc := range order {
		for _, n := range scc {
			ps.add(n, 1)
		}
		if ps.total()-done > limit && (len(cur) > 0 || limit < budget) {
			for _, n := range scc {
				ps.add(n, -1)
			}
			if len(cur) > 0 {
				parts = append(parts, cur)
			}
			done, cur, limit = ps.total(), nil, budget
			for _, n := range scc {
				ps.add(n, 1)
			}
		}
		cur = append(cur, scc...)
	}
	parts = append(parts, cur)
	var out [][]File
	keep := map[int]bool{}
	shown := make([]int, len(dc.files)) // lines of each file in the parts so far
	for _, p := range parts {
		for _, n := range p {
			keep[n] = true
		}
		var fs []File
		for i, cf := range dc.files {
			lines := cf.content(keep, dc)
			if !touched(cf, keep) || len(lines) == shown[i] {
				continue
			}
			f := cf.File
			f.src, f.baseSrc = nil, nil
			if whole(cf, keep) {
				f.Lines -= shown[i]
			} else {
				f.Part = fileparts.Ranges(lines)
				f.Lines = len(lines) - shown[i]
			}
			shown[i] = len(lines)
			fs = append(fs, f)
		}
		out = append(out, fs)
	}
	return out
}

// partSize counts the lines of the files with the declarations kept so
// far as content would have them, kept up as declarations come and go:
// counting them anew for each would take the files' lines times their
// declarations.
type partSize struct {
	dc       *declCutter
	fileOf   []int
	kept     []int         // of each file, its declarations kept
	declLine []int         // and their lines
	imports  []map[int]int // and how many of them use each import
}

func newPartSize(dc *declCutter) *partSize {
	ps := &partSize{dc: dc, fileOf: make([]int, len(dc.nodes)), kept: make([]int, len(dc.files)),
		declLine: make([]int, len(dc.files)), imports: make([]map[int]int, len(dc.files))}
	for i, cf := range dc.files {
		ps.imports[i] = map[int]int{}
		for _, n := range cf.decls {
			ps.fileOf[n] = i
		}
	}
	return ps
}

// add keeps declaration n (by 1) or gives it back (by -1).
func (ps *partSize) add(n, by int) {
	i, node := ps.fileOf[n], ps.dc.nodes[n]
	ps.kept[i] += by
	ps.declLine[i] += by * (node.to - node.from + 1)
	for _, im := range node.imports {
		ps.imports[i][im] += by
	}
}

func (ps *partSize) total() int {
	total := 0
	for i, cf := range ps.dc.files {
		switch {
		case ps.kept[i] == len(cf.decls):
			total += len(cf.lines)
		case ps.kept[i] > 0:
			total += cf.header + ps.declLine[i]
			blocks := map[int]bool{}
			for k, im := range cf.imports {
				if ps.imports[i][k] > 0 || im.always {
					total += im.to - im.from + 1
					if im.open > 0 && !blocks[im.open] {
						blocks[im.open] = true
						total += 2
					}
				}
			}
		}
	}
	return total
}

func touched(cf *cutFile, keep map[int]bool) bool {
	return len(cf.decls) == 0 || slices.ContainsFunc(cf.decls, func(n int) bool { return keep[n] })
}

func whole(cf *cutFile, keep map[int]bool) bool {
	return !slices.ContainsFunc(cf.decls, func(n int) bool { return !keep[n] })
}

// order is the declarations' components (those that need each other),
// each after those it needs; of the ready ones, the one earliest in the
// files goes first, so a file's declarations stay close.
func (dc *declCutter) order() [][]int {
	names := make([]string, len(dc.nodes))
	for i := range dc.nodes {
		names[i] = strconv.Itoa(i)
	}
	comps := components(names, func(v string) []string {
		i, _ := strconv.Atoi(v)
		var out []string
		for _, m := range dc.nodes[i].needs {
			out = append(out, strconv.Itoa(m))
		}
		return out
	})
	compOf := make([]int, len(dc.nodes))
	sccs := make([][]int, len(comps))
	for c, comp := range comps {
		for _, v := range comp {
			i, _ := strconv.Atoi(v)
			compOf[i] = c
			sccs[c] = append(sccs[c], i)
		}
		sort.Ints(sccs[c])
	}
	waits := make([]map[int]bool, len(sccs))
	for c, scc := range sccs {
		waits[c] = map[int]bool{}
		for _, n := range scc {
			for _, m := range dc.nodes[n].needs {
				if compOf[m] != c {
					waits[c][compOf[m]] = true
				}
			}
		}
	}
	// Kahn's order, the ready component earliest in the files first.
	pending := make([]int, len(sccs))
	dependents := make([][]int, len(sccs))
	for c := range sccs {
		for w := range waits[c] {
			pending[c]++
			dependents[w] = append(dependents[w], c)
		}
	}
	ready := &compHeap{first: func(c int) int { return sccs[c][0] }}
	for c := range sccs {
		if pending[c] == 0 {
			heap.Push(ready, c)
		}
	}
	var out [][]int
	for ready.Len() > 0 {
		c := heap.Pop(ready).(int)
		out = append(out, sccs[c])
		for _, d := range dependents[c] {
			if pending[d]--; pending[d] == 0 {
				heap.Push(ready, d)
			}
		}
	}
	return out
}

// compHeap holds the components ready to go, the one whose first
// declaration is earliest on top.
type compHeap struct {
	comps []int
	first func(int) int
}

func (h *compHeap) Len() int           { return len(h.comps) }
func (h *compHeap) Less(i, j int) bool { return h.first(h.comps[i]) < h.first(h.comps[j]) }
func (h *compHeap) Swap(i, j int)      { h.comps[i], h.comps[j] = h.comps[j], h.comps[i] }
func (h *compHeap) Push(x any)         { h.comps = append(h.comps, x.(int)) }
func (h *compHeap) Pop() any {
	c := h.comps[len(h.comps)-1]
	h.comps = h.comps[:len(h.comps)-1]
	return c
}
