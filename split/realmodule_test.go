package split

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// godsModule is a real module with many packages, tests and no
// dependencies of its own; wo requires it (through go-git), so `go mod
// download` puts it in the module cache.
const godsModule = "github.com/emirpasic/gods@v1.18.1"

// longTest skips t, saying why, unless WO_TEST_LONG is set: make
// test-long sets it, and CI runs make test-long after make test.
func longTest(t *testing.T, why string) {
	t.Helper()
	if os.Getenv("WO_TEST_LONG") == "" {
		t.Skipf("a long check, run by make test-long (WO_TEST_LONG=1): %s", why)
	}
}

// realModuleFiles reads a module from the module cache, or skips saying why.
func realModuleFiles(t *testing.T, module string) map[string]string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Skipf("no go command to find the module cache: %v", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), module)
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("%s is not in the module cache (run go mod download): %v", module, err)
	}
	files := map[string]string{}
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		files[filepath.ToSlash(rel)] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestRealModuleSplitsIntoStackedPRsThatEachBuild splits a whole real
// module, added on an empty base, at the default budget, checks the
// plan's shape, and builds and vets every tip of the stack (a long check:
// make test-long); at a larger budget it checks the shape only.
func TestRealModuleSplitsIntoStackedPRsThatEachBuild(t *testing.T) {
	t.Parallel()
	r := repoWithFiles(t, realModuleFiles(t, godsModule))
	for _, tc := range []struct {
		name           string
		opts           Options
		minPRs, maxPRs int
		maxLargest     int
		build          bool
	}{
		// The largest PR is go.mod's, with the README (1,000+ lines),
		// licence and CI files, and the package that every other needs.
		// The stack is built at 1,500 lines (about 20 tips); at 400 many
		// of gods' packages are cycles of code over the budget, which no
		// small PR may join, so the plan is checked only.
		{"budget 1500", Options{MaxLines: 1500, MaxFiles: 30, SplitLarge: true}, 10, 25, 3500, true},
		// At 400 lines (26,369 lines, at least 66 PRs) its cycles are cut
		// along their declarations: within ⌈1.3 × 26,369 ÷ 400⌉ + 1.
		{"budget 400", Options{MaxLines: 400, MaxFiles: 30, SplitLarge: true}, 66, 87, 3000, false},
		{"the default budget", Options{SplitLarge: true}, 2, 6, DefaultMaxLines, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := planOf(t, r, tc.opts)
			largest := 0
			for _, pr := range p.PRs {
				largest = max(largest, pr.Lines)
				goCode := false
				for _, f := range pr.Files {
					goCode = goCode || strings.HasSuffix(f.Path, ".go") || f.Path == "go.mod"
				}
				if !goCode && !plainPR(pr) {
					t.Errorf("PR #%d (%s) holds only folders without Go code, and is not a PR of plain files by folder: %v", pr.Number, pr.Title, pr.Units)
				}
				if pr.Theme == "internal" || pr.Theme == "" {
					t.Errorf("PR #%d has no theme: %q", pr.Number, pr.Title)
				}
			}
			t.Logf("%s: %d files in %d PRs, the largest %d lines; warnings: %d", godsModule, len(p.Change.Files), len(p.PRs), largest, len(p.Warnings))
			if len(p.PRs) < tc.minPRs || len(p.PRs) > tc.maxPRs {
				t.Errorf("%d PRs, want %d to %d", len(p.PRs), tc.minPRs, tc.maxPRs)
			}
			if largest > tc.maxLargest {
				t.Errorf("the largest PR has %d lines, want at most %d", largest, tc.maxLargest)
			}
			noStrandedSmallPR(t, p, tc.opts)
			if tc.build {
				t.Run("every tip builds", func(t *testing.T) {
					longTest(t, "building and vetting each of the twenty-odd tips of a real module takes a minute or more")
					buildEveryTip(t, r, p)
				})
			}
		})
	}
}
