// Command splitreal measures wo split on real changes: for each change
// it lays the base (or nothing) and then the source into a fresh
// repository as two commits, plans the split in-process, and with -build
// stacks the PRs one by one in a worktree and runs go build ./... and go
// vet ./... at every tip, offline, as CI on each stacked PR would, then
// checks that the top of the stack is the source tree.
//
// A change comes from published versions of a Go module (MODULE@VERSION,
// from the Go module proxy through go mod download) or from two refs of a
// git repository on this machine (-repo DIR: a clone, or a bare mirror
// such as a fetched snapshot of a GitHub repository). -table FILE runs a
// list of changes and prints one Markdown table of them, the one in
// docs/BENCHMARKS.md. It downloads (the versions, and with -build what the
// trees need to build), so it is run by hand, never by the tests.
//
//	go run ./scripts/splitreal -base github.com/spf13/cobra@v1.6.1 -source github.com/spf13/cobra@v1.10.2 -build
//	go run ./scripts/splitreal -repo /path/to/task.git -base v3.34.0 -source v3.44.0 -build
//	go run ./scripts/splitreal -table scripts/splitreal/changes.txt -repos /work/.mirror -build
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/wo-runner/wo/gitops"
	"github.com/wo-runner/wo/internal/fileparts"
	"github.com/wo-runner/wo/split"
)

// change is one change to split: from Base to Source, each a
// MODULE@VERSION when Repo is "", else a ref of the git repository Repo.
// Base "" is an empty base: the source is one new import.
type change struct {
	Name                 string
	Repo                 string
	Base, Source         string
	MaxLines, MaxFiles   int
	ExplainOver, Verbose bool
	PlanFile             string // where to write the plan as JSON ("": nowhere)
}

// result is what the table says of a change.
type result struct {
	change
	Files      int
	Kinds      map[string]int
	Lines      int // counted: what a reviewer reads
	SetApart   int // lines set apart from the budget
	Budget     split.Options
	PRs        int
	Bound      int // ⌈1.3 × fewest⌉ + 1 (prBound)
	Largest    int
	Over       int // PRs over the budget
	OverSingle int // of them, one file
	OverProved int // of them, a group the plan names as uncuttable, with why
	Tips       string
	Top        string
	Embeds     string // tips where every embed pattern matches (checkEmbeds)
	Planned    time.Duration
	Err        string
}

func main() {
	base := flag.String("base", "", "the base: MODULE@VERSION, or a ref of -repo (empty: an empty base, the source is one new import)")
	source := flag.String("source", "", "the source: MODULE@VERSION, or a ref of -repo")
	repoDir := flag.String("repo", "", "a git repository (a clone or a bare mirror) whose refs -base and -source name")
	table := flag.String("table", "", "a file of changes, one a line (see changes.txt): run them all and print the table")
	repos := flag.String("repos", "", "where -table's git repositories are (a name in the table is a folder here)")
	only := flag.String("only", "", "with -table, run only the changes whose name holds this text")
	work := flag.String("work", "", "folder for the repositories (default: a new temporary folder)")
	maxLines := flag.Int("max-lines", 0, "line budget per PR (default: wo split's)")
	maxFiles := flag.Int("max-files", 0, "file budget per PR (default: wo split's)")
	perHour := flag.Float64("reviews-per-hour", split.DefaultReviewsPerHour, "the reviewer's rate, for the estimate")
	build := flag.Bool("build", false, "stack the PRs and build and vet every tip")
	fetch := flag.Bool("fetch", false, "download what the trees need to build (as -build does), without building: to build later offline")
	verbose := flag.Bool("v", false, "print every PR")
	explain := flag.Bool("explain", false, "print why each file of a PR over the budget is where it is")
	plans := flag.String("plans", "", "write each change's plan, and what split read of the change, as JSON into `DIR` (NN.json): two versions of wo split compare byte for byte")
	flag.Parse()
	dir := *work
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "splitreal-"); err != nil {
			fail(err.Error())
		}
	}
	var changes []change
	if *table != "" {
		changes = readTable(*table, *repos)
	} else {
		if *source == "" {
			fail("-source (MODULE@VERSION, or a ref of -repo) or -table FILE is needed")
		}
		changes = []change{{Name: orEmpty(*base) + " → " + *source, Repo: *repoDir, Base: *base, Source: *source}}
	}
	var results []result
	for i, c := range changes {
		if *only != "" && !strings.Contains(c.Name, *only) {
			continue
		}
		if *maxLines > 0 {
			c.MaxLines = *maxLines
		}
		if *maxFiles > 0 {
			c.MaxFiles = *maxFiles
		}
		c.ExplainOver, c.Verbose = *explain, *verbose
		if *plans != "" {
			c.PlanFile = filepath.Join(*plans, fmt.Sprintf("%02d.json", i+1))
		}
		r := measure(c, filepath.Join(dir, fmt.Sprintf("change%02d", i+1)), *perHour, *build, *fetch || *build)
		results = append(results, r)
	}
	if *table != "" {
		printTable(results, *build)
	}
	for _, r := range results {
		if r.Err != "" || r.Over > r.OverSingle+r.OverProved || !strings.HasPrefix(r.Embeds, "all") ||
			*build && (!strings.HasPrefix(r.Tips, "all") || r.Top != "yes") {
			os.Exit(1)
		}
	}
}

// readTable reads changes, one a line: name | source kind | base | source
// | max lines (optional). The kind is "module" (versions from the
// module proxy) or "git NAME" (a repository in the repos folder, at the
// path NAME if it is absolute, or the repository splitreal runs in if it
// is "."). # starts a comment.
func readTable(file, repos string) []change {
	data, err := os.ReadFile(file)
	if err != nil {
		fail(err.Error())
	}
	var out []change
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "|")
		for i := range f {
			f[i] = strings.TrimSpace(f[i])
		}
		if len(f) < 4 {
			fail(fmt.Sprintf("%s:%d: want name | module or git NAME | base | source [| max lines]", file, n))
		}
		c := change{Name: f[0], Base: f[2], Source: f[3]}
		if kind, name, ok := strings.Cut(f[1], " "); ok && kind == "git" {
			c.Repo = name
			if name != "." && !filepath.IsAbs(name) {
				if repos == "" {
					fail(fmt.Sprintf("%s:%d: the git repository %s is looked for in -repos DIR, which is not given", file, n, name))
				}
				c.Repo = filepath.Join(repos, name)
			}
		} else if f[1] != "module" {
			fail(fmt.Sprintf("%s:%d: %q: the source kind is module or git NAME", file, n, f[1]))
		}
		if len(f) > 4 && f[4] != "" {
			if _, err := fmt.Sscan(f[4], &c.MaxLines); err != nil {
				fail(fmt.Sprintf("%s:%d: max lines %q: %v", file, n, f[4], err))
			}
		}
		out = append(out, c)
	}
	return out
}

// measure lays out one change, plans it and, if asked, builds every tip.
func measure(c change, dir string, perHour float64, build, fetch bool) (r result) {
	r.change = c
	fmt.Printf("== %s\n", c.Name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fail(err.Error())
	}
	repo := filepath.Join(dir, "repo")
	if err := os.RemoveAll(repo); err != nil {
		fail(err.Error())
	}
	run(dir, "git", "init", "-q", "-b", "main", repo)
	run(repo, "git", "config", "user.email", "splitreal@example.com")
	run(repo, "git", "config", "user.name", "splitreal")
	if c.Base != "" {
		lay(c, c.Base, repo)
		if fetch {
			fetchDeps(repo)
		}
	}
	run(repo, "git", "add", "-A")
	run(repo, "git", "commit", "-q", "--allow-empty", "-m", "base "+c.Base)
	run(repo, "git", "branch", "base")
	run(repo, "git", "rm", "-q", "-r", "--ignore-unmatch", ".")
	lay(c, c.Source, repo)
	if fetch {
		fetchDeps(repo)
	}
	run(repo, "git", "add", "-A")
	run(repo, "git", "commit", "-q", "-m", "source "+c.Source)

	g, err := gitops.Open(repo)
	if err != nil {
		fail(err.Error())
	}
	ch, err := split.ReadChange(context.Background(), g, "base", "main")
	if err != nil {
		r.Err = err.Error()
		return r
	}
	opts := split.Options{MaxLines: c.MaxLines, MaxFiles: c.MaxFiles, SplitLarge: true, ReviewsPerHour: perHour}
	start := time.Now()
	p, err := split.Make(ch, opts)
	if err != nil {
		r.Err = err.Error()
		return r
	}
	r.Planned = time.Since(start)
	if c.PlanFile != "" {
		writePlan(c.PlanFile, c, ch, p)
	}
	opts = p.Options
	r.Budget = opts
	r.Kinds = map[string]int{}
	for _, f := range ch.Files {
		r.Kinds[f.Kind]++
		if f.SetApart == "" {
			r.Lines += f.Lines
		} else {
			r.SetApart += f.Lines
		}
	}
	r.Files, r.PRs = len(ch.Files), len(p.PRs)
	r.Bound = prBound(ch.Files, opts)
	fmt.Printf("%d files (%v), %d lines (+%d set apart); budget %d lines, %d files\n", r.Files, r.Kinds, r.Lines, r.SetApart, opts.MaxLines, opts.MaxFiles)
	for _, pr := range p.PRs {
		r.Largest = max(r.Largest, pr.Lines)
		counted := 0 // files that count against the budget
		for _, f := range pr.Files {
			if f.SetApart == "" {
				counted++
			}
		}
		isOver := pr.Lines > opts.MaxLines || counted > opts.MaxFiles
		mark := ""
		switch {
		case !isOver:
		case counted <= 1:
			r.Over++
			r.OverSingle++
			mark = "  over the budget: one file"
		case pr.OverBudget != "":
			r.Over++
			r.OverProved++
			mark = "  over the budget, which the plan says cannot be cut: " + pr.OverBudget
		default:
			r.Over++
			mark = "  OVER THE BUDGET, and the plan does not say why"
		}
		if c.Verbose || isOver {
			apart := ""
			if pr.SetApartLines > 0 {
				apart = fmt.Sprintf(" (+%d set apart)", pr.SetApartLines)
			}
			fmt.Printf("  #%d %5d lines%s %4d files  %s%s\n", pr.Number, pr.Lines, apart, len(pr.Files), pr.Title, clip(mark, 300))
			if c.ExplainOver && isOver {
				for _, f := range pr.Files {
					fmt.Printf("      %s (%s, %d): %s\n", f.Path, f.Kind, f.Lines, f.Reason)
				}
			}
		}
	}
	for _, w := range p.Warnings {
		fmt.Println("  warning:", clip(w, 400))
	}
	if p.Estimate != nil {
		fmt.Println("  review:", p.Estimate)
	}
	fmt.Printf("PRs: %d (bound %d); largest: %d lines; over the budget: %d (one file: %d, proved uncuttable: %d); planned in %v\n",
		r.PRs, r.Bound, r.Largest, r.Over, r.OverSingle, r.OverProved, r.Planned.Round(time.Millisecond))
	r.Tips, r.Top = "not run", "not run"
	r.Embeds = checkEmbeds(repo, p)
	if build {
		r.Tips, r.Top = buildEveryTip(repo, p)
	}
	return r
}

// writePlan writes the plan and what split read of the change (each
// file's imports, embeds and problem too, which its JSON leaves out) as
// indented JSON: all that --json and --explain show of a plan comes
// from it.
func writePlan(file string, c change, ch *split.Change, p *split.Plan) {
	type readFile struct {
		split.File
		Imports, BaseImports, Embeds []string
		Problem                      string
	}
	var files []readFile
	for _, f := range ch.Files {
		files = append(files, readFile{f, f.Imports, f.BaseImports, f.Embeds, f.Problem})
	}
	data, err := json.MarshalIndent(struct {
		Name, Base, Source string
		Options            split.Options
		Module, BaseModule string
		Modules            map[string]string
		ModuleNeeds        map[string][]string
		WorkspaceUses      map[string][]string
		Dropped            []string
		Files              []readFile
		Plan               *split.Plan
	}{c.Name, c.Base, c.Source, p.Options, ch.Module, ch.BaseModule, ch.Modules, ch.ModuleNeeds, ch.WorkspaceUses, ch.Dropped, files, p}, "", "  ")
	if err == nil {
		err = os.MkdirAll(filepath.Dir(file), 0o755)
	}
	if err == nil {
		err = os.WriteFile(file, append(data, '\n'), 0o644)
	}
	if err != nil {
		fail(err.Error())
	}
}

// prBound is the most PRs a plan should take: ⌈1.3 × the fewest any
// plan could⌉ + 1. A PR holds two budgets: the reviewer's (the counted
// lines and files, set-apart files left out) and what GitHub shows of
// a diff (20,000 lines and 300 files, every file counted: past it a
// reviewer cannot read the PR there, set apart or not). The fewest PRs
// any plan could have is the largest of the four ratios, so that is
// what the bound scales, not the counted lines alone (x/text's 297,539
// generated lines need 15 PRs whatever the reviewer's budget).
func prBound(files []split.File, opts split.Options) int {
	var lines, counted, all, allLines int
	for _, f := range files {
		all++
		allLines += f.Lines
		if f.SetApart == "" {
			counted++
			lines += f.Lines
		}
	}
	fewest := max(float64(lines)/float64(opts.MaxLines), float64(counted)/float64(opts.MaxFiles),
		float64(allLines)/split.GitHubMaxLines, float64(all)/split.GitHubMaxFiles)
	return int(math.Ceil(1.3*fewest)) + 1
}

// checkEmbeds says, without building, at how many tips of the stack
// every //go:embed pattern of the Go files there matches a file there
// (the go command refuses one that matches nothing), and names the
// first that does not.
func checkEmbeds(repo string, p *split.Plan) string {
	list := func(ref string) map[string]bool {
		out := map[string]bool{}
		for _, f := range strings.Split(output(repo, "git", "ls-tree", "-r", "--name-only", "-z", ref), "\x00") {
			if f != "" {
				out[f] = true
			}
		}
		return out
	}
	// embeds lists the patterns of each Go file at a ref that has any:
	// its //go:embed comments as the parser sees them (a test's input
	// in a raw string may hold such a line too).
	embeds := func(ref string) map[string][]string {
		out := map[string][]string{}
		cmd := exec.Command("git", "grep", "-l", "-z", "--full-name", "-e", "//go:embed", ref, "--", "*.go")
		cmd.Dir = repo
		data, _ := cmd.Output() // exit 1: no match
		for _, name := range strings.Split(string(data), "\x00") {
			file := strings.TrimPrefix(name, ref+":")
			if file == "" {
				continue
			}
			src := output(repo, "git", "show", ref+":"+file)
			f, err := parser.ParseFile(token.NewFileSet(), file, src, parser.ParseComments)
			if err != nil {
				continue
			}
			for _, g := range f.Comments {
				for _, c := range g.List {
					rest, ok := strings.CutPrefix(c.Text, "//go:embed")
					if !ok || rest == "" || rest[0] != ' ' && rest[0] != '\t' {
						continue
					}
					for _, pat := range strings.Fields(rest) {
						out[file] = append(out[file], strings.Trim(strings.TrimPrefix(pat, "all:"), "\"`"))
					}
				}
			}
		}
		return out
	}
	tree, source := list("base"), list("main")
	baseEmbeds, sourceEmbeds := embeds("base"), embeds("main")
	landed := map[string]bool{}
	good := 0
	first := ""
	for _, pr := range p.PRs {
		for _, f := range pr.Files {
			if f.OldPath != "" {
				delete(tree, f.OldPath)
			}
			if f.Kind == "deleted" {
				delete(tree, f.Path)
			} else {
				tree[f.Path] = true
			}
			landed[f.Path] = true
		}
		ok := true
		for file := range tree {
			patterns := baseEmbeds[file]
			if landed[file] {
				patterns = sourceEmbeds[file]
			}
			for _, pat := range patterns {
				if !embedMatches(tree, filepath.ToSlash(filepath.Dir(file)), pat) {
					ok = false
					if first == "" {
						first = fmt.Sprintf("tip %d: %s embeds %s, which matches nothing there", pr.Number, file, pat)
					}
				}
			}
		}
		if ok {
			good++
		}
	}
	n := 0
	for _, ps := range sourceEmbeds {
		n += len(ps)
	}
	fmt.Printf("  embeds: %d patterns at the source, %d files at the base with some\n", n, len(baseEmbeds))
	_ = source
	if first != "" {
		fmt.Println("  embeds:", first)
		return fmt.Sprintf("%d of %d", good, len(p.PRs))
	}
	return fmt.Sprintf("all %d", len(p.PRs))
}

// embedMatches says whether a //go:embed pattern of a file in dir
// matches a file of the tree, or a folder holding one.
func embedMatches(tree map[string]bool, dir, pattern string) bool {
	full := pattern
	if dir != "." {
		full = dir + "/" + pattern
	}
	for f := range tree {
		for p := f; p != "." && p != "/"; p = filepath.ToSlash(filepath.Dir(p)) {
			if ok, _ := filepath.Match(full, p); ok {
				return true
			}
		}
	}
	return false
}

// lay writes the tree of what (a MODULE@VERSION, or a ref of c.Repo)
// into dir.
func lay(c change, what, dir string) {
	if c.Repo == "" {
		copyModule(what, dir)
		return
	}
	archive := exec.Command("git", "archive", "--format=tar", what)
	archive.Dir = c.Repo
	untar := exec.Command("tar", "-x", "-C", dir)
	pipe, err := archive.StdoutPipe()
	if err != nil {
		fail(err.Error())
	}
	untar.Stdin = pipe
	var stderr bytes.Buffer
	archive.Stderr = &stderr
	if err := untar.Start(); err != nil {
		fail(err.Error())
	}
	if err := archive.Run(); err != nil {
		fail(fmt.Sprintf("git archive %s in %s: %v\n%s", what, c.Repo, err, stderr.String()))
	}
	if err := untar.Wait(); err != nil {
		fail(fmt.Sprintf("untarring %s of %s: %v", what, c.Repo, err))
	}
}

// buildEveryTip stacks the PRs on the base in a worktree and builds and
// vets every tip; the top of the stack must be the source tree.
func buildEveryTip(repo string, p *split.Plan) (tips, top string) {
	wt := filepath.Join(filepath.Dir(repo), "tip")
	_ = os.RemoveAll(wt)
	_ = exec.Command("git", "-C", repo, "worktree", "prune").Run()
	run(repo, "git", "worktree", "add", "-q", "--detach", wt, "base")
	var failed []string
	for _, pr := range p.PRs {
		args := []string{"checkout", "main", "--"}
		for _, f := range pr.Files {
			if f.OldPath != "" {
				run(wt, "git", "rm", "-q", "--", f.OldPath)
			}
			if f.Kind == "deleted" {
				run(wt, "git", "rm", "-q", "--", f.Path)
				continue
			}
			args = append(args, f.Path)
		}
		if len(args) > 3 {
			run(wt, "git", args...)
		}
		// A file the PR brings part of: those lines of it, as wo run's
		// checkout_files writes them.
		for _, f := range pr.Files {
			if f.Part != "" {
				src, err := exec.Command("git", "-C", wt, "show", "main:"+f.Path).Output()
				if err != nil {
					fail(fmt.Sprintf("PR #%d, %s: %v", pr.Number, f.Path, err))
				}
				part, err := fileparts.Cut(src, f.Part)
				if err != nil {
					fail(fmt.Sprintf("PR #%d, %s: %v", pr.Number, f.Path, err))
				}
				if err := os.WriteFile(filepath.Join(wt, f.Path), part, 0o644); err != nil {
					fail(err.Error())
				}
			}
		}
		start := time.Now()
		result := "builds and vets"
		for _, mod := range moduleRoots(wt) {
			if out, err := offline(mod, "build", "-o", os.DevNull, "./..."); err != nil {
				result = "DOES NOT BUILD in " + mod + ":\n" + clip(out, 2000)
				break
			} else if strings.Contains(out, "matched no packages") {
				continue
			}
			if out, err := offline(mod, "vet", "./..."); err != nil {
				result = "FAILS VET in " + mod + ":\n" + clip(out, 2000)
				break
			}
		}
		if result != "builds and vets" {
			failed = append(failed, fmt.Sprintf("%d", pr.Number))
		}
		fmt.Printf("  tip %d/%d (%s): %s (%v)\n", pr.Number, len(p.PRs), pr.Title, result, time.Since(start).Round(time.Second))
	}
	run(wt, "git", "add", "-A")
	top = "yes"
	if diff := output(wt, "git", "diff", "--cached", "--stat", "main"); diff != "" {
		fmt.Printf("the top of the stack is NOT the source tree:\n%s\n", diff)
		top = "NO"
	} else {
		fmt.Println("the top of the stack is the source tree")
	}
	if len(failed) == 0 {
		fmt.Println("every tip builds and vets")
		return fmt.Sprintf("all %d", len(p.PRs)), top
	}
	return fmt.Sprintf("%d of %d (not: %s)", len(p.PRs)-len(failed), len(p.PRs), strings.Join(failed, ", ")), top
}

// printTable prints the results as the Markdown table of
// docs/BENCHMARKS.md.
func printTable(results []result, built bool) {
	fmt.Println()
	fmt.Println("| change | files | lines (+ set apart) | budget | PRs (bound) | largest PR | over the budget (one file, proved uncuttable) | tips whose embeds match | tips that build and vet | top = source | plan |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|")
	for _, r := range results {
		if r.Err != "" {
			fmt.Printf("| %s | %s ||||||||||\n", r.Name, r.Err)
			continue
		}
		var kinds []string
		for _, k := range sortedKinds(r.Kinds) {
			kinds = append(kinds, fmt.Sprintf("%d %s", r.Kinds[k], k))
		}
		over := fmt.Sprintf("%d", r.Over)
		if r.Over > 0 {
			over = fmt.Sprintf("%d (%d, %d)", r.Over, r.OverSingle, r.OverProved)
		}
		fmt.Printf("| %s | %d: %s | %s (+%s) | %s / %d | %d (%d) | %s | %s | %s | %s | %s | %v |\n", r.Name, r.Files, strings.Join(kinds, ", "),
			thousands(r.Lines), thousands(r.SetApart), thousands(r.Budget.MaxLines), r.Budget.MaxFiles, r.PRs, r.Bound, thousands(r.Largest),
			over, r.Embeds, r.Tips, r.Top, r.Planned.Round(time.Millisecond))
	}
	if !built {
		fmt.Println("\n(tips not built: run with -build)")
	}
}

func sortedKinds(m map[string]int) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return m[out[i]] > m[out[j]] || m[out[i]] == m[out[j]] && out[i] < out[j] })
	return out
}

func thousands(n int) string {
	s := fmt.Sprintf("%d", n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// copyModule lays the files of MODULE@VERSION, from the module cache
// (downloaded through the module proxy), into dir.
func copyModule(modVersion, dir string) {
	out := output(dir, "go", "mod", "download", "-json", modVersion)
	var info struct{ Dir, Error string }
	if err := json.Unmarshal([]byte(out), &info); err != nil || info.Dir == "" {
		fail(fmt.Sprintf("go mod download %s: %v %s", modVersion, err, info.Error))
	}
	err := filepath.WalkDir(info.Dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(info.Dir, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		target := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		fail(err.Error())
	}
}

// fetchDeps puts what the tree's packages and tests need into the module
// cache, so that its tips build offline.
func fetchDeps(dir string) {
	for _, mod := range moduleRoots(dir) {
		saved := map[string][]byte{}
		for _, name := range []string{"go.mod", "go.sum"} {
			if data, err := os.ReadFile(filepath.Join(mod, name)); err == nil {
				saved[name] = data
			}
		}
		for _, args := range [][]string{{"mod", "download"}, {"list", "-e", "-deps", "-test", "./..."}} {
			cmd := exec.Command("go", args...)
			cmd.Dir = mod
			cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
			if out, err := cmd.CombinedOutput(); err != nil {
				fmt.Fprintf(os.Stderr, "go %s in %s: %v\n%s\n", args[0], mod, err, clip(string(out), 2000))
			}
		}
		// go list -mod=mod may have written to them: put them back.
		for name, data := range saved {
			if err := os.WriteFile(filepath.Join(mod, name), data, 0o644); err != nil {
				fail(err.Error())
			}
		}
	}
}

func offline(dir string, args ...string) (string, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOTOOLCHAIN=local", "GOPROXY=off", "GOFLAGS=-mod=mod", "GOWORK=off")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func moduleRoots(dir string) []string {
	var roots []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata" || d.Name() == "vendor") {
			return filepath.SkipDir
		}
		if !d.IsDir() && d.Name() == "go.mod" {
			roots = append(roots, filepath.Dir(p))
		}
		return nil
	})
	return roots
}

func run(dir, name string, args ...string) { output(dir, name, args...) }

func output(dir, name string, args ...string) string {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		fail(fmt.Sprintf("%s %s in %s: %v\n%s", name, strings.Join(args, " "), dir, err, stderr.String()))
	}
	return string(out)
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func orEmpty(s string) string {
	if s == "" {
		return "(empty)"
	}
	return s
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "splitreal:", msg)
	os.Exit(2)
}
