// Package splittest generates Go modules for testing wo split: several
// small packages under shared folders, a helper package only tests
// import, test data, embedded files, and one package big enough to cut,
// whose files use each other in a chain and in a cycle. The module has no
// outside dependencies, so it builds offline.
package splittest

import (
	"fmt"
	"strings"
)

// Module is the path of the generated module.
const Module = "example.com/gen"

// BigFiles is the number of chained type files in internal/big.
const BigFiles = 10

// GoModule returns the files of the module, path → content.
func GoModule() map[string]string {
	files := map[string]string{
		"go.mod":              "module " + Module + "\n\ngo 1.22\n",
		"internal/msg/msg.go": "// Package msg is what events carry.\npackage msg\n\n// Msg is a message.\ntype Msg string\n",
		"internal/event/event.go": pad("// Package event wraps messages.\npackage event\n\nimport \"example.com/gen/internal/msg\"\n\n"+
			"// Event is one message.\ntype Event struct{ Msg msg.Msg }\n\n// New makes an event.\nfunc New(s string) Event { return Event{Msg: msg.Msg(s)} }\n", 40),
		"internal/testutil/testutil.go": "// Package testutil helps tests.\npackage testutil\n\nimport \"testing\"\n\n" +
			"// Check fails the test unless ok.\nfunc Check(t testing.TB, ok bool) {\n\tt.Helper()\n\tif !ok {\n\t\tt.Fatal(\"check failed\")\n\t}\n}\n",
		"internal/store/store.go": pad("// Package store keeps events.\npackage store\n\nimport \"example.com/gen/internal/event\"\n\n"+
			"// Store keeps events.\ntype Store struct{ events []event.Event }\n\n// Add keeps an event.\nfunc (s *Store) Add(e event.Event) { s.events = append(s.events, e) }\n\n"+
			"// Len counts the events.\nfunc (s *Store) Len() int { return len(s.events) }\n", 60),
		"internal/store/store_test.go": "package store\n\nimport (\n\t\"os\"\n\t\"testing\"\n\n\t\"example.com/gen/internal/event\"\n\t\"example.com/gen/internal/testutil\"\n)\n\n" +
			"func TestAdd(t *testing.T) {\n\tdata, err := os.ReadFile(\"testdata/golden/case.json\")\n\ttestutil.Check(t, err == nil)\n\tvar s Store\n\ts.Add(event.New(string(data)))\n\ttestutil.Check(t, s.Len() == 1)\n}\n",
		"internal/store/testdata/golden/case.json": "{\"case\": 1}\n",
		"web/server.go": "// Package web serves the user interface.\npackage web\n\nimport (\n\t\"embed\"\n\n\t\"example.com/gen/web/ui\"\n)\n\n" +
			"//go:embed ui/dist\nvar dist embed.FS\n\n// Title is the page title.\nfunc Title() string { _, _ = dist.ReadFile(\"ui/dist/index.html\"); return ui.Name }\n",
		"web/ui/ui.go":           "// Package ui names the user interface.\npackage ui\n\n// Name is its name.\nconst Name = \"gen\"\n",
		"web/ui/dist/index.html": "<!doctype html>\n<title>gen</title>\n",
	}
	var imports []string
	for _, a := range []string{"claudecode", "codex", "gemini"} {
		dir := "internal/adapters/" + a
		files[dir+"/adapter.go"] = pad(fmt.Sprintf("// Package %s adapts %s.\npackage %s\n\nimport \"example.com/gen/internal/event\"\n\n"+
			"// Name names the adapter.\nconst Name = %q\n\n// Handle makes an event.\nfunc Handle(s string) event.Event { return event.New(Name + s) }\n", a, a, a, a), 30)
		files[dir+"/adapter_test.go"] = fmt.Sprintf("package %s\n\nimport (\n\t\"testing\"\n\n\t\"example.com/gen/internal/testutil\"\n)\n\n"+
			"func TestHandle(t *testing.T) { testutil.Check(t, Handle(\"x\").Msg != \"\") }\n", a)
		imports = append(imports, dir)
	}
	for path, content := range bigPackage() {
		files[path] = content
	}
	imports = append(imports, "internal/store", "web", "internal/big")
	var main strings.Builder
	main.WriteString("// Command gen uses every package.\npackage main\n\nimport (\n")
	for _, imp := range imports {
		fmt.Fprintf(&main, "\t_ %q\n", Module+"/"+imp)
	}
	main.WriteString(")\n\nfunc main() {}\n")
	files["cmd/gen/main.go"] = main.String()
	return files
}

// bigPackage is internal/big: type T_i holds a T_(i-1), so each file
// needs the one before it; T3's methods live in a file of their own; a.go
// and b.go call each other; t05.go embeds schema.json; an internal test
// uses T0, an external one the whole package and the test-only helper.
func bigPackage() map[string]string {
	files := map[string]string{}
	for i := 0; i < BigFiles; i++ {
		prev := ""
		if i > 0 {
			prev = fmt.Sprintf("\tPrev *T%02d\n", i-1)
		}
		src := fmt.Sprintf("package big\n\n// T%02d is link %d of the chain.\ntype T%02d struct {\n%s\tN int\n}\n", i, i, i, prev)
		if i == 5 {
			src = "package big\n\nimport _ \"embed\"\n\n//go:embed schema.json\nvar schema string\n" + src[len("package big\n"):] +
				"\n// Schema is the embedded schema.\nfunc Schema() string { return schema }\n"
		}
		files[fmt.Sprintf("internal/big/t%02d.go", i)] = pad(src, 45)
	}
	files["internal/big/t03_methods.go"] = pad("package big\n\n// Double doubles N.\nfunc (t *T03) Double() int { return 2 * t.N }\n", 30)
	files["internal/big/a.go"] = pad("package big\n\n// Even says whether n is even.\nfunc Even(n int) bool {\n\tif n == 0 {\n\t\treturn true\n\t}\n\treturn Odd(n - 1)\n}\n", 40)
	files["internal/big/b.go"] = pad("package big\n\n// Odd says whether n is odd.\nfunc Odd(n int) bool {\n\tif n == 0 {\n\t\treturn false\n\t}\n\treturn Even(n - 1)\n}\n", 40)
	files["internal/big/schema.json"] = "{\"type\": \"object\"}\n"
	files["internal/big/t00_test.go"] = "package big\n\nimport \"testing\"\n\nfunc TestT00(t *testing.T) {\n\tif (T00{N: 1}).N != 1 {\n\t\tt.Fatal(\"no\")\n\t}\n}\n"
	files["internal/big/big_test.go"] = "package big_test\n\nimport (\n\t\"testing\"\n\n\t\"example.com/gen/internal/big\"\n\t\"example.com/gen/internal/testutil\"\n)\n\n" +
		"func TestChain(t *testing.T) {\n\ttestutil.Check(t, big.Even(4) && big.Schema() != \"\")\n\tvar last big.T09\n\t_ = last\n}\n"
	return files
}

// pad adds comment lines up to n lines, to give the file weight.
func pad(src string, n int) string {
	for i := strings.Count(src, "\n"); i < n; i++ {
		src += fmt.Sprintf("// line %d of the file's weight\n", i)
	}
	return src
}
