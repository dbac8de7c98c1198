package split

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/wo-runner/wo/internal/gittest"
)

// BenchmarkPlan10k reads a change of 10,000 files in 1,000 packages
// (package i imports package i/2, a hundred packages under each of ten
// folders) from git and plans it: imports, ownership, cycles, packing by
// theme, names. Target: under 300 ms.
func BenchmarkPlan10k(b *testing.B) {
	files := map[string]string{"go.mod": "module example.com/huge\n\ngo 1.22\n"}
	for p := 0; p < 1000; p++ {
		dir := fmt.Sprintf("m%02d/p%04d", p%10, p)
		for i := 0; i < 10; i++ {
			imp := ""
			if i == 0 && p > 0 {
				imp = fmt.Sprintf("import _ \"example.com/huge/m%02d/p%04d\"\n", (p/2)%10, p/2)
			}
			files[fmt.Sprintf("%s/f%d.go", dir, i)] = fmt.Sprintf("package p%04d\n\n%s\n", p, imp) + strings.Repeat("// a line of the change\n", 20)
		}
	}
	r := repoWithFiles(b, files)
	gittest.Run(b, r.Path, "gc", "-q")
	b.ResetTimer()
	prs := 0
	for i := 0; i < b.N; i++ {
		c, err := ReadChange(context.Background(), r, "base", "main")
		if err != nil {
			b.Fatal(err)
		}
		p, err := Make(c, Options{MaxLines: 800, MaxFiles: 40, SplitLarge: true})
		if err != nil {
			b.Fatal(err)
		}
		prs = len(p.PRs)
	}
	b.ReportMetric(float64(prs), "PRs")
}

// BenchmarkPackOneFilePackages10k plans a change of 10,000 one-file
// packages (package i imports package i/2, a hundred under each of a
// hundred folders), given as data: grouping, ordering and packing, where
// packing used to scan every ready package at every step (3.3 s).
// Target: under 1 s.
func BenchmarkPackOneFilePackages10k(b *testing.B) {
	c := &Change{Module: "example.com/huge", Files: []File{{Path: "go.mod", Kind: "added", Lines: 3}}}
	for p := 0; p < 10000; p++ {
		f := File{Path: fmt.Sprintf("m%02d/p%05d/f.go", p%100, p), Kind: "added", Lines: 20, pkg: fmt.Sprintf("p%05d", p)}
		if p > 0 {
			f.Imports = []string{fmt.Sprintf("example.com/huge/m%02d/p%05d", (p/2)%100, p/2)}
		}
		c.Files = append(c.Files, f)
	}
	c.Modules = map[string]string{"example.com/huge": "."}
	b.ResetTimer()
	prs := 0
	for i := 0; i < b.N; i++ {
		p, err := Make(c, Options{})
		if err != nil {
			b.Fatal(err)
		}
		prs = len(p.PRs)
	}
	b.ReportMetric(float64(prs), "PRs")
}
