package split

import (
	"fmt"
	"go/parser"
	"go/token"
	"slices"
	"strings"
	"testing"
)

// plugModule is a package whose files use each other in a cycle: the
// plugin's type in plugin.go, the helpers that take it in model.go, its
// View at the end of a long view.go. Update hands the plugin out as a
// Model, which asks for Init and View: a tip with Update and without View
// does not build. plugin.go imports strings for one function only.
func plugModule(extra int) map[string]string {
	return map[string]string{
		"go.mod": "module example.com/plug\n\ngo 1.22\n",
		"internal/plug/model.go": `package plug

import "fmt"

// Model is what the host runs.
type Model interface {
	Init() string
	View() string
}

func render(p *Plugin) string { return fmt.Sprint(len(p.items)) }
` + filler("Model", extra),
		"internal/plug/plugin.go": `package plug

import (
	"fmt"
	"strings"
)

// Plugin holds the items.
type Plugin struct{ items []string }

// New makes one.
func New() *Plugin { return &Plugin{} }

// Init starts it.
func (p *Plugin) Init() string { return render(p) }

// Update hands it out as a Model.
func (p *Plugin) Update() (Model, error) { return p, nil }

func shout(s string) string { return strings.ToUpper(s) }

func say(p *Plugin) string { return fmt.Sprint(p.items) }
` + filler("Plugin", extra),
		"internal/plug/view.go": `package plug
` + filler("View", extra) + `
// View shows it.
func (p *Plugin) View() string { return shout(say(p)) }
`,
		"internal/plug/plug_test.go": `package plug

import "testing"

func TestView(t *testing.T) {
	if New().View() != "[]" {
		t.Fatal("view")
	}
}
`,
	}
}

func TestACycleOfNewFilesTooLargeForAPRIsCutAlongItsDeclarations(t *testing.T) {
	t.Parallel()
	r := repoWithFiles(t, plugModule(40))
	opts := Options{MaxLines: 100, MaxFiles: 30, SplitLarge: true}
	p := planOf(t, r, opts)
	var partial, prs []string
	for _, pr := range p.PRs {
		if pr.Lines > opts.MaxLines {
			t.Errorf("PR #%d has %d lines, over the budget of %d: %s", pr.Number, pr.Lines, opts.MaxLines, pr.OverBudget)
		}
		for _, f := range pr.Files {
			if strings.HasPrefix(f.Path, "internal/plug/") {
				prs = append(prs, fmt.Sprintf("#%d %s %s", pr.Number, f.Path, f.Part))
			}
			if f.Part != "" {
				partial = append(partial, f.Path)
				if !strings.Contains(f.Reason, "cut along their declarations") || !strings.Contains(f.Reason, "brings lines "+f.Part+", the declarations this part needs") {
					t.Errorf("%s in PR #%d: the reason does not say it is cut along its declarations, and which lines: %q", f.Path, pr.Number, f.Reason)
				}
			} else if strings.HasPrefix(f.Path, "internal/plug/") && !strings.HasSuffix(f.Path, "_test.go") && slices.Contains(partial, f.Path) &&
				!strings.Contains(f.Reason, "brings whole, its last declarations") {
				t.Errorf("%s in PR #%d completes the file, but the reason says %q", f.Path, pr.Number, f.Reason)
			}
		}
	}
	if first := reasonOf(p, "internal/plug/model.go"); !strings.Contains(first, "cut along their declarations, part 1 of ") {
		t.Errorf("model.go's first part does not say it is part 1: %q", first)
	}
	if len(partial) == 0 {
		t.Fatalf("no PR brings part of a file: the cycle of about 300 lines was not cut along its declarations (budget 100):\n%s\n%v", strings.Join(prs, "\n"), p.Warnings)
	}
	// Each file whole at last, as at the source; every tip builds and vets.
	buildEveryTip(t, r, p)

	// The work orders bring those lines, and no more.
	_, tasks, err := Documents(p, DocOptions{RepoPath: r.Path, Mode: "stacked"})
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, task := range tasks {
		in := task["work_order"].(map[string]any)["inputs"].(map[string]any)
		parts, _ := in["file_parts"].(map[string]any)
		for path := range parts {
			found++
			if !containsAny(in["file_manifest"].([]any), path) {
				t.Errorf("%s: file_parts names %s, which file_manifest does not list", task["_key"], path)
			}
		}
	}
	if found != len(partial) {
		t.Errorf("the work orders name %d parts of files, the plan %d", found, len(partial))
	}
}

func containsAny(list []any, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestACycleWithAModifiedFileStaysWhole(t *testing.T) {
	t.Parallel()
	source := plugModule(40)
	base := map[string]string{"go.mod": source["go.mod"], "internal/plug/model.go": "package plug\n"}
	r := repoFromTo(t, base, source)
	p := planOf(t, r, Options{MaxLines: 100, MaxFiles: 30, SplitLarge: true})
	for _, pr := range p.PRs {
		for _, f := range pr.Files {
			if f.Part != "" {
				t.Errorf("PR #%d brings part of %s; a cycle with a modified file is not cut along its declarations", pr.Number, f.Path)
			}
		}
	}
	if a, b := prHolding(p, "internal/plug/plugin.go"), prHolding(p, "internal/plug/model.go"); a != b {
		t.Errorf("plugin.go (PR #%d) and model.go (PR #%d) use each other but were cut apart", a.Number, b.Number)
	}
}

func TestGuessNameOfAnImportPath(t *testing.T) {
	for path, want := range map[string]string{
		"fmt": "fmt", "go/ast": "ast", "github.com/go-git/go-git/v5": "git", "gopkg.in/yaml.v3": "yaml",
		"github.com/charmbracelet/bubbletea": "bubbletea", "example.com/x/go-foo-bar": "foobar", "example.com/x/v": "v", "v2": "v2",
	} {
		if got := guessName(path); got != want {
			t.Errorf("guessName(%q) = %q, want %q", path, got, want)
		}
	}
}

// A cycle within the budget that does not fit what is left of the part
// being filled is cut along its declarations to fill it, when that room
// is a quarter of the budget or more: x (61 lines), the cycle a, b (about
// 110) and y, which uses them (43), are two PRs of 150 lines, not three.
// And a few plain files left at the end of the series join its last PR.
func TestACycleThatDoesNotFitTheRoomLeftFillsIt(t *testing.T) {
	t.Parallel()
	r := repoWithFiles(t, map[string]string{
		"go.mod":        "module example.com/fill\n\ngo 1.22\n",
		"p/x.go":        "package p\n" + filler("X", 30),
		"p/a.go":        "package p\n\nfunc A(n int) int { return B(n) + X0() }\n" + filler("A", 25),
		"p/b.go":        "package p\n\nfunc B(n int) int {\n\tif n > 0 {\n\t\treturn A(n - 1)\n\t}\n\treturn 0\n}\n" + filler("B", 25),
		"p/y.go":        "package p\n\nfunc Y() int { return A(3) + X0() }\n" + filler("Y", 20),
		"p/a_test.go":   "package p\n\nimport \"testing\"\n\nfunc TestA(t *testing.T) {\n\tif A(1) < 0 {\n\t\tt.Fatal(\"A\")\n\t}\n}\n",
		"docs/guide.md": strings.Repeat("a line\n", 20),
	})
	opts := Options{MaxLines: 150, MaxFiles: 30, SplitLarge: true}
	p := planOf(t, r, opts)
	holding := map[int]bool{}
	for _, pr := range p.PRs {
		if pr.Lines > opts.MaxLines {
			t.Errorf("PR #%d has %d lines, over the budget:%s", pr.Number, pr.Lines, layout(p))
		}
		for _, f := range pr.Files {
			if strings.HasPrefix(f.Path, "p/") {
				holding[pr.Number] = true
			}
		}
	}
	if len(holding) != 2 {
		t.Errorf("package p (about 215 lines, budget 150) is in %d PRs, want 2:%s", len(holding), layout(p))
	}
	if last := p.PRs[len(p.PRs)-1]; prHolding(p, "docs/guide.md") != last || !holding[last.Number] {
		t.Errorf("the docs are not in the last PR with the code:%s", layout(p))
	}
	buildEveryTip(t, r, p)
}

func TestConstrainedFilesAreThoseBuiltForSomeSystemsOnly(t *testing.T) {
	for _, c := range []struct {
		name, src string
		want      bool
	}{
		{"p/a.go", "package p\n", false},
		{"p/linux.go", "package p\n", false},
		{"p/a_linux.go", "package p\n", true},
		{"p/a_arm64.go", "package p\n", true},
		{"p/a.go", "//go:build linux\n\npackage p\n", true},
		{"p/a.go", "// +build linux\n\npackage p\n", true},
		{"p/a.go", "// Package p.\npackage p\n\n//go:build linux\nvar x = 1\n", false},
	} {
		a, err := parser.ParseFile(token.NewFileSet(), c.name, c.src, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		if got := constrained(c.name, a); got != c.want {
			t.Errorf("constrained(%s, %q) = %v, want %v", c.name, c.src, got, c.want)
		}
	}
}

// A file whose lines a part cannot take apart stays whole, and so does
// its cycle: two declarations on one line, a declaration on the package
// clause's line, a comment that runs from the package clause into lines
// of no declaration. Each would leave a part that does not build (a call
// to what comes later, an unterminated comment).
func TestAFileWhoseLinesAPartCannotTakeApartStaysWhole(t *testing.T) {
	t.Parallel()
	model := plugModule(40)["internal/plug/model.go"]
	for name, src := range map[string]string{
		"two declarations on a line":                 strings.Replace(model, "func render(", "func early() int { return 1 }; func late() int { return lateView() }\nfunc render(", 1),
		"a declaration on the package clause's line": strings.Replace(model, "package plug\n\nimport \"fmt\"\n", "package plug; import \"fmt\"; func early() int { return lateView() }\n", 1),
		"a comment from the package clause":          strings.Replace(model, "package plug\n", "package plug /* the model\n*/\n", 1),
		"a comment from the package clause into a declaration": "package plug /* the model\n*/ func early() int { return lateView() }\n\n" +
			"// Model is what the host runs.\ntype Model interface {\n\tInit() string\n\tView() string\n}\n\n" +
			"func render(p *Plugin) string {\n\tif len(p.items) > 0 {\n\t\treturn \"x\"\n\t}\n\treturn \"\"\n}\n" + filler("Model", 40),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			files := plugModule(40)
			files["internal/plug/model.go"] = src
			files["internal/plug/view.go"] += "\nfunc lateView() int { return len(shout(\"\")) }\n"
			r := repoWithFiles(t, files)
			p := planOf(t, r, Options{MaxLines: 100, MaxFiles: 30, SplitLarge: true})
			for _, pr := range p.PRs {
				for _, f := range pr.Files {
					if f.Part != "" {
						t.Errorf("PR #%d brings part of %s; the cycle must stay whole:%s", pr.Number, f.Path, layout(p))
					}
				}
			}
			buildEveryTip(t, r, p)
		})
	}
}
