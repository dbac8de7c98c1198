package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// A sourceFile is one parsed .go file, named by its slash path from the
// module root.
type sourceFile struct {
	rel   string
	test  bool
	lines int
	file  *ast.File
}

// Func is one function or method declaration.
type Func struct {
	Name  string // Recv.Method or Func
	File  string
	Line  int
	Lines int // from the func keyword to the closing brace
	Cyclo int
}

// Interface is one named interface type.
type Interface struct {
	Name    string // pkgdir.Name
	File    string
	Methods int
}

// Use is a place where one package names another.
type Use struct {
	File string
	Line int
	What string
}

// Figures are what the script measures over a module.
type Figures struct {
	Funcs          []Func // every function in non-test files, most complex first
	Interfaces     []Interface
	ProcedureLines int   // lines of the non-test .go files directly in procedure/
	CommandsGitops []Use // commands naming gitops (calls and other uses), test files included
	GitopsImports  []Use // gitops importing workorder, test files included
}

// loadModule parses every .go file under root, skipping testdata, hidden
// folders and other modules (a folder with its own go.mod, such as tools/).
func loadModule(root string) ([]sourceFile, *token.FileSet, error) {
	fset := token.NewFileSet()
	var files []sourceFile
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return skipDir(root, p, d.Name())
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		sf, err := parseSource(fset, filepath.ToSlash(rel), src)
		if err != nil {
			return err
		}
		files = append(files, sf)
		return nil
	})
	return files, fset, err
}

func skipDir(root, p, name string) error {
	if p == root {
		return nil
	}
	if name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
		return filepath.SkipDir
	}
	if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
		return filepath.SkipDir
	}
	return nil
}

func parseSource(fset *token.FileSet, rel string, src []byte) (sourceFile, error) {
	f, err := parser.ParseFile(fset, rel, src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return sourceFile{}, err
	}
	return sourceFile{rel: rel, test: strings.HasSuffix(rel, "_test.go"), lines: strings.Count(string(src), "\n"), file: f}, nil
}

// measure computes the figures; module is the module path of go.mod.
func measure(files []sourceFile, fset *token.FileSet, module string) Figures {
	var fig Figures
	ifaces := map[string]map[string]*ast.InterfaceType{} // by package folder, then name
	for _, sf := range files {
		dir := path.Dir(sf.rel)
		if !sf.test {
			fig.Funcs = append(fig.Funcs, funcsOf(sf, fset)...)
			collectInterfaces(sf.file, dir, ifaces)
			if dir == "procedure" {
				fig.ProcedureLines += sf.lines
			}
		}
		switch dir {
		case "commands":
			fig.CommandsGitops = append(fig.CommandsGitops, usesOf(sf, fset, module+"/gitops")...)
		case "gitops":
			fig.GitopsImports = append(fig.GitopsImports, importsOf(sf, fset, module+"/workorder")...)
		}
	}
	fig.Interfaces = countInterfaces(ifaces)
	sort.SliceStable(fig.Funcs, func(i, j int) bool { return fig.Funcs[i].Cyclo > fig.Funcs[j].Cyclo })
	return fig
}

func funcsOf(sf sourceFile, fset *token.FileSet) []Func {
	var out []Func
	for _, d := range sf.file.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		start, end := fset.Position(fd.Pos()).Line, fset.Position(fd.End()).Line
		out = append(out, Func{Name: funcName(fd), File: sf.rel, Line: start, Lines: end - start + 1, Cyclo: cyclomatic(fd.Body)})
	}
	return out
}

func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
		case *ast.IndexExpr:
			t = x.X
		case *ast.IndexListExpr:
			t = x.X
		case *ast.Ident:
			return x.Name + "." + fd.Name.Name
		default:
			return fd.Name.Name
		}
	}
}

// cyclomatic is gocyclo's count: one, plus one for each if, for, range,
// case and select case other than default, && and ||. The function
// literals inside a function count towards it: a closure is read with the
// function that holds it.
func cyclomatic(body ast.Node) int {
	n := 1
	ast.Inspect(body, func(node ast.Node) bool {
		switch x := node.(type) {
		case *ast.IfStmt, *ast.ForStmt, *ast.RangeStmt:
			n++
		case *ast.CaseClause:
			if x.List != nil {
				n++
			}
		case *ast.CommClause:
			if x.Comm != nil {
				n++
			}
		case *ast.BinaryExpr:
			if x.Op == token.LAND || x.Op == token.LOR {
				n++
			}
		}
		return true
	})
	return n
}

func collectInterfaces(f *ast.File, dir string, into map[string]map[string]*ast.InterfaceType) {
	ast.Inspect(f, func(node ast.Node) bool {
		ts, ok := node.(*ast.TypeSpec)
		if !ok {
			return true
		}
		if it, ok := ts.Type.(*ast.InterfaceType); ok {
			if into[dir] == nil {
				into[dir] = map[string]*ast.InterfaceType{}
			}
			into[dir][ts.Name.Name] = it
		}
		return true
	})
}

// countInterfaces counts each interface's methods, its own and those of
// the interfaces of the same package that it embeds; an interface embedded
// from another package (io.Reader) counts as one, and a type-set element
// (~int | ~string) as none.
func countInterfaces(byDir map[string]map[string]*ast.InterfaceType) []Interface {
	var out []Interface
	for dir, named := range byDir {
		for name, it := range named {
			out = append(out, Interface{Name: path.Base(dir) + "." + name, File: dir, Methods: methodCount(it, named, map[string]bool{name: true})})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Methods != out[j].Methods {
			return out[i].Methods > out[j].Methods
		}
		return out[i].Name < out[j].Name
	})
	return out
}

func methodCount(it *ast.InterfaceType, named map[string]*ast.InterfaceType, seen map[string]bool) int {
	n := 0
	for _, field := range it.Methods.List {
		switch t := field.Type.(type) {
		case *ast.FuncType:
			n += len(field.Names)
		case *ast.Ident:
			if inner, ok := named[t.Name]; ok && !seen[t.Name] {
				seen[t.Name] = true
				n += methodCount(inner, named, seen)
			}
		case *ast.SelectorExpr:
			n++
		}
	}
	return n
}

// importName is the name a file gives the package with the import path
// want, or "" when it does not import it.
func importName(f *ast.File, want string) (string, *ast.ImportSpec) {
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		if p != want {
			continue
		}
		if imp.Name != nil {
			return imp.Name.Name, imp
		}
		return path.Base(p), imp
	}
	return "", nil
}

// usesOf lists every place the file names the package want, as
// "name.X(…)" for a call and "name.X" for any other use.
func usesOf(sf sourceFile, fset *token.FileSet, want string) []Use {
	name, _ := importName(sf.file, want)
	if name == "" || name == "_" {
		return nil
	}
	called := map[*ast.SelectorExpr]bool{}
	var out []Use
	ast.Inspect(sf.file, func(node ast.Node) bool {
		if call, ok := node.(*ast.CallExpr); ok {
			if sel, ok := call.Fun.(*ast.SelectorExpr); ok {
				called[sel] = true
			}
		}
		sel, ok := node.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if id, ok := sel.X.(*ast.Ident); ok && id.Name == name {
			what := name + "." + sel.Sel.Name
			if called[sel] {
				what += "(…)"
			}
			out = append(out, Use{File: sf.rel, Line: fset.Position(sel.Pos()).Line, What: what})
		}
		return true
	})
	return out
}

func importsOf(sf sourceFile, fset *token.FileSet, want string) []Use {
	if _, imp := importName(sf.file, want); imp != nil {
		return []Use{{File: sf.rel, Line: fset.Position(imp.Pos()).Line, What: "imports " + want}}
	}
	return nil
}
