package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A package whose type's file calls a method that another file declares
// is one cycle of the two; a file that only uses them is not in it, nor is
// a method no file of the cycle calls.
func TestTheCycleIsWhatTheTypeCheckerTies(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files := map[string]string{
		"go.mod":     "module example.com/m\n\ngo 1.22\n",
		"p/t.go":     "package p\n\n// T is p's.\ntype T struct{ n int }\n\n// Run is T's.\nfunc (t *T) Run() int { return t.poll() }\n",
		"p/poll.go":  "package p\n\nfunc (t *T) poll() int { return t.n }\n",
		"p/extra.go": "package p\n\nfunc (t *T) extra() int { return 2 }\n",
		"p/use.go":   "package p\n\n// Use is p's.\nfunc Use() int { return (&T{}).Run() }\n",
	}
	for name, src := range files {
		full := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cycles, err := fileCycles(filepath.Join(dir, "p"))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	report(&b, cycles)
	if got, want := b.String(), "10 lines in 2 files: poll.go t.go\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// A package that does not type-check cannot be measured: the error says
// so rather than give a figure from half its uses.
func TestAPackageThatDoesNotTypeCheckIsRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, src := range map[string]string{
		"go.mod": "module example.com/m\n\ngo 1.22\n",
		"p/p.go": "package p\n\nfunc P() int { return missing() }\n",
	} {
		full := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := fileCycles(filepath.Join(dir, "p")); err == nil || !strings.Contains(err.Error(), "does not type-check") || !strings.Contains(err.Error(), "missing") {
		t.Errorf("want a type-check error naming missing, got %v", err)
	}
}
