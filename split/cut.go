package split

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path"
	"slices"
	"sort"
	"strings"
)

// cutPackage cuts an oversize Go package into consecutive parts, each
// within the budget where its files allow, such that every part builds on
// the parts before it: a file comes after the files whose declarations it
// uses, files that use each other in a cycle stay together, a type stays
// with its methods, a test file comes right after the last code it uses
// (an external _test package after all of it), and embedded files go with
// the file that embeds them. It returns no parts, and why, when the
// package cannot be cut safely.
func cutPackage(u *unit, opts Options, c *Change) (parts [][]File, partWhy []string, why string) {
	// A package's test unit is cut as code is: a test file after the
	// test files whose helpers it uses.
	_, onlyTests := strings.CutSuffix(u.name, testsSuffix)
	g := fileGraph{deps: map[string][]string{}, test: map[string]bool{}, extra: map[string][]File{}, decl: map[string][]string{}, onlyTests: onlyTests,
		gone: map[string]bool{}}
	inUnit := map[string]bool{}
	for _, d := range u.dirs {
		inUnit[d] = true
	}
	var code, tail []File
	code, tail, g.old = unitCode(u, inUnit)
	// A package of tests alone (an integration suite) has no code for
	// its tests to follow: its test files are ordered as code, each
	// after the test files whose helpers it uses.
	testsOnly := len(code) > 0
	for _, f := range code {
		testsOnly = testsOnly && strings.HasSuffix(f.Path, "_test.go")
	}
	g.onlyTests = g.onlyTests || testsOnly
	files, why := g.parse(code)
	if why != "" {
		return nil, nil, why
	}
	// A modified go.mod is ordered as the module edges say, as one of
	// the files (go.sum and vendor/modules.txt with it); a new one comes
	// with the first part, which every package needs.
	if c.goModChanged() && len(c.needs) > 0 {
		for _, f := range tail {
			if f.Path == moduleUnit {
				files[f.Path] = parsedFile{f, &ast.File{Name: &ast.Ident{Name: ""}}}
			}
		}
	}
	g.link(files, c, inUnit)
	first, rest := g.placeTail(files, tail)
	lines := func(name string) int {
		return weigh(append([]File{files[name].File}, g.extra[name]...)).lines
	}
	pc := &partCutter{opts: opts, cur: first, curSize: weigh(first)}
	for _, b := range g.blocks(sortedKeys(files), lines, opts.MaxLines) {
		if g.cutDecls(b, files, lines, pc) {
			continue
		}
		pc.add(g.blockFiles(b, files))
		if pc.last.over(opts) && len(b.cycle) > 1 {
			pc.curWhy = g.tied(b.cycle, pc.last, c)
		}
	}
	for _, f := range rest {
		pc.add([]File{f})
	}
	pc.flush()
	parts, partWhy = pc.parts, pc.partWhy
	if len(parts) < 2 {
		if partWhy[0] != "" {
			return nil, nil, partWhy[0]
		}
		return nil, nil, "its files use each other too closely to cut"
	}
	for i, p := range parts {
		for j := range p {
			p[j].Reason = fmt.Sprintf("%s; part %d of %d of package %s, cut because it is over the budget", p[j].Reason, i+1, len(parts), u.name)
		}
	}
	return parts, partWhy, ""
}

// unitCode splits a unit's files into the Go code of its package
// folders and the rest, and names the folders that have Go files at the
// base.
func unitCode(u *unit, inUnit map[string]bool) (code, tail []File, old map[string]bool) {
	old = map[string]bool{}
	for _, f := range u.files {
		switch {
		case f.isGoCode() && inUnit[f.Dir()]:
			code = append(code, f)
			if f.Kind != "added" {
				old[f.Dir()] = true
			}
		default:
			tail = append(tail, f)
		}
	}
	return code, tail, old
}

// placeTail places the files that are not Go code: embedded files
// travel with the file that embeds them; module files with go.mod (else
// first); the rest (test data, docs) after the code, beside the tests.
func (g *fileGraph) placeTail(files map[string]parsedFile, tail []File) (first, rest []File) {
	for _, f := range tail {
		_, isNode := files[f.Path]
		switch {
		case isNode:
		case isModuleFile(f.Path) || path.Base(f.Path) == "modules.txt":
			if _, ok := files[moduleUnit]; ok && (isRootModuleFile(f.Path) || path.Base(f.Path) == "modules.txt") {
				g.extra[moduleUnit] = append(g.extra[moduleUnit], f)
			} else {
				first = append(first, f)
			}
		default:
			if by := g.embedder(files, f.Path); by != "" {
				g.extra[by] = append(g.extra[by], f)
			} else {
				rest = append(rest, f)
			}
		}
	}
	return first, rest
}

// blockFiles are a block's files with what travels with each, each
// with its reason.
func (g *fileGraph) blockFiles(b block, files map[string]parsedFile) []File {
	var bf []File
	for _, name := range b.files {
		for _, f := range append([]File{files[name].File}, g.extra[name]...) {
			f.Reason = b.reason(name, f)
			if g.gone[f.Dir()] && f.Path == name {
				f.Reason = files[name].Reason + "; deleted with its package, no later than the files whose declarations it used"
			}
			bf = append(bf, f)
		}
	}
	return bf
}

// cutDecls cuts a block whose cycle of new files is over the budget along
// the files' declarations (declCut), its embedded files with the first
// part and its tests after the last. It says whether it did.
func (g *fileGraph) cutDecls(b block, files map[string]parsedFile, lines func(string) int, pc *partCutter) bool {
	code := 0
	for _, n := range b.cycle {
		code += lines(n)
	}
	whole := 0
	for _, n := range b.files {
		whole += lines(n)
	}
	// A cycle over the budget is cut; so is one that does not fit what
	// is left of the part being filled, when that is a quarter of the
	// budget or more: else that room is lost, and a PR with it.
	left := pc.opts.MaxLines - pc.curSize.lines
	fill := len(pc.cur) > 0 && whole > left && left >= pc.opts.MaxLines/4
	if len(b.cycle) < 2 || g.onlyTests || code <= pc.opts.MaxLines && !fill {
		return false
	}
	// The first part fills what is left of the part being filled, when
	// that is worth a part's start.
	room := pc.opts.MaxLines
	if left := pc.opts.MaxLines - pc.curSize.lines; len(pc.cur) > 0 && left >= pc.opts.MaxLines/10 {
		room = left
	}
	parts, why := declCut(b.cycle, files, pc.opts.MaxLines, room)
	if why != "" || len(parts) < 2 {
		return false
	}
	var tail []File
	for _, name := range b.files {
		if !slices.Contains(b.cycle, name) {
			f := files[name].File
			f.Reason = b.reason(name, f)
			tail = append(tail, f)
		}
	}
	for i, part := range parts {
		for j, f := range part {
			how := "whole, its last declarations"
			if f.Part != "" {
				how = "lines " + f.Part + ", the declarations this part needs"
			}
			part[j].Reason = fmt.Sprintf("%s; %s use each other in a cycle of %d lines, too large for one PR: cut along their declarations, part %d of %d brings %s",
				files[f.Path].Reason, strings.Join(b.cycle, ", "), code, i+1, len(parts), how)
		}
		if i == 0 {
			for _, name := range b.cycle {
				part = append(part, g.extra[name]...)
			}
		}
		pc.add(part)
	}
	if len(tail) > 0 {
		pc.add(tail)
	}
	return true
}

// partCutter fills a cut package's parts in order within the budget.
type partCutter struct {
	opts    Options
	parts   [][]File
	partWhy []string
	cur     []File
	curSize size
	curWhy  string
	last    size // the size of what was added last
}

// add puts files in the part being filled, after ending it if they do
// not fit.
func (pc *partCutter) add(fs []File) {
	pc.last = weigh(fs)
	if len(pc.cur) > 0 && pc.curSize.plus(pc.last).over(pc.opts) {
		pc.flush()
	}
	for _, f := range fs {
		// A file cut along its declarations comes again in the next
		// part: where both parts share a PR, the file is there once, as
		// the later part has it.
		if i := slices.IndexFunc(pc.cur, func(c File) bool { return c.Path == f.Path }); i >= 0 {
			f.Lines += pc.cur[i].Lines
			pc.cur[i] = f
			continue
		}
		pc.cur = append(pc.cur, f)
	}
	pc.curSize = weigh(pc.cur)
}

func (pc *partCutter) flush() {
	if len(pc.cur) > 0 {
		pc.parts = append(pc.parts, pc.cur)
		pc.partWhy = append(pc.partWhy, pc.curWhy)
		pc.cur, pc.curSize, pc.curWhy = nil, size{}, ""
	}
}

// tied says why a cycle of files over the budget cannot be cut: one
// cycle of their ties, each named by its cause (through go.mod when it is
// among them), and how many ties of each cause hold the files together.
func (g *fileGraph) tied(cycle []string, s size, c *Change) string {
	in := map[string]bool{}
	for _, f := range cycle {
		in[f] = true
	}
	why := map[[2]string]string{}
	causes := map[string]int{}
	total := 0
	for _, f := range cycle {
		for _, e := range c.needs[f] {
			if in[e.to] {
				if why[[2]string{f, e.to}] == "" {
					why[[2]string{f, e.to}] = e.why
				}
				causes[tieCause(e.why)]++
				total++
			}
		}
	}
	lines := fmt.Sprintf("%d lines", s.lines)
	if s.rawLines > s.lines {
		lines += fmt.Sprintf(", and %d set apart", s.rawLines-s.lines)
	}
	// One shortest cycle, breadth first along the graph the cut uses,
	// from go.mod if it is among the files, else from the first.
	start := cycle[0]
	if in[moduleUnit] {
		start = moduleUnit
	}
	var steps []string
	if path := shortestCycle(start, len(cycle), func(n string) []string { return g.deps[n] }, in); path != nil {
		for k, from := range path {
			to := start
			if k+1 < len(path) {
				to = path[k+1]
			}
			w := why[[2]string{from, to}]
			if w == "" {
				w = "uses its declarations"
			}
			steps = append(steps, fmt.Sprintf("%s → %s (%s)", from, to, w))
		}
		if len(steps) > 6 {
			steps = append(append(steps[:5], fmt.Sprintf("… %d more", len(steps)-6)), steps[len(steps)-1])
		}
	}
	if total == 0 {
		// New code whose files name each other's declarations.
		var files []string
		for _, st := range steps {
			from, _, _ := strings.Cut(st, " → ")
			files = append(files, from)
		}
		if len(steps) < 2 || strings.HasPrefix(steps[len(steps)-2], "…") {
			return fmt.Sprintf("%d files (%s) use each other's declarations in a cycle: %s", len(cycle), lines, strings.Join(cycle, ", "))
		}
		return fmt.Sprintf("%d files (%s) use each other's declarations in a cycle, so no tip can hold some of them and build: %s; one cycle of them: %s → %s → %s",
			len(cycle), lines, joinNames(cycle), strings.Join(files[:len(files)-1], " → "), files[len(files)-1], files[0])
	}
	var counts []string
	for _, cause := range sortedKeys(causes) {
		counts = append(counts, fmt.Sprintf("%d %s", causes[cause], cause))
	}
	sort.SliceStable(counts, func(a, b int) bool {
		var x, y int
		fmt.Sscan(counts[a], &x)
		fmt.Sscan(counts[b], &y)
		return x > y
	})
	return fmt.Sprintf("%d files (%s) must land in one PR, each needing another of them, as the compiler sees them at each tip; one cycle of their ties: %s; their %d ties by cause: %s",
		len(cycle), lines, strings.Join(steps, "; "), total, strings.Join(counts, ", "))
}

// tieCause names the cause of a tie between two files by its reason.
func tieCause(why string) string {
	switch {
	case strings.Contains(why, "go.mod"):
		return "with go.mod (its go directive or modules)"
	case strings.Contains(why, "moves from"):
		return "of a name that moves between files"
	case strings.Contains(why, "land together"):
		return "of a changed signature or declaration and its users"
	case strings.Contains(why, "drops or changes"):
		return "of old code that uses what the change drops or changes"
	case strings.Contains(why, "gains"):
		return "of an interface that gains a method"
	case strings.Contains(why, "whose method or field"), strings.Contains(why, "is a new type"):
		return "of a type and its methods"
	case strings.Contains(why, "declares it"):
		return "of a use of a new declaration"
	}
	return "of other uses"
}

// parsedFile is a Go file of a package being cut.
type parsedFile struct {
	File
	ast *ast.File
}

// fileGraph is which files of one package use which.
type fileGraph struct {
	deps  map[string][]string // file → files whose declarations it uses
	test  map[string]bool
	extra map[string][]File   // file → files it embeds
	decl  map[string][]string // package.name → files declaring it
	// onlyTests is a package's external tests, whose files are all the
	// code there is to order.
	onlyTests bool
	// old are the package folders that have Go files at the base; gone
	// those whose Go files the change deletes, every one.
	old, gone map[string]bool
}

// link adds what the declarations of the two versions say (symbolEdges)
// and, for a file that imports a new package of the unit, that package's
// code, which must exist before anything imports it.
func (g *fileGraph) link(files map[string]parsedFile, c *Change, inUnit map[string]bool) {
	codeOf := map[string][]string{} // a new package's folder → its code files
	for _, name := range sortedKeys(files) {
		if f := files[name]; !g.test[name] && !g.old[f.Dir()] && !strings.HasSuffix(f.pkg, "_test") && path.Ext(name) == ".go" {
			codeOf[f.Dir()] = append(codeOf[f.Dir()], name)
		}
	}
	for name, f := range files {
		for _, e := range c.needs[name] {
			if _, ok := files[e.to]; ok {
				g.deps[name] = append(g.deps[name], e.to)
			}
		}
		// A Go file it embeds (x/tools' modernize.go embeds its doc.go)
		// must be there: it comes first, or with it.
		for _, pattern := range f.Embeds {
			for other := range files {
				if other != name && other != moduleUnit && embeds(f.Dir(), pattern, other) {
					g.deps[name] = append(g.deps[name], other)
				}
			}
		}
		for _, imp := range f.Imports {
			if d := c.packageDir(imp); d != f.Dir() && inUnit[d] {
				g.deps[name] = append(g.deps[name], codeOf[d]...)
			}
		}
		sort.Strings(g.deps[name])
		g.deps[name] = dedupe(g.deps[name], name)
	}
}

// parse reads the package's files and links each to the files it uses.
func (g *fileGraph) parse(code []File) (map[string]parsedFile, string) {
	r := &packageReader{g: g, fset: token.NewFileSet(), files: map[string]parsedFile{}, methods: map[string][]string{}, gone: goneDirs(code)}
	for dir := range r.gone {
		if r.gone[dir] {
			g.old[dir], g.gone[dir] = false, true
		}
	}
	for _, f := range code {
		if problem := r.read(f); problem != "" {
			return nil, problem
		}
	}
	files := r.files
	g.linkUses(files)
	g.linkMethods(r.methods, files)
	g.reverseGone(files, r.gone)
	for _, m := range r.mains {
		// Its package needs a func main until its last file goes.
		for name, f := range files {
			if f.Dir() == path.Dir(m) && name != m {
				g.deps[m] = append(g.deps[m], name)
			}
		}
	}
	for name, d := range g.deps {
		sort.Strings(d)
		g.deps[name] = dedupe(d, name)
	}
	return files, ""
}

// goneDirs are the folders of code whose files the change all deletes: a
// package the change deletes whole is deleted along what its old files
// use of each other, the other way round: a file goes no later than the
// files whose declarations it uses.
func goneDirs(code []File) map[string]bool {
	gone := map[string]bool{}
	for _, f := range code {
		gone[f.Dir()] = true
	}
	for _, f := range code {
		gone[f.Dir()] = gone[f.Dir()] && f.Kind == "deleted"
	}
	return gone
}

// packageReader parses the files of a package for fileGraph.parse.
type packageReader struct {
	g       *fileGraph
	fset    *token.FileSet
	files   map[string]parsedFile
	methods map[string][]string // package.type → files with its methods
	gone    map[string]bool
	mains   []string // files of deleted main packages that declare func main
}

// read parses one file and declares what it declares; a problem says
// why the package cannot be cut along its declarations.
func (r *packageReader) read(f File) string {
	g, gone := r.g, r.gone
	src := f.src
	if gone[f.Dir()] {
		src = f.baseSrc
	} else if f.Kind == "deleted" {
		// Gone at the source: it declares nothing there, and what its
		// old version declared orders it (symbolEdges).
		if src = f.baseSrc; src != nil {
			if a, err := parser.ParseFile(r.fset, f.Path, src, parser.PackageClauseOnly); err == nil {
				r.files[f.Path] = parsedFile{f, &ast.File{Name: a.Name}}
				g.test[f.Path] = strings.HasSuffix(f.Path, "_test.go") && !g.onlyTests
				return ""
			}
		}
	}
	if src == nil {
		// Not read whole (over maxBlobRead); a nil source would have the
		// parser read the path from the working directory.
		return fmt.Sprintf("%s is over %d MiB, too big to read along its declarations", f.Path, maxBlobRead>>20)
	}
	a, err := parser.ParseFile(r.fset, f.Path, src, parser.ParseComments)
	if err != nil {
		return fmt.Sprintf("%s does not parse: %s", f.Path, firstLine(err.Error()))
	}
	if a.Name.Name == "main" && !g.old[f.Dir()] && !gone[f.Dir()] {
		return "a new main package needs its func main in every part"
	}
	if a.Name.Name == "main" && gone[f.Dir()] && declaresMain(a) {
		r.mains = append(r.mains, f.Path)
	}
	r.files[f.Path] = parsedFile{f, a}
	// The tests of a deleted package go first, as any file that uses
	// others: they are ordered as code.
	g.test[f.Path] = strings.HasSuffix(f.Path, "_test.go") && !g.onlyTests && !gone[f.Dir()]
	r.declare(f.Dir()+":"+a.Name.Name, a, f.Path)
	return ""
}

// declaresMain says whether a file declares func main.
func declaresMain(a *ast.File) bool {
	for _, d := range a.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && fn.Name.Name == "main" {
			return true
		}
	}
	return false
}

// declare notes the package-level names a file declares, and the types
// whose methods it declares.
func (r *packageReader) declare(pkg string, a *ast.File, file string) {
	for _, d := range a.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv != nil && len(d.Recv.List) == 1 {
				t := pkg + "." + receiverType(d.Recv.List[0].Type)
				r.methods[t] = append(r.methods[t], file)
			} else {
				r.g.declare(pkg, d.Name.Name, file)
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					r.g.declare(pkg, s.Name.Name, file)
				case *ast.ValueSpec:
					for _, n := range s.Names {
						r.g.declare(pkg, n.Name, file)
					}
				}
			}
		}
	}
}

// linkUses links each file to the files that declare the names it uses.
func (g *fileGraph) linkUses(files map[string]parsedFile) {
	var codeFiles []string
	for name := range files {
		if !g.test[name] {
			codeFiles = append(codeFiles, name)
		}
	}
	sort.Strings(codeFiles)
	byPackage := map[string][]string{} // in a test unit: package name → its files
	codeIn := map[string][]string{}    // folder → its code files
	for name, f := range files {
		byPackage[f.Dir()+":"+f.ast.Name.Name] = append(byPackage[f.Dir()+":"+f.ast.Name.Name], name)
	}
	for _, name := range codeFiles {
		codeIn[files[name].Dir()] = append(codeIn[files[name].Dir()], name)
	}
	for name, f := range files {
		pkg := f.Dir() + ":" + f.ast.Name.Name
		if strings.HasSuffix(name, "_test.go") {
			// go vet checks that ExampleT_M names a T with a method M:
			// the name refers to T as much as code does.
			for _, id := range exampleSubjects(f.ast) {
				g.deps[name] = append(g.deps[name], g.decl[strings.TrimSuffix(pkg, "_test")+"."+id]...)
			}
		}
		if g.old[f.Dir()] {
			// A package the base has: what its files keep declaring as
			// it was orders nothing; what changes, symbolEdges orders.
			continue
		}
		switch {
		case strings.HasSuffix(pkg, "_test") && !g.onlyTests:
			// An external test imports the whole package.
			g.deps[name] = append(g.deps[name], codeIn[f.Dir()]...)
		case strings.HasSuffix(pkg, "_test"):
			// Beside the package's own test files (export_test.go), an
			// external test may use what they declare.
			g.deps[name] = append(g.deps[name], byPackage[strings.TrimSuffix(pkg, "_test")]...)
		}
		for _, id := range f.ast.Unresolved {
			g.deps[name] = append(g.deps[name], g.decl[pkg+"."+id.Name]...)
		}
	}
}

// linkMethods keeps a type and its methods together: a value of the type
// must have its whole method set wherever it is used (methods that tests
// declare only come with the tests).
func (g *fileGraph) linkMethods(methods map[string][]string, files map[string]parsedFile) {
	for typ, ms := range methods {
		for _, m := range ms {
			if g.old[files[m].Dir()] {
				continue
			}
			for _, t := range g.decl[typ] {
				g.deps[m] = append(g.deps[m], t)
				if !g.test[m] {
					g.deps[t] = append(g.deps[t], m)
				}
			}
		}
	}
}

// reverseGone turns round the links between files of deleted packages.
func (g *fileGraph) reverseGone(files map[string]parsedFile, gone map[string]bool) {
	reversed := map[string][]string{}
	for name, deps := range g.deps {
		for _, d := range deps {
			if gone[files[name].Dir()] && gone[files[d].Dir()] {
				reversed[d] = append(reversed[d], name)
			} else {
				reversed[name] = append(reversed[name], d)
			}
		}
	}
	g.deps = reversed
}

func (g *fileGraph) declare(pkg, name, file string) {
	if name != "_" && name != "init" {
		g.decl[pkg+"."+name] = append(g.decl[pkg+"."+name], file)
	}
}

// receiverType is the type name of a method receiver: T, *T, T[K], *T[K].
func receiverType(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.ParenExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}

// embedder is the file of the unit whose //go:embed takes name. A
// pattern is relative to the embedding file's own folder: the unit's
// name is not a folder when it holds packages tied together, and the
// embedded file then went after all the code, in a later part than the
// file that embeds it (go-task's init.go and taskfile/templates).
func (g *fileGraph) embedder(files map[string]parsedFile, name string) string {
	for _, p := range sortedKeys(files) {
		for _, pattern := range files[p].Embeds {
			if embeds(files[p].Dir(), pattern, name) {
				return p
			}
		}
	}
	return ""
}

// block is a group of code files that use each other in a cycle (often
// one file), followed by the test files that need nothing after it.
type block struct {
	files []string
	cycle []string // the code files that use each other, if more than one
	test  map[string]bool
}

func (b block) reason(name string, f File) string {
	switch {
	case f.Path != name:
		return f.Reason // an embedded file keeps its reason
	case b.test[name]:
		return f.Reason + "; a test, right after the last code it uses"
	case len(b.cycle) > 1:
		return f.Reason + fmt.Sprintf("; %s use each other in a cycle, so they stay together", strings.Join(b.cycle, ", "))
	}
	return f.Reason + "; after the files whose declarations it uses"
}

// blocks orders the files so that each comes after what it uses, and
// cuts that order into blocks: code, then the tests that it completes.
// The tests are part of the code's block, unless that code is over the
// budget by itself (a cycle of files too large for any PR): then they are
// blocks of their own right after it, so that the part is not larger
// still, and they go into the next parts.
func (g *fileGraph) blocks(names []string, lines func(string) int, budget int) []block {
	sccs := components(names, func(n string) []string { return g.deps[n] })
	// components lists every dependency before its dependents; a test
	// moves up to just after the last component it needs.
	var out []block
	tests := map[int][]block{} // code block → the tests that follow it
	var early []string         // tests that need no code: they wait for the first code
	sccOf := map[string]int{}
	for _, scc := range sccs {
		isTest := true
		for _, n := range scc {
			isTest = isTest && g.test[n]
		}
		if isTest && len(out) == 0 {
			early = append(early, scc...)
			continue
		}
		if isTest {
			last := 0
			for _, n := range scc {
				for _, d := range g.deps[n] {
					last = max(last, sccOf[d])
				}
			}
			t := block{files: scc, test: map[string]bool{}}
			for _, n := range scc {
				sccOf[n] = last
				t.test[n] = true
			}
			tests[last] = append(tests[last], t)
			continue
		}
		b := block{files: scc, cycle: scc, test: map[string]bool{}}
		for _, n := range early {
			b.files, b.test[n], sccOf[n] = append(b.files, n), true, len(out)
		}
		early = nil
		out = append(out, b)
		for _, n := range scc {
			sccOf[n] = len(out) - 1
		}
	}
	if len(early) > 0 { // a package of tests only
		out = append(out, block{files: early, test: map[string]bool{}})
	}
	var ordered []block
	for i, b := range out {
		size := 0
		for _, n := range b.files {
			size += lines(n)
		}
		// The tests that complete this code join its block while it
		// stays within the budget; the rest are blocks of their own
		// right after it, so that no part is larger than it must be.
		// A test that uses a test left after (its helpers) goes after
		// too, behind it.
		var after []block
		leftAfter := map[string]bool{}
		for _, t := range tests[i] {
			tl, needsLeft := 0, false
			for _, n := range t.files {
				tl += lines(n)
				for _, d := range g.deps[n] {
					needsLeft = needsLeft || leftAfter[d]
				}
			}
			if size+tl > budget || needsLeft {
				after = append(after, t)
				for _, n := range t.files {
					leftAfter[n] = true
				}
				continue
			}
			size += tl
			b.files = append(b.files, t.files...)
			for n := range t.test {
				b.test[n] = true
			}
		}
		ordered = append(append(ordered, b), after...)
	}
	return ordered
}

// dedupe removes repeats (of a sorted list) and self.
func dedupe(list []string, self string) []string {
	out := list[:0]
	for i, s := range list {
		if s != self && (i == 0 || s != list[i-1]) {
			out = append(out, s)
		}
	}
	return out
}

// exampleSubjects are the identifiers that a test file's Example
// functions are named after: Zed for ExampleZed, T for ExampleT_M and
// ExampleT_suffix.
func exampleSubjects(f *ast.File) []string {
	var out []string
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Recv != nil {
			continue
		}
		rest, ok := strings.CutPrefix(fn.Name.Name, "Example")
		if !ok || rest == "" {
			continue
		}
		if id, _, _ := strings.Cut(rest, "_"); id != "" {
			out = append(out, id)
		}
	}
	return out
}
