package commands

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wo-runner/wo/internal/gittest"
	"github.com/wo-runner/wo/split"
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
	r := mustRun(t, newDB(t), "", "split", "--repo", repo, "--base", "base", "--source", "main", "--dry-run", "--explain",
		"--max-lines", "10", "--split-large=false", "--epic-key", "task_e", "--wide")
	lines := map[string]bool{}
	for _, l := range strings.Split(r.stdout, "\n") {
		lines[l] = true
	}
	for _, want := range []string{
		"would write (dry run) epic task_e: 6 files in 3 PRs",
		"#3  task_e_pr03  [3/3] p (tests)     1      14     3     #1, #2",
		"[1/3] p and go.mod: p (5 of its 8 lines) with the packages closest to it in the tree and the imports: go.mod",
		"  p/testdata/case.json  below package p, the nearest package above it",
		"  q/gen.go  excluded from every build by its build constraint (ignore), so a plain file; in the folder of package q",
		"[3/3] p (tests): one package alone: p (tests)",
		"  p/p_test.go  package p; external test package of p (package p_test): it comes after p and everything it imports",
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
