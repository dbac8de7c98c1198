package split

import (
	"fmt"
	"strings"
	"testing"
)

// A new interface asks nothing of old code: impl's type gaining methods
// that the new interface api.Runner names does not tie impl to api,
// which impl imports; api comes first.
func TestANewInterfaceDoesNotTieItsImplementers(t *testing.T) {
	t.Parallel()
	c := changeOf(t, map[string]string{
		"go.mod":    gomodM,
		"impl/t.go": "package impl\n\ntype T struct{}\n\nfunc (T) Old() int { return 1 }\n",
	}, map[string]string{
		"go.mod":     gomodM,
		"api/api.go": "package api\n\ntype Runner interface {\n\tRun() int\n\tKey() string\n}\n\nconst Name = \"api\"\n" + body("A", 30),
		"impl/t.go":  "package impl\n\nimport \"example.com/m/api\"\n\ntype T struct{}\n\nfunc (T) Old() int { return 1 }\n\nfunc (T) Run() int { return 2 }\n\nfunc (T) Key() string { return api.Name }\n\nvar _ api.Runner = T{}\n" + body("T", 30),
	})
	p := planChange(t, c, Options{MaxLines: 45, MaxFiles: 30, SplitLarge: true})
	if a, i := prNumber(t, p, "api/api.go"), prNumber(t, p, "impl/t.go"); a >= i {
		t.Errorf("api/api.go (#%d) must come before impl/t.go (#%d), which imports it, in PRs of their own:%s", a, i, layout(p))
	}
	if said := planWarningsAndReasons(p); strings.Contains(said, "need each other") || strings.Contains(said, "gains") {
		t.Errorf("a new interface tied its implementer:\n%s", said)
	}
}

// An interface of the base that gains a method needs it of the types
// that implement it: the method lands first, or with it.
func TestAnInterfaceThatGainsAMethodWaitsForItsImplementers(t *testing.T) {
	t.Parallel()
	c := changeOf(t, map[string]string{
		"go.mod":     gomodM,
		"api/api.go": "package api\n\ntype Runner interface {\n\tRun() int\n}\n",
		"impl/t.go":  "package impl\n\ntype T struct{}\n\nfunc (T) Run() int { return 1 }\n",
	}, map[string]string{
		"go.mod":     gomodM,
		"api/api.go": "package api\n\ntype Runner interface {\n\tRun() int\n\tKey() string\n}\n" + body("A", 30),
		"impl/t.go":  "package impl\n\ntype T struct{}\n\nfunc (T) Run() int { return 1 }\n\nfunc (T) Key() string { return \"t\" }\n" + body("T", 30),
	})
	p := planChange(t, c, Options{MaxLines: 45, MaxFiles: 30, SplitLarge: true})
	if a, i := prNumber(t, p, "api/api.go"), prNumber(t, p, "impl/t.go"); a < i {
		t.Errorf("api.Runner gains Key in PR #%d, before impl.T has it in #%d:%s", a, i, layout(p))
	}
	if why := reasonOf(p, "api/api.go"); !strings.Contains(why, "api.Runner gains Key, which the types that implement it need first") {
		t.Errorf("api/api.go's reason: %q", why)
	}
}

// A package of tests alone (an integration suite) over the budget is cut
// along what its files use: the helpers first, each test file after
// them, no part over the budget.
func TestAPackageOfTestsAloneIsCut(t *testing.T) {
	t.Parallel()
	source := map[string]string{
		"go.mod":                gomodM,
		"suite/helpers_test.go": "package suite\n\nfunc helper() int { return 1 }\n" + body("H", 30),
		"suite/a_test.go":       "package suite\n\nimport \"testing\"\n\nfunc TestA(t *testing.T) { _ = helper() }\n" + body("A", 30),
		"suite/b_test.go":       "package suite\n\nimport \"testing\"\n\nfunc TestB(t *testing.T) { _ = helper() }\n" + body("B", 30),
		"suite/c_test.go":       "package suite\n\nimport \"testing\"\n\nfunc TestC(t *testing.T) { _ = helper() }\n" + body("C", 30),
	}
	opts := Options{MaxLines: 80, MaxFiles: 30, SplitLarge: true}
	p := planChange(t, changeOf(t, map[string]string{"go.mod": gomodM}, source), opts)
	for _, pr := range p.PRs {
		if over(pr.Lines, len(pr.Files), opts) {
			t.Errorf("PR #%d has %d lines, over the budget of %d:%s", pr.Number, pr.Lines, opts.MaxLines, layout(p))
		}
	}
	h := prNumber(t, p, "suite/helpers_test.go")
	for _, f := range []string{"suite/a_test.go", "suite/b_test.go", "suite/c_test.go"} {
		if n := prNumber(t, p, f); n < h {
			t.Errorf("%s (#%d) uses helper before suite/helpers_test.go (#%d) declares it:%s", f, n, h, layout(p))
		}
	}
	for _, w := range p.Warnings {
		t.Errorf("warning: %s", w)
	}
}

// Plain files (docs, CI files) need nothing of each other: a docs site of
// 12,000 lines and 1,000 lines of other folders' files fill two PRs at a
// budget of 8,000, not three (the docs cut at the full budget, 7,200 and
// 4,800, left no room for the rest).
func TestPlainFilesFillTheirPRs(t *testing.T) {
	t.Parallel()
	source := map[string]string{"go.mod": gomodM, "p/p.go": "package p\n" + body("P", 10)}
	for i := 0; i < 40; i++ {
		source[fmt.Sprintf("docs/page%02d.md", i)] = strings.Repeat("a line of a page\n", 300)
	}
	for _, d := range []string{".ci", "fixtures", "scripts"} {
		source[d+"/one.txt"] = strings.Repeat("x\n", 340)
	}
	opts := Options{MaxLines: 8000, MaxFiles: 150, SplitLarge: true}
	p := planChange(t, changeOf(t, map[string]string{"go.mod": gomodM}, source), opts)
	plain := 0
	for _, pr := range p.PRs {
		if plainPR(pr) {
			plain++
		}
		if over(pr.Lines, len(pr.Files), opts) {
			t.Errorf("PR #%d has %d lines, over the budget:%s", pr.Number, pr.Lines, layout(p))
		}
	}
	if plain != 2 {
		t.Errorf("13,020 lines of plain files are in %d PRs, want 2:%s", plain, layout(p))
	}
}

// A PR with nothing to review (its files all set apart) joins a
// neighbour already past what GitHub shows of a diff, rather than cost
// a review of its own. (One that GitHub still shows whole it joins only
// within its limit: TestSetApartFilesStayWithinWhatGitHubShows.)
func TestNothingToReviewJoinsANeighbourPastWhatGitHubShows(t *testing.T) {
	t.Parallel()
	gen := func(pkg, name string, n int) string {
		return "// Code generated by gen; DO NOT EDIT.\n\npackage " + pkg + "\n\n" + body(name, n)
	}
	c := changeOf(t, map[string]string{"go.mod": gomodM}, map[string]string{
		"go.mod":     gomodM,
		"big/t.go":   gen("big", "T", 25000),
		"small/s.go": gen("small", "S", 100),
	})
	p := planChange(t, c, Options{MaxLines: 8000, MaxFiles: 150, SplitLarge: true})
	if b, s := prNumber(t, p, "big/t.go"), prNumber(t, p, "small/s.go"); b != s {
		t.Errorf("small/s.go (nothing to review) is PR #%d of its own beside big/t.go's #%d, past what GitHub shows:%s", s, b, layout(p))
	}
}
