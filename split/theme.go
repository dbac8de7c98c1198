package split

import (
	"fmt"
	"regexp"
	"strings"
)

// name gives each PR its theme, title and branch slug. The theme is the
// folder its packages share, unless that folder is a bare container
// ("internal", the root) or another PR shares it; then the PR is named
// after its largest package.
func name(plan *Plan) {
	commons := make([]string, len(plan.PRs))
	count := map[string]int{}
	for i, pr := range plan.PRs {
		commons[i] = commonDir(unitDirs(pr.Units))
		count[commons[i]]++
	}
	for i, pr := range plan.PRs {
		theme, why := themeOf(pr, commons[i], count[commons[i]] > 1)
		pr.Theme = theme
		pr.Why = why + pr.Why
		pr.Title = SeriesTitle(pr.Number, len(plan.PRs), theme)
		pr.Slug = slugOf(theme)
	}
}

func themeOf(pr *PR, common string, shared bool) (theme, why string) {
	if len(pr.Units) == 1 {
		return displayUnit(pr.Units[0]), "one package alone: " + pr.Units[0]
	}
	if !bareFolder(common) && !shared {
		return common, fmt.Sprintf("%d packages that sit together under %s", len(pr.Units), common)
	}
	top, lines := dominant(pr)
	return fmt.Sprintf("%s and %d more", displayUnit(top), len(pr.Units)-1),
		fmt.Sprintf("%s (%d of its %d lines) with the packages closest to it in the tree and the imports: %s",
			top, lines, pr.Lines, strings.Join(others(pr.Units, top), ", "))
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

func displayUnit(u string) string {
	switch u {
	case ".":
		return "root"
	case moduleUnit:
		return "module"
	}
	if d, ok := moduleDir(u); ok {
		return "module " + d
	}
	return u
}

// unitDirs are the folders of a PR's units (a part names its package, a
// cycle its members).
func unitDirs(units []string) []string {
	var out []string
	for _, u := range units {
		u, _, _ = strings.Cut(u, " (part ")
		for _, d := range strings.Split(u, " + ") {
			out = append(out, unitDir(d))
		}
	}
	return out
}

// dominant is the PR's package with the most lines.
func dominant(pr *PR) (string, int) {
	lines := pr.unitLines
	if lines == nil {
		lines = map[string]int{}
		for _, f := range pr.Files {
			lines[f.Dir()] += f.Lines
		}
	}
	top, most := pr.Units[0], -1
	for _, u := range pr.Units {
		key, _, _ := strings.Cut(u, " (part ")
		if lines[key] > most {
			top, most = u, lines[key]
		}
	}
	return top, most
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
