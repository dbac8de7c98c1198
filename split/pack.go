package split

import (
	"fmt"
	"sort"
	"strings"
)

// piece is what packing places in a PR: a whole unit, or one part of an
// oversize package that was cut.
type piece struct {
	unit        *unit
	part, parts int
	files       []File
	size        size     // lines and files, reviewed and all
	deps        []*piece // what must be in this PR or an earlier one
	depWhy      []tieWhy // why, for each of deps
	dir         string   // where it sits in the directory tree
	rank        int      // its place in tree order
	oversize    string   // why an over-budget piece was not cut
	placed      bool     // packed into a PR
}

func (p *piece) name() string {
	name := p.unit.name
	if isPlainUnit(name) {
		name = displayUnit(name)
	}
	if p.parts > 1 {
		return fmt.Sprintf("%s (part %d of %d)", name, p.part, p.parts)
	}
	return name
}

// unitLabel names a unit for a message: packages tied together (tieOf)
// by their first three, and how many more.
func unitLabel(u *unit) string {
	if m := u.members; len(m) > 3 {
		return fmt.Sprintf("the %d tied packages %s and %d more", len(m), strings.Join(m[:3], ", "), len(m)-3)
	}
	return displayUnit(u.name)
}

// shortName names a piece for a message: packages tied together (tieOf)
// by their first three.
func (p *piece) shortName() string {
	if len(p.unit.members) > 3 {
		name := unitLabel(p.unit)
		if p.parts > 1 {
			name += fmt.Sprintf(" (part %d of %d)", p.part, p.parts)
		}
		return name
	}
	return p.name()
}

// makePieces turns units into pieces, cutting oversize packages when asked.
func makePieces(units map[string]*unit, opts Options, goModule bool, c *Change) []*piece {
	var pieces []*piece
	last := map[string]*piece{}
	first := map[string]*piece{}
	for _, name := range sortedKeys(units) {
		u := units[name]
		parts := [][]File{u.files}
		var partWhy []string
		why := ""
		if weigh(u.files).over(opts) {
			switch {
			case isPlainUnit(u.name):
				// In parts of a quarter of the budget, which packing
				// puts together with other plain files as they fit:
				// plain files need nothing of each other, and parts cut
				// at the full budget left PRs half empty.
				quarter := opts
				quarter.MaxLines, quarter.MaxFiles = max(1, opts.MaxLines/4), max(1, opts.MaxFiles/4)
				parts = cutPlain(u.files, quarter)
			case !goModule || !hasGoCode(u.files):
				why = "only Go packages are cut"
			case !opts.SplitLarge:
				why = "--split-large is off"
			default:
				if cut, whys, whyNot := cutPackage(u, opts, c); cut != nil {
					parts, partWhy = cut, whys
				} else {
					why = whyNot
				}
			}
		}
		dir := u.dirs[0]
		var prev *piece
		for i, files := range parts {
			p := &piece{unit: u, part: i + 1, parts: len(parts), files: files, dir: dir}
			p.size = weigh(files)
			if p.size.over(opts) {
				p.oversize = why
				if i < len(partWhy) && partWhy[i] != "" {
					p.oversize = partWhy[i]
				}
				if p.oversize == "" {
					p.oversize = "its files use each other too closely to cut further"
				}
			}
			if prev != nil {
				p.deps = append(p.deps, prev)
				p.depWhy = append(p.depWhy, tieWhy{text: "the part of " + unitLabel(u) + " before it"})
			} else {
				first[name] = p
			}
			prev = p
			pieces = append(pieces, p)
		}
		last[name] = prev
	}
	for _, name := range sortedKeys(units) {
		for _, d := range sortedKeys(units[name].deps) {
			p := first[name]
			p.deps = append(p.deps, last[d])
			p.depWhy = append(p.depWhy, units[name].ties[d])
		}
	}
	sort.SliceStable(pieces, func(i, j int) bool { return pieces[i].dir < pieces[j].dir })
	for i, p := range pieces {
		p.rank = i
	}
	return pieces
}

func (p *piece) goCode() bool { return hasGoCode(p.files) }

// plain says the piece is plain files by folder (isPlainUnit), which
// share a PR only with other plain files.
func (p *piece) plain() bool { return isPlainUnit(p.unit.name) }

// cutPlain cuts plain files, which need nothing of each other, in the
// order of their paths (a folder's files together) into parts within
// the budget.
func cutPlain(files []File, opts Options) [][]File {
	sorted := append([]File(nil), files...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Path < sorted[j].Path })
	var parts [][]File
	var cur []File
	var s size
	for _, f := range sorted {
		fs := weigh([]File{f})
		if len(cur) > 0 && s.plus(fs).over(opts) {
			parts = append(parts, cur)
			cur, s = nil, size{}
		}
		cur = append(cur, f)
		s = s.plus(fs)
	}
	return append(parts, cur)
}

// hasGoCode reports whether files hold a package that go build ./...
// builds: Go files outside vendor/ and testdata/ and the folders the go
// command ignores (a name starting with . or _).
func hasGoCode(files []File) bool {
	for _, f := range files {
		if f.isGoCode() && !ignoredByDotDotDot(f.Dir()) {
			return true
		}
	}
	return false
}

func ignoredByDotDotDot(dir string) bool {
	for _, part := range strings.Split(dir, "/") {
		if part == "vendor" || part == "testdata" || strings.HasPrefix(part, ".") && part != "." || strings.HasPrefix(part, "_") {
			return true
		}
	}
	return false
}

func over(lines, files int, opts Options) bool {
	return lines > opts.MaxLines || files > opts.MaxFiles
}

// neighbourhood is what a PR holds, for measuring how close a piece is.
type neighbourhood struct {
	dirs   map[string]bool // the pieces' directories and every folder above them
	units  map[*unit]bool
	pieces map[*piece]bool
}

func newNeighbourhood() *neighbourhood {
	return &neighbourhood{dirs: map[string]bool{}, units: map[*unit]bool{}, pieces: map[*piece]bool{}}
}

func (n *neighbourhood) add(p *piece) {
	n.units[p.unit], n.pieces[p] = true, true
	for d := p.dir; !n.dirs[d]; d = parentDir(d) {
		n.dirs[d] = true
	}
}

// closeness of a piece to a PR: the next part of a package it holds
// first, then the depth of the folder they share (siblings under
// internal/adapters beat cousins under internal), and an import of one
// of its packages counts as much as a shared folder a level and a half
// deep.
func (n *neighbourhood) closeness(p *piece) int {
	score := 0
	if n.units[p.unit] {
		score += 100
	}
	for d := p.dir; ; d = parentDir(d) {
		if n.dirs[d] {
			score += 10 * depth(d)
			break
		}
		if d == "." {
			break
		}
	}
	for _, dep := range p.deps {
		if n.pieces[dep] {
			score += 15
			break
		}
	}
	return score
}

func parentDir(d string) string {
	if i := strings.LastIndexByte(d, '/'); i >= 0 {
		return d[:i]
	}
	return "."
}

func depth(d string) int {
	if d == "." || d == "" {
		return 0
	}
	return strings.Count(d, "/") + 1
}

// draft is a PR while packing.
type draft struct {
	pieces []*piece
	size   size // lines and files, reviewed and all
	near   *neighbourhood
	joined []string // small PRs that joined this one
	themed []string // neighbours merged into it, and why (mergeNeighbours)
	goCode bool
	plain  bool // its pieces are plain files (piece.plain)
}

func (d *draft) add(p *piece) {
	d.pieces = append(d.pieces, p)
	d.size = d.size.plus(p.size)
	d.near.add(p)
	d.goCode = d.goCode || p.goCode()
	d.plain = len(d.pieces) == 1 && p.plain() || d.plain && p.plain()
}

// pack lays the pieces out in one order where every piece comes after
// what it depends on, choosing at each step the ready piece closest to
// the PR being filled, and cuts that order into PRs within the budget.
// PRs are stretches of one dependency order, so a stack of them builds
// from the bottom up.
func pack(pieces []*piece, opts Options, goModule bool) []*draft {
	k := &packer{opts: opts, goModule: goModule, waiting: map[*piece]int{}, dependents: map[*piece][]*piece{},
		cur: &draft{near: newNeighbourhood()}, lastRank: -1}
	k.near = k.cur.near
	for _, p := range pieces {
		k.waiting[p] = len(p.deps)
		for _, d := range p.deps {
			k.dependents[d] = append(k.dependents[d], p)
		}
		if len(p.deps) == 0 {
			k.insert(p)
		}
	}
	for len(k.ready) > 0 {
		if best := k.choose(); best == nil {
			k.closeDraft()
		} else {
			k.place(best)
		}
	}
	if len(k.cur.pieces) > 0 {
		k.drafts = append(k.drafts, k.cur)
	}
	return plainTail(mergeNeighbours(joinSmall(k.drafts, opts), opts), opts)
}

// plainTail folds the series' last PR into the one before it when the
// last holds plain files only (scripts, configs, docs that need nothing),
// under a quarter of the budget, and both fit the budget together: a PR
// of what was left over at the end costs a whole review for little.
func plainTail(drafts []*draft, opts Options) []*draft {
	n := len(drafts)
	if n < 2 {
		return drafts
	}
	last, prev := drafts[n-1], drafts[n-2]
	if !last.plain || prev.plain || last.size.lines*4 >= opts.MaxLines || prev.size.plus(last.size).over(opts) {
		return drafts
	}
	merged := &draft{near: newNeighbourhood(), joined: append(append([]string{}, prev.joined...), last.joined...), themed: append(append([]string{}, prev.themed...), last.themed...)}
	merged.themed = append(merged.themed, fmt.Sprintf("%s (plain files, the last of the series)", names(last.pieces)))
	for _, p := range append(append([]*piece{}, prev.pieces...), last.pieces...) {
		merged.add(p)
	}
	return append(drafts[:n-2], merged)
}

// packer is pack's state: the pieces ready to place, the PR being
// filled, and the PRs filled.
type packer struct {
	opts       Options
	goModule   bool
	waiting    map[*piece]int
	dependents map[*piece][]*piece
	// ready is kept in tree order (rank): the pieces closest to the last
	// one placed are its neighbours there, so a step looks at a window
	// around it and at what the PR's own pieces made ready, and scans
	// everything only when none of those fits. Scanning every ready
	// piece at every step made packing quadratic.
	ready  []*piece
	drafts []*draft
	cur    *draft
	near   *neighbourhood
	open   *piece   // a part of a cut package whose next part must come next
	fresh  []*piece // pieces that the current PR's pieces made ready
	// lastRank is the rank of the piece placed last.
	lastRank int
	// best is the piece the step chooses so far, bestScore its
	// closeness; needsCode says the PR wants a package.
	best      *piece
	bestScore int
	needsCode bool
}

// packWindow is how many ready pieces on each side of the last one
// placed a step looks at first.
const packWindow = 64

func (k *packer) insert(p *piece) {
	i := sort.Search(len(k.ready), func(i int) bool { return k.ready[i].rank >= p.rank })
	k.ready = append(k.ready, nil)
	copy(k.ready[i+1:], k.ready[i:])
	k.ready[i] = p
}

// choose is the ready piece closest to the PR being filled that fits
// it, or nil for none.
func (k *packer) choose() *piece {
	k.best, k.bestScore = nil, 0
	// In a Go module a PR holds a package where the budget allows:
	// go.mod or test data alone is a poor PR to review.
	k.needsCode = k.goModule && !k.cur.goCode && !k.cur.plain
	at := sort.Search(len(k.ready), func(i int) bool { return k.ready[i].rank >= k.lastRank })
	for i := max(0, at-packWindow); i < min(len(k.ready), at+packWindow); i++ {
		k.consider(k.ready[i])
	}
	for _, p := range k.fresh {
		if !p.placed {
			k.consider(p)
		}
	}
	if k.best == nil || (k.needsCode && !k.best.goCode()) {
		for _, p := range k.ready {
			k.consider(p)
		}
	}
	return k.best
}

// fits says whether p may join the PR being filled.
func (k *packer) fits(p *piece) bool {
	cur := k.cur
	if len(cur.pieces) > 0 && cur.plain != p.plain() {
		return false // plain files and code do not share a PR
	}
	if k.open != nil && (p.unit != k.open.unit || p.part != k.open.part+1) {
		// A cut package's parts are consecutive: a reviewer reads it
		// part after part, nothing else between.
		return false
	}
	if len(cur.pieces) > 0 && cur.size.plus(p.size).over(k.opts) {
		return false // never over the budget: a reviewer was promised it
	}
	if p.part == 1 && p.parts > 1 && len(cur.pieces) > 0 && !k.needsCode && !p.plain() {
		return false // a cut package starts a PR of its own
	}
	return true
}

func (k *packer) consider(p *piece) {
	if !k.fits(p) {
		return
	}
	s := k.near.closeness(p)
	if k.needsCode && p.goCode() {
		// Rather a small package than the first part of a cut one,
		// which would make the PR go.mod's and the part's.
		s += 1000
		if p.parts > 1 {
			s -= 500
		}
	}
	if k.best == nil || s > k.bestScore || (s == k.bestScore && p.rank < k.best.rank) {
		k.best, k.bestScore = p, s
	}
}

// closeDraft ends the PR being filled and starts the next, near what
// the last one held.
func (k *packer) closeDraft() {
	k.drafts = append(k.drafts, k.cur)
	k.near, k.cur = k.cur.near, &draft{near: newNeighbourhood()}
	k.fresh = nil
}

// place puts p in the PR being filled, and readies what waited for it.
func (k *packer) place(p *piece) {
	i := sort.Search(len(k.ready), func(i int) bool { return k.ready[i].rank >= p.rank })
	k.ready = append(k.ready[:i], k.ready[i+1:]...)
	p.placed = true
	k.lastRank = p.rank
	k.cur.add(p)
	k.near = k.cur.near
	k.open = nil
	switch {
	case p.plain():
		// Plain files' parts fill PRs as they fit.
	case p.part < p.parts:
		k.open = p
	case p.parts > 1:
		// The last part ends its PR: what comes next is not the package
		// that was cut.
		k.closeDraft()
	}
	for _, d := range k.dependents[p] {
		if k.waiting[d]--; k.waiting[d] == 0 {
			k.insert(d)
			k.fresh = append(k.fresh, d)
		}
	}
}

// mergeNeighbours merges two PRs next to each other in the series into
// one where both fit the budget together and they are about one thing:
// one needs what the other holds, or they share a folder that says what
// they do (not the root, not internal); plain files go with plain files.
// Only neighbours merge, so the series keeps its dependency order, and
// each PR costs a review, so fewer PRs within the budget cost less.
func mergeNeighbours(drafts []*draft, opts Options) []*draft {
	for i := 0; i+1 < len(drafts); {
		a, b := drafts[i], drafts[i+1]
		why := ""
		if a.plain == b.plain && !a.size.plus(b.size).over(opts) {
			why = related(a, b)
		}
		if why == "" {
			i++
			continue
		}
		merged := &draft{near: newNeighbourhood(), joined: append(append([]string{}, a.joined...), b.joined...), themed: append(append([]string{}, a.themed...), b.themed...)}
		merged.themed = append(merged.themed, fmt.Sprintf("%s (%s)", names(b.pieces), why))
		for _, p := range append(append([]*piece{}, a.pieces...), b.pieces...) {
			merged.add(p)
		}
		drafts[i] = merged
		drafts = append(drafts[:i+1], drafts[i+2:]...)
		i = max(0, i-1)
	}
	return drafts
}

// related says what two neighbouring PRs have to do with each other, or
// "".
func related(a, b *draft) string {
	if a.plain && b.plain {
		return "plain files too"
	}
	for _, p := range b.pieces {
		for _, d := range p.deps {
			if a.near.pieces[d] && d.unit != p.unit {
				return fmt.Sprintf("it needs %s", d.name())
			}
		}
	}
	var dirs []string
	for _, p := range append(append([]*piece{}, a.pieces...), b.pieces...) {
		dirs = append(dirs, unitDir(p.unit.name))
	}
	if common := commonDir(dirs); !bareFolder(common) {
		return "they share " + common
	}
	return ""
}

// joinSmall folds each PR under a tenth of the line budget into the
// neighbour in the series that it is closer to, as long as the two stay
// within the budget and a tenth, or the neighbour is a package too big to
// cut anyway; a small PR with no such neighbour stays. Only neighbours
// join, so the series keeps its dependency order.
func joinSmall(drafts []*draft, opts Options) []*draft {
	limit := opts // never over the budget: a reviewer was promised it
	for i := 0; i < len(drafts); {
		d := drafts[i]
		if d.size.lines*10 >= opts.MaxLines {
			i++
			continue
		}
		into, score := -1, -1
		for _, j := range []int{i - 1, i + 1} {
			if j < 0 || j >= len(drafts) || d.plain != drafts[j].plain {
				continue
			}
			n := drafts[j].size
			// A PR with nothing to review (all set apart) may join a
			// neighbour that is past what GitHub shows already: it
			// makes that one no less readable, and costs no review.
			pastGitHub := n.rawLines > GitHubMaxLines || n.rawFiles > GitHubMaxFiles
			nothingToReview := d.size.lines == 0 && d.size.files == 0
			if d.size.plus(n).over(limit) && !(nothingToReview && pastGitHub && !over(n.lines, n.files, limit)) {
				continue
			}
			s := 0
			for _, p := range d.pieces {
				s = max(s, drafts[j].near.closeness(p))
			}
			if s > score {
				into, score = j, s
			}
		}
		if into < 0 {
			i++
			continue
		}
		first, second := drafts[min(i, into)], drafts[max(i, into)]
		merged := &draft{near: newNeighbourhood(), joined: append(first.joined, second.joined...), themed: append(first.themed, second.themed...)}
		merged.joined = append(merged.joined, names(d.pieces))
		for _, p := range append(first.pieces, second.pieces...) {
			merged.add(p)
		}
		drafts[min(i, into)] = merged
		drafts = append(drafts[:max(i, into)], drafts[max(i, into)+1:]...)
		i = max(0, min(i, into)-1)
	}
	return drafts
}

func names(pieces []*piece) string {
	var out []string
	for _, p := range pieces {
		out = append(out, p.name())
	}
	return strings.Join(out, ", ")
}
