package split

import (
	"fmt"
	"go/token"
	"path"
	"sort"
	"strings"
)

// symbolGraph is what symbolEdges works from: both versions of the
// changed Go files, parsed, what each key is declared as at each end,
// and the indexes the rules (the methods named …Rule below, one for each
// rule of the header of symbols.go) share. out collects the edges.
type symbolGraph struct {
	base, source []fileVersion
	// declared is what each key is declared as, in which changed file,
	// at each end (0: the base, 1: the source).
	declared [2]map[string][]decl
	changed  map[string]bool
	// embeddedBy are the types that embed each type, at either end: a
	// file that names them may use the fields and methods they promote.
	embeddedBy map[string][]string
	// named indexes the names each declaration's text holds: a name
	// alone ("T", of its own package) or selected from a package
	// ("pkg.T"); mentions caches mentionsOf, reached reaches.
	named    map[string][]string
	mentions map[string][]string
	reached  map[*symbols]map[string]bool
	// keptFiles are the files the change leaves as they are
	// (Change.kept), parsed; kept the keys they declare, at both ends
	// as they were.
	keptFiles []fileVersion
	kept      map[string]bool
	// isInterface are the interface types of the source; satisfies the
	// methods an interface may ask for ("Name params/results"); arityOf
	// each method's arity; newMethods the files that give a type of the
	// base a new method, by the method's name.
	isInterface map[string]bool
	satisfies   map[string]bool
	arityOf     map[string]string
	newMethods  map[string][]string

	out  map[string][]fileEdge
	seen map[[2]string]bool
}

// decl is where a key is declared, and as what: its text, and the import
// paths of the package names the text selects (symbols.declImports).
type decl struct{ file, text, imports string }

// symbolEdges works out, for every changed Go file, the changed files it
// must land with or after, from the declarations each version of each
// uses (see symbols.go).
func symbolEdges(c *Change) map[string][]fileEdge {
	g := newSymbolGraph(c)
	for _, k := range sortedKeys(g.changed) {
		g.keyEdges(k)
	}
	if c.goModChanged() {
		moduleEdges(c, g.base, g.source, g.need)
	}
	return g.out
}

// parseVersions parses both versions of each changed Go file, and the
// files the change keeps (Change.kept).
func parseVersions(c *Change) (base, source, kept []fileVersion) {
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
	baseDir := func(imp string) string {
		if d := c.packageDir(imp); d != "" {
			return d
		}
		return packageDir(c.BaseModule, imp)
	}
	fset := token.NewFileSet()
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
				base = append(base, fileVersion{f.Path, dir, s})
			}
		}
		if f.src != nil && f.isGoCode() && f.Kind != "deleted" {
			if s := parseSymbols(fset, f.Path, f.Dir(), f.src, c.packageDir, nameOf); s != nil {
				source = append(source, fileVersion{f.Path, f.Dir(), s})
			}
		}
	}
	for _, f := range c.kept {
		if s := parseSymbols(fset, f.path, path.Dir(f.path), f.src, c.packageDir, nameOf); s != nil {
			kept = append(kept, fileVersion{f.path, path.Dir(f.path), s})
		}
	}
	return base, source, kept
}

func newSymbolGraph(c *Change) *symbolGraph {
	g := &symbolGraph{declared: [2]map[string][]decl{{}, {}}, changed: map[string]bool{}, embeddedBy: map[string][]string{},
		named: map[string][]string{}, kept: map[string]bool{}, mentions: map[string][]string{}, reached: map[*symbols]map[string]bool{},
		isInterface: map[string]bool{}, satisfies: map[string]bool{}, arityOf: map[string]string{}, newMethods: map[string][]string{},
		out: map[string][]fileEdge{}, seen: map[[2]string]bool{}}
	g.base, g.source, g.keptFiles = parseVersions(c)
	for side, versions := range [][]fileVersion{g.base, g.source} {
		for _, v := range versions {
			for k, t := range v.syms.decls {
				g.declared[side][k] = append(g.declared[side][k], decl{v.file, t, v.syms.declImports[k]})
			}
		}
	}
	for side := range g.declared {
		for k := range g.declared[side] {
			b, s := g.declared[0][k], g.declared[1][k]
			if !sameDecls(b, s) && (!sameDecls(withoutImports(b), withoutImports(s)) || importsMoved(b, s)) {
				g.changed[k] = true
			}
		}
	}
	for _, versions := range [][]fileVersion{g.base, g.source, g.keptFiles} {
		for _, v := range versions {
			for in, ts := range v.syms.embeds {
				for _, t := range ts {
					g.embeddedBy[t] = append(g.embeddedBy[t], in)
				}
			}
		}
	}
	// The declarations whose type names a type: a function that returns
	// it, a field or method of another type that holds it. A file that
	// uses one of them may use the type's members without naming it.
	for side := range g.declared {
		for k, ds := range g.declared[side] {
			for _, d := range ds {
				for _, w := range wordsOf(d.text) {
					g.named[w] = append(g.named[w], k)
				}
			}
		}
	}
	for _, v := range g.keptFiles {
		for k, text := range v.syms.decls {
			g.kept[k] = true
			for _, w := range wordsOf(text) {
				g.named[w] = append(g.named[w], k)
			}
		}
	}
	g.indexMethods()
	return g
}

// indexMethods fills isInterface, satisfies, arityOf and newMethods.
func (g *symbolGraph) indexMethods() {
	now := append(append([]fileVersion{}, g.source...), g.keptFiles...) // the source tree's
	for _, v := range now {
		for _, k := range v.syms.interfaces {
			g.isInterface[k] = true
		}
	}
	// Methods that an interface may ask for, by name and by the number
	// of their parameters and results: those of the interfaces of the
	// changed and kept files, and of the standard library's common ones.
	for m, arities := range commonInterfaceMethods {
		for _, a := range strings.Fields(arities) {
			g.satisfies[m+" "+a] = true
		}
	}
	for _, v := range now {
		for k, a := range v.syms.arity {
			g.arityOf[k] = a
			if owner, member, ok := splitMember(k); ok && g.isInterface[owner] {
				g.satisfies[member+" "+a] = true
			}
		}
	}
	// Files that give a type of the base a new method, by the method's
	// name: a type the base lacks has no old users that an interface
	// could take it from before its methods land.
	for _, k := range sortedKeys(g.changed) {
		if owner, member, ok := splitMember(k); ok && !g.isInterface[owner] && g.declared[0][k] == nil && g.atBase(owner) {
			for _, d := range g.declared[1][k] {
				g.newMethods[member] = append(g.newMethods[member], d.file)
			}
		}
	}
}

// atBase says whether the base declares k: in a changed file, or in one
// the change keeps.
func (g *symbolGraph) atBase(k string) bool {
	return g.declared[0][k] != nil || g.kept[k]
}

// need records that from lands with or after to, and why (the first
// reason found for the pair).
func (g *symbolGraph) need(from, to, why string) {
	if from != to && !g.seen[[2]string{from, to}] {
		g.seen[[2]string{from, to}] = true
		g.out[from] = append(g.out[from], fileEdge{to, why})
	}
}

// namesType says whether a file names type t, or a type that embeds it.
func (g *symbolGraph) namesType(s *symbols, t string) bool {
	if s.refs[t] {
		return true
	}
	if len(g.embeddedBy[t]) == 0 {
		return false
	}
	return g.namesEmbedding(s, t, map[string]bool{})
}

func (g *symbolGraph) namesEmbedding(s *symbols, t string, seen map[string]bool) bool {
	if seen[t] {
		return false
	}
	seen[t] = true
	if s.refs[t] {
		return true
	}
	for _, e := range g.embeddedBy[t] {
		if g.namesEmbedding(s, e, seen) {
			return true
		}
	}
	return false
}

// mentionsOf are the declarations whose text names type t.
func (g *symbolGraph) mentionsOf(t string) []string {
	if m, ok := g.mentions[t]; ok {
		return m
	}
	colon := strings.IndexByte(t, ':')
	pkg, name, _ := strings.Cut(t[colon+1:], ".")
	own := t[:colon+1] + pkg + "."
	var out []string
	for _, k := range g.named[name] {
		if strings.HasPrefix(k, own) {
			out = append(out, k)
		}
	}
	for _, k := range g.named[pkg+"."+name] {
		if !strings.HasPrefix(k, own) {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	g.mentions[t] = dedupe(out, t)
	return g.mentions[t]
}

// reaches says whether a file reaches type t: names it, or uses what
// returns or holds it.
func (g *symbolGraph) reaches(s *symbols, t string) bool {
	if r, ok := g.reached[s][t]; ok {
		return r
	}
	r := g.namesType(s, t)
	for _, k := range g.mentionsOf(t) {
		if r {
			break
		}
		owner, member, ok := splitMember(k)
		if owner == t {
			continue // a method of t names t as its receiver: using it yields no t
		}
		r = s.refs[k] || ok && s.members[member] && g.namesType(s, owner)
	}
	if g.reached[s] == nil {
		g.reached[s] = map[string]bool{}
	}
	g.reached[s][t] = r
	return r
}

// keyParts are a member's key cut: the package-level type and the
// member's names below it.
type keyParts struct {
	typ     string
	members []string
}

func splitKey(k string) keyParts {
	colon := strings.IndexByte(k, ':')
	parts := strings.Split(k[colon+1:], ".")
	if len(parts) < 3 {
		return keyParts{}
	}
	return keyParts{k[:colon+1] + parts[0] + "." + parts[1], parts[2:]}
}

// usesKey says whether a file uses k: names it, or selects a field or
// method by its name where the file reaches its type (names it, or what
// returns or holds it); a field of a field by both names.
func (g *symbolGraph) usesKey(s *symbols, k string, p keyParts) bool {
	if s.refs[k] {
		return true
	}
	if p.typ == "" {
		return false
	}
	for _, m := range p.members {
		if !s.members[m] {
			return false
		}
	}
	return g.reaches(s, p.typ)
}

// usersAt are the files of versions that use k.
func (g *symbolGraph) usersAt(versions []fileVersion, k string) map[string]bool {
	users := map[string]bool{}
	p := splitKey(k)
	for _, v := range versions {
		if g.usesKey(v.syms, k, p) {
			users[v.file] = true
		}
	}
	return users
}

// keyEdges applies the rules to one changed key, in their order.
func (g *symbolGraph) keyEdges(k string) {
	b, s := g.declared[0][k], g.declared[1][k]
	g.movedRule(k, b, s)
	if movedOnly(b, s) {
		return // moved, not changed: its users need nothing
	}
	oldUsers, newUsers := g.usersAt(g.base, k), g.usersAt(g.source, k)
	for _, u := range sortedKeys(oldUsers) {
		if newUsers[u] && len(s) > 0 {
			g.changedRule(k, u, b)
		} else {
			g.removedRule(k, u, b)
		}
	}
	for _, u := range sortedKeys(newUsers) {
		g.addedRule(k, u, s)
	}
	owner, member, ok := splitMember(k)
	switch {
	case !ok || len(s) == 0:
	case g.isInterface[owner]:
		g.interfaceGainsRule(owner, member, s)
	case (g.declared[1][owner] != nil || g.kept[owner]) && g.satisfies[member+" "+g.arityOf[k]]:
		g.methodSetRule(k, owner, s)
		g.newTypeMethodsRule(k, owner, s)
	}
}

// movedOnly says whether a key's declarations have one text, its names
// selected from the same packages, at both ends: it moved between files, or not
// at all.
func movedOnly(b, s []decl) bool {
	sameText := len(b) > 0 && len(s) > 0
	for _, d := range append(append([]decl{}, b...), s...) {
		sameText = sameText && d.text == b[0].text
	}
	if sameText && importsMoved(b, s) {
		return false
	}
	return sameText
}

// movedRule: a declaration moved to another file ties the files that
// declared it only at the base to those that declare it only at the
// source, both ways (files for other platforms may declare it side by
// side, at either end): they land together, or a tip would declare it
// twice, or not at all.
func (g *symbolGraph) movedRule(k string, b, s []decl) {
	at := [2]map[string]bool{{}, {}}
	for side, ds := range [][]decl{b, s} {
		for _, d := range ds {
			at[side][d.file] = true
		}
	}
	for _, from := range sortedKeys(at[0]) {
		for _, to := range sortedKeys(at[1]) {
			if !at[1][from] && !at[0][to] {
				why := fmt.Sprintf("%s moves from %s to %s, which land together so that it is declared once", displayKey(k), from, to)
				g.need(from, to, why)
				g.need(to, from, why)
			}
		}
	}
}

// changedRule: a changed signature (or type) and a file that uses it at
// both ends land together: the old caller needs the old one, the new
// the new.
func (g *symbolGraph) changedRule(k, user string, b []decl) {
	for _, d := range b {
		what := changeKind(d.text)
		g.need(user, d.file, fmt.Sprintf("uses %s, whose %s %s changes: they land together", displayKey(k), what, d.file))
		g.need(d.file, user, fmt.Sprintf("changes the %s of %s, which %s uses at both ends: they land together", what, displayKey(k), user))
	}
}

// removedRule: the file that drops or changes a declaration comes after
// (or with) each changed file that used it only at the base, whose old
// code needs it.
func (g *symbolGraph) removedRule(k, user string, b []decl) {
	for _, d := range b {
		g.need(d.file, user, fmt.Sprintf("%s drops or changes %s, which %s used: that comes first", d.file, displayKey(k), user))
	}
}

// addedRule: a file that uses a declaration as the source declares it
// comes after (or with) the file that declares it.
func (g *symbolGraph) addedRule(k, user string, s []decl) {
	for _, d := range s {
		g.need(user, d.file, fmt.Sprintf("uses %s as %s declares it", displayKey(k), d.file))
	}
}

// interfaceGainsRule: an interface of the base that gains a method
// needs it of the types that implement it: the files that add a method
// of that name come first (or with it). A new interface asks nothing of
// old code.
func (g *symbolGraph) interfaceGainsRule(owner, member string, s []decl) {
	if g.declared[0][owner] == nil {
		return
	}
	for _, d := range s {
		for _, m := range g.newMethods[member] {
			g.need(d.file, m, fmt.Sprintf("%s gains %s, which the types that implement it need first", displayKey(owner), member))
		}
	}
}

// methodSetRule: a type's users need its methods that are new or
// changed, where an interface may ask for them: a value used as an
// interface needs its whole method set.
func (g *symbolGraph) methodSetRule(k, owner string, s []decl) {
	for _, u := range sortedKeys(g.usersAt(g.source, owner)) {
		for _, d := range s {
			g.need(u, d.file, fmt.Sprintf("uses %s, whose method or field %s comes with %s", displayKey(owner), displayKey(k), d.file))
		}
	}
}

// newTypeMethodsRule: a new type and its methods (not its tests') land
// together.
func (g *symbolGraph) newTypeMethodsRule(k, owner string, s []decl) {
	if g.declared[0][owner] != nil {
		return
	}
	for _, t := range g.declared[1][owner] {
		for _, d := range s {
			if !strings.HasSuffix(d.file, "_test.go") {
				why := fmt.Sprintf("%s is a new type, and its method %s comes with it", displayKey(owner), displayKey(k))
				g.need(t.file, d.file, why)
				g.need(d.file, t.file, why)
			}
		}
	}
}

// withoutImports are the declarations without the import paths of
// what they select.
func withoutImports(ds []decl) []decl {
	out := make([]decl, len(ds))
	for i, d := range ds {
		out[i] = decl{file: d.file, text: d.text}
	}
	return out
}

// importsMoved says whether a name that a declaration selects from an
// import stands for another package at the source than at the base (the
// same text, another type). A name selected at one end only changes the
// text, or (an array's length, a constant's value) nothing.
func importsMoved(b, s []decl) bool {
	for _, x := range b {
		was := map[string]string{}
		for _, imp := range strings.Split(x.imports, ",") {
			if name, path, ok := strings.Cut(imp, "="); ok {
				was[name] = path
			}
		}
		for _, y := range s {
			for _, imp := range strings.Split(y.imports, ",") {
				if name, path, ok := strings.Cut(imp, "="); ok && was[name] != "" && was[name] != path {
					return true
				}
			}
		}
	}
	return false
}
