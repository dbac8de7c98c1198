package split

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/wo-runner/wo/termtext"
)

// HandPlan is a plan written by a person: PRs in order, each a list of
// globs (** crosses directories), and files to leave out.
type HandPlan struct {
	PRs []struct {
		Title string   `json:"title"`
		Globs []string `json:"globs"`
	} `json:"prs"`
	Exclude []string `json:"exclude"`
}

// ParseHandPlan reads a plan file.
func ParseHandPlan(data []byte) (*HandPlan, error) {
	var hp HandPlan
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&hp); err != nil {
		// The decoder quotes what it could not read (an unknown field's
		// name, whole): a plan file's text, so its message is cut short.
		return nil, fmt.Errorf("plan file: %s (expected {\"prs\": [{\"title\", \"globs\": [...]}], \"exclude\": [...]})", termtext.Cut(err.Error(), 300))
	}
	if len(hp.PRs) == 0 {
		return nil, fmt.Errorf("plan file: no prs")
	}
	for i, pr := range hp.PRs {
		if len(pr.Globs) == 0 {
			return nil, fmt.Errorf("plan file: prs[%d] (%s) has no globs", i, clipQuote(pr.Title))
		}
		for _, g := range pr.Globs {
			if !doublestar.ValidatePattern(g) {
				return nil, fmt.Errorf("plan file: prs[%d]: %s is not a valid glob", i, clipQuote(g))
			}
		}
	}
	return &hp, nil
}

// clipQuote quotes an untrusted value for a message, cut short.
func clipQuote(s string) string {
	if len(s) > 100 {
		cut := 100
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		return fmt.Sprintf("%q… (%d bytes)", s[:cut], len(s))
	}
	return fmt.Sprintf("%q", s)
}

// FromHand checks a hand-written plan against the change: every changed
// file in exactly one PR or excluded, and no PR importing from a later one.
// Globs that match nothing are reported as warnings.
func FromHand(c *Change, hp *HandPlan) (*Plan, error) {
	m := &handMatch{plan: &Plan{Change: c}, used: map[string]bool{}, prOf: map[string]*PR{}}
	m.place(c, hp)
	m.exclude(c, hp)
	m.unusedGlobs(hp)
	if len(m.problems) > 0 {
		sort.Strings(m.problems)
		return nil, fmt.Errorf("the plan does not fit the change:\n  %s", strings.Join(m.problems, "\n  "))
	}
	plan := m.plan
	// Dependencies from imports, which must point to earlier PRs.
	if problems := linkHandPRs(c, plan.PRs); len(problems) > 0 {
		sort.Strings(problems)
		return nil, fmt.Errorf("the plan's order contradicts the imports:\n  %s", strings.Join(problems, "\n  "))
	}
	for _, pr := range plan.PRs {
		sort.Ints(pr.BlockedBy)
		sort.Ints(pr.Blocks)
		pr.Wave = 1
		for _, d := range pr.BlockedBy {
			pr.Wave = max(pr.Wave, plan.PRs[d-1].Wave+1)
		}
	}
	name(plan)
	for i, spec := range hp.PRs {
		if spec.Title != "" {
			plan.PRs[i].Theme = spec.Title
			plan.PRs[i].Title = SeriesTitle(i+1, len(plan.PRs), spec.Title)
			plan.PRs[i].Slug = slugOf(spec.Title)
		}
	}
	return plan, nil
}

// handMatch matches a hand-written plan's globs to the changed files:
// the PR of each file, the globs that matched, what does not fit.
type handMatch struct {
	plan     *Plan
	used     map[string]bool
	prOf     map[string]*PR
	problems []string
}

// place puts each file in the PR of the first of its globs that
// matches it, and names a file that two PRs claim.
func (m *handMatch) place(c *Change, hp *HandPlan) {
	for i, spec := range hp.PRs {
		pr := &PR{Number: i + 1, Theme: spec.Title}
		m.plan.PRs = append(m.plan.PRs, pr)
		for _, f := range c.Files {
			for _, g := range spec.Globs {
				if ok, _ := doublestar.Match(g, f.Path); ok {
					m.used[g] = true
					m.claim(pr, f)
					break
				}
			}
		}
	}
}

func (m *handMatch) claim(pr *PR, f File) {
	if other := m.prOf[f.Path]; other != nil && other != pr {
		m.problems = append(m.problems, fmt.Sprintf("%s is in PR #%d and PR #%d: put it in one", f.Path, other.Number, pr.Number))
	} else if other == nil {
		m.prOf[f.Path] = pr
		pr.Files = append(pr.Files, f)
		pr.Lines += f.Lines
	}
}

// exclude leaves out the files the exclude globs match, and names a
// file excluded and in a PR, or in none.
func (m *handMatch) exclude(c *Change, hp *HandPlan) {
	for _, f := range c.Files {
		excluded := false
		for _, g := range hp.Exclude {
			if ok, _ := doublestar.Match(g, f.Path); ok {
				m.used[g], excluded = true, true
			}
		}
		switch {
		case excluded && m.prOf[f.Path] != nil:
			m.problems = append(m.problems, fmt.Sprintf("%s is both in PR #%d and excluded", f.Path, m.prOf[f.Path].Number))
		case excluded:
			m.plan.Excluded = append(m.plan.Excluded, f.Path)
		case m.prOf[f.Path] == nil:
			m.problems = append(m.problems, fmt.Sprintf("%s is in no PR and not excluded", f.Path))
		}
	}
}

// unusedGlobs warns of the globs that match nothing, and names a PR
// without files.
func (m *handMatch) unusedGlobs(hp *HandPlan) {
	for i, spec := range hp.PRs {
		for _, g := range spec.Globs {
			if !m.used[g] {
				m.plan.Warnings = append(m.plan.Warnings, fmt.Sprintf("PR #%d: glob %s matches no changed file", i+1, clipQuote(g)))
			}
		}
		if len(m.plan.PRs[i].Files) == 0 {
			m.problems = append(m.problems, fmt.Sprintf("PR #%d (%s) has no files", i+1, spec.Title))
		}
	}
	for _, g := range hp.Exclude {
		if !m.used[g] {
			m.plan.Warnings = append(m.plan.Warnings, fmt.Sprintf("exclude glob %s matches no changed file", clipQuote(g)))
		}
	}
}

// linkHandPRs sets each PR's folders and what it is blocked by from its
// files' imports; the problems are the imports from a later PR.
func linkHandPRs(c *Change, prs []*PR) (problems []string) {
	dirPR := map[string]*PR{}
	for _, pr := range prs {
		for _, f := range pr.Files {
			dirPR[f.Dir()] = pr
		}
	}
	for _, pr := range prs {
		seen := map[string]bool{}
		for _, f := range pr.Files {
			if !seen[f.Dir()] {
				seen[f.Dir()] = true
				pr.Units = append(pr.Units, f.Dir())
			}
			for _, imp := range f.Imports {
				d := dirPR[c.packageDir(imp)]
				if d == nil || d == pr {
					continue
				}
				if d.Number > pr.Number {
					problems = append(problems, fmt.Sprintf("PR #%d imports %s from PR #%d, which comes later: reorder the plan", pr.Number, imp, d.Number))
					continue
				}
				if !contains(pr.BlockedBy, d.Number) {
					pr.BlockedBy = append(pr.BlockedBy, d.Number)
					d.Blocks = append(d.Blocks, pr.Number)
				}
			}
		}
	}
	return problems
}
