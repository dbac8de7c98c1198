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
	lines int
	deps  map[string]bool // units this one imports, tests included
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

// unitDir is the folder a unit is about: its own, or a module's root.
func unitDir(unit string) string {
	if d, ok := moduleDir(unit); ok {
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

// groupUnits puts each changed file in its unit.
func groupUnits(c *Change, by string) map[string]*unit {
	goModule := by == "package" && c.Module != ""
	ownerOf := dirOwner(by)
	if goModule {
		ownerOf = packageOwner(c)
	}
	mods := modulesOf(c)
	units := map[string]*unit{}
	dirUnit := map[string]string{} // a Go file's directory → its unit
	for _, f := range c.Files {
		o := ownerOf(f)
		u := units[o.unit]
		if u == nil {
			u = &unit{name: o.unit, dirs: []string{unitDir(o.unit)}, deps: map[string]bool{}}
			units[o.unit] = u
		}
		f.Reason = o.why
		u.files = append(u.files, f)
		u.lines += f.Lines
		if path.Ext(f.Path) == ".go" && f.Kind != "deleted" {
			dirUnit[f.Dir()] = o.unit
		}
	}
	for _, u := range units {
		for _, f := range u.files {
			if mod := mods.of(f.Dir()); goModule && mod != u.name && units[mod] != nil && path.Ext(f.Path) == ".go" {
				u.deps[mod] = true
			}
			for _, imp := range f.Imports {
				dir := packageDir(c.Module, imp)
				if vendored := "vendor/" + imp; dir == "" && goModule && dirUnit[vendored] != "" {
					// Built from vendor/ (vendor/modules.txt): the
					// vendored copy comes first.
					dir = vendored
				}
				if dir == "" {
					continue
				}
				dep := dirUnit[dir]
				if !goModule {
					dep = ownerOf(File{Path: dir + "/x"}).unit
				}
				if dep != "" && dep != u.name && units[dep] != nil {
					u.deps[dep] = true
				}
			}
		}
	}
	return units
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
// their own, and files of folders without Go code (testdata, fixtures,
// assets) to the package that embeds them, else the nearest package above
// them, else to the module itself with go.mod.
func packageOwner(c *Change) func(File) owner {
	mods := modulesOf(c)
	packages := map[string]bool{}
	type embed struct{ dir, pattern, file string }
	var embedded []embed
	for _, f := range c.Files {
		if path.Ext(f.Path) == ".go" && f.Kind != "deleted" && testedDir(f.Dir()) == f.Dir() {
			packages[f.Dir()] = true
			for _, p := range f.Embeds {
				embedded = append(embedded, embed{f.Dir(), p, f.Path})
			}
		}
	}
	return func(f File) owner {
		if isModuleFile(f.Path) {
			if f.Dir() == "." {
				return owner{moduleUnit, "module file: every package needs it, so it comes first"}
			}
			if mods[f.Dir()] {
				return owner{moduleUnitOf(f.Dir()), "module file of the module in " + f.Dir() + ": its packages need it first"}
			}
		}
		if path.Ext(f.Path) == ".go" && packages[f.Dir()] {
			return owner{f.Dir(), "package " + f.Dir()}
		}
		for _, e := range embedded {
			if embeds(e.dir, e.pattern, f.Path) {
				return owner{e.dir, fmt.Sprintf("embedded by %s (//go:embed %s)", e.file, e.pattern)}
			}
		}
		for d := testedDir(f.Dir()); ; d = path.Dir(d) {
			if packages[d] {
				if d == f.Dir() {
					return owner{d, "in the folder of package " + d}
				}
				return owner{d, fmt.Sprintf("below package %s, the nearest package above it", d)}
			}
			if d == "." {
				break
			}
		}
		// Go code in a test folder with no package above it is a package
		// of its own: with go.mod, which every package needs, its imports
		// would make one cycle, and one PR, of the whole change.
		if path.Ext(f.Path) == ".go" {
			return owner{f.Dir(), "package " + f.Dir() + ", a test folder with no package above it to go with"}
		}
		// No package above it: it belongs to the module as a whole
		// (README, licence, CI files), and comes first with its go.mod.
		if mod := mods.of(f.Dir()); mod != "" && mod != moduleUnit {
			return owner{mod, "no package above it: it belongs to the module in " + unitDir(mod) + ", with its go.mod"}
		}
		return owner{moduleUnit, "no package above it: it belongs to the module, with go.mod"}
	}
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
		m := &unit{name: strings.Join(scc, " + "), deps: map[string]bool{}}
		for _, n := range scc {
			m.dirs = append(m.dirs, units[n].dirs...)
			for _, f := range units[n].files {
				f.Reason += fmt.Sprintf("; %s import each other in a cycle, so they stay in one PR", strings.Join(scc, ", "))
				m.files = append(m.files, f)
			}
			m.lines += units[n].lines
			rename[n] = m.name
		}
		out[m.name] = m
	}
	deps := map[string]map[string]bool{}
	for n, u := range units {
		to := rename[n]
		if deps[to] == nil {
			deps[to] = map[string]bool{}
		}
		for d := range u.deps {
			if rename[d] != to {
				deps[to][rename[d]] = true
			}
		}
	}
	for name, u := range out {
		u.deps = deps[name]
	}
	return out
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
