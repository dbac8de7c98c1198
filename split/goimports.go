package split

import (
	"bytes"
	"fmt"
	"go/build/constraint"
	"go/parser"
	"go/token"
	"path"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"golang.org/x/mod/modfile"
)

// goHeader reads what the plan needs from a Go file without parsing its
// body: the package name, the import paths, the //go:embed patterns, and
// why its header does not parse, if it does not (the file still goes
// with its directory).
func goHeader(name string, src []byte) (pkg string, imports, embeds []string, problem string) {
	f, err := parser.ParseFile(token.NewFileSet(), name, src, parser.ImportsOnly)
	if err != nil {
		problem = fmt.Sprintf("%s does not parse: %v", name, firstLine(err.Error()))
	}
	if f != nil {
		if f.Name != nil {
			pkg = f.Name.Name
		}
		for _, imp := range f.Imports {
			if p, err := strconv.Unquote(imp.Path.Value); err == nil {
				imports = append(imports, p)
			}
		}
	}
	return pkg, imports, embedPatterns(src), problem
}

// isGoCode says whether the file is Go source that the go command builds
// into a package (for some build): not a file below testdata, which it
// never builds, nor one that the plan found is not code (notCode).
func (f File) isGoCode() bool {
	return path.Ext(f.Path) == ".go" && f.notCode == "" && !belowTestdata(f.Dir())
}

func belowTestdata(dir string) bool {
	for _, part := range strings.Split(dir, "/") {
		if part == "testdata" {
			return true
		}
	}
	return false
}

// externalTest says whether a Go file is a test of an external test
// package (package p_test beside package p): nothing can import it, so
// it can import anything, p and what imports p included.
func (f File) externalTest() bool {
	return strings.HasSuffix(f.Path, "_test.go") && strings.HasSuffix(f.pkg, "_test")
}

// excludedFromEveryBuild says why a Go file's build constraints leave it
// out of every build, or "": their expression cannot hold unless the tag
// ignore is set, which by convention no build sets (generators that go
// generate runs with go run carry //go:build ignore). A //go:build line
// wins over // +build lines, as with the go command.
func excludedFromEveryBuild(src []byte) string {
	var goBuild constraint.Expr
	var plusBuild []constraint.Expr
	for pos := 0; pos < len(src); {
		end, next := lineAt(src, pos)
		text := string(bytes.TrimSpace(src[pos:end]))
		switch {
		case text == "":
		case strings.HasPrefix(text, "//"):
			if constraint.IsGoBuild(text) && goBuild == nil {
				goBuild, _ = constraint.Parse(text)
			} else if constraint.IsPlusBuild(text) {
				if x, err := constraint.Parse(text); err == nil {
					plusBuild = append(plusBuild, x)
				}
			}
		case strings.HasPrefix(text, "/*"):
			// A block comment: skip to its end; code after it on the
			// same line ends the header.
			close := bytes.Index(src[pos:], []byte("*/"))
			if close < 0 {
				return ""
			}
			after := pos + close + 2
			end, next = lineAt(src, after)
			if len(bytes.TrimSpace(src[after:end])) > 0 {
				next = len(src)
			}
		default:
			next = len(src) // the package clause: the header is over
		}
		pos = next
	}
	expr := goBuild
	if expr == nil && len(plusBuild) > 0 {
		expr = plusBuild[0]
		for _, x := range plusBuild[1:] {
			expr = &constraint.AndExpr{X: expr, Y: x}
		}
	}
	if expr == nil || !needsIgnoreTag(expr) {
		return ""
	}
	return "excluded from every build by its build constraint (" + expr.String() + ")"
}

// lineAt is where the line that starts at pos ends, and where the next
// one starts.
func lineAt(src []byte, pos int) (end, next int) {
	if i := bytes.IndexByte(src[pos:], '\n'); i >= 0 {
		return pos + i, pos + i + 1
	}
	return len(src), len(src)
}

// needsIgnoreTag says whether expr holds for no set of build tags without
// the tag ignore: every assignment of its other tags is tried (an
// expression with more than 12 tags is taken to hold).
func needsIgnoreTag(expr constraint.Expr) bool {
	var tags []string
	seen := map[string]bool{}
	ignore := false
	expr.Eval(func(tag string) bool {
		if tag == "ignore" {
			ignore = true
		} else if !seen[tag] {
			seen[tag] = true
			tags = append(tags, tag)
		}
		return false
	})
	if !ignore || len(tags) > 12 {
		return false
	}
	for set := 0; set < 1<<len(tags); set++ {
		holds := expr.Eval(func(tag string) bool {
			for i, t := range tags {
				if t == tag {
					return set&(1<<i) != 0
				}
			}
			return false // ignore
		})
		if holds {
			return false
		}
	}
	return true
}

// embedPatterns are the patterns of the file's //go:embed lines.
func embedPatterns(src []byte) []string {
	if !bytes.Contains(src, []byte("//go:embed")) {
		return nil
	}
	var out []string
	for _, line := range strings.Split(string(src), "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "//go:embed")
		if !ok || rest == "" || (rest[0] != ' ' && rest[0] != '\t') {
			continue
		}
		for _, p := range embedArgs(rest) {
			out = append(out, strings.TrimPrefix(p, "all:"))
		}
	}
	return out
}

// embedArgs splits a //go:embed line's arguments as the go command does:
// a pattern in double or back quotes is a Go string and may hold spaces,
// any other is a run of non-space characters.
func embedArgs(line string) []string {
	var out []string
	for line = strings.TrimLeft(line, " \t"); line != ""; line = strings.TrimLeft(line, " \t") {
		if line[0] == '"' || line[0] == '`' {
			q, err := strconv.QuotedPrefix(line)
			if err != nil {
				return out // the go command rejects the line too
			}
			p, _ := strconv.Unquote(q)
			out = append(out, p)
			line = line[len(q):]
			continue
		}
		end := strings.IndexAny(line, " \t")
		if end < 0 {
			end = len(line)
		}
		out = append(out, line[:end])
		line = line[end:]
	}
	return out
}

// embeds says whether a //go:embed pattern of a package in dir takes the
// file at name: the pattern names the file or a folder above it.
func embeds(dir, pattern, name string) bool {
	rel := name
	if dir != "." {
		var ok bool
		if rel, ok = strings.CutPrefix(name, dir+"/"); !ok {
			return false
		}
	}
	for p := rel; p != "." && p != ""; p = path.Dir(p) {
		if ok, _ := path.Match(pattern, p); ok {
			return true
		}
	}
	return false
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// markMissingImports records, on each Go file that imports a package of
// the module found neither in the change nor at the source, that it
// cannot build: a problem of the source, which the plan reports.
func markMissingImports(c *Change, source *object.Tree) {
	if len(c.Modules) == 0 {
		return
	}
	present := map[string]bool{}
	for _, f := range c.Files {
		if f.Kind != "deleted" && f.isGoCode() {
			present[f.Dir()] = true
		}
	}
	for i := range c.Files {
		f := &c.Files[i]
		for _, imp := range f.Imports {
			dir := c.packageDir(imp)
			if dir == "" {
				continue
			}
			if _, known := present[dir]; !known {
				present[dir] = hasGoFile(source, dir)
			}
			if !present[dir] && f.Problem == "" {
				f.Problem = fmt.Sprintf("%s imports %s, which has no Go files at the source", f.Path, imp)
			}
		}
	}
}

func hasGoFile(root *object.Tree, dir string) bool {
	t := root
	if dir != "." {
		var err error
		if t, err = root.Tree(dir); err != nil {
			return false
		}
	}
	for _, e := range t.Entries {
		if e.Mode.IsFile() && path.Ext(e.Name) == ".go" {
			return true
		}
	}
	return false
}

// droppedModules are the modules that the base go.mod requires and the
// source one does not.
func droppedModules(base, source []byte) []string {
	b, err := modfile.ParseLax("go.mod", base, nil)
	if err != nil || source == nil {
		return nil
	}
	s, err := modfile.ParseLax("go.mod", source, nil)
	if err != nil {
		return nil
	}
	kept := map[string]bool{}
	for _, r := range s.Require {
		kept[r.Mod.Path] = true
	}
	var out []string
	for _, r := range b.Require {
		if !kept[r.Mod.Path] {
			out = append(out, r.Mod.Path)
		}
	}
	return out
}

// modulePath reads the module path of a go.mod file.
func modulePath(gomod []byte) string {
	return modfile.ModulePath(gomod)
}

// packageDir maps an import path inside the module to its directory, or
// "" for an import from outside the module.
func packageDir(module, importPath string) string {
	if module == "" {
		return ""
	}
	if importPath == module {
		return "."
	}
	if rest, ok := strings.CutPrefix(importPath, module+"/"); ok {
		return rest
	}
	return ""
}

// readModules finds the modules at the source that the change touches:
// the one around each changed file (its nearest go.mod), and those each
// go.work uses; and what each go.mod and go.work needs besides.
func readModules(c *Change, st storer.EncodedObjectStorer, source *object.Tree) {
	c.Modules, c.ModuleNeeds, c.WorkspaceUses = map[string]string{}, map[string][]string{}, map[string][]string{}
	read := map[string]bool{} // module roots looked at
	var readMod func(dir string)
	readMod = func(dir string) {
		if read[dir] {
			return
		}
		read[dir] = true
		data := fileAt(st, source, path.Join(dir, "go.mod"))
		if data == nil {
			return
		}
		mf, err := modfile.ParseLax("go.mod", data, nil)
		if err != nil || mf.Module == nil {
			return
		}
		c.Modules[mf.Module.Mod.Path] = dir
		for _, r := range mf.Replace {
			if modfile.IsDirectoryPath(r.New.Path) && !path.IsAbs(r.New.Path) {
				target := path.Join(dir, r.New.Path)
				c.ModuleNeeds[dir] = append(c.ModuleNeeds[dir], target)
				readMod(target)
			}
		}
	}
	walked := map[string]bool{} // folders whose module is found
	for _, f := range c.Files {
		if f.Kind == "deleted" {
			continue
		}
		if path.Base(f.Path) == "go.work" {
			dir := f.Dir()
			if wf, err := modfile.ParseWork("go.work", fileAt(st, source, f.Path), nil); err == nil {
				for _, u := range wf.Use {
					target := path.Join(dir, u.Path)
					c.WorkspaceUses[dir] = append(c.WorkspaceUses[dir], target)
					readMod(target)
				}
			}
		}
		for d := f.Dir(); ; d = path.Dir(d) {
			if walked[d] {
				break
			}
			walked[d] = true
			if fileAt(st, source, path.Join(d, "go.mod")) != nil {
				readMod(d)
				break
			}
			if d == "." {
				break
			}
		}
	}
}

// fileAt reads a file of the tree, or nil.
func fileAt(st storer.EncodedObjectStorer, root *object.Tree, name string) []byte {
	e, err := root.FindEntry(name)
	if err != nil || !e.Mode.IsFile() {
		return nil
	}
	data, err := readBlob(st, e.Hash)
	if err != nil {
		return nil
	}
	return data
}

// moduleRoot is the root of the module of the change that holds dir, or
// "".
func (c *Change) moduleRoot(dir string) string {
	roots := map[string]bool{}
	for _, root := range c.Modules {
		roots[root] = true
	}
	for d := dir; ; d = path.Dir(d) {
		if roots[d] {
			return d
		}
		if d == "." || d == "/" {
			return ""
		}
	}
}

// importRoot is the root of the module of the change that an import path
// is in, or "".
func (c *Change) importRoot(importPath string) string {
	best, dir := "", ""
	for mod, root := range c.Modules {
		if len(mod) > len(best) && (importPath == mod || strings.HasPrefix(importPath, mod+"/")) {
			best, dir = mod, root
		}
	}
	return dir
}

// packageDir maps an import path to the folder of its package in the
// module with the longest path that holds it, or "" for an import from
// outside the modules of the change.
func (c *Change) packageDir(importPath string) string {
	best, dir := "", ""
	for mod, root := range c.Modules {
		if len(mod) > len(best) && (importPath == mod || strings.HasPrefix(importPath, mod+"/")) {
			best, dir = mod, root
		}
	}
	if best == "" {
		return packageDir(c.Module, importPath)
	}
	return path.Join(dir, strings.TrimPrefix(strings.TrimPrefix(importPath, best), "/"))
}
