package commands

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wo-runner/wo/internal/gittest"
	"github.com/wo-runner/wo/split"
	"github.com/wo-runner/wo/termtext"
	"github.com/wo-runner/wo/workorder"
)

// A repository's paths become PR titles, reasons and exclusions: a path
// that carries terminal escapes must reach the terminal inert.
func TestSplitOutputEscapesWhatTheRepositoryNamed(t *testing.T) {
	t.Parallel()
	const evil = "pkg/\x1b]52;c;cm0gLXJmIH4=\x07x\x1b[2J"
	plan := &split.Plan{
		Change:   &split.Change{Files: []split.File{{Path: evil + "/a.go", Reason: "package " + evil}}},
		PRs:      []*split.PR{{Number: 1, Title: "[1/1] " + evil, Why: "theme " + evil, Files: []split.File{{Path: evil + "/a.go", Reason: "package " + evil}}, Lines: 3, Wave: 1}},
		Excluded: []string{evil + "/skip.bin"},
		SetApart: []string{evil + "/go.sum (1 files, 40 lines): a lockfile"},
	}
	var out bytes.Buffer
	if err := writeSplit(&out, plan, "task_e", []workorder.Document{{"_key": "task_e_pr01"}}, true, nil, 80); err != nil {
		t.Fatal(err)
	}
	if err := writeExplanation(&out, plan, 0); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if strings.ContainsAny(got, "\x1b\x07") {
		t.Fatalf("raw escapes reached the terminal:\n%q", got)
	}
	for _, want := range []string{`[1/1] pkg/\x1b]52;c;cm0gLXJmIH4=\x07x\x1b[2J`, `excluded: pkg/\x1b]52`, `package pkg/\x1b]52`, `theme pkg/\x1b]52`, `set apart from the budget: pkg/\x1b]52`} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q (escaped, still readable):\n%s", want, got)
		}
	}
}

// The help said "--split-large … (default: on in stacked mode) (default:
// false)": it says its default once (on, in either mode).
func TestSplitHelpStatesTheSplitLargeDefaultOnce(t *testing.T) {
	t.Parallel()
	var out, errb bytes.Buffer
	f := NewFactory(strings.NewReader(""), &out, &errb)
	if code := Run(context.Background(), f, []string{"wo", "split", "--help"}); code != 0 {
		t.Fatalf("wo split --help: exit %d\n%s", code, errb.String())
	}
	var line string
	for _, l := range strings.Split(out.String(), "\n") {
		if strings.Contains(l, "--split-large") {
			line = l
		}
	}
	if strings.Count(line, "default") != 1 || !strings.Contains(line, "(default: true)") {
		t.Errorf("the --split-large help line: %q", line)
	}
}

// wo split --explain, run as a user would, says for each file why it went
// where: the package's test data, a generator no build compiles, and an
// external test package that comes after what it imports.
func TestSplitExplainSaysWhyEachFileWentWhere(t *testing.T) {
	t.Parallel()
	repo := t.TempDir()
	gittest.Run(t, repo, "init", "-q", "-b", "main")
	gittest.Run(t, repo, "commit", "-q", "--allow-empty", "-m", "base")
	gittest.Run(t, repo, "branch", "base")
	for path, content := range map[string]string{
		"go.mod":               "module example.com/r\n\ngo 1.21\n",
		"p/p.go":               "package p\n\n// P is p.\nfunc P() int { return 1 }\n",
		"p/testdata/case.json": "{}\n",
		"p/p_test.go": "package p_test\n\nimport (\n\t\"testing\"\n\n\t\"example.com/r/p\"\n\t\"example.com/r/q\"\n)\n\n" +
			"func TestQ(t *testing.T) {\n\tif q.Q() != p.P() {\n\t\tt.Fatal(\"no\")\n\t}\n}\n",
		"q/q.go":   "package q\n\nimport \"example.com/r/p\"\n\n// Q is p.\nfunc Q() int { return p.P() }\n",
		"q/gen.go": "//go:build ignore\n\npackage main\n\nfunc main() {}\n",
	} {
		full := filepath.Join(repo, path)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gittest.Run(t, repo, "add", "-A")
	gittest.Run(t, repo, "commit", "-q", "-m", "the change")
	r := mustRun(t, newDB(t), "", "split", "--repo", repo, "--base", "base", "--source", "main", "--dry-run", "--explain=full",
		"--max-lines", "10", "--split-large=false", "--epic-key", "task_e", "--wide")
	lines := map[string]bool{}
	for _, l := range strings.Split(r.stdout, "\n") {
		lines[l] = true
	}
	for _, want := range []string{
		"would write (dry run) epic task_e: 6 files in 3 PRs",
		"#3  task_e_pr03  [3/3] p (tests)     1      14     3     #1, #2",
		"[1/3] p and go.mod: p (5 of its 8 lines) with the packages closest to it in the tree and the imports: go.mod",
		"  p/testdata/case.json (added, 1 line)",
		"      below package p, the nearest package above it",
		"  q/gen.go (added, 5 lines)",
		"      excluded from every build by its build constraint (ignore), so a plain file; in the folder of package q",
		"[3/3] p (tests): one package alone: p (tests)",
		"  p/p_test.go (added, 14 lines)",
		"      package p; external test package of p (package p_test): it comes after p and everything it imports",
		"│  └─ waits for #1: q/q.go is Go code of the module, which needs its go.mod first",
		"   └─ waits for #2: p/p_test.go (a test) imports example.com/r/q",
		"review: about 1.2 hours of review: 6 reviews (2 a PR: the first, and one after its fixes) at 5 an hour",
	} {
		if !lines[want] {
			t.Errorf("the output lacks the line\n%q\nin:\n%s", want, r.stdout)
		}
	}
	if want := "warning: q alone has 11 lines in 2 files, over the budget of 10 lines and 150 files: it stays whole in PR #2 (--split-large is off)\n"; !strings.Contains(r.stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
	}
}

// The steps of a split's work orders are described with the values they
// work with (the base and source branches), in wo show and in what an
// agent is told, not with the placeholders the procedure is written in.
func TestSplitWorkOrdersDescribeTheirStepsWithTheRealValues(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	root, repo := splitRepo(t)
	mustRun(t, db, "", "split", "--repo", repo, "--base", "base", "--source", "main", "--worktree-root", filepath.Join(root, "wt"), "--epic-key", "task_m")
	show := mustRun(t, db, "", "show", "task_m_pr01").stdout
	for _, want := range []string{"Create isolated worktree from base", "Copy the PR's files from main"} {
		if !strings.Contains(show, want) {
			t.Errorf("wo show lacks %q:\n%s", want, show)
		}
	}
	prompt := mustRun(t, db, "", "prompt", "task_m_pr01").stdout
	if !strings.Contains(prompt, "create_worktree: Create isolated worktree from base") {
		t.Errorf("wo prompt lacks the filled-in step:\n%s", prompt)
	}
	for what, out := range map[string]string{"wo show": show, "wo prompt": prompt} {
		if strings.Contains(out, "<base_branch>") || strings.Contains(out, "<source_branch>") {
			t.Errorf("%s shows a placeholder in a step description:\n%s", what, out)
		}
	}
}

// explainRepo is a repository whose change is packages with long paths
// that import each other, one over the budget: its plan's reasons are
// long, as a real change's are.
func explainRepo(t *testing.T, withRemote string) string {
	t.Helper()
	repo := t.TempDir()
	gittest.Run(t, repo, "init", "-q", "-b", "main")
	if withRemote != "" {
		gittest.Run(t, repo, "remote", "add", "origin", withRemote)
	}
	os.WriteFile(filepath.Join(repo, "go.mod"), []byte("module example.com/averyveryverylongmodulepathofsomeorganisation/r\n\ngo 1.22\n"), 0o644)
	gittest.Run(t, repo, "add", "-A")
	gittest.Run(t, repo, "commit", "-q", "-m", "base")
	gittest.Run(t, repo, "branch", "base")
	deep := "internal/averyveryverylongfoldername/anotherverylongfoldername/yetanotherlongfolder"
	for i := 0; i < 6; i++ {
		var b strings.Builder
		fmt.Fprintf(&b, "package pkg%d\n\n", i)
		if i > 0 {
			fmt.Fprintf(&b, "import \"example.com/averyveryverylongmodulepathofsomeorganisation/r/%s/pkg%d\"\n\n", deep, i-1)
			fmt.Fprintf(&b, "var _ = pkg%d.F0\n\n", i-1)
		}
		n := 12
		if i == 3 {
			n = 60 // over the budget: --split-large is off
		}
		for j := 0; j < n; j++ {
			fmt.Fprintf(&b, "func F%d() int { return %d }\n", j, j)
		}
		dir := filepath.Join(repo, deep, fmt.Sprintf("pkg%d", i))
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, "code_with_a_long_file_name.go"), []byte(b.String()), 0o644)
	}
	// Test data set apart from the budget, whose note is long too.
	data := filepath.Join(repo, deep, "pkg0", "testdata", "a_test_data_file_with_a_name_as_long_as_some_are.json")
	os.MkdirAll(filepath.Dir(data), 0o755)
	os.WriteFile(data, []byte(strings.Repeat("{\"a\": 1}\n", 600)), 0o644)
	gittest.Run(t, repo, "add", "-A")
	gittest.Run(t, repo, "commit", "-q", "-m", "the change")
	return repo
}

// wo split --explain is a tree of the PRs that a terminal shows whole:
// no line over 120 columns however wide the terminal, each PR with its
// size and theme and what it waits for, the PR over the budget marked
// with why; --explain=full adds every file's reason.
func TestSplitExplainIsATreeThatFitsATerminal(t *testing.T) {
	t.Parallel()
	repo := explainRepo(t, "https://github.com/o/r.git")
	args := []string{"split", "--repo", repo, "--base", "base", "--source", "main", "--dry-run", "--explain",
		"--max-lines", "40", "--split-large=false", "--epic-key", "task_e"}
	r := mustRunEnv(t, map[string]string{"COLUMNS": "400"}, newDB(t), "", args...)
	tree := r.stdout[strings.Index(r.stdout, "\nepic task_e:"):]
	for i, l := range strings.Split(r.stdout, "\n") {
		if n := termtext.Width(l); n > 120 {
			t.Errorf("line %d is %d columns wide: %q", i+1, n, l)
		}
	}
	if !strings.Contains(r.stdout, "set apart from the budget:\n  internal/") {
		t.Errorf("the plan lacks the files set apart:\n%s", r.stdout)
	}
	for _, want := range []string{
		"epic task_e: 4 PRs, 152 lines in 7 files; budget 40 lines, 150 files a PR; 1 over it",
		"├─ #1 …_pr01 · 32 lines, 3 files (+600 set apart) · [1/4] ",
		"│  └─ waits for nothing",
		"├─ #3 …_pr03 · 66 lines, 1 file, OVER THE BUDGET · [3/4] ",
		"│  ├─ over the budget: internal/averyveryverylongfoldername/anotherverylongfoldername/yetanotherlongfolder/pkg3:\n│  │     --split-large is off\n",
		"│  └─ waits for #2:\n│        internal/averyveryverylongfoldername/anotherverylongfoldername/yetanotherlongfolder/pkg3/code_with_a_long_file_\n",
		"└─ #4 …_pr04 · 36 lines, 2 files · [4/4] ",
		"   └─ waits for #3:",
	} {
		if !strings.Contains(tree, want) {
			t.Errorf("the tree lacks %q:\n%s", want, tree)
		}
	}
	if strings.Contains(tree, "code_with_a_long_file_name.go  ") {
		t.Errorf("--explain without =full lists every file's reason:\n%s", tree)
	}
	full := mustRunEnv(t, map[string]string{"COLUMNS": "400"}, newDB(t), "", append(args[:len(args):len(args)], "--explain=full")...).stdout
	if !strings.Contains(full, "pkg0/code_with_a_long_file_name.go") || !strings.Contains(full, "waits for nothing") {
		t.Errorf("--explain=full lacks the tree or the files' reasons:\n%s", full)
	}
	if r := runWo(t, newDB(t), "", append(args[:len(args):len(args)], "--explain=some")...); r.code != ExitInvalid || !strings.Contains(r.stderr, "--explain=some: use --explain") {
		t.Errorf("--explain=some: exit %d, %s", r.code, r.stderr)
	}
}

// Without a GitHub repository the work orders push and stop: split says
// so, why, and how to have the review steps, on stderr and in --json;
// with one it says nothing of it.
func TestSplitWarnsWhenTheReviewStepsAreLeftOut(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ remote, want string }{
		{"", "has no remote named origin"},
		{"https://user:secret@git.example.com/o/r.git", "(https://…@git.example.com/o/r.git) is not a GitHub repository's URL"},
	} {
		repo := explainRepo(t, tc.remote)
		r := mustRun(t, newDB(t), "", "split", "--repo", repo, "--base", "base", "--source", "main", "--dry-run", "--epic-key", "task_e")
		for _, want := range []string{"warning: ", tc.want, "no pull request and no review", "pass --github-repo OWNER/NAME", "git remote add origin https://github.com/OWNER/NAME.git"} {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("remote %q: stderr lacks %q:\n%s", tc.remote, want, r.stderr)
			}
		}
		if strings.Contains(r.stderr, "secret") {
			t.Errorf("the warning shows the remote's credentials:\n%s", r.stderr)
		}
		js := mustRun(t, newDB(t), "", "split", "--repo", repo, "--base", "base", "--source", "main", "--dry-run", "--epic-key", "task_e", "--json").stdout
		if !strings.Contains(js, "no pull request and no review") {
			t.Errorf("remote %q: --json's warnings lack the missing review:\n%s", tc.remote, js)
		}
	}
	for _, args := range [][]string{{}, {"--github-repo", "o/r"}} {
		remote := "git@github.com:o/r.git"
		if len(args) > 0 {
			remote = ""
		}
		repo := explainRepo(t, remote)
		r := mustRun(t, newDB(t), "", append([]string{"split", "--repo", repo, "--base", "base", "--source", "main", "--dry-run", "--epic-key", "task_e"}, args...)...)
		if strings.Contains(r.stderr, "review") {
			t.Errorf("with a GitHub repository (%q %v), split warns:\n%s", remote, args, r.stderr)
		}
	}
}

// The tree's figures read as a person writes them: 107,147 lines.
func TestSplitTreeFiguresHaveThousandsSeparators(t *testing.T) {
	t.Parallel()
	for n, want := range map[int]string{0: "0", 999: "999", 8000: "8,000", 107147: "107,147", 1234567: "1,234,567"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
}

// A hand-written plan's PRs wait for others without a why: the tree still
// says which; past four, by number alone.
func TestSplitTreeShowsWhatAHandPlanWaitsFor(t *testing.T) {
	t.Parallel()
	plan := &split.Plan{Options: split.Options{MaxLines: 8000, MaxFiles: 150}, PRs: []*split.PR{
		{Number: 1, Title: "[1/2] config", Lines: 10, Files: []split.File{{Path: "config/a.go"}}},
		{Number: 2, Title: "[2/2] server", Lines: 20, Files: []split.File{{Path: "server/b.go"}}, BlockedBy: []int{1}},
		{Number: 3, Title: "[3/3] all", Lines: 20, Files: []split.File{{Path: "all/c.go"}}, BlockedBy: []int{1, 2, 4, 5, 6, 7},
			WaitsFor: []split.Wait{{PR: 2, Why: "all/c.go imports server"}}},
	}}
	var out bytes.Buffer
	if err := writeExplainTree(&out, plan, "task_e", []workorder.Document{{"_key": "task_e_pr01"}, {"_key": "task_e_pr02"}}, 120); err != nil {
		t.Fatal(err)
	}
	// Past four, the others by number alone.
	if !strings.Contains(out.String(), "│  └─ waits for #1\n") || strings.Count(out.String(), "waits for nothing") != 1 ||
		!strings.Contains(out.String(), "   ├─ waits for #2: all/c.go imports server\n   ├─ waits for #4\n   ├─ waits for #5\n   └─ and waits for #6, #7\n") {
		t.Errorf("the tree:\n%s", out.String())
	}
}

// A PR that brings part of files (a cycle of new files cut along its
// declarations) says so in the tree, and its work order names the lines.
func TestSplitExplainSaysWhichFilesAPRBringsPartOf(t *testing.T) {
	t.Parallel()
	repo := t.TempDir()
	gittest.Run(t, repo, "init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(repo, "go.mod"), []byte("module example.com/r\n\ngo 1.22\n"), 0o644)
	gittest.Run(t, repo, "add", "-A")
	gittest.Run(t, repo, "commit", "-q", "-m", "base")
	gittest.Run(t, repo, "branch", "base")
	os.MkdirAll(filepath.Join(repo, "p"), 0o755)
	for _, f := range []struct{ name, head, prefix string }{
		{"a.go", "func A() int { return B() }\n", "FA"},
		{"b.go", "func B() int { return 1 }\n\nfunc C() int { return A() }\n", "FB"},
	} {
		var b strings.Builder
		b.WriteString("package p\n\n" + f.head)
		for j := 0; j < 40; j++ {
			fmt.Fprintf(&b, "\nfunc %s%d() int { return %d }\n", f.prefix, j, j)
		}
		os.WriteFile(filepath.Join(repo, "p", f.name), []byte(b.String()), 0o644)
	}
	gittest.Run(t, repo, "add", "-A")
	gittest.Run(t, repo, "commit", "-q", "-m", "the change")
	r := mustRunEnv(t, map[string]string{"COLUMNS": "400"}, newDB(t), "", "split", "--repo", repo, "--base", "base", "--source", "main",
		"--dry-run", "--explain", "--max-lines", "60", "--epic-key", "task_e", "--github-repo", "o/r")
	for _, want := range []string{"3 PRs, 168 lines in 2 files;", "brings part of 1 file (a.go): whole declarations each", "brings part of 1 file (b.go)"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("the tree lacks %q:\n%s", want, r.stdout)
		}
	}
	js := mustRun(t, newDB(t), "", "split", "--repo", repo, "--base", "base", "--source", "main", "--dry-run", "--max-lines", "60",
		"--epic-key", "task_e", "--github-repo", "o/r", "--json", "--jq", ".data.prs[0].files[0].part").stdout
	if !strings.HasPrefix(js, "1-") {
		t.Errorf("--json lacks the part's lines: %q", js)
	}
}
