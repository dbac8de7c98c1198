package split

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// The default budget is for a big change that a reviewer (or a review
// bot) must read PR by PR: each PR costs a review, so fewer, fuller PRs
// cost less; 8,000 lines stays well within what GitHub shows in one diff
// (20,000 lines), 150 files is the most CodeRabbit reviews in one PR.
const (
	DefaultMaxLines = 8000
	DefaultMaxFiles = 150
	// DefaultReviewsPerHour is what a review bot on a paid plan takes
	// from one developer (CodeRabbit: about five PRs an hour).
	DefaultReviewsPerHour = 5
)

// ReviewsPerPR is what a PR costs the reviewer on average: its first
// review and one more after the fixes it asks for.
const ReviewsPerPR = 2

// Options shape the plan.
type Options struct {
	MaxLines int    // budget per PR (default DefaultMaxLines)
	MaxFiles int    // budget per PR (default DefaultMaxFiles)
	By       string // "package" (a directory, a Go package) or "dir" (a top-level directory)
	// SplitLarge cuts a Go package over the budget across consecutive PRs
	// along its declarations, instead of leaving it whole.
	SplitLarge bool
	// ReviewsPerHour is how many reviews the reviewer takes an hour; the
	// plan turns it into an estimate of the review's length (0: none).
	ReviewsPerHour float64
}

// Estimate is how long the plan's review takes at the reviewer's rate.
type Estimate struct {
	ReviewsPerHour float64 `json:"reviews_per_hour"`
	// Reviews are ReviewsPerPR for each PR.
	Reviews int     `json:"reviews"`
	Hours   float64 `json:"hours"`
}

// String says it as --explain does.
func (e *Estimate) String() string {
	return fmt.Sprintf("about %.1f hours of review: %d reviews (%d a PR: the first, and one after its fixes) at %g an hour",
		e.Hours, e.Reviews, ReviewsPerPR, e.ReviewsPerHour)
}

func estimate(prs int, perHour float64) *Estimate {
	if perHour <= 0 {
		return nil
	}
	reviews := prs * ReviewsPerPR
	return &Estimate{ReviewsPerHour: perHour, Reviews: reviews, Hours: math.Round(float64(reviews)/perHour*10) / 10}
}

// PR is one planned review pull request.
type PR struct {
	Number int      `json:"number"`
	Title  string   `json:"title"`
	Theme  string   `json:"theme"`
	Slug   string   `json:"slug"`
	Units  []string `json:"packages"`
	Files  []File   `json:"files"`
	// Lines are the lines a reviewer reads, which the budget counts;
	// SetApartLines those of its files set apart (File.SetApart).
	Lines         int   `json:"lines"`
	SetApartLines int   `json:"set_apart_lines,omitempty"`
	BlockedBy     []int `json:"blocked_by"`
	Blocks        []int `json:"blocks"`
	Wave          int   `json:"wave"`
	// WaitsFor says, for each PR it is blocked by, why: one thing of
	// this PR's that needs one thing of that one.
	WaitsFor []Wait `json:"waits_for,omitempty"`
	// OverBudget says why the PR is over the budget: one file, or a
	// group of files the plan found cannot be cut, and why; "" within it.
	OverBudget string `json:"over_budget,omitempty"`
	// Why says how the PR came together: its theme, what joined it.
	Why string `json:"why,omitempty"`

	// packages name what the PR holds, for its theme: a package, the
	// members of a cycle, "p (parts 2-3 of 5)"; unitLines are their lines.
	packages  []string
	unitLines map[string]int
}

// Wait is why a PR waits for another.
type Wait struct {
	PR  int    `json:"pr"`
	Why string `json:"why"`
}

// Plan is the ordered series of PRs for a change.
type Plan struct {
	Change *Change `json:"-"`
	// Options are those the plan was made with, defaults filled in.
	Options  Options  `json:"-"`
	PRs      []*PR    `json:"prs"`
	Excluded []string `json:"excluded,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
	// SetApart says which files were set apart from the budget, and why.
	SetApart []string `json:"set_apart,omitempty"`
	// Estimate is the review's length at Options.ReviewsPerHour.
	Estimate *Estimate `json:"estimate,omitempty"`
}

// Make plans the PRs: files grouped into units (packages with what they
// own), oversize packages cut when asked, and the pieces laid out in one
// dependency order, neighbours together, cut into PRs within the budget.
func Make(c *Change, opts Options) (*Plan, error) {
	if opts.MaxLines <= 0 {
		opts.MaxLines = DefaultMaxLines
	}
	if opts.MaxFiles <= 0 {
		opts.MaxFiles = DefaultMaxFiles
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
	markSetApart(c)
	goModule := opts.By == "package" && c.Module != ""
	grouped := groupUnits(c, opts.By)
	if goModule {
		plainFilesOutOfCycles(grouped, c)
	}
	units := mergeCycles(grouped)
	drafts := pack(makePieces(units, opts, goModule, c), opts, goModule)
	plan := &Plan{Change: c, Options: opts, SetApart: setApartSummary(c)}
	prOf := map[*piece]*PR{}
	for i, d := range drafts {
		pr := &PR{Number: i + 1}
		for _, p := range d.pieces {
			prOf[p] = pr
			pr.Units = append(pr.Units, p.name())
			pr.Files = append(pr.Files, p.files...)
			pr.Lines += p.size.lines
			pr.SetApartLines += p.size.rawLines - p.size.lines
		}
		pr.packages, pr.unitLines = packagesOf(d.pieces)
		if len(d.joined) > 0 {
			pr.Why = fmt.Sprintf("; %s joined it rather than stand alone under a tenth of the budget", strings.Join(d.joined, " and "))
		}
		if len(d.themed) > 0 {
			pr.Why += fmt.Sprintf("; merged with the PR next to it, both within the budget: %s", strings.Join(d.themed, "; "))
		}
		plan.PRs = append(plan.PRs, pr)
	}
	for _, d := range drafts {
		for _, p := range d.pieces {
			for k, dep := range p.deps {
				addDependency(prOf[p], prOf[dep], p.depWhy[k])
			}
			if p.oversize != "" {
				limit := fmt.Sprintf("over the budget of %d lines and %d files", opts.MaxLines, opts.MaxFiles)
				if !over(p.size.lines, p.size.files, opts) {
					limit = fmt.Sprintf("with %d lines in %d files set apart, past what GitHub shows of a diff (%d lines, %d files)",
						p.size.rawLines-p.size.lines, p.size.rawFiles-p.size.files, GitHubMaxLines, GitHubMaxFiles)
				}
				plan.Warnings = append(plan.Warnings, fmt.Sprintf("%s alone has %d lines in %d files, %s: it stays whole in PR #%d (%s)",
					p.shortName(), p.size.lines, len(p.files), limit, prOf[p].Number, p.oversize))
				if over(p.size.lines, p.size.files, opts) && prOf[p].OverBudget == "" {
					prOf[p].OverBudget = fmt.Sprintf("%s: %s", p.shortName(), p.oversize)
				}
			}
		}
	}
	finish(plan)
	if c.keptCut != "" {
		plan.Warnings = append(plan.Warnings, c.keptCut)
	}
	plan.Estimate = estimate(len(plan.PRs), opts.ReviewsPerHour)
	return plan, nil
}

// finish sorts each PR's files and links, sets the waves, names the PRs
// and reports the files that cannot build as they are at the source.
func finish(plan *Plan) {
	for _, pr := range plan.PRs {
		sort.Ints(pr.BlockedBy)
		sort.Ints(pr.Blocks)
		sort.Slice(pr.WaitsFor, func(i, j int) bool { return pr.WaitsFor[i].PR < pr.WaitsFor[j].PR })
		sort.Slice(pr.Files, func(i, j int) bool { return pr.Files[i].Path < pr.Files[j].Path })
		// A task runs after everything it depends on.
		pr.Wave = 1
		for _, d := range pr.BlockedBy {
			pr.Wave = max(pr.Wave, plan.PRs[d-1].Wave+1)
		}
	}
	name(plan)
	for _, pr := range plan.PRs {
		for _, f := range pr.Files {
			if f.Problem != "" && f.isGoCode() { // the go command skips testdata
				plan.Warnings = append(plan.Warnings, fmt.Sprintf("PR #%d (%s) cannot build, nor can the PRs stacked on it, because the source itself does not: %s", pr.Number, pr.Theme, f.Problem))
			}
		}
	}
}

// addDependency records that pr needs dep, both ways, and why.
func addDependency(pr, dep *PR, tie tieWhy) {
	if dep != nil && dep != pr && !contains(pr.BlockedBy, dep.Number) {
		pr.BlockedBy = append(pr.BlockedBy, dep.Number)
		dep.Blocks = append(dep.Blocks, pr.Number)
		why := tie.String()
		if why == "" {
			why = "it needs what that PR holds"
		}
		pr.WaitsFor = append(pr.WaitsFor, Wait{PR: dep.Number, Why: why})
	}
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
