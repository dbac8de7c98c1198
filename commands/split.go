package commands

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/wo-runner/wo/intake"
	"github.com/wo-runner/wo/split"
	"github.com/wo-runner/wo/store"
	"github.com/wo-runner/wo/termtext"
	"github.com/wo-runner/wo/workorder"
)

func newSplitCommand(f *Factory) *cli.Command { return splitCommand(f, runSplit) }

// splitOptions are what wo split is asked.
type splitOptions struct {
	Store      StoreConfig
	Request    intake.SplitRequest
	PlanFile   string // a hand-written plan; - for standard input
	DryRun     bool
	EmitMatrix bool
	// Explain is "" (off), "tree" (--explain: the PRs as a tree with
	// their size, theme and what each waits for) or "full"
	// (--explain=full: also why each file went where).
	Explain string
	Wide    bool // every value whole, whatever the width
}

// explainValue is --explain's value: a flag that stands alone
// (--explain) or takes a value (--explain=full).
type explainValue struct{ mode string }

func (e *explainValue) Set(v string) error {
	switch v {
	case "true", "tree":
		e.mode = "tree"
	case "full":
		e.mode = "full"
	case "false", "":
		e.mode = ""
	default:
		return fmt.Errorf("--explain=%s: use --explain (the PRs as a tree: size, theme, what each waits for) or --explain=full (also why each file went where)", v)
	}
	return nil
}

func (e *explainValue) String() string   { return e.mode }
func (e *explainValue) IsBoolFlag() bool { return true }

// optionalValueFlag is a flag that may stand alone: it takes its value
// only after "=", as a bool flag does (its Value has IsBoolFlag).
type optionalValueFlag struct{ *cli.GenericFlag }

func (optionalValueFlag) TakesValue() bool { return false }

// explainWidth is the widest line of --explain's tree: it fits a
// terminal of 120 columns, or a narrower one.
const explainWidth = 120

func splitCommand(f *Factory, run func(context.Context, *Factory, *splitOptions) (result, error)) *cli.Command {
	return &cli.Command{
		Name:  "split",
		Usage: "cut a big change into an epic of review PRs, one work order each",
		Description: `Reads the change from --base to --source, groups the files into review pull
requests and writes an epic with one work order per PR (the standard review
procedure, branch review/NN-slug, dependencies both ways) in one
all-or-nothing import. A Go package keeps its tests, its testdata and the
files it embeds; a folder without Go code at the top of the module (a docs
site, CI files) is a series of PRs of its own. Small packages are packed with
their neighbours in the directory tree and the import graph up to --max-lines
and --max-files, neighbours about one thing merge within the budget, and each
PR is named after its theme. PRs are ordered by what each tip needs to build:
the imports and the declarations each file uses at that tip, and what it needs
of go.mod. Lockfiles, generated and vendored code and test data blobs are set
apart: they go with the code that needs them and do not count against the
budget. With --split-large (the default) a package over the budget is cut
across consecutive PRs along its declarations, so that each PR still builds.
--explain prints the PRs as a tree, each line within 120 columns (or the
terminal's width): its size, theme, why it is over the budget if it is, and
what it waits for and why; --explain=full adds why each file went where
(--json has it all), and how long the review takes at --reviews-per-hour.
Without a GitHub repository (--github-repo, or an origin remote on GitHub)
the work orders stop after the push, with no PR and no review: split warns.

Rerunning split for the same repository, base and source finds the same keys:
work orders that have not started get the new manifests, started ones are
left alone and named. --plan FILE takes a hand-written plan instead:
{"prs": [{"title": "...", "globs": ["internal/config/**"]}], "exclude": ["docs/**"]}.

--mode independent (default): every PR targets --base, and a PR starts once
the PRs it depends on are merged. --mode stacked: a PR targets the branch of
the PR it depends on, and starts once that one is pushed.

The plan's table fits the terminal ($COLUMNS, else the terminal's width,
else 80): keys leave out the epic's key they start with, then titles are
cut (…), and --explain's reasons wrap; --wide shows every value whole.`,
		Flags: append(storeFlags(),
			&cli.StringFlag{Name: "repo", Value: ".", Usage: "the repository's main checkout `PATH`"},
			&cli.StringFlag{Name: "base", Required: true, Usage: "the `REF` the PRs are reviewed against"},
			&cli.StringFlag{Name: "source", Required: true, Usage: "the `REF` that holds the whole change"},
			&cli.StringFlag{Name: "epic-key", Usage: "the epic's `KEY`", DefaultText: "derived from repository, base and source"},
			&cli.StringFlag{Name: "key-prefix", Usage: "work order keys are `PREFIX`01, PREFIX02, …", DefaultText: "the epic key + _pr"},
			&cli.IntFlag{Name: "max-lines", Value: split.DefaultMaxLines, Usage: "line budget per PR: lines a reviewer reads (a new file's lines, a modified file's added and removed ones)"},
			&cli.IntFlag{Name: "max-files", Value: split.DefaultMaxFiles, Usage: "file budget per PR (150: the most files a review bot such as CodeRabbit reviews in one PR)"},
			&cli.StringFlag{Name: "by", Value: "package", Usage: "group by `package` (directory) or dir (top-level directory)"},
			&cli.StringFlag{Name: "plan", Usage: "use the hand-written plan in `FILE`"},
			&cli.StringFlag{Name: "mode", Value: "independent", Usage: "independent or stacked"},
			&cli.StringFlag{Name: "github-repo", Usage: "GitHub `OWNER/NAME` for the PRs (without one the procedure stops after the push)", DefaultText: "from the origin remote's URL"},
			&cli.StringFlag{Name: "worktree-root", Usage: "where the worktrees go (`DIR`)", DefaultText: "a folder beside the repository"},
			&cli.StringFlag{Name: "source-event-id", Usage: "the `ID` of the event (a push, a CI run) this split answers: the epic key derives from it, so the same event never makes a second epic"},
			&cli.BoolFlag{Name: "dry-run", Usage: "print the plan; write nothing"},
			&cli.BoolFlag{Name: "emit-matrix", Usage: "print a GitHub Actions matrix of the work orders that can run now"},
			&cli.BoolFlag{Name: "split-large", Value: true, Usage: "cut a Go package over the budget across consecutive PRs (--split-large=false keeps each package whole)"},
			optionalValueFlag{&cli.GenericFlag{Name: "explain", Value: &explainValue{}, Usage: "print the PRs as a tree: size, theme, what each waits for and why, and how long the review takes; --explain=full also says why each file went where"}},
			wideFlag(),
			&cli.Float64Flag{Name: "reviews-per-hour", Value: split.DefaultReviewsPerHour, Usage: "the reviews an hour, `N`, that the reviewer takes (5: a review bot such as CodeRabbit on a paid plan, per developer): --explain and the epic say how long the review takes, each PR costing two reviews; 0 for no estimate"},
		),
		Action: f.action(func(c *cli.Context) (result, error) {
			opts, err := splitOptionsFrom(c, f)
			if err != nil {
				return result{}, err
			}
			return run(c.Context, f, opts)
		}),
	}
}

// splitOptionsFrom reads the flags.
func splitOptionsFrom(c *cli.Context, f *Factory) (*splitOptions, error) {
	if c.Args().Len() > 0 {
		return nil, usagef("wo split takes no arguments: use --base and --source")
	}
	if r := c.Float64("reviews-per-hour"); r < 0 || r != r {
		return nil, usagef(fmt.Sprintf("--reviews-per-hour %v: give how many reviews an hour the reviewer takes (0 for no estimate)", r))
	}
	splitLarge := c.Bool("split-large")
	return &splitOptions{
		Store: f.storeConfig(c), PlanFile: c.String("plan"), DryRun: c.Bool("dry-run"), EmitMatrix: c.Bool("emit-matrix"),
		Explain: c.Generic("explain").(*explainValue).mode, Wide: c.Bool("wide"),
		Request: intake.SplitRequest{
			RepoPath: c.String("repo"), Base: c.String("base"), Source: c.String("source"),
			Auto: split.Options{MaxLines: c.Int("max-lines"), MaxFiles: c.Int("max-files"), By: c.String("by"),
				SplitLarge: splitLarge, ReviewsPerHour: c.Float64("reviews-per-hour")},
			EpicKey: c.String("epic-key"), KeyPrefix: c.String("key-prefix"), GitHubRepo: c.String("github-repo"),
			WorktreeRoot: c.String("worktree-root"), Mode: c.String("mode"), SourceEvent: c.String("source-event-id"),
		},
	}, nil
}

func runSplit(ctx context.Context, f *Factory, o *splitOptions) (result, error) {
	req := o.Request
	if o.PlanFile != "" {
		data, _, err := f.readInput(o.PlanFile)
		if err != nil {
			return result{}, err
		}
		req.HandPlan = data
	}
	p, err := intake.PlanSplit(ctx, req)
	var bad *intake.BadRequestError
	if errors.As(err, &bad) {
		return result{}, usagef(bad.Error())
	}
	if err != nil {
		return result{}, err
	}
	plan, epicKey := p.Plan, workorder.Key(p.Epic)
	warnings := append([]string(nil), plan.Warnings...)
	if p.NoReview != "" {
		warnings = append(warnings, p.NoReview)
	}
	for _, w := range warnings {
		fmt.Fprintln(f.Stderr, "warning:", termtext.Line(w))
	}
	out := splitData{Epic: epicKey, PRs: plan.PRs, Warnings: warnings, Excluded: plan.Excluded,
		SetApart: plan.SetApart, Estimate: plan.Estimate}
	ready := p.Ready()
	var written *intake.SplitWritten
	if !o.DryRun {
		err = f.useStore(ctx, o.Store, func(s store.Store) error {
			written, err = newIntake(s).WriteSplit(ctx, p)
			return err
		})
		if written != nil {
			writeWarnings(f, written.Validation)
			writeNotes(f, written.Warnings)
		}
		if err != nil {
			return result{}, err
		}
		out.Written = written
		ready = written.Ready
	}
	matrix := splitMatrix{Include: []matrixEntry{}}
	for _, k := range ready {
		matrix.Include = append(matrix.Include, matrixEntry{Key: k})
	}
	out.Matrix = matrix
	if o.EmitMatrix {
		return result{data: matrix, human: func(w io.Writer) error {
			b, _ := json.Marshal(matrix)
			_, err := fmt.Fprintln(w, string(b))
			return err
		}}, nil
	}
	width := f.textWidth(o.Wide)
	if o.Explain != "" && width > explainWidth {
		width = explainWidth // the plan explained fits 120 columns, table and tree
	}
	return result{data: out, human: func(w io.Writer) error {
		if err := writeSplit(w, plan, epicKey, p.Tasks, o.DryRun, written, width); err != nil || o.Explain == "" {
			return err
		}
		if err := writeExplainTree(w, plan, epicKey, p.Tasks, width); err != nil || o.Explain != "full" {
			return err
		}
		return writeExplanation(w, plan, width)
	}}, nil
}

// writeSplit prints the plan: a table of its PRs within width (0: no
// limit), then what it left out.
func writeSplit(w io.Writer, plan *split.Plan, epic string, tasks []workorder.Document, dry bool, res *intake.SplitWritten, width int) error {
	verb := "wrote"
	if dry {
		verb = "would write (dry run)"
	}
	fmt.Fprintf(w, "%s epic %s: %d files in %d PRs\n", verb, termtext.Line(epic), len(plan.Change.Files), len(plan.PRs))
	t := &termtext.Table{Columns: []termtext.Column{{Header: "PR"}, {Header: "KEY", Give: 2, Min: 12}, {Header: "TITLE", Give: 3, Min: 20},
		{Header: "FILES"}, {Header: "LINES"}, {Header: "WAVE", Drop: 1}, {Header: "BLOCKED BY", Give: 1, Min: 10}}}
	for i, pr := range plan.PRs {
		var deps []string
		for _, d := range pr.BlockedBy {
			deps = append(deps, fmt.Sprintf("#%d", d))
		}
		key := workorder.Key(tasks[i])
		t.Rows = append(t.Rows, []string{fmt.Sprintf("#%d", pr.Number), key, pr.Title, strconv.Itoa(len(pr.Files)), strconv.Itoa(pr.Lines),
			strconv.Itoa(pr.Wave), orDash(strings.Join(deps, ", "))})
		t.Columns[1].Short = append(t.Columns[1].Short, shortKey(epic, key))
	}
	if err := writeTable(w, t, width); err != nil {
		return err
	}
	// The lines below the table wrap to width (0: whole), as the table
	// fits it.
	say := func(s string) {
		s = termtext.Line(s)
		if width <= 0 {
			fmt.Fprintln(w, s)
			return
		}
		for i, l := range termtext.Wrap(s, max(width-2, 20)) {
			if i > 0 {
				l = "  " + l
			}
			fmt.Fprintln(w, l)
		}
	}
	if len(plan.Excluded) > 0 {
		say("excluded: " + strings.Join(plan.Excluded, ", "))
	}
	for _, s := range plan.SetApart {
		say("set apart from the budget: " + s)
	}
	if res != nil && (len(res.Updated) > 0 || len(res.Same) > 0) {
		say(fmt.Sprintf("already there: %d unchanged, %d updated (%s)", len(res.Same), len(res.Updated), strings.Join(res.Updated, ", ")))
	}
	return nil
}

// writeExplainTree prints the plan as a tree: the epic, and under it
// each PR with its size, its theme and why, why it is over the budget if
// it is, and what it waits for and why. Every line fits explainWidth, or
// width if narrower (0, --wide: whole lines); what comes from the
// repository is escaped.
func writeExplainTree(w io.Writer, plan *split.Plan, epic string, tasks []workorder.Document, width int) error {
	if width <= 0 {
		width = 0
	} else {
		width = min(width, explainWidth)
	}
	line := func(s string) {
		s = termtext.Line(s)
		if width > 0 {
			s = termtext.Fit(s, width)
		}
		fmt.Fprintln(w, s)
	}
	// detail wraps a line under a PR to at most three lines of width,
	// the rest cut: a reason names paths, which may be long.
	detail := func(lead, more, s string) {
		s = termtext.Line(s)
		if width <= 0 {
			fmt.Fprintln(w, lead+s)
			return
		}
		room := width - max(termtext.Width(lead), termtext.Width(more))
		parts := termtext.Wrap(s, room)
		if len(parts) > 3 {
			parts = append(parts[:2], termtext.Fit(strings.Join(parts[2:], " "), room))
		}
		for i, p := range parts {
			if i > 0 {
				lead = more
			}
			fmt.Fprintln(w, lead+p)
		}
	}
	plural := func(n int, what string) string {
		if n == 1 {
			return fmt.Sprintf("1 %s", what)
		}
		return fmt.Sprintf("%s %ss", thousands(n), what)
	}
	lines, over := 0, 0
	paths := map[string]bool{} // a file brought in parts is one file
	for _, pr := range plan.PRs {
		lines += pr.Lines
		for _, f := range pr.Files {
			paths[f.Path] = true
		}
		if pr.OverBudget != "" {
			over++
		}
	}
	files := len(paths)
	fmt.Fprintln(w)
	line(fmt.Sprintf("epic %s: %d PRs, %s in %s; budget %s, %s a PR; %d over it",
		epic, len(plan.PRs), plural(lines, "line"), plural(files, "file"), plural(plan.Options.MaxLines, "line"), plural(plan.Options.MaxFiles, "file"), over))
	if plan.Estimate != nil {
		line("review: " + plan.Estimate.String())
	}
	for i, pr := range plan.PRs {
		branch, stem := "├─ ", "│  "
		if i == len(plan.PRs)-1 {
			branch, stem = "└─ ", "   "
		}
		// Size first: the title is what a narrow terminal cuts.
		size := plural(pr.Lines, "line") + ", " + plural(len(pr.Files), "file")
		if pr.SetApartLines > 0 {
			size += fmt.Sprintf(" (+%s set apart)", thousands(pr.SetApartLines))
		}
		if pr.OverBudget != "" {
			size += ", OVER THE BUDGET"
		}
		key := ""
		if i < len(tasks) {
			key = " " + shortKey(epic, workorder.Key(tasks[i]))
		}
		line(fmt.Sprintf("%s#%d%s · %s · %s", branch, pr.Number, key, size, pr.Title))
		var under []string
		under = append(under, "theme: "+strings.TrimPrefix(pr.Why, "; "))
		if pr.OverBudget != "" {
			under = append(under, "over the budget: "+pr.OverBudget)
		}
		if parts := partFiles(pr); len(parts) > 0 {
			under = append(under, fmt.Sprintf("brings part of %s (%s): whole declarations each, cut because they use each other in a cycle too large for one PR; a later PR brings the rest",
				plural(len(parts), "file"), strings.Join(firstN(parts, 3), ", ")))
		}
		if len(pr.BlockedBy) == 0 {
			under = append(under, "waits for nothing")
		}
		whys := map[int]string{}
		for _, wt := range pr.WaitsFor {
			whys[wt.PR] = wt.Why
		}
		const shown = 4 // then the others by number alone
		for k, d := range pr.BlockedBy {
			if k == shown {
				var rest []string
				for _, e := range pr.BlockedBy[shown:] {
					rest = append(rest, fmt.Sprintf("#%d", e))
				}
				under = append(under, "and waits for "+strings.Join(rest, ", "))
				break
			}
			if whys[d] == "" {
				under = append(under, fmt.Sprintf("waits for #%d", d)) // a hand-written plan says no why
				continue
			}
			under = append(under, fmt.Sprintf("waits for #%d: %s", d, whys[d]))
		}
		for j, u := range under {
			twig, more := "├─ ", "│     "
			if j == len(under)-1 {
				twig, more = "└─ ", "      "
			}
			detail(stem+twig, stem+more, u)
		}
	}
	return nil
}

// partFiles are the files of which the PR brings only some lines.
func partFiles(pr *split.PR) []string {
	var out []string
	for _, f := range pr.Files {
		if f.Part != "" {
			out = append(out, path.Base(f.Path))
		}
	}
	return out
}

// firstN is list's first n, then how many more.
func firstN(list []string, n int) []string {
	if len(list) <= n {
		return list
	}
	return append(slices.Clone(list[:n]), fmt.Sprintf("%d more", len(list)-n))
}

// thousands writes n with a comma every three digits: 107,147.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// writeExplanation says, PR by PR, why each file went where: each file
// on a line of its own, its reason below it wrapped to width (0: no
// limit), whole. Paths and reasons come from the repository: escaped.
func writeExplanation(w io.Writer, plan *split.Plan, width int) error {
	wrap := func(indent, s string) {
		s = termtext.Line(s)
		parts := []string{s}
		if width > 0 {
			parts = termtext.Wrap(s, max(width-termtext.Width(indent), 20))
		}
		for _, p := range parts {
			fmt.Fprintln(w, indent+p)
		}
	}
	for _, pr := range plan.PRs {
		fmt.Fprintln(w)
		wrap("", pr.Title+": "+strings.TrimPrefix(pr.Why, "; "))
		for _, f := range pr.Files {
			lines := "1 line"
			if f.Lines != 1 {
				lines = fmt.Sprintf("%d lines", f.Lines)
			}
			wrap("  ", fmt.Sprintf("%s (%s, %s)", f.Path, f.Kind, lines))
			wrap("      ", f.Reason)
		}
	}
	return nil
}

// splitData is wo split's --json data: the plan, and what was written.
type splitData struct {
	Epic     string          `json:"epic"`
	PRs      []*split.PR     `json:"prs"`
	Warnings []string        `json:"warnings"`
	Excluded []string        `json:"excluded"`
	SetApart []string        `json:"set_apart"`
	Estimate *split.Estimate `json:"estimate"`
	// Written is what the split stored; absent on a dry run.
	Written *intake.SplitWritten `json:"written,omitempty"`
	Matrix  splitMatrix          `json:"matrix"`
}

// splitMatrix is a GitHub Actions matrix of the work orders ready to run
// (wo split --emit-matrix prints it alone).
type splitMatrix struct {
	Include []matrixEntry `json:"include"`
}

type matrixEntry struct {
	Key string `json:"key"`
}
