package commands

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/wo-runner/wo/procedure/action"
	"github.com/wo-runner/wo/workorder"
)

func TestCLIDocsAreUpToDate(t *testing.T) {
	t.Parallel()
	const path = "../docs/cli.md"
	onDisk, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v: generate it with: go run ./scripts/gencli > docs/cli.md", err)
	}
	want := CLIReference()
	if string(onDisk) != want {
		a, b := strings.Split(string(onDisk), "\n"), strings.Split(want, "\n")
		line := 0
		for line < len(a) && line < len(b) && a[line] == b[line] {
			line++
		}
		got, exp := "(end of file)", "(end of file)"
		if line < len(a) {
			got = a[line]
		}
		if line < len(b) {
			exp = b[line]
		}
		t.Fatalf("docs/cli.md is out of date with wo's commands; regenerate it with:\n\tgo run ./scripts/gencli > docs/cli.md\nfirst difference, line %d:\n\ton disk:   %s\n\tgenerated: %s", line+1, got, exp)
	}
}

func TestCLIDocsDescribeEveryCommandAndFlag(t *testing.T) {
	t.Parallel()
	doc := CLIReference()
	for _, name := range everyCommand {
		if !strings.Contains(doc, "\n## wo "+name+"\n") {
			t.Errorf("docs/cli.md has no section for wo %s", name)
		}
	}
	for _, row := range []string{
		"| `--store URL` | `WO_STORE` | `$XDG_STATE_HOME/wo/wo.db` | URL of the store",
		"| `--from-step N` |",
		"| `--verbose` |  |  | every detail of each entry, and the runner that wrote it |",
		"| `--base REF` |  |  | the REF the PRs are reviewed against (required) |",
		"| `--collection COLLECTION` | `WO_COLLECTION` | `persephone_tasks` |",
	} {
		if !strings.Contains(doc, row) {
			t.Errorf("docs/cli.md lacks %q", row)
		}
	}
}

// The internal design documents are not the user's: no help text, reference
// or completion names them.
func TestUserFacingTextNeverMentionsTheDesignSeeds(t *testing.T) {
	t.Parallel()
	texts := map[string]string{"docs/cli.md": CLIReference(), "wo --help": runWo(t, "", "", "--help").stdout}
	for _, shell := range []string{"bash", "zsh", "fish"} {
		texts["wo completion "+shell] = runWo(t, "", "", "completion", shell).stdout
	}
	for _, name := range everyCommand {
		texts["wo "+name+" --help"] = runWo(t, "", "", name, "--help").stdout
	}
	seed := regexp.MustCompile(`(?i)\bseed`)
	for where, text := range texts {
		if text == "" {
			t.Errorf("%s printed nothing", where)
		}
		if loc := seed.FindStringIndex(text); loc != nil {
			t.Errorf("%s mentions %q", where, text[max(0, loc[0]-40):min(len(text), loc[1]+40)])
		}
	}
}

func TestTheFieldReferenceIsUpToDate(t *testing.T) {
	t.Parallel()
	const path = "../docs/work-order.md"
	onDisk, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want, ok := WithFieldReference(string(onDisk))
	if !ok {
		t.Fatalf("%s has lost the markers of its generated part:\n%s\n%s", path, FieldsBegin, FieldsEnd)
	}
	if string(onDisk) != want {
		t.Fatalf("the field reference in docs/work-order.md is out of date with workorder.Fields; regenerate it with: make docs")
	}
}

// Every action the table names is one the engine runs, and every action
// the engine runs is in the reference.
func TestTheFieldReferenceNamesTheEnginesActions(t *testing.T) {
	t.Parallel()
	actions := action.Names()
	paths := map[string]bool{}
	for _, f := range workorder.Fields {
		paths[strings.TrimPrefix(f.Path, "work_order.")] = true
	}
	for _, a := range action.DefaultActions() {
		for _, r := range a.Reads {
			if !paths[r] {
				t.Errorf("%s reads %q, which is no field of the reference", a.Name, r)
			}
		}
	}
	ref := FieldReference()
	for _, a := range actions {
		if !strings.Contains(ref, "| `"+a+"` |") {
			t.Errorf("the reference has no row for the action %s", a)
		}
	}
	for _, f := range workorder.Fields {
		if !strings.Contains(ref, "| `"+f.Name()+"` |") {
			t.Errorf("the reference has no row for %s", f.Path)
		}
	}
}

// Every field of work_order.state has its row, with its type and its
// rule, under its concern.
func TestTheFieldReferenceDescribesEveryStateField(t *testing.T) {
	t.Parallel()
	ref := FieldReference()
	state := ref[strings.Index(ref, "### work_order.state"):strings.Index(ref, "## Every action")]
	for _, g := range workorder.StateGroups() {
		section := state[strings.Index(state, "#### "+g.Title+"\n"):]
		if next := strings.Index(section[1:], "#### "); next >= 0 {
			section = section[:next+1]
		}
		for _, f := range g.Fields {
			if !strings.Contains(section, "| `"+f.Name+"` | "+f.Type()+" | ") {
				t.Errorf("%s has no row under %q", f.Name, g.Title)
			}
		}
	}
	for _, row := range []string{
		"| `current_step` | integer | The last completed step: 0 before the first, the next run starts after it. From 0 (not started) to the last step. |",
		"| `pr_number` | integer | GitHub's number of the pull request. A positive integer. Templates may name it before a step sets it. |",
		"| `lease` | object or null | ",
	} {
		if !strings.Contains(state, row) {
			t.Errorf("the state reference lacks %q", row)
		}
	}
}
