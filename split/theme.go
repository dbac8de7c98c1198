package split

import (
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"
)

// name gives each PR its theme, title and branch slug. The theme is the
// folder its packages share, unless that folder is a bare container
// ("internal", the root) or another PR shares it; then the PR is named
// after its largest package. A theme is at most maxTheme characters:
// GitHub refuses a title over 256, and a reviewer reads the first few.
func name(plan *Plan) {
	commons := make([]string, len(plan.PRs))
	count := map[string]int{}
	for i, pr := range plan.PRs {
		commons[i] = commonDir(unitDirs(pr.names()))
		count[commons[i]]++
	}
	seen := map[string]int{}
	for i, pr := range plan.PRs {
		theme, why := themeOf(pr, commons[i], count[commons[i]] > 1)
		if seen[theme]++; seen[theme] > 1 {
			theme = fit(theme, fmt.Sprintf(" (%d)", seen[theme]))
		}
		pr.Theme = theme
		pr.Why = why + pr.Why
		pr.Title = SeriesTitle(pr.Number, len(plan.PRs), theme)
		pr.Slug = slugOf(theme)
	}
}

// maxTheme is the longest theme, in characters.
const maxTheme = 72

func themeOf(pr *PR, common string, shared bool) (theme, why string) {
	names := pr.names()
	if len(names) == 1 {
		if unit, _, isPart := strings.Cut(names[0], " (part"); isPart {
			unit = unitOfDisplay(unit)
			// "p (part 2 of 3)" says nothing of what the part holds,
			// and reads alike across the package's PRs: a part is
			// named after its largest files.
			if isPlainUnit(unit) {
				return partTheme(displayUnit(unit), displayUnit(names[0]), plainGroups(unit, pr.Files)), "a part of " + names[0] + ", named after its largest folders"
			}
			return partTheme(displayUnit(unit), displayUnit(names[0]), pr.Files), "a part of " + names[0] + ", named after its largest files"
		}
		return fit(displayUnit(names[0]), ""), "one package alone: " + names[0]
	}
	if !bareFolder(common) && !shared {
		return fit(common, ""), fmt.Sprintf("%d packages that sit together under %s", len(names), common)
	}
	// A part among other packages is named after its largest file in
	// the PR, not "(part 1 of 3)", which says nothing when its parts are
	// in several PRs.
	title := func(n string) string { return partLabel(n, pr.Files) }
	top, lines := dominant(pr)
	rest := others(names, top)
	more := fmt.Sprintf(" and %d more", len(rest))
	if len(rest) == 1 {
		if _, ok := moduleDir(rest[0]); ok {
			more = " and " + rest[0] // go.mod, with the files of the module
		} else if utf8.RuneCountInString(title(top)+" and "+title(rest[0])) <= maxTheme {
			more = " and " + title(rest[0]) // "and 1 more" hides what the PR holds
		}
	}
	if second := runnerUp(pr, top); second != "" && len(rest) > 1 {
		// Two packages say more of what the PR is about than one, where
		// both fit whole.
		two := fmt.Sprintf(", %s and %d more", title(second), len(rest)-1)
		if len(rest) == 2 {
			third := others(rest, second)[0]
			if _, ok := moduleDir(third); !ok {
				third = title(third)
			}
			two = ", " + title(second) + " and " + third
		}
		if utf8.RuneCountInString(title(top)+two) <= maxTheme {
			more = two
		}
	}
	return fit(title(top), more),
		fmt.Sprintf("%s (%d of its %d lines) with the packages closest to it in the tree and the imports: %s",
			top, lines, pr.Lines, strings.Join(rest, ", "))
}

// fit cuts a name so that name and suffix stay within maxTheme
// characters, keeping the name's end (the deepest folder says most).
func fit(name, suffix string) string {
	room := maxTheme - utf8.RuneCountInString(suffix)
	if r := []rune(name); len(r) > room {
		name = "…" + string(r[len(r)-room+1:])
	}
	return name + suffix
}

// names are what the PR holds, for naming: its packages, the members of
// a cycle apart, consecutive parts of one package as one.
func (pr *PR) names() []string {
	if pr.packages != nil {
		return pr.packages
	}
	return pr.Units
}

// packagesOf names what the pieces hold, with their lines.
func packagesOf(pieces []*piece) ([]string, map[string]int) {
	var names []string
	lines := map[string]int{}
	for i := 0; i < len(pieces); i++ {
		p := pieces[i]
		if len(p.unit.members) > 0 && p.parts > 1 {
			// A part of a cycle of packages is about the packages of
			// its own files.
			for _, f := range p.files {
				if _, seen := lines[f.Dir()]; !seen {
					names = append(names, f.Dir())
				}
				lines[f.Dir()] += f.weight()
			}
			continue
		}
		if len(p.unit.members) > 0 {
			for _, m := range p.unit.members {
				names = append(names, m)
				lines[m] += p.unit.memberLines[m]
			}
			continue
		}
		n, last := p.size.lines, p
		for i+1 < len(pieces) && pieces[i+1].unit == p.unit {
			i++
			last = pieces[i]
			n += last.size.lines
		}
		name := p.name()
		if last != p {
			name = fmt.Sprintf("%s (parts %d-%d of %d)", p.unit.name, p.part, last.part, p.parts)
		}
		names = append(names, name)
		lines[name] += n
	}
	return names, lines
}

// SeriesTitle is a PR's title: its place in the series, then its theme.
// The place is not GitHub's PR number, which wo cannot know before the PRs
// open (they open in parallel), so it is written [n/m], never #n.
func SeriesTitle(n, total int, theme string) string {
	return fmt.Sprintf("[%d/%d] %s", n, total, theme)
}

// bareFolders are folders that hold packages without saying what they do.
var bareFolders = map[string]bool{"": true, ".": true, "internal": true, "pkg": true, "cmd": true, "src": true,
	"lib": true, "libs": true, "app": true, "apps": true, "packages": true, "modules": true}

func bareFolder(dir string) bool { return bareFolders[dir] }

// displayUnit is how a title names a unit: the root package as root,
// go.mod's unit as module, a package's later tests as "p (tests)".
func displayUnit(u string) string {
	if base, ok := strings.CutSuffix(u, testsSuffix); ok {
		return displayUnit(base) + testsSuffix
	}
	if base, ok := strings.CutSuffix(u, plainSuffix); ok {
		if base == "." {
			return "top-level files"
		}
		return base + " (files)"
	}
	if base, part, ok := strings.Cut(u, " (part"); ok && !strings.Contains(base, " + ") {
		return displayUnit(base) + " (part" + part
	}
	switch u {
	case ".":
		return "root"
	case moduleUnit:
		return "module"
	case workUnit:
		return "workspace"
	}
	if d, ok := moduleDir(u); ok {
		return "module " + d
	}
	if d, ok := workDir(u); ok {
		return "workspace " + d
	}
	return u
}

// unitDirs are the folders of what a PR holds (a part names its package).
func unitDirs(names []string) []string {
	var out []string
	for _, u := range names {
		u, _, _ = strings.Cut(u, " (part")
		for _, d := range strings.Split(u, " + ") {
			out = append(out, unitDir(d))
		}
	}
	return out
}

// dominant is the PR's package with the most lines; go.mod's unit (with
// README, licence and CI files) only when it is alone, since "module and
// 3 more" says nothing of what the PR is about.
func dominant(pr *PR) (string, int) {
	lines := pr.unitLines
	if lines == nil {
		lines = map[string]int{}
		for _, f := range pr.Files {
			lines[f.Dir()] += f.Lines
		}
	}
	names := pr.names()
	top, most := names[0], -1
	for _, u := range names {
		_, module := moduleDir(u)
		if n := lines[u]; !module && n > most {
			top, most = u, n
		}
	}
	return top, max(most, lines[top])
}

// runnerUp is the PR's largest package after top, not go.mod's; "" when
// there is none.
func runnerUp(pr *PR, top string) string {
	best, most := "", -1
	for _, u := range pr.names() {
		if _, module := moduleDir(u); !module && u != top && pr.unitLines[u] > most {
			best, most = u, pr.unitLines[u]
		}
	}
	return best
}

func others(units []string, but string) []string {
	var out []string
	for _, u := range units {
		if u != but {
			out = append(out, u)
		}
	}
	return out
}

var slugChars = regexp.MustCompile(`[^a-z0-9]+`)

// slugOf makes a branch-name part from a theme, without a bare leading
// folder: internal/adapters/claudecode → adapters-claudecode.
func slugOf(theme string) string {
	if first, rest, ok := strings.Cut(theme, "/"); ok && bareFolder(first) {
		theme = rest
	}
	slug := strings.Trim(slugChars.ReplaceAllString(strings.ToLower(theme), "-"), "-")
	if len(slug) > 40 {
		slug = strings.TrimRight(slug[:40], "-")
	}
	if slug == "" {
		slug = "change"
	}
	return slug
}

// partTheme names a part of a package after its largest files (code
// before tests, a Go file without its .go): "gitops: worktree, push and
// 12 more", within maxTheme.
func partTheme(unit, whole string, files []File) string {
	if len(files) == 0 {
		return fit(whole, "")
	}
	sorted := append([]File(nil), files...)
	sort.SliceStable(sorted, func(i, j int) bool {
		ti, tj := strings.HasSuffix(sorted[i].Path, "_test.go"), strings.HasSuffix(sorted[j].Path, "_test.go")
		if ti != tj {
			return tj
		}
		return sorted[i].weight() > sorted[j].weight()
	})
	var shown []string
	seen := map[string]bool{}
	for _, f := range sorted {
		n := strings.TrimSuffix(path.Base(f.Path), ".go")
		if f.Kind == "folder" {
			n = f.Path // a folder of plain files (plainGroups)
		}
		if !seen[n] {
			seen[n] = true
			shown = append(shown, n)
		}
	}
	say := func(k int) string {
		if k >= len(shown) {
			if k == 1 {
				return shown[0]
			}
			return strings.Join(shown[:k-1], ", ") + " and " + shown[k-1]
		}
		if k == 0 {
			return fmt.Sprintf("%d files", len(shown))
		}
		return fmt.Sprintf("%s and %d more", strings.Join(shown[:k], ", "), len(shown)-k)
	}
	best := say(0)
	for k := 1; k <= min(len(shown), 3); k++ {
		if utf8.RuneCountInString(unit+": "+say(k)) <= maxTheme {
			best = say(k)
		}
	}
	return fit(unit, ": "+best)
}

// partLabel names a unit in a title: a part of a cut package (or of
// plain files) by its largest file in the PR, "gitops (worktree.go, …)";
// anything else as displayUnit does.
func partLabel(name string, files []File) string {
	unit, _, isPart := strings.Cut(name, " (part")
	if !isPart {
		return displayUnit(name)
	}
	unit = unitOfDisplay(unit)
	dir := unitDir(unit)
	var largest File
	n := 0
	for _, f := range files {
		in := f.Dir() == dir || dir == "." && !strings.Contains(f.Path, "/")
		if isPlainUnit(unit) {
			in = f.Dir() == dir || strings.HasPrefix(f.Dir(), dir+"/")
		}
		if !in {
			continue
		}
		n++
		if f.weight() > largest.weight() || largest.Path == "" {
			largest = f
		}
	}
	if n == 0 {
		return displayUnit(name)
	}
	more := ""
	if n > 1 {
		more = ", …"
	}
	if isPlainUnit(unit) {
		groups := plainGroups(unit, files)
		if len(groups) > 1 {
			more = ", …"
		}
		return fmt.Sprintf("%s (%s%s)", displayUnit(unit), groups[0].Path, more)
	}
	return fmt.Sprintf("%s (%s%s)", displayUnit(unit), path.Base(largest.Path), more)
}

// plainGroups are a plain unit's files in a PR by the folder below the
// unit's that tells them apart (docs/i18n/fr-FR/… → i18n/fr-FR), a file
// at the top as itself, largest first: the parts of a docs site are
// about its sections, whose files may share their names (usage.md in
// each translation).
func plainGroups(unit string, files []File) []File {
	dir := unitDir(unit)
	lines := map[string]int{}
	var order []string
	for _, f := range files {
		rel := f.Path
		if dir != "." {
			var ok bool
			if rel, ok = strings.CutPrefix(f.Path, dir+"/"); !ok {
				continue
			}
		}
		parts := strings.Split(rel, "/")
		key := parts[0]
		if len(parts) > 2 {
			key = parts[0] + "/" + parts[1]
		}
		if _, seen := lines[key]; !seen {
			order = append(order, key)
		}
		lines[key] += f.weight()
	}
	out := make([]File, len(order))
	for i, k := range order {
		out[i] = File{Path: k, Lines: lines[k], Kind: "folder"}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Lines > out[j].Lines })
	return out
}

// unitOfDisplay is the unit a piece's name stands for: a part of plain
// files is named as displayUnit shows it ("docs (files)").
func unitOfDisplay(name string) string {
	if name == "top-level files" {
		return plainUnitOf(".")
	}
	if dir, ok := strings.CutSuffix(name, " (files)"); ok {
		return plainUnitOf(dir)
	}
	return name
}
