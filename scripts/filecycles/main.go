// Command filecycles measures, with the type checker, how few files of a
// Go package can land without the rest: the cycles of its files, each file
// needing the files that declare what it uses (a package-level name, a
// method or a field of the package's own types) and a method's file
// needing its receiver's type. No order of whole files lets a tip build
// with part of a cycle, so its lines are the least a PR holding it can
// have. wo split finds its ties by name, without types, and errs towards
// tying more: this is the figure to hold its "cannot be cut" against.
//
// It reads the package's code files (not its tests) as the go command
// would build it here, type-checking its imports from source, so the
// module's requirements must be in the module cache (go mod download).
//
//	go build -o /tmp/filecycles ./scripts/filecycles   # in wo
//	cd /path/to/module && go mod download && /tmp/filecycles ./internal/plugins/workspace
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/build"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

func main() {
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: filecycles PACKAGE_DIR\n\nPrints the cycles of a Go package's code files, as the type checker sees their uses, largest first.")
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	cycles, err := fileCycles(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, "filecycles:", err)
		os.Exit(1)
	}
	report(os.Stdout, cycles)
}

// cycle is files that need each other, and their lines.
type cycle struct {
	files []string
	lines int
}

func report(w io.Writer, cycles []cycle) {
	if len(cycles) == 0 {
		fmt.Fprintln(w, "no cycle: the files can land one by one")
	}
	for _, c := range cycles {
		fmt.Fprintf(w, "%d lines in %d files: %s\n", c.lines, len(c.files), strings.Join(c.files, " "))
	}
}

// fileCycles type-checks the package in dir and returns the cycles of its
// code files (two files or more), largest first.
func fileCycles(dir string) ([]cycle, error) {
	bp, err := build.ImportDir(dir, 0)
	if err != nil {
		return nil, err
	}
	if len(bp.CgoFiles) > 0 {
		return nil, fmt.Errorf("%s has cgo files (%s), which this does not type-check", dir, strings.Join(bp.CgoFiles, ", "))
	}
	fset := token.NewFileSet()
	lines := map[string]int{}
	var files []*ast.File
	for _, name := range bp.GoFiles {
		// The full path: the importer finds a file's imports from its
		// folder.
		full := filepath.Join(dir, name)
		src, err := os.ReadFile(full)
		if err != nil {
			return nil, err
		}
		f, err := parser.ParseFile(fset, full, src, 0)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
		lines[full] = bytes.Count(src, []byte("\n"))
	}
	var typeErrs []error
	conf := types.Config{Importer: importer.ForCompiler(fset, "source", nil), Error: func(err error) { typeErrs = append(typeErrs, err) }}
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}, Defs: map[*ast.Ident]types.Object{}}
	pkg, _ := conf.Check(bp.ImportPath, fset, files, info)
	if len(typeErrs) > 0 {
		return nil, fmt.Errorf("%s does not type-check (%d errors), so its uses cannot be told: %w", dir, len(typeErrs), errors.Join(typeErrs[:min(3, len(typeErrs))]...))
	}
	deps := map[string]map[string]bool{}
	need := func(from, to string) {
		if from != to {
			if deps[from] == nil {
				deps[from] = map[string]bool{}
			}
			deps[from][to] = true
		}
	}
	// Where a declaration is, not where a //line comment says it came
	// from (a .y grammar).
	fileOf := func(p token.Pos) string { return fset.PositionFor(p, false).Filename }
	for id, obj := range info.Uses {
		if obj.Pkg() == pkg && (obj.Parent() == pkg.Scope() || isMember(obj)) {
			need(fileOf(id.Pos()), fileOf(obj.Pos()))
		}
	}
	for id, obj := range info.Defs {
		if t := receiverType(obj); t != nil && t.Obj().Pkg() == pkg {
			need(fileOf(id.Pos()), fileOf(t.Obj().Pos()))
		}
	}
	var out []cycle
	for _, comp := range components(sortedKeys(lines), deps) {
		if len(comp) > 1 {
			var c cycle
			for _, f := range comp {
				c.lines += lines[f]
				c.files = append(c.files, filepath.Base(f))
			}
			out = append(out, c)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].lines > out[j].lines })
	return out, nil
}

// isMember says whether obj is a method or a field.
func isMember(obj types.Object) bool {
	switch o := obj.(type) {
	case *types.Func:
		return o.Type().(*types.Signature).Recv() != nil
	case *types.Var:
		return o.IsField()
	}
	return false
}

// receiverType is the named type a method is declared on, or nil.
func receiverType(obj types.Object) *types.Named {
	f, ok := obj.(*types.Func)
	if !ok {
		return nil
	}
	recv := f.Type().(*types.Signature).Recv()
	if recv == nil {
		return nil
	}
	t := recv.Type()
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	n, _ := t.(*types.Named)
	return n
}

// components are the strongly connected components of the graph (Tarjan),
// each sorted.
func components(nodes []string, deps map[string]map[string]bool) [][]string {
	index, low, on := map[string]int{}, map[string]int{}, map[string]bool{}
	var stack []string
	var out [][]string
	var visit func(v string)
	visit = func(v string) {
		index[v], low[v] = len(index), len(index)
		stack = append(stack, v)
		on[v] = true
		for _, w := range sortedKeys(deps[v]) {
			if _, seen := index[w]; !seen {
				visit(w)
				low[v] = min(low[v], low[w])
			} else if on[w] {
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] == index[v] {
			var comp []string
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				on[w] = false
				comp = append(comp, w)
				if w == v {
					break
				}
			}
			sort.Strings(comp)
			out = append(out, comp)
		}
	}
	for _, n := range nodes {
		if _, seen := index[n]; !seen {
			visit(n)
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
