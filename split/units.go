package split

import (
	"fmt"
	"path"
	"sort"
	"strings"
)

// unit is what the plan keeps in one PR unless it is over the budget: a
// Go package with the folders it owns, a directory, or a set of units that
// import each other in a cycle.
type unit struct {
	name  string
	dirs  []string
	files []File
	deps  map[string]bool // units this one imports, tests included
	// codeDeps are the deps that its code imports, not only its tests.
	codeDeps map[string]bool
	// ties say why it needs each dep (the first cause found, a code
	// file's before a test's); imports are the deps that a file of its
	// package imports (its code, or tests in the package itself): the
	// edges of the import graph, the only ones an import cycle is made of.
	ties    map[string]tieWhy
	imports map[string]bool
	// members are the units merged into this one for a cycle, with
	// their lines, for naming its PR.
	members     []string
	memberLines map[string]int
	// tie says why the members must land together (tieOf).
	tie string
}

// moduleUnit holds go.mod and its neighbours, which every package needs
// before anything else builds. A module nested in a folder of the change
// (tools/go.mod) has a unit of its own, named after its go.mod, which the
// packages below it need instead.
const moduleUnit = "go.mod"

func isModuleFile(p string) bool {
	switch path.Base(p) {
	case "go.mod", "go.sum", "go.work", "go.work.sum":
		return true
	}
	return false
}

// moduleUnitOf is the unit of the module whose root is dir.
func moduleUnitOf(dir string) string {
	if dir == "." {
		return moduleUnit
	}
	return dir + "/" + moduleUnit
}

// moduleDir is the root folder of a module unit; ok is false for any
// other unit.
func moduleDir(unit string) (dir string, ok bool) {
	if unit == moduleUnit {
		return ".", true
	}
	return strings.CutSuffix(unit, "/"+moduleUnit)
}

// workUnit holds a go.work (and its go.work.sum): it comes after the
// modules it uses, since the go command refuses a workspace whose module
// folder is missing; until it lands, each module builds on its own.
const workUnit = "go.work"

func workUnitOf(dir string) string {
	if dir == "." {
		return workUnit
	}
	return dir + "/" + workUnit
}

// workDir is the folder of a workspace unit; ok is false for any other.
func workDir(unit string) (dir string, ok bool) {
	if unit == workUnit {
		return ".", true
	}
	return strings.CutSuffix(unit, "/"+workUnit)
}

// plainSuffix marks a unit of plain files by folder (no Go code): the
// files of a folder without Go code at the top of the module, or those
// of the packages of a cycle, which would make its PRs larger still. No
// path holds "//", so no package's folder can take the name; it reads
// "docs (files)" (displayUnit).
const plainSuffix = "//files"

func plainUnitOf(dir string) string { return dir + plainSuffix }

func isPlainUnit(unit string) bool { return strings.HasSuffix(unit, plainSuffix) }

// testsSuffix marks the unit of a package's tests that come after it:
// "p (tests)" holds its external test package (p_test), and its own test
// files when they would close a cycle.
const testsSuffix = " (tests)"

func testsOf(unit string) string { return unit + testsSuffix }

// unitDir is the folder a unit is about: its own, a module's root, or the
// folder of the package whose external tests it holds.
func unitDir(unit string) string {
	unit = strings.TrimSuffix(strings.TrimSuffix(unit, testsSuffix), plainSuffix)
	if d, ok := moduleDir(unit); ok {
		return d
	}
	if d, ok := workDir(unit); ok {
		return d
	}
	return unit
}

// modules are the roots of the Go modules whose go.mod the change holds,
// the root module's "." among them when it has one.
type modules map[string]bool

func modulesOf(c *Change) modules {
	m := modules{}
	for _, f := range c.Files {
		if path.Base(f.Path) == "go.mod" && f.Kind != "deleted" {
			m[f.Dir()] = true
		}
	}
	return m
}

// of is the unit of the module a folder is in: the nearest module root
// above it that the change holds; "" when there is none.
func (m modules) of(dir string) string {
	for d := dir; ; d = path.Dir(d) {
		if m[d] {
			return moduleUnitOf(d)
		}
		if d == "." || d == "/" {
			return ""
		}
	}
}

// owner is the unit a file belongs to, and why.
type owner struct{ unit, why string }

// groupUnits puts each changed file in its unit, and links each unit to
// the units its files import.
func groupUnits(c *Change, by string) map[string]*unit {
	goModule := by == "package" && c.Module != ""
	ownerOf := dirOwner(by)
	if goModule {
		ownerOf = packageOwner(c)
	}
	units := map[string]*unit{}
	add := func(name string, f File) {
		u := units[name]
		if u == nil {
			u = &unit{name: name, dirs: []string{unitDir(name)}}
			units[name] = u
		}
		u.files = append(u.files, f)
	}
	dirUnit := map[string]string{} // a Go file's directory → its unit
	for _, f := range c.Files {
		o := ownerOf(f)
		f.Reason = o.why
		if f.notCode != "" {
			f.Reason = f.notCode + ", so a plain file; " + o.why
		}
		if f.SetApart != "" {
			f.Reason += "; set apart from the budget: " + f.SetApart
		}
		if goModule && f.Kind != "deleted" && f.isGoCode() && f.externalTest() {
			// Nothing imports an external test package, so it may import
			// what imports its package: as the package's own imports,
			// those made cycles of packages that do not import each
			// other. It comes after its package and what it imports.
			f.Reason = fmt.Sprintf("%s; external test package of %s (package %s): it comes after %s and everything it imports",
				o.why, displayUnit(o.unit), f.pkg, displayUnit(o.unit))
			add(testsOf(o.unit), f)
			continue
		}
		add(o.unit, f)
		if f.isGoCode() && f.Kind != "deleted" {
			dirUnit[f.Dir()] = o.unit
		}
	}
	l := linker{change: c, goModule: goModule, mods: modulesOf(c), units: units, dirUnit: dirUnit, ownerOf: ownerOf, fileUnit: map[string]string{},
		modEdges: goModule && c.goModChanged()}
	for name, u := range units {
		for _, f := range u.files {
			l.fileUnit[f.Path] = name
		}
	}
	if goModule {
		c.needs = c.symbolNeeds()
		l.needs = c.needs
	}
	for _, u := range units {
		l.link(u)
	}
	if goModule {
		l.untangleTests()
		l.explainNeeds()
	}
	return units
}

// explainNeeds adds to each file's reason the files of other units that
// it must land with or after, and why (at most three).
func (l *linker) explainNeeds() {
	for _, name := range sortedKeys(l.units) {
		u := l.units[name]
		for i, f := range u.files {
			var whys []string
			for _, e := range l.needs[f.Path] {
				if l.fileUnit[e.to] != "" {
					whys = append(whys, e.why)
				}
			}
			if len(whys) > 3 {
				whys = append(whys[:3], fmt.Sprintf("%d more", len(whys)-3))
			}
			if len(whys) > 0 {
				u.files[i].Reason += "; " + strings.Join(whys, "; ")
			}
		}
	}
}

// linker works out which units a unit's files import.
type linker struct {
	change   *Change
	goModule bool
	mods     modules
	units    map[string]*unit
	dirUnit  map[string]string
	ownerOf  func(File) owner
	// fileUnit is the unit of each changed file; needs are the changed
	// files each Go file must land with or after (symbolEdges).
	fileUnit map[string]string
	needs    map[string][]fileEdge
	// modEdges says that the module edges order the root go.mod (a
	// modified one): a package needs it only as they say.
	modEdges bool
}

// link sets the unit's dependencies from its files, and which of them
// its code (not only its tests) has.
func (l *linker) link(u *unit) {
	u.deps, u.codeDeps, u.ties, u.imports = map[string]bool{}, map[string]bool{}, nil, nil
	if tested, ok := strings.CutSuffix(u.name, testsSuffix); ok && l.units[tested] != nil {
		u.addTie(tested, tieWhy{text: fmt.Sprintf("the tests of %s (an external test package, or its tests set after it) need the package", displayUnit(tested))}, true)
	}
	needs := l.change.ModuleNeeds // a go.mod's local replace targets
	dir, ok := moduleDir(u.name)
	if d, work := workDir(u.name); work {
		dir, ok, needs = d, true, l.change.WorkspaceUses // a go.work's modules
	}
	if ok && l.goModule {
		// Their go.mod files must be there first.
		for _, target := range needs[dir] {
			if dep := moduleUnitOf(target); dep != u.name && l.units[dep] != nil {
				u.addTie(dep, tieWhy{text: fmt.Sprintf("%s uses the module in %s (a replace directive or a go.work)", displayUnit(u.name), target)}, true)
			}
		}
	}
	for _, f := range u.files {
		l.linkFile(u, f)
	}
}

// addTie records that the unit needs dep, and why: the first reason, or
// the first of its code's.
func (u *unit) addTie(dep string, why tieWhy, code bool) {
	if _, seen := u.ties[dep]; !seen || code && !u.codeDeps[dep] {
		if u.ties == nil {
			u.ties = map[string]tieWhy{}
		}
		u.ties[dep] = why
	}
	u.deps[dep] = true
	u.codeDeps[dep] = u.codeDeps[dep] || code
}

// need ties u to another unit of the change, dep ("" or u itself: none).
func (l *linker) need(u *unit, dep string, why tieWhy, code bool) {
	if dep != "" && dep != u.name && l.units[dep] != nil {
		u.addTie(dep, why, code)
	}
}

// linkFile ties the unit to what one of its files needs: the files it
// must land with or after, its module, what it embeds and imports.
func (l *linker) linkFile(u *unit, f File) {
	code := !strings.HasSuffix(f.Path, "_test.go")
	for _, e := range l.needs[f.Path] {
		l.need(u, l.fileUnit[e.to], tieWhy{f.Path, e.why, formFile}, code) // go.mod's needs among them
	}
	if !f.isGoCode() {
		return // what the go command does not build imports nothing
	}
	if mod := l.mods.of(f.Dir()); l.goModule && mod != u.name && !(mod == moduleUnit && l.modEdges) {
		l.need(u, mod, tieWhy{f.Path, mod, formModule}, code)
	}
	for _, pattern := range f.Embeds {
		// A folder it embeds may be a package of its own (a template
		// main package): its files must be there.
		for _, dir := range sortedKeys(l.dirUnit) {
			if embeds(f.Dir(), pattern, dir+"/x") {
				l.need(u, l.dirUnit[dir], tieWhy{f.Path, dir + " (//go:embed " + pattern + ")", formEmbed}, code)
			}
		}
	}
	for _, imp := range f.Imports {
		l.linkImport(u, f, imp, code)
	}
}

// linkImport ties the unit to the unit of a package one of its files
// imports (and to the go.work that lets it).
func (l *linker) linkImport(u *unit, f File, imp string, code bool) {
	dir := l.change.packageDir(imp)
	if vendored := "vendor/" + imp; dir == "" && l.goModule && l.dirUnit[vendored] != "" {
		// Built from vendor/ (vendor/modules.txt): the vendored copy
		// comes first.
		dir = vendored
	}
	if dir == "" {
		return
	}
	form := formImport
	if !code {
		form = formTestImport
	}
	if !l.goModule {
		l.need(u, l.ownerOf(File{Path: dir + "/x"}).unit, tieWhy{f.Path, imp, form}, code)
		return
	}
	dep := l.dirUnit[dir]
	l.need(u, dep, tieWhy{f.Path, imp, form}, code)
	if dep != "" && dep != u.name && l.units[dep] != nil && !f.externalTest() {
		if u.imports == nil {
			u.imports = map[string]bool{}
		}
		u.imports[dep] = true
	}
	l.need(u, l.workspaceFor(f.Dir(), imp), tieWhy{f.Path, imp, formWorkspace}, code)
}

// workspaceFor is the unit of the go.work that lets the code in dir
// import a package of another module of the change, or "": none is
// needed within a module, or where go.mod replaces the other module with
// its folder.
func (l *linker) workspaceFor(dir, importPath string) string {
	if len(l.change.WorkspaceUses) == 0 {
		return ""
	}
	from, to := l.change.moduleRoot(dir), l.change.importRoot(importPath)
	if to == "" || from == to {
		return ""
	}
	for _, target := range l.change.ModuleNeeds[from] {
		if target == to {
			return ""
		}
	}
	for _, work := range sortedKeys(l.change.WorkspaceUses) {
		for _, use := range l.change.WorkspaceUses[work] {
			if use == to {
				return workUnitOf(work)
			}
		}
	}
	return ""
}

// untangleTests breaks the cycles that only tests make. The go command
// lets p's tests import q while q's tests import p (neither package
// imports the other), but as units of a package and its tests the two
// are a cycle, and a cycle is one PR that cannot be cut. So, while units
// are in a cycle that an import of a test closes, the tests of the
// member with the most such imports move to that package's test unit,
// which comes after both; a cycle of code stays, and is merged.
func (l *linker) untangleTests() {
	for {
		moved := false
		for _, scc := range components(sortedKeys(l.units), func(n string) []string { return sortedKeys(l.units[n].deps) }) {
			if len(scc) < 2 {
				continue
			}
			in := map[string]bool{}
			for _, n := range scc {
				in[n] = true
			}
			best, most := "", 0
			var closes []string
			for _, n := range scc {
				if strings.HasSuffix(n, testsSuffix) {
					continue // its tests have moved already
				}
				var testOnly []string
				for _, d := range sortedKeys(l.units[n].deps) {
					if in[d] && !l.units[n].codeDeps[d] {
						testOnly = append(testOnly, d)
					}
				}
				if len(testOnly) > most {
					best, most, closes = n, len(testOnly), testOnly
				}
			}
			if best == "" {
				continue // a cycle of code
			}
			l.moveTests(l.units[best], closes)
			moved = true
		}
		if !moved {
			return
		}
	}
}

// moveTests moves a package's own test files to its test unit.
func (l *linker) moveTests(u *unit, closes []string) {
	var kept []File
	for _, f := range u.files {
		if !strings.HasSuffix(f.Path, "_test.go") || !f.isGoCode() {
			kept = append(kept, f)
			continue
		}
		f.Reason += fmt.Sprintf("; %s's tests import %s, which need %s in turn (a cycle that only tests close): its tests come after them, so that the packages need not share a PR",
			displayUnit(u.name), strings.Join(closes, ", "), displayUnit(u.name))
		name := testsOf(u.name)
		t := l.units[name]
		if t == nil {
			t = &unit{name: name, dirs: []string{unitDir(name)}}
			l.units[name] = t
		}
		t.files = append(t.files, f)
		l.fileUnit[f.Path] = name
	}
	u.files = kept
	l.link(u)
	l.link(l.units[testsOf(u.name)])
}

// dirOwner groups by directory (by "package" in a project without go.mod)
// or by top-level directory (by "dir"); test folders go with the folder
// they test.
func dirOwner(by string) func(File) owner {
	return func(f File) owner {
		dir := testedDir(f.Dir())
		if by == "dir" {
			if i := strings.IndexByte(dir, '/'); i >= 0 {
				dir = dir[:i]
			}
			return owner{dir, "top-level folder " + dir}
		}
		if dir != f.Dir() {
			return owner{dir, "test folder of " + dir}
		}
		return owner{dir, "folder " + dir}
	}
}

// packageOwner gives each file of a Go module to a package: Go files to
// their own (a package in a test folder, such as shared test helpers, is
// a package too), and files of folders without Go code (testdata,
// fixtures, assets) to the package that embeds them, else the nearest
// package above them, else to the module itself with go.mod.
func packageOwner(c *Change) func(File) owner {
	o := &packageOwners{mods: modulesOf(c), packages: map[string]bool{}, gone: map[string]bool{}}
	for _, f := range c.Files {
		if f.isGoCode() && f.Kind != "deleted" {
			o.packages[f.Dir()] = true
			for _, p := range f.Embeds {
				o.embedded = append(o.embedded, embedder{f.Dir(), p, f.Path})
			}
		}
		if f.isGoCode() && f.Kind == "deleted" {
			o.gone[f.Dir()] = true
		}
	}
	return o.owner
}

// packageOwners is what packageOwner gives files by: the modules, the
// packages at the source, the folders of deleted Go code, and what the
// Go files embed.
type packageOwners struct {
	mods     modules
	packages map[string]bool
	gone     map[string]bool
	embedded []embedder
}

// embedder is a //go:embed pattern of a Go file of folder dir.
type embedder struct{ dir, pattern, file string }

func (o *packageOwners) owner(f File) owner {
	if own, ok := o.moduleFileOwner(f); ok {
		return own
	}
	if f.isGoCode() && o.packages[f.Dir()] {
		return owner{f.Dir(), "package " + f.Dir()}
	}
	if f.isGoCode() {
		// Deleted, with its whole package: the package's removal is a
		// unit of its own, whose old code needs nothing new.
		return owner{f.Dir(), "package " + f.Dir() + ", which the change deletes"}
	}
	for _, e := range o.embedded {
		if embeds(e.dir, e.pattern, f.Path) {
			return owner{e.dir, fmt.Sprintf("embedded by %s (//go:embed %s)", e.file, e.pattern)}
		}
	}
	for d := testedDir(f.Dir()); ; d = path.Dir(d) {
		if o.packages[d] {
			if d == f.Dir() {
				return owner{d, "in the folder of package " + d}
			}
			if top, ok := o.topFolder(f); ok && d == "." {
				return top
			}
			return owner{d, fmt.Sprintf("below package %s, the nearest package above it", d)}
		}
		if o.gone[d] {
			return owner{d, fmt.Sprintf("below package %s, which the change deletes", d)}
		}
		if d == "." {
			break
		}
	}
	if top, ok := o.topFolder(f); ok {
		return top
	}
	// No package above it: it belongs to the module as a whole (README,
	// licence), and comes first with its go.mod.
	if mod := o.mods.of(f.Dir()); mod != "" && mod != moduleUnit {
		return owner{mod, "no package above it: it belongs to the module in " + unitDir(mod) + ", with its go.mod"}
	}
	return owner{moduleUnit, "no package above it: it belongs to the module, with go.mod"}
}

// moduleFileOwner gives a workspace file, a module file and
// vendor/modules.txt to their module or workspace.
func (o *packageOwners) moduleFileOwner(f File) (owner, bool) {
	if b := path.Base(f.Path); b == "go.work" || b == "go.work.sum" {
		return owner{workUnitOf(f.Dir()), "workspace file: it comes after the modules it uses, which it needs there"}, true
	}
	if isModuleFile(f.Path) {
		if f.Dir() == "." {
			return owner{moduleUnit, "module file: every package needs it, so it comes first"}, true
		}
		if o.mods[f.Dir()] {
			return owner{moduleUnitOf(f.Dir()), "module file of the module in " + f.Dir() + ": its packages need it first"}, true
		}
	}
	if path.Base(f.Path) == "modules.txt" && path.Base(f.Dir()) == "vendor" {
		// The go command checks it against go.mod before it builds
		// anything from vendor/: it comes with go.mod, ahead of the
		// vendored packages.
		mod := o.mods.of(path.Dir(f.Dir()))
		if mod == "" {
			mod = moduleUnit
		}
		return owner{mod, "the list of vendored modules, which go.mod must agree with: it comes with go.mod, before the vendored packages"}, true
	}
	return owner{}, false
}

// topFolder: a folder without Go code at the top of the module (a docs
// site, CI files, scripts) is a PR of its own, by folder: no package
// builds from it, and its reviewer is not the code's.
func (o *packageOwners) topFolder(f File) (owner, bool) {
	if f.Dir() == "." || testedDir(f.Dir()) != f.Dir() || o.mods.of(f.Dir()) != moduleUnit && o.mods.of(f.Dir()) != "" {
		return owner{}, false
	}
	top, _, _ := strings.Cut(f.Dir(), "/")
	return owner{plainUnitOf(top), fmt.Sprintf("in %s/, a folder without Go code at the top of the module: its files are a PR of their own", top)}, true
}

// testedDir is the directory whose code a file's directory tests: for
// anything at any depth below a test, tests, __tests__ or testdata folder,
// the folder that holds that one (pkg/x/testdata/golden → pkg/x), so
// that tests and their data go into the PR of the code they test.
func testedDir(dir string) string {
	parts := strings.Split(dir, "/")
	for i, p := range parts {
		if i > 0 && (p == "test" || p == "tests" || p == "__tests__" || p == "testdata") {
			return strings.Join(parts[:i], "/")
		}
	}
	return dir
}

// plainFilesOutOfCycles moves the plain files (neither Go code, nor
// module files, nor test data, nor embedded) of the units that import
// each other in a cycle to units of their own by folder: a cycle's PRs
// are as large as the compiler makes them, and docs would make them
// larger for nothing.
func plainFilesOutOfCycles(units map[string]*unit, c *Change) {
	var embedders []File
	for _, f := range c.Files {
		if len(f.Embeds) > 0 && f.Kind != "deleted" {
			embedders = append(embedders, f)
		}
	}
	embedded := func(name string) bool {
		for _, e := range embedders {
			for _, p := range e.Embeds {
				if embeds(e.Dir(), p, name) {
					return true
				}
			}
		}
		return false
	}
	for _, scc := range components(sortedKeys(units), func(n string) []string { return sortedKeys(units[n].deps) }) {
		if len(scc) < 2 {
			continue
		}
		for _, name := range scc {
			u := units[name]
			var kept []File
			for _, f := range u.files {
				if path.Ext(f.Path) == ".go" || isModuleFile(f.Path) || path.Base(f.Path) == "modules.txt" ||
					testedDir(f.Dir()) != f.Dir() || belowTestdata(f.Dir()) || embedded(f.Path) {
					kept = append(kept, f)
					continue
				}
				dest := plainUnitOf(f.Dir())
				p := units[dest]
				if p == nil {
					p = &unit{name: dest, dirs: []string{f.Dir()}, deps: map[string]bool{}, codeDeps: map[string]bool{}}
					units[dest] = p
				}
				f.Reason += fmt.Sprintf("; a plain file of %s, which must land with %d other packages tied to it: it is a PR of its own, by folder, so as not to make their PRs larger", displayUnit(name), len(scc)-1)
				p.files = append(p.files, f)
			}
			u.files = kept
		}
	}
}

// mergeCycles merges units that import each other in a cycle, so that the
// PR graph is acyclic.
func mergeCycles(units map[string]*unit) map[string]*unit {
	sccs := components(sortedKeys(units), func(n string) []string { return sortedKeys(units[n].deps) })
	out := map[string]*unit{}
	rename := map[string]string{}
	for _, scc := range sccs {
		if len(scc) == 1 {
			out[scc[0]] = units[scc[0]]
			rename[scc[0]] = scc[0]
			continue
		}
		m := &unit{name: strings.Join(scc, " + "), deps: map[string]bool{}, members: scc, memberLines: map[string]int{}}
		m.tie = tieOf(scc, units)
		for _, n := range scc {
			m.dirs = append(m.dirs, units[n].dirs...)
			m.memberLines[n] = weigh(units[n].files).lines
			for _, f := range units[n].files {
				f.Reason += "; " + m.tie
				m.files = append(m.files, f)
			}
			rename[n] = m.name
		}
		out[m.name] = m
	}
	deps := map[string]map[string]bool{}
	ties := map[string]map[string]tieWhy{}
	for _, n := range sortedKeys(units) {
		u := units[n]
		to := rename[n]
		if deps[to] == nil {
			deps[to] = map[string]bool{}
		}
		renamed := to != n
		for d := range u.deps {
			if rename[d] != to {
				deps[to][rename[d]] = true
				renamed = renamed || rename[d] != d
			}
		}
		if !renamed {
			ties[to] = u.ties // a unit alone, whose deps are alone too
			continue
		}
		if ties[to] == nil {
			ties[to] = map[string]tieWhy{}
		}
		for _, d := range sortedKeys(u.deps) { // the first cause, in a fixed order
			if _, seen := ties[to][rename[d]]; rename[d] != to && !seen {
				ties[to][rename[d]] = u.ties[d]
			}
		}
	}
	for name, u := range out {
		u.deps, u.ties = deps[name], ties[name]
	}
	return out
}

// shortestCycle is one shortest cycle through start among the nodes in,
// breadth first along next: start, …, the node that leads back to start
// (at most limit of them); nil when start is on none.
func shortestCycle(start string, limit int, next func(string) []string, in map[string]bool) []string {
	prev := map[string]string{}
	queue, last := []string{start}, ""
	for len(queue) > 0 && last == "" {
		n := queue[0]
		queue = queue[1:]
		for _, d := range next(n) {
			if !in[d] {
				continue
			}
			if d == start {
				last = n
				break
			}
			if _, seen := prev[d]; !seen {
				prev[d] = n
				queue = append(queue, d)
			}
		}
	}
	if last == "" {
		return nil
	}
	path := []string{last}
	for path[0] != start && len(path) <= limit {
		path = append([]string{prev[path[0]]}, path...)
	}
	return path
}

// components are the strongly connected components of a graph (Tarjan),
// each sorted, dependencies before their dependents.
func components(nodes []string, deps func(string) []string) [][]string {
	index, low := map[string]int{}, map[string]int{}
	onStack := map[string]bool{}
	var stack []string
	var out [][]string
	var strong func(v string)
	strong = func(v string) {
		index[v], low[v] = len(index), len(index)
		stack = append(stack, v)
		onStack[v] = true
		for _, w := range deps(v) {
			if _, seen := index[w]; !seen {
				strong(w)
				low[v] = min(low[v], low[w])
			} else if onStack[w] {
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] == index[v] {
			var scc []string
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				onStack[w] = false
				scc = append(scc, w)
				if w == v {
					break
				}
			}
			sort.Strings(scc)
			out = append(out, scc)
		}
	}
	for _, v := range nodes {
		if _, seen := index[v]; !seen {
			strong(v)
		}
	}
	return out
}

// tieOf says why units that need each other in a cycle stay in one PR,
// naming each tie by its cause. Only the import graph can make an import
// cycle (the go command refuses one, so the source itself does not
// build); any other cycle is of ties: a changed signature and its
// callers, a moved name, go.mod's go directive or modules, an embed,
// tests. It walks one shortest cycle through the first member.
func tieOf(scc []string, units map[string]*unit) string {
	in := map[string]bool{}
	for _, n := range scc {
		in[n] = true
	}
	names := make([]string, len(scc))
	for i, n := range scc {
		names[i] = displayUnit(n)
	}
	for _, c := range components(scc, func(n string) []string {
		var out []string
		for _, d := range sortedKeys(units[n].imports) {
			if in[d] {
				out = append(out, d)
			}
		}
		return out
	}) {
		if len(c) > 1 {
			return fmt.Sprintf("%s import each other in a cycle, which the go command refuses (the source does not build as it is): they stay in one PR", strings.Join(c, ", "))
		}
	}
	// Breadth first from the first member back to it, along the deps.
	start := scc[0]
	path := shortestCycle(start, len(scc), func(n string) []string { return sortedKeys(units[n].deps) }, in)
	if path == nil {
		return fmt.Sprintf("%s need each other: they stay in one PR", joinNames(names))
	}
	var said []string
	for i, from := range path {
		to := start
		if i+1 < len(path) {
			to = path[i+1]
		}
		why := units[from].ties[to].String()
		if why == "" {
			why = "it needs it"
		}
		said = append(said, fmt.Sprintf("%s needs %s (%s)", displayUnit(from), displayUnit(to), why))
	}
	return fmt.Sprintf("%s need each other, though not in an import cycle: %s; so they stay in one PR", joinNames(names), strings.Join(said, "; "))
}

// joinNames lists names for a message: all of up to four, else the
// first three and how many more.
func joinNames(names []string) string {
	if len(names) > 4 {
		return fmt.Sprintf("%s and %d more", strings.Join(names[:3], ", "), len(names)-3)
	}
	if len(names) > 1 {
		return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
	}
	return strings.Join(names, "")
}

// tieWhy is why a unit needs another, formatted only when a person is
// told: a plan of 10,000 packages has as many ties, few of them read.
type tieWhy struct {
	file, text string
	form       tieForm
}

type tieForm uint8

const (
	formText       tieForm = iota // text alone
	formFile                      // file: text
	formImport                    // file imports text
	formTestImport                // file (a test) imports text
	formModule                    // file is Go code of the module of go.mod text
	formWorkspace                 // file imports text through a go.work
	formEmbed                     // file embeds text
)

func (t tieWhy) String() string {
	switch t.form {
	case formFile:
		return t.file + ": " + t.text
	case formImport:
		return t.file + " imports " + t.text
	case formTestImport:
		return t.file + " (a test) imports " + t.text
	case formModule:
		return t.file + " is Go code of the module, which needs its " + t.text + " first"
	case formWorkspace:
		return t.file + " imports " + t.text + ", of another module that a go.work uses"
	case formEmbed:
		return t.file + " embeds " + t.text + ", whose files must be there"
	}
	return t.text
}
