package commands

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/wo-runner/wo/split"
	"github.com/wo-runner/wo/workorder"
)

// A repository's paths become PR titles, reasons and exclusions: a path
// that carries terminal escapes must reach the terminal inert.
func TestSplitOutputEscapesWhatTheRepositoryNamed(t *testing.T) {
	const evil = "pkg/\x1b]52;c;cm0gLXJmIH4=\x07x\x1b[2J"
	plan := &split.Plan{
		Change:   &split.Change{Files: []split.File{{Path: evil + "/a.go", Reason: "package " + evil}}},
		PRs:      []*split.PR{{Number: 1, Title: "[1/1] " + evil, Why: "theme " + evil, Files: []split.File{{Path: evil + "/a.go", Reason: "package " + evil}}, Lines: 3, Wave: 1}},
		Excluded: []string{evil + "/skip.bin"},
	}
	var out bytes.Buffer
	if err := writeSplit(&out, plan, "task_e", []workorder.Document{{"_key": "task_e_pr01"}}, true, nil); err != nil {
		t.Fatal(err)
	}
	if err := writeExplanation(&out, plan); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if strings.ContainsAny(got, "\x1b\x07") {
		t.Fatalf("raw escapes reached the terminal:\n%q", got)
	}
	for _, want := range []string{`[1/1] pkg/\x1b]52;c;cm0gLXJmIH4=\x07x\x1b[2J`, `excluded: pkg/\x1b]52`, `package pkg/\x1b]52`, `theme pkg/\x1b]52`} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q (escaped, still readable):\n%s", want, got)
		}
	}
}

// The help said "--split-large … (default: on in stacked mode) (default:
// false)": the flag's default depends on --mode, and the help says so once.
func TestSplitHelpStatesTheSplitLargeDefaultOnce(t *testing.T) {
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
	if strings.Count(line, "default") != 1 || !strings.Contains(line, "(default: on with --mode stacked, else off)") {
		t.Errorf("the --split-large help line: %q", line)
	}
}
