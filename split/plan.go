package split

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/wo-runner/wo/workorder"
)

// Options shape the plan.
type Options struct {
	MaxLines int    // budget per PR (default 400)
	MaxFiles int    // budget per PR (default 30)
	By       string // "package" (a directory, a Go package) or "dir" (a top-level directory)
}

// PR is one planned review pull request.
type PR struct {
	Number    int      `json:"number"`
	Title     string   `json:"title"`
	Theme     string   `json:"theme"`
	Slug      string   `json:"slug"`
	Units     []string `json:"packages"`
	Files     []File   `json:"files"`
	Lines     int      `json:"lines"`
	BlockedBy []int    `json:"blocked_by"`
	Blocks    []int    `json:"blocks"`
	Wave      int      `json:"wave"`
}

// Plan is the ordered series of PRs for a change.
type Plan struct {
	Change   *Change  `json:"-"`
	PRs      []*PR    `json:"prs"`
	Excluded []string `json:"excluded,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
}

// unit is what is never split across PRs: a package or directory, or a
// set of packages that import each other in a cycle.
type unit struct {
	name  string
	dirs  []string
	files []File
	lines int
	deps  map[string]bool // units this one imports
}

// Make plans the PRs: units in dependency order (foundations first), packed
// into PRs up to the budget, never splitting a unit.
func Make(c *Change, opts Options) (*Plan, error) {
	if opts.MaxLines <= 0 {
		opts.MaxLines = 400
	}
	if opts.MaxFiles <= 0 {
		opts.MaxFiles = 30
	}
	if opts.By == "" {
		opts.By = "package"
	}
	if opts.By != "package" && opts.By != "dir" {
		return nil, fmt.Errorf("--by %q: use package or dir", opts.By)
	}
	if len(c.Files) == 0 {
		return nil, fmt.Errorf("%s and %s have the same content: there is nothing to review", c.BaseRef, c.SourceRef)
	}
	units := groupUnits(c, opts.By)
	units = mergeCycles(units)
	order := topoOrder(units)
	plan := &Plan{Change: c}
	var cur *PR
	unitPR := map[string]*PR{}
	for _, name := range order {
		u := units[name]
		if cur != nil && (cur.Lines+u.lines > opts.MaxLines || len(cur.Files)+len(u.files) > opts.MaxFiles) {
			cur = nil
		}
		if cur == nil {
			cur = &PR{Number: len(plan.PRs) + 1}
			plan.PRs = append(plan.PRs, cur)
		}
		if u.lines > opts.MaxLines || len(u.files) > opts.MaxFiles {
			plan.Warnings = append(plan.Warnings, fmt.Sprintf("%s alone has %d lines in %d files, over the budget of %d lines and %d files: it stays whole in PR #%d",
				u.name, u.lines, len(u.files), opts.MaxLines, opts.MaxFiles, cur.Number))
		}
		cur.Units = append(cur.Units, u.name)
		cur.Files = append(cur.Files, u.files...)
		cur.Lines += u.lines
		unitPR[name] = cur
	}
	link(plan, units, unitPR)
	name(plan)
	return plan, nil
}

// link records PR dependencies both ways from unit imports.
func link(plan *Plan, units map[string]*unit, unitPR map[string]*PR) {
	for name, u := range units {
		pr := unitPR[name]
		for dep := range u.deps {
			if d := unitPR[dep]; d != nil && d != pr && !contains(pr.BlockedBy, d.Number) {
				pr.BlockedBy = append(pr.BlockedBy, d.Number)
				d.Blocks = append(d.Blocks, pr.Number)
			}
		}
	}
	for _, pr := range plan.PRs {
		sort.Ints(pr.BlockedBy)
		sort.Ints(pr.Blocks)
		sort.Slice(pr.Files, func(i, j int) bool { return pr.Files[i].Path < pr.Files[j].Path })
	}
	// Waves from PR dependencies (a task runs after everything it
	// depends on).
	for _, pr := range plan.PRs {
		pr.Wave = 1
		for _, d := range pr.BlockedBy {
			pr.Wave = max(pr.Wave, plan.PRs[d-1].Wave+1)
		}
	}
}

// groupUnits puts each changed file in its unit; test directories go with
// the directory they test.
func groupUnits(c *Change, by string) map[string]*unit {
	units := map[string]*unit{}
	unitOf := func(dir string) string {
		if by == "dir" {
			if i := strings.IndexByte(dir, '/'); i >= 0 {
				return dir[:i]
			}
		}
		return dir
	}
	for _, f := range c.Files {
		name := unitOf(testedDir(f.Dir()))
		u := units[name]
		if u == nil {
			u = &unit{name: name, dirs: []string{name}, deps: map[string]bool{}}
			units[name] = u
		}
		u.files = append(u.files, f)
		u.lines += f.Lines
	}
	for _, u := range units {
		for _, f := range u.files {
			for _, imp := range f.Imports {
				dir := packageDir(c.Module, imp)
				if dir == "" {
					continue
				}
				if dep := unitOf(dir); dep != u.name && units[dep] != nil {
					u.deps[dep] = true
				}
			}
		}
	}
	return units
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

// mergeCycles merges strongly connected units (Tarjan), so that the PR
// graph is acyclic.
func mergeCycles(units map[string]*unit) map[string]*unit {
	names := sortedKeys(units)
	index, low := map[string]int{}, map[string]int{}
	onStack := map[string]bool{}
	var stack []string
	var sccs [][]string
	next := 0
	var strong func(v string)
	strong = func(v string) {
		index[v], low[v] = next, next
		next++
		stack = append(stack, v)
		onStack[v] = true
		for _, w := range sortedKeys(units[v].deps) {
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
			sccs = append(sccs, scc)
		}
	}
	for _, v := range names {
		if _, seen := index[v]; !seen {
			strong(v)
		}
	}
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
			m.files = append(m.files, units[n].files...)
			m.lines += units[n].lines
			rename[n] = m.name
		}
		out[m.name] = m
	}
	// Dependencies between the merged units, under their new names.
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

// topoOrder lists units dependencies first (by wave); within a wave, by
// name, so that the plan is deterministic.
func topoOrder(units map[string]*unit) []string {
	deps := make(map[string][]string, len(units))
	keys := make(map[string]bool, len(units))
	for n, u := range units {
		keys[n] = true
		deps[n] = sortedKeys(u.deps)
	}
	// mergeCycles has removed every cycle, so there is no error.
	waves, _ := workorder.Waves(deps, keys)
	names := sortedKeys(units)
	sort.SliceStable(names, func(i, j int) bool {
		if waves[names[i]] != waves[names[j]] {
			return waves[names[i]] < waves[names[j]]
		}
		return names[i] < names[j]
	})
	return names
}

var slugChars = regexp.MustCompile(`[^a-z0-9]+`)

// name gives each PR its theme, title and branch slug. A theme two PRs
// would share (their common folder, such as "internal") names the PR's own
// packages instead, so that no two PRs read alike.
func name(plan *Plan) {
	themes := make([]string, len(plan.PRs))
	count := map[string]int{}
	for i, pr := range plan.PRs {
		themes[i] = commonDir(pr.Units)
		count[themes[i]]++
	}
	for i, pr := range plan.PRs {
		theme := themes[i]
		if theme == "" || theme == "." || count[theme] > 1 {
			theme = unitsTheme(theme, pr.Units)
		}
		pr.Theme = theme
		pr.Title = SeriesTitle(pr.Number, len(plan.PRs), theme)
		pr.Slug = slugOf(theme)
	}
}

// SeriesTitle is a PR's title: its place in the series, then its theme.
// The place is not GitHub's PR number, which wo cannot know before the PRs
// open (they open in parallel), so it is written [n/m], never #n.
func SeriesTitle(n, total int, theme string) string {
	return fmt.Sprintf("[%d/%d] %s", n, total, theme)
}

// unitsTheme names a PR after its first packages, below their common folder.
func unitsTheme(common string, units []string) string {
	names := make([]string, 0, len(units))
	for _, u := range units {
		n := strings.TrimPrefix(strings.TrimPrefix(u, common), "/")
		if n == "" || n == "." {
			n = u
		}
		if n == "." {
			n = "root"
		}
		names = append(names, n)
	}
	theme := strings.Join(names[:min(2, len(names))], ", ")
	if len(names) > 2 {
		theme += fmt.Sprintf(" and %d more", len(names)-2)
	}
	if common != "" && common != "." {
		theme = common + ": " + theme
	}
	return theme
}

// slugOf makes a branch-name part from a theme.
func slugOf(theme string) string {
	slug := strings.Trim(slugChars.ReplaceAllString(strings.ToLower(theme), "-"), "-")
	if len(slug) > 40 {
		slug = strings.TrimRight(slug[:40], "-")
	}
	if slug == "" {
		slug = "change"
	}
	return slug
}

// commonDir is the longest directory prefix shared by all names.
func commonDir(names []string) string {
	if len(names) == 1 {
		return names[0]
	}
	parts := strings.Split(names[0], "/")
	for _, n := range names[1:] {
		other := strings.Split(n, "/")
		i := 0
		for i < len(parts) && i < len(other) && parts[i] == other[i] {
			i++
		}
		parts = parts[:i]
	}
	return strings.Join(parts, "/")
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func contains(list []int, n int) bool {
	for _, x := range list {
		if x == n {
			return true
		}
	}
	return false
}
