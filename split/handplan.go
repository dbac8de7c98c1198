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
	plan := &Plan{Change: c}
	used := map[string]bool{}
	var problems []string
	prOf := map[string]*PR{}
	for i, spec := range hp.PRs {
		pr := &PR{Number: i + 1, Theme: spec.Title}
		plan.PRs = append(plan.PRs, pr)
		for _, f := range c.Files {
			for _, g := range spec.Globs {
				if ok, _ := doublestar.Match(g, f.Path); ok {
					used[g] = true
					if other := prOf[f.Path]; other != nil && other != pr {
						problems = append(problems, fmt.Sprintf("%s is in PR #%d and PR #%d: put it in one", f.Path, other.Number, pr.Number))
					} else if other == nil {
						prOf[f.Path] = pr
						pr.Files = append(pr.Files, f)
						pr.Lines += f.Lines
					}
					break
				}
			}
		}
	}
	for _, f := range c.Files {
		excluded := false
		for _, g := range hp.Exclude {
			if ok, _ := doublestar.Match(g, f.Path); ok {
				used[g], excluded = true, true
			}
		}
		switch {
		case excluded && prOf[f.Path] != nil:
			problems = append(problems, fmt.Sprintf("%s is both in PR #%d and excluded", f.Path, prOf[f.Path].Number))
		case excluded:
			plan.Excluded = append(plan.Excluded, f.Path)
		case prOf[f.Path] == nil:
			problems = append(problems, fmt.Sprintf("%s is in no PR and not excluded", f.Path))
		}
	}
	for i, spec := range hp.PRs {
		for _, g := range spec.Globs {
			if !used[g] {
				plan.Warnings = append(plan.Warnings, fmt.Sprintf("PR #%d: glob %s matches no changed file", i+1, clipQuote(g)))
			}
		}
		if len(plan.PRs[i].Files) == 0 {
			problems = append(problems, fmt.Sprintf("PR #%d (%s) has no files", i+1, spec.Title))
		}
	}
	for _, g := range hp.Exclude {
		if !used[g] {
			plan.Warnings = append(plan.Warnings, fmt.Sprintf("exclude glob %s matches no changed file", clipQuote(g)))
		}
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		return nil, fmt.Errorf("the plan does not fit the change:\n  %s", strings.Join(problems, "\n  "))
	}
	// Dependencies from imports, which must point to earlier PRs.
	dirPR := map[string]*PR{}
	for _, pr := range plan.PRs {
		for _, f := range pr.Files {
			dirPR[f.Dir()] = pr
		}
	}
	for _, pr := range plan.PRs {
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
	if len(problems) > 0 {
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
