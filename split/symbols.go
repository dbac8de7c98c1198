package split

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path"
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
	decls   map[string]string // key → the declaration's signature text
	refs    map[string]bool   // package-level keys used
	members map[string]bool   // field and method names selected
	scopes  map[string]bool   // the package folders whose members it can see
	own     string            // its own package folder
	imports []string          // folders of the module's packages it imports
	// interfaces are the keys of the interface types it declares.
	interfaces []string
}

// parseSymbols reads one version of a Go file of package folder dir.
// dirOf maps an import path to its package folder in the module ("" for
// an import from outside); nameOf gives a folder's package name.
func parseSymbols(fset *token.FileSet, name, dir string, src []byte, dirOf func(string) string, nameOf func(string) string) *symbols {
	f, err := parser.ParseFile(fset, name, src, 0)
	if err != nil || f == nil || f.Name == nil {
		return nil
	}
	pkg := f.Name.Name
	s := &symbols{decls: map[string]string{}, refs: map[string]bool{}, members: map[string]bool{}, scopes: map[string]bool{dir: true}, own: dir}
	own := dir + ":" + pkg + "."
	// text is a declaration's source with spaces normalized and array
	// lengths left out ([20]byte and [hash.Size]byte are alike when the
	// source builds; only a constant's value tells them apart).
	text := func(n ast.Node) string {
		if n == nil {
			return ""
		}
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
		return strings.Join(strings.Fields(b.String()), " ")
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			sig := text(d.Type)
			if d.Recv != nil && len(d.Recv.List) == 1 {
				t := receiverType(d.Recv.List[0].Type)
				s.decls[own+t+"."+d.Name.Name] = text(d.Recv.List[0].Type) + " " + sig
			} else if d.Name.Name != "init" && d.Name.Name != "_" {
				s.decls[own+d.Name.Name] = sig
			}
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch spec := spec.(type) {
				case *ast.TypeSpec:
					key := own + spec.Name.Name
					shape := ""
					if spec.TypeParams != nil {
						shape = text(spec.TypeParams)
					}
					if spec.Assign.IsValid() {
						shape += "="
					}
					switch t := spec.Type.(type) {
					case *ast.StructType:
						s.decls[key] = shape + "struct"
						for _, field := range t.Fields.List {
							names := field.Names
							if len(names) == 0 {
								names = []*ast.Ident{{Name: receiverType(field.Type)}}
							}
							for _, n := range names {
								s.decls[key+"."+n.Name] = text(field.Type)
							}
						}
					case *ast.InterfaceType:
						var methods []string
						for _, m := range t.Methods.List {
							var names []string
							for _, n := range m.Names {
								names = append(names, n.Name)
								s.decls[key+"."+n.Name] = text(m.Type)
							}
							methods = append(methods, strings.Join(names, ",")+" "+text(m.Type))
						}
						// Its methods are members: what it gains orders
						// the types that implement it, not its users.
						s.decls[key] = shape + "interface"
						s.interfaces = append(s.interfaces, key)
					default:
						s.decls[key] = shape + text(spec.Type)
					}
				case *ast.ValueSpec:
					for _, n := range spec.Names {
						if n.Name != "_" {
							s.decls[own+n.Name] = d.Tok.String() + " " + text(spec.Type)
						}
					}
				}
			}
		}
	}
	imported := map[string]string{} // the name a file gives an import → its folder
	var dotted []string
	for _, imp := range f.Imports {
		p, err := strconv.Unquote(imp.Path.Value)
		if err != nil {
			continue
		}
		d := dirOf(p)
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
			dotted = append(dotted, d)
		case "":
			imported[nameOf(d)] = d
		default:
			imported[n] = d
		}
	}
	unresolved := map[*ast.Ident]bool{}
	for _, id := range f.Unresolved {
		unresolved[id] = true
		s.refs[own+id.Name] = true
		for _, d := range dotted {
			s.refs[d+":"+nameOf(d)+"."+id.Name] = true
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			if x, ok := n.X.(*ast.Ident); ok && unresolved[x] {
				if d, ok := imported[x.Name]; ok {
					s.refs[d+":"+nameOf(d)+"."+n.Sel.Name] = true
					return false
				}
			}
			s.members[n.Sel.Name] = true
		case *ast.KeyValueExpr:
			if k, ok := n.Key.(*ast.Ident); ok {
				s.members[k.Name] = true
			}
		}
		return true
	})
	return s
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
	for _, f := range c.Files {
		if f.baseSrc != nil {
			return symbolEdges(c)
		}
	}
	return nil // all new: the imports and the cut of a package order it
}

func symbolEdges(c *Change) map[string][]fileEdge {
	type version struct {
		file string // the changed file's path
		dir  string
		syms *symbols
	}
	names := map[string]string{} // package folder → package name (source first)
	for _, f := range c.Files {
		if f.pkg != "" && !strings.HasSuffix(f.pkg, "_test") {
			names[f.Dir()] = f.pkg
		}
	}
	nameOf := func(dir string) string {
		if n, ok := names[dir]; ok {
			return n
		}
		return path.Base(dir)
	}
	sourceDir := c.packageDir
	baseDir := func(imp string) string {
		if d := c.packageDir(imp); d != "" {
			return d
		}
		return packageDir(c.BaseModule, imp)
	}
	fset := token.NewFileSet()
	var base, source []version
	for _, f := range c.Files {
		if path.Ext(f.Path) != ".go" || belowTestdata(f.Dir()) {
			continue
		}
		if f.baseSrc != nil {
			dir := f.Dir()
			if f.OldPath != "" {
				dir = path.Dir(f.OldPath)
			}
			if s := parseSymbols(fset, f.Path, dir, f.baseSrc, baseDir, nameOf); s != nil {
				base = append(base, version{f.Path, dir, s})
			}
		}
		if f.src != nil && f.isGoCode() && f.Kind != "deleted" {
			if s := parseSymbols(fset, f.Path, f.Dir(), f.src, sourceDir, nameOf); s != nil {
				source = append(source, version{f.Path, f.Dir(), s})
			}
		}
	}
	// What each key is declared as, in which changed file, at each end.
	type decl struct{ file, text string }
	declared := [2]map[string][]decl{{}, {}}
	for side, versions := range [][]version{base, source} {
		for _, v := range versions {
			for k, t := range v.syms.decls {
				declared[side][k] = append(declared[side][k], decl{v.file, t})
			}
		}
	}
	changed := map[string]bool{}
	for side := range declared {
		for k := range declared[side] {
			if !sameDecls(declared[0][k], declared[1][k]) {
				changed[k] = true
			}
		}
	}
	uses := func(s *symbols, k string) bool {
		if s.refs[k] {
			return true
		}
		if owner, member, ok := splitMember(k); ok && s.members[member] {
			// A field or method by its name, where the file names its
			// type (a value it gets without naming the type comes from
			// a function that does, whose file it needs in turn).
			return s.refs[owner]
		}
		return false
	}
	out := map[string][]fileEdge{}
	seen := map[[2]string]bool{}
	need := func(from, to, why string) {
		if from != to && !seen[[2]string{from, to}] {
			seen[[2]string{from, to}] = true
			out[from] = append(out[from], fileEdge{to, why})
		}
	}
	usersAt := func(versions []version, k string) map[string]bool {
		users := map[string]bool{}
		for _, v := range versions {
			if uses(v.syms, k) {
				users[v.file] = true
			}
		}
		return users
	}
	isInterface := map[string]bool{}
	for _, v := range source {
		for _, k := range v.syms.interfaces {
			isInterface[k] = true
		}
	}
	// Method names that an interface may ask for: those of the
	// interfaces of the change, and of the standard library's common ones.
	satisfies := map[string]bool{}
	for _, m := range commonInterfaceMethods {
		satisfies[m] = true
	}
	for k := range declared[1] {
		if owner, member, ok := splitMember(k); ok && isInterface[owner] {
			satisfies[member] = true
		}
	}
	// Files that give some type a new method, by the method's name.
	newMethods := map[string][]string{}
	for _, k := range sortedKeys(changed) {
		if owner, member, ok := splitMember(k); ok && !isInterface[owner] && declared[0][k] == nil {
			for _, d := range declared[1][k] {
				newMethods[member] = append(newMethods[member], d.file)
			}
		}
	}
	keys := sortedKeys(changed)
	for _, k := range keys {
		b, s := declared[0][k], declared[1][k]
		name := displayKey(k)
		// Moved: from the files that declared it only at the base to
		// those that declare it only at the source (files for other
		// platforms may declare it side by side, at either end).
		at := [2]map[string]bool{{}, {}}
		for side, ds := range [][]decl{b, s} {
			for _, d := range ds {
				at[side][d.file] = true
			}
		}
		for _, from := range sortedKeys(at[0]) {
			for _, to := range sortedKeys(at[1]) {
				if !at[1][from] && !at[0][to] {
					why := fmt.Sprintf("%s moves from %s to %s, which land together so that it is declared once", name, from, to)
					need(from, to, why)
					need(to, from, why)
				}
			}
		}
		sameText := len(b) > 0 && len(s) > 0
		for _, d := range append(append([]decl{}, b...), s...) {
			sameText = sameText && d.text == b[0].text
		}
		if sameText {
			continue // moved, not changed: its users need nothing
		}
		oldUsers, newUsers := usersAt(base, k), usersAt(source, k)
		for _, u := range sortedKeys(oldUsers) {
			for _, d := range b {
				if newUsers[u] && len(s) > 0 {
					why := fmt.Sprintf("uses %s, which %s changes: they land together", name, d.file)
					need(u, d.file, why)
					need(d.file, u, why)
				} else {
					need(d.file, u, fmt.Sprintf("%s drops or changes %s, which %s used: that comes first", d.file, name, u))
				}
			}
		}
		for _, u := range sortedKeys(newUsers) {
			for _, d := range s {
				need(u, d.file, fmt.Sprintf("uses %s as %s declares it", name, d.file))
			}
		}
		// A type's users need its methods that are new or changed: a
		// value used as an interface needs its whole method set.
		if owner, member, ok := splitMember(k); ok && isInterface[owner] && len(s) > 0 {
			// An interface that gains a method needs it of the types
			// that implement it: the files that add a method of that
			// name come first (or with it).
			for _, d := range s {
				for _, m := range newMethods[member] {
					need(d.file, m, fmt.Sprintf("%s gains %s, which the types that implement it need first", displayKey(owner), member))
				}
			}
		} else if ok && len(s) > 0 && declared[1][owner] != nil && satisfies[member] {
			for _, u := range sortedKeys(usersAt(source, owner)) {
				for _, d := range s {
					need(u, d.file, fmt.Sprintf("uses %s, whose method or field %s comes with %s", displayKey(owner), name, d.file))
				}
			}
			// A new type and its methods stay together.
			if declared[0][owner] == nil {
				for _, t := range declared[1][owner] {
					for _, d := range s {
						if !strings.HasSuffix(d.file, "_test.go") {
							why := fmt.Sprintf("%s is a new type, and its method %s comes with it", displayKey(owner), name)
							need(t.file, d.file, why)
							need(d.file, t.file, why)
						}
					}
				}
			}
		}
	}
	return out
}

// commonInterfaceMethods are the methods of the standard library's most
// used interfaces (error, fmt.Stringer, io, sort, heap, http.Handler,
// encoding's marshalers, context.Context, flag.Value).
var commonInterfaceMethods = []string{"Error", "String", "GoString", "Format", "Read", "Write", "Close", "Seek", "ReadAt", "WriteAt",
	"ReadFrom", "WriteTo", "ReadByte", "ReadRune", "WriteString", "Len", "Less", "Swap", "Push", "Pop", "ServeHTTP", "RoundTrip",
	"MarshalJSON", "UnmarshalJSON", "MarshalText", "UnmarshalText", "MarshalBinary", "UnmarshalBinary", "Deadline", "Done", "Err",
	"Value", "Set", "Get", "Is", "As", "Unwrap", "Scan", "Sum", "Reset", "Size", "BlockSize", "Lock", "Unlock", "Name", "Mode",
	"ModTime", "IsDir", "Sys", "Stat", "ReadDir", "Open", "Info", "Type"}

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
