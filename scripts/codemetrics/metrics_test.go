package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A small module written out file by file: each figure is known by
// counting the snippet by hand.
var snippet = map[string]string{
	"go.mod": "module example.com/m\n",
	// decide: 1 + if + && + for + range + case "a" + case "b" (default is
	// not a branch) + the closure's if + || = 9.
	"procedure/engine.go": `package procedure

func decide(xs []string, n int) int {
	if n > 0 && n < 10 {
		n++
	}
	for i := 0; i < n; i++ {
	}
	for _, x := range xs {
		switch x {
		case "a":
		case "b":
		default:
		}
	}
	f := func() bool {
		if n == 3 || n == 4 {
			return true
		}
		return false
	}
	_ = f
	return n
}

type T struct{}

func (t *T) Plain() {}
`,
	// Three lines in procedure/, not counted: a subfolder and a test.
	"procedure/action/a.go":       "package action\n\nfunc A() {}\n",
	"procedure/engine_test.go":    "package procedure\n\nfunc helper() {\n\tif true {\n\t}\n}\n",
	"procedure/testdata/x/bad.go": "this is not Go",
	"store/store.go": `package store

import "io"

type Small interface {
	Get() error
}

type Wide interface {
	Small
	io.Reader
	Put() error
	A()
	B() int
}
`,
	"commands/show.go": `package commands

import g "example.com/m/gitops"

var timeout = g.DefaultTimeout

func show(s string) string { return g.Short(s) }
`,
	"commands/show_test.go": "package commands\n\nimport \"example.com/m/gitops\"\n\nvar _ = gitops.Short\n",
	"gitops/files.go":       "package gitops\n\nimport \"example.com/m/workorder\"\n\nvar _ = workorder.IsDotGit\n",
	"tools/go.mod":          "module example.com/tools\n",
	"tools/tool.go":         "package tools\n\nfunc Hidden() {\n\tif true || false {\n\t}\n}\n",
}

func writeModule(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func measureSnippet(t *testing.T, files map[string]string) Figures {
	t.Helper()
	root := writeModule(t, files)
	module, err := modulePath(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	sources, fset, err := loadModule(root)
	if err != nil {
		t.Fatal(err)
	}
	return measure(sources, fset, module)
}

func TestFiguresOfASmallModule(t *testing.T) {
	fig := measureSnippet(t, snippet)

	var names []string
	for _, f := range fig.Funcs {
		names = append(names, f.Name)
	}
	if got, want := strings.Join(names, " "), "decide show A T.Plain"; got != want {
		t.Errorf("functions, most complex first: %q, want %q (ties in file order; test files, testdata and other modules left out)", got, want)
	}
	if fig.Funcs[0].Cyclo != 9 || fig.Funcs[0].Lines != 22 || fig.Funcs[0].File != "procedure/engine.go" || fig.Funcs[0].Line != 3 {
		t.Errorf("decide measured as %+v, want cyclomatic 9, 22 lines, procedure/engine.go:3", fig.Funcs[0])
	}
	if plain := fig.Funcs[len(fig.Funcs)-1]; plain.Cyclo != 1 || plain.Lines != 1 {
		t.Errorf("T.Plain measured as %+v, want cyclomatic 1 and 1 line", plain)
	}

	if len(fig.Interfaces) != 2 || fig.Interfaces[0].Name != "store.Wide" || fig.Interfaces[0].Methods != 5 || fig.Interfaces[1].Methods != 1 {
		t.Errorf("interfaces: %+v, want store.Wide with 5 methods (Get through Small, io.Reader as one, Put, A, B), then Small with 1", fig.Interfaces)
	}

	if want := strings.Count(snippet["procedure/engine.go"], "\n"); fig.ProcedureLines != want {
		t.Errorf("procedure lines = %d, want %d (engine.go only)", fig.ProcedureLines, want)
	}

	var uses []string
	for _, u := range fig.CommandsGitops {
		uses = append(uses, u.File+" "+u.What)
	}
	if got, want := strings.Join(uses, "; "), "commands/show.go g.DefaultTimeout; commands/show.go g.Short(…); commands/show_test.go gitops.Short"; got != want {
		t.Errorf("commands' uses of gitops: %q, want %q", got, want)
	}
	if len(fig.GitopsImports) != 1 || fig.GitopsImports[0].File != "gitops/files.go" || fig.GitopsImports[0].Line != 3 {
		t.Errorf("gitops importing workorder: %+v, want gitops/files.go:3", fig.GitopsImports)
	}
}

// The report says of each threshold whether it holds, and counts the
// broken ones: a long function and a leak break two here.
func TestReportSaysWhichThresholdsHold(t *testing.T) {
	long := "package procedure\n\nfunc long() {\n\tif true {\n\t}\n" + strings.Repeat("\t_ = 1\n", 59) + "}\n"
	fig := measureSnippet(t, map[string]string{
		"go.mod":              "module example.com/m\n",
		"procedure/long.go":   long,
		"gitops/files.go":     "package gitops\n\nimport _ \"example.com/m/workorder\"\n",
		"procedure/action.go": "package procedure\n\nfunc short() {}\n",
	})
	var out strings.Builder
	broken := report(&out, fig, 1)
	if broken != 2 {
		t.Errorf("broken = %d, want 2:\n%s", broken, out.String())
	}
	for _, want := range []string{
		"met      max cyclomatic complexity    2, long in procedure/long.go; 0 functions over 30 (threshold ≤ 30)",
		"NOT MET  functions over 60 lines      1 of 2, 50.00% (threshold ≤ 3%)",
		"met      lines in procedure/          68 (threshold ≤ 3000)",
		"met      commands naming gitops       none (threshold none)",
		"NOT MET  gitops importing workorder   1 places (threshold none)",
		"           gitops/files.go:3 imports example.com/m/workorder",
	} {
		if !strings.Contains(out.String(), want+"\n") {
			t.Errorf("the report lacks the line\n%s\nin:\n%s", want, out.String())
		}
	}
}

func TestCyclomaticCountsSelectCasesButNotDefault(t *testing.T) {
	fig := measureSnippet(t, map[string]string{
		"go.mod": "module example.com/m\n",
		"a/a.go": "package a\n\nfunc f(a, b chan int) {\n\tselect {\n\tcase <-a:\n\tcase <-b:\n\tdefault:\n\t}\n}\n",
	})
	if len(fig.Funcs) != 1 || fig.Funcs[0].Cyclo != 3 {
		t.Errorf("f: %+v, want cyclomatic 3", fig.Funcs)
	}
}
