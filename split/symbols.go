package split

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
	"sort"
	"strconv"
	"strings"
)

// A tip of the series holds some changed files at the source and the rest
// at the base. Go has no import cycles, so what orders the change is what
// each file needs from the others at that tip: the declarations it uses.
// A declaration the change keeps as it was (same name, same signature)
// orders nothing; one it adds, removes, moves or changes does:
//
//   - added: a file that uses it at the source comes after (or with) the
//     file that declares it;
//   - removed: the file that declared it comes after (or with) every
//     changed file that used it at the base, whose old code needs it;
//   - changed (its signature, its type, a struct's field, an interface's
//     methods): a file that uses it at both ends lands with it (a renamed
//     identifier and its callers); one that uses only the old one goes
//     first, only the new one after;
//   - moved to another file: the two files land together, or the tip
//     would declare it twice, or not at all.
//
// Names are matched as the parser sees them, without type checking:
// package-level names of a file's own package, names selected from a
// package of the module it imports, and fields and methods by their name
// on the packages a file can see. That errs towards tying more files than
// the compiler needs, never fewer, except where a change of one
// declaration changes another's meaning without changing its text.

// symbols is what one version of a Go file declares and uses, keyed
// "dir:package.Name" for package-level names and "dir:package.T.M" for
// fields and methods.
type symbols struct {
	decls map[string]string // key → the declaration's signature text
	// declImports are, for a declaration whose text selects from an
	// imported package, the import paths of the names it selects
	// ("name=path", sorted): the same text means another type when the
	// name is another package's (template.FuncMap of text/template, then
	// of github.com/go-task/template).
	declImports map[string]string
	// refs are the package-level keys it uses, and the members it
	// selects on a variable whose type its own text names (v.fixGate on
	// a receiver v *validator, even where validator is declared in the
	// file, which the parser resolves and so never counts as a use).
	refs    map[string]bool
	members map[string]bool // field and method names selected
	scopes  map[string]bool // the package folders whose members it can see
	own     string          // its own package folder
	imports []string        // folders of the module's packages it imports
	// interfaces are the keys of the interface types it declares.
	interfaces []string
	// extImports are its imports from other modules; ext the names it
	// selects from them ("import/path.Name"); extUnknown the imports
	// whose names cannot be told (a dot import, a name not guessed).
	extImports []string
	ext        map[string]bool
	extUnknown map[string]bool
	// lang is the newest Go version its syntax needs, and langWhat what
	// needs it (langNeed); generic are the keys of its generic
	// declarations.
	lang, langWhat string
	generic        map[string]bool
	// rangeNames are the package-level names (of its own package) it
	// ranges over, and rangeCalls the functions and methods whose result
	// it ranges over: an int constant (Go 1.22) or an iterator (Go 1.23)
	// is known only from the other files (moduleEdges); intConsts and
	// iterators are its own that are such.
	rangeNames, rangeCalls, intConsts, iterators []string
	// arity is "params/results" of each method it declares, and of each
	// method of its interfaces.
	arity map[string]string
	// embeds maps each struct type it declares to the types it embeds,
	// whose fields and methods it promotes.
	embeds map[string][]string
	// printf are the functions it declares that take a format and its
	// arguments (format string, args ...any); constantFormat says why
	// a call of its to such a function has a format that is not a
	// constant (go vet refuses one from Go 1.24), or "".
	printf []string
	// formatCalls are the names of the functions it calls with one
	// argument that is not a constant (Fprintf: two), as a format with
	// nothing to format would be.
	formatCalls map[string]bool
}

// parseSymbols reads one version of a Go file of package folder dir.
// dirOf maps an import path to its package folder in the module ("" for
// an import from outside); nameOf gives a folder's package name.
func parseSymbols(fset *token.FileSet, name, dir string, src []byte, dirOf func(string) string, nameOf func(string) string) *symbols {
	f, err := parser.ParseFile(fset, name, src, 0)
	if err != nil || f == nil || f.Name == nil {
		return nil
	}
	p := &symbolParser{fset: fset, src: src, dirOf: dirOf, nameOf: nameOf, own: dir + ":" + f.Name.Name + ".",
		imported: map[string]string{}, unresolved: map[*ast.Ident]bool{}, importPaths: importPaths(f, dirOf, nameOf)}
	p.s = &symbols{decls: map[string]string{}, declImports: map[string]string{}, refs: map[string]bool{}, members: map[string]bool{}, scopes: map[string]bool{dir: true}, own: dir,
		ext: map[string]bool{}, extUnknown: map[string]bool{}, generic: map[string]bool{}, arity: map[string]string{},
		embeds: map[string][]string{}, formatCalls: map[string]bool{}}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			p.funcDecl(d)
		case *ast.GenDecl:
			p.genDecl(d)
		}
	}
	p.readImports(f)
	p.resolveEmbeddings()
	externalRefs(f, p.s, dirOf, p.unresolved)
	ast.Inspect(f, p.formatCall)
	p.s.lang, p.s.langWhat = langNeed(f, src)
	rangeTargets(f, p.s)
	genericDecls(f, p.own, p.s.generic)
	ast.Inspect(f, p.use)
	return p.s
}

// symbolParser reads one version of a Go file into its symbols.
type symbolParser struct {
	fset   *token.FileSet
	src    []byte
	dirOf  func(string) string
	nameOf func(string) string
	s      *symbols
	own    string // "dir:pkg.", the prefix of its own package's keys
	// embeddings are the fields its structs embed, read once its
	// imports are known.
	embeddings []embedded
	imported   map[string]string // the name a file gives an import → its folder
	dotted     []string          // the folders it imports with a dot
	unresolved map[*ast.Ident]bool
	// importPaths maps the name of each import, as the file uses it, to
	// its path.
	importPaths map[string]string
}

// importPaths maps the name a file gives each import (its own, else the
// package's name in the module, else a guess from its path) to its path.
func importPaths(f *ast.File, dirOf, nameOf func(string) string) map[string]string {
	out := map[string]string{}
	for _, imp := range f.Imports {
		p, err := strconv.Unquote(imp.Path.Value)
		if err != nil {
			continue
		}
		n := defaultImportName(p)
		if d := dirOf(p); d != "" {
			n = nameOf(d)
		}
		if imp.Name != nil {
			n = imp.Name.Name
		}
		out[n] = p
	}
	return out
}

// noteImports records under key the import paths of the names that the
// nodes of its declaration select from imported packages.
func (p *symbolParser) noteImports(key string, nodes ...ast.Node) {
	var found []string
	for _, n := range nodes {
		if n == nil {
			continue
		}
		var visit func(x ast.Node) bool
		visit = func(x ast.Node) bool {
			switch x := x.(type) {
			case *ast.ArrayType:
				// An array's length is left out, as text does.
				ast.Inspect(x.Elt, visit)
				return false
			case *ast.SelectorExpr:
				if id, ok := x.X.(*ast.Ident); ok && id.Obj == nil {
					if path, ok := p.importPaths[id.Name]; ok {
						found = append(found, id.Name+"="+path)
					}
				}
			}
			return true
		}
		ast.Inspect(n, visit)
	}
	if len(found) > 0 {
		sort.Strings(found)
		p.s.declImports[key] = strings.Join(dedupe(found, ""), ",")
	}
}

// embedded is a field that a struct type (key in) embeds.
type embedded struct {
	in string
	t  ast.Expr
}

// text is a declaration's source with spaces normalized and array
// lengths left out ([20]byte and [hash.Size]byte are alike when the
// source builds; only a constant's value tells them apart).
func (p *symbolParser) text(n ast.Node) string {
	if n == nil {
		return ""
	}
	fset, src := p.fset, p.src
	start, end := fset.Position(n.Pos()).Offset, fset.Position(n.End()).Offset
	var b strings.Builder
	at := start
	ast.Inspect(n, func(x ast.Node) bool {
		if a, ok := x.(*ast.ArrayType); ok && a.Len != nil {
			if _, ellipsis := a.Len.(*ast.Ellipsis); !ellipsis {
				from := fset.Position(a.Len.Pos()).Offset
				if from >= at {
					b.Write(src[at:from])
					b.WriteString("N")
					at = fset.Position(a.Len.End()).Offset
				}
			}
		}
		return true
	})
	b.Write(src[at:end])
	return tokens(b.String())
}

// sig is a function type without its parameters' names, which callers
// do not see.
func (p *symbolParser) sig(ft *ast.FuncType) string {
	var b strings.Builder
	if ft.TypeParams != nil {
		b.WriteString(p.text(ft.TypeParams))
	}
	for _, list := range []*ast.FieldList{ft.Params, ft.Results} {
		b.WriteString("(")
		if list != nil {
			for _, field := range list.List {
				for range max(1, len(field.Names)) {
					b.WriteString(p.text(field.Type) + ",")
				}
			}
		}
		b.WriteString(")")
	}
	return b.String()
}

// fields declares a struct's fields as its members; a field of an
// anonymous struct type has members of its own (Config.Core.IsBare), so
// that adding one changes nothing for the users of the others.
func (p *symbolParser) fields(key string, t *ast.StructType) {
	for _, field := range t.Fields.List {
		names := field.Names
		if len(names) == 0 {
			names = []*ast.Ident{{Name: receiverType(field.Type)}}
			p.embeddings = append(p.embeddings, embedded{key, field.Type})
		}
		for _, n := range names {
			if inner, ok := field.Type.(*ast.StructType); ok {
				p.s.decls[key+"."+n.Name] = "struct"
				p.fields(key+"."+n.Name, inner)
				continue
			}
			p.s.decls[key+"."+n.Name] = p.text(field.Type)
			p.noteImports(key+"."+n.Name, field.Type)
		}
	}
}

// funcDecl declares a function or method.
func (p *symbolParser) funcDecl(d *ast.FuncDecl) {
	s, own := p.s, p.own
	sig := p.sig(d.Type)
	if d.Recv != nil && len(d.Recv.List) == 1 {
		t := receiverType(d.Recv.List[0].Type)
		s.decls[own+t+"."+d.Name.Name] = p.text(d.Recv.List[0].Type) + " " + sig
		p.noteImports(own+t+"."+d.Name.Name, d.Type)
		s.arity[own+t+"."+d.Name.Name] = arity(d.Type)
		if takesFormat(d.Type) {
			s.printf = append(s.printf, d.Name.Name)
		}
	} else if d.Name.Name != "init" && d.Name.Name != "_" {
		s.decls[own+d.Name.Name] = sig
		p.noteImports(own+d.Name.Name, d.Type)
		if takesFormat(d.Type) {
			s.printf = append(s.printf, d.Name.Name)
		}
	}
}

// genDecl declares types, variables and constants.
func (p *symbolParser) genDecl(d *ast.GenDecl) {
	for _, spec := range d.Specs {
		switch spec := spec.(type) {
		case *ast.TypeSpec:
			p.typeSpec(spec)
		case *ast.ValueSpec:
			for _, n := range spec.Names {
				if n.Name == "_" {
					continue
				}
				p.s.decls[p.own+n.Name] = d.Tok.String() + " " + p.text(spec.Type)
				if spec.Type != nil {
					p.noteImports(p.own+n.Name, spec.Type)
				} else {
					// Its type is its value's.
					var values []ast.Node
					for _, v := range spec.Values {
						values = append(values, v)
					}
					p.noteImports(p.own+n.Name, values...)
				}
			}
		}
	}
}

func (p *symbolParser) typeSpec(spec *ast.TypeSpec) {
	s := p.s
	key := p.own + spec.Name.Name
	shape := ""
	if spec.TypeParams != nil {
		shape = p.text(spec.TypeParams)
	}
	if spec.Assign.IsValid() {
		shape += "="
	}
	switch t := spec.Type.(type) {
	case *ast.StructType:
		s.decls[key] = shape + "struct"
		p.fields(key, t)
	case *ast.InterfaceType:
		p.interfaceMethods(key, t)
		// Its methods are members: what it gains orders the types that
		// implement it, not its users.
		s.decls[key] = shape + "interface"
		s.interfaces = append(s.interfaces, key)
	default:
		s.decls[key] = shape + p.text(spec.Type)
		p.noteImports(key, spec.Type)
	}
}

func (p *symbolParser) interfaceMethods(key string, t *ast.InterfaceType) {
	for _, m := range t.Methods.List {
		mt := p.text(m.Type)
		ft, isFunc := m.Type.(*ast.FuncType)
		if isFunc {
			mt = p.sig(ft)
		}
		for _, n := range m.Names {
			p.s.decls[key+"."+n.Name] = mt
			p.noteImports(key+"."+n.Name, m.Type)
			if isFunc {
				p.s.arity[key+"."+n.Name] = arity(ft)
			}
		}
	}
}

// readImports notes the module's packages the file imports, by the
// name it gives them, and its unresolved names as uses of its own
// package's (or a dot import's).
func (p *symbolParser) readImports(f *ast.File) {
	s := p.s
	for _, imp := range f.Imports {
		path, err := strconv.Unquote(imp.Path.Value)
		if err != nil {
			continue
		}
		d := p.dirOf(path)
		if d == "" {
			continue
		}
		s.imports = append(s.imports, d)
		s.scopes[d] = true
		n := ""
		if imp.Name != nil {
			n = imp.Name.Name
		}
		switch n {
		case "_":
		case ".":
			p.dotted = append(p.dotted, d)
		case "":
			p.imported[p.nameOf(d)] = d
		default:
			p.imported[n] = d
		}
	}
	for _, id := range f.Unresolved {
		p.unresolved[id] = true
		s.refs[p.own+id.Name] = true
		for _, d := range p.dotted {
			s.refs[d+":"+p.nameOf(d)+"."+id.Name] = true
		}
	}
}

// resolveEmbeddings keys the types the file's structs embed.
func (p *symbolParser) resolveEmbeddings() {
	s := p.s
	for _, e := range p.embeddings {
		switch t := unstar(e.t).(type) {
		case *ast.Ident:
			s.embeds[e.in] = append(s.embeds[e.in], p.own+t.Name)
		case *ast.SelectorExpr:
			if x, ok := t.X.(*ast.Ident); ok {
				if d, ok := p.imported[x.Name]; ok {
					s.embeds[e.in] = append(s.embeds[e.in], d+":"+p.nameOf(d)+"."+t.Sel.Name)
				}
			}
		}
	}
}

// formatCall notes a call with one argument that is not a constant
// (Fprintf: two), as a format with nothing to format would be.
func (p *symbolParser) formatCall(n ast.Node) bool {
	call, ok := n.(*ast.CallExpr)
	if !ok || call.Ellipsis.IsValid() {
		return true
	}
	name := ""
	switch fn := call.Fun.(type) {
	case *ast.Ident:
		name = fn.Name
	case *ast.SelectorExpr:
		name = fn.Sel.Name
	}
	switch {
	case len(call.Args) == 1 && !constant(call.Args[0]):
		p.s.formatCalls[name] = true
	case len(call.Args) == 2 && name == "Fprintf" && !constant(call.Args[1]):
		p.s.formatCalls[name] = true
	}
	return true
}

// use notes a name selected from an imported package of the module as a
// reference, and any other selected or keyed name as a member.
func (p *symbolParser) use(n ast.Node) bool {
	switch n := n.(type) {
	case *ast.SelectorExpr:
		if x, ok := n.X.(*ast.Ident); ok && p.unresolved[x] {
			if d, ok := p.imported[x.Name]; ok {
				p.s.refs[d+":"+p.nameOf(d)+"."+n.Sel.Name] = true
				return false
			}
		}
		if x, ok := n.X.(*ast.Ident); ok {
			if t := p.typeOfVar(x); t != "" {
				p.s.refs[t+"."+n.Sel.Name] = true
			}
		}
		p.s.members[n.Sel.Name] = true
	case *ast.KeyValueExpr:
		if k, ok := n.Key.(*ast.Ident); ok {
			p.s.members[k.Name] = true
		}
	}
	return true
}

// typeOfVar is the key of the type of a variable that the file declares
// with its type written out: a receiver or parameter (v *T), a var with a
// type (var v T), or one made from a composite literal (v := &T{}); ""
// where the parser alone cannot tell.
func (p *symbolParser) typeOfVar(x *ast.Ident) string {
	if x.Obj == nil || x.Obj.Kind != ast.Var {
		return ""
	}
	var t ast.Expr
	switch d := x.Obj.Decl.(type) {
	case *ast.Field:
		t = d.Type
	case *ast.ValueSpec:
		t = d.Type
	case *ast.AssignStmt:
		for i, l := range d.Lhs {
			if isIdent(l, x.Name) && len(d.Rhs) == len(d.Lhs) {
				t = literalType(d.Rhs[i])
				break
			}
		}
	}
	switch t := unstar(t).(type) {
	case *ast.Ident:
		if t.Obj != nil && t.Obj.Kind == ast.Typ || p.unresolved[t] {
			return p.own + t.Name
		}
	case *ast.SelectorExpr:
		if pkg, ok := t.X.(*ast.Ident); ok && p.unresolved[pkg] {
			if d, ok := p.imported[pkg.Name]; ok {
				return d + ":" + p.nameOf(d) + "." + t.Sel.Name
			}
		}
	}
	return ""
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}

// literalType is the type of a composite literal (T{}, &T{}), or nil.
func literalType(e ast.Expr) ast.Expr {
	if u, ok := e.(*ast.UnaryExpr); ok && u.Op == token.AND {
		e = u.X
	}
	if c, ok := e.(*ast.CompositeLit); ok {
		return c.Type
	}
	return nil
}

// fileEdge says that a file must land in the same PR as another file or
// after it, and why.
type fileEdge struct {
	to  string // the path of the file it needs
	why string
}

// symbolEdges works out, for every changed Go file, the changed files it
// must land with or after, from the declarations each version of each
// uses (see above). Files whose versions do not parse order nothing here.
func (c *Change) symbolNeeds() map[string][]fileEdge {
	if c.goModChanged() || c.modifies() {
		return symbolEdges(c)
	}
	return nil // all new: the imports and the cut of a package order it
}

// modifies says whether the change has a Go file at the base.
func (c *Change) modifies() bool {
	for _, f := range c.Files {
		if f.baseSrc != nil {
			return true
		}
	}
	return false
}

// fileVersion is one version of a changed Go file, parsed.
type fileVersion struct {
	file string // the changed file's path
	dir  string
	syms *symbols
}

// commonInterfaceMethods are the methods of the standard library's most
// used interfaces (error, fmt.Stringer, io, sort, heap, http.Handler,
// encoding's marshalers, context.Context, flag.Value, io/fs), with the
// number of their parameters and results ("params/results"; a method
// two interfaces name alike may have two).
var commonInterfaceMethods = map[string]string{"Error": "0/1", "String": "0/1", "GoString": "0/1", "Format": "2/0",
	"Read": "1/2", "Write": "1/2", "Close": "0/1", "Seek": "2/2", "ReadAt": "2/2", "WriteAt": "2/2", "ReadFrom": "1/2",
	"WriteTo": "1/2", "ReadByte": "0/2", "ReadRune": "0/3", "WriteString": "1/2", "Len": "0/1", "Less": "2/1", "Swap": "2/0",
	"Push": "1/0", "Pop": "0/1", "ServeHTTP": "2/0", "RoundTrip": "1/2", "MarshalJSON": "0/2", "UnmarshalJSON": "1/1",
	"MarshalText": "0/2", "UnmarshalText": "1/1", "MarshalBinary": "0/2", "UnmarshalBinary": "1/1", "Deadline": "0/2",
	"Done": "0/1", "Err": "0/1", "Value": "1/1 0/2", "Set": "1/1", "Get": "0/1", "Is": "1/1", "As": "1/1", "Unwrap": "0/1",
	"Scan": "1/1 2/1", "Sum": "1/1", "Reset": "0/0", "Size": "0/1", "BlockSize": "0/1", "Lock": "0/0", "Unlock": "0/0",
	"Name": "0/1", "Mode": "0/1", "ModTime": "0/1", "IsDir": "0/1", "Sys": "0/1", "Stat": "0/2", "ReadDir": "1/2",
	"Open": "1/2", "Info": "0/2", "Type": "0/1"}

// arity is "params/results" of a function type.
func arity(ft *ast.FuncType) string {
	count := func(l *ast.FieldList) int {
		n := 0
		if l != nil {
			for _, f := range l.List {
				n += max(1, len(f.Names))
			}
		}
		return n
	}
	return fmt.Sprintf("%d/%d", count(ft.Params), count(ft.Results))
}

// sameDecls says whether a name is declared alike, in the same files, at
// both ends (files for different platforms may each declare it).
func sameDecls[D comparable](a, b []D) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		found := false
		for _, y := range b {
			found = found || x == y
		}
		if !found {
			return false
		}
	}
	return true
}

// constant says whether an expression is a constant string as the
// parser sees it: a literal, a sum of literals, a constant of the file.
func constant(e ast.Expr) bool {
	switch x := e.(type) {
	case *ast.BasicLit:
		return x.Kind == token.STRING
	case *ast.ParenExpr:
		return constant(x.X)
	case *ast.BinaryExpr:
		return x.Op == token.ADD && constant(x.X) && constant(x.Y)
	case *ast.Ident:
		return x.Obj != nil && x.Obj.Kind == ast.Con
	}
	return false
}

// wordsOf are the identifiers of a declaration's text, as a word alone
// ("T") or, after a selector, with what it is selected from ("pkg.T").
// The text is as tokens writes it, a space between tokens ("pkg . T"),
// or packed ("pkg.T").
func wordsOf(text string) []string {
	ident := func(b byte) bool {
		return b == '_' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= 0x80
	}
	var out []string
	prev := ""      // the word before, while nothing but spaces and one dot follow it
	dotted := false // a dot follows prev
	for i := 0; i < len(text); {
		switch c := text[i]; {
		case c == ' ':
			i++
			continue
		case c == '.':
			dotted = prev != "" && !dotted
			if !dotted {
				prev = ""
			}
			i++
			continue
		case !ident(c):
			prev, dotted = "", false
			i++
			continue
		}
		j := i
		for j < len(text) && ident(text[j]) {
			j++
		}
		w := text[i:j]
		if dotted {
			out = append(out, prev+"."+w)
		} else {
			out = append(out, w)
		}
		prev, dotted, i = w, false, j
	}
	return out
}

// unstar is a type without its pointer and type arguments.
func unstar(e ast.Expr) ast.Expr {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		default:
			return e
		}
	}
}

// takesFormat says whether a function's last two parameters are a
// format and its arguments (format string, args ...any), as go vet's
// printf check finds its wrappers.
func takesFormat(ft *ast.FuncType) bool {
	var types []ast.Expr
	for _, f := range ft.Params.List {
		for range max(1, len(f.Names)) {
			types = append(types, f.Type)
		}
	}
	if len(types) < 2 {
		return false
	}
	last, ok := types[len(types)-1].(*ast.Ellipsis)
	if !ok {
		return false
	}
	empty := false
	switch t := last.Elt.(type) {
	case *ast.Ident:
		empty = t.Name == "any"
	case *ast.InterfaceType:
		empty = len(t.Methods.List) == 0
	}
	format, ok := types[len(types)-2].(*ast.Ident)
	return empty && ok && format.Name == "string"
}

// tokens is Go source as its tokens, one space apart: without comments
// or layout.
func tokens(src string) string {
	var sc scanner.Scanner
	fset := token.NewFileSet()
	data := []byte(src)
	sc.Init(fset.AddFile("", -1, len(data)), data, nil, 0)
	var b strings.Builder
	for {
		_, tok, lit := sc.Scan()
		if tok == token.EOF {
			break
		}
		if tok == token.SEMICOLON && lit == "\n" {
			continue // inserted at a line's end
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		if lit != "" {
			b.WriteString(lit)
		} else {
			b.WriteString(tok.String())
		}
	}
	return b.String()
}

// splitMember splits "dir:pkg.T.M" into "dir:pkg.T" and "M".
func splitMember(k string) (owner, member string, ok bool) {
	colon := strings.IndexByte(k, ':')
	rest := k[colon+1:]
	first := strings.IndexByte(rest, '.')
	last := strings.LastIndexByte(rest, '.')
	if first < 0 || first == last {
		return "", "", false
	}
	return k[:colon+1+last], rest[last+1:], true
}

// displayKey names a key as Go code would: pkg.Name, pkg.T.M.
func displayKey(k string) string {
	_, rest, _ := strings.Cut(k, ":")
	return rest
}

// changeKind names what a changed declaration's text is: a function's or
// method's signature, else its declaration (a type, a field, a variable).
func changeKind(text string) string {
	if strings.HasPrefix(text, "(") || strings.HasPrefix(text, "[") || strings.Contains(text, " (") && !strings.HasPrefix(text, "var ") &&
		!strings.HasPrefix(text, "const ") && !strings.HasPrefix(text, "func") {
		return "signature"
	}
	return "declaration"
}
