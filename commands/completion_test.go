package commands

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// everyCommand is what a user can type after wo; the scripts must offer all.
var everyCommand = []string{"init", "create", "import", "export", "show", "list", "validate", "run", "reset", "delete", "log",
	"status", "sync", "event", "split", "prompt", "approve", "revise", "cancel", "completion"}

func completionScript(t *testing.T, shell string) string {
	t.Helper()
	r := runWo(t, "", "", "completion", shell)
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("wo completion %s: exit %d, stderr %q", shell, r.code, r.stderr)
	}
	return r.stdout
}

func assertNamesEveryCommand(t *testing.T, shell, script string, entry func(name string) string) {
	t.Helper()
	for _, name := range everyCommand {
		if !strings.Contains(script, entry(name)) {
			t.Errorf("wo completion %s does not offer %q (looked for %q)", shell, name, entry(name))
		}
	}
}

func TestCompletionBash(t *testing.T) {
	t.Parallel()
	script := completionScript(t, "bash")
	assertNamesEveryCommand(t, "bash", script, func(n string) string { return "        " + n + ") words=" })
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash to run the script in:", err)
	}
	file := filepath.Join(t.TempDir(), "wo.bash")
	if err := os.WriteFile(file, []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	// What a user sees on TAB: the script run by bash on typed words.
	for _, tc := range []struct{ line, want string }{
		{"wo l", "land list log"},
		{"wo --store /tmp/x.db li", "list"},
		{"wo list --st", "--status --store --store-timeout"},
		{"wo split --ba", "--base"},
		{"wo --js", "--json"},
		{"wo completion --h", "--help"},
		{"wo import --format x ", ""}, // a file name: bash's default
	} {
		words := strings.Fields(tc.line)
		prog := `source "$1"; COMP_WORDS=(` + strings.Join(words, " ") + `); COMP_CWORD=` + itoa(len(words)-1) + `; _wo; printf '%s\n' "${COMPREPLY[@]}"`
		out, err := exec.Command("bash", "-c", prog, "bash", file).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", tc.line, err, out)
		}
		got := strings.Fields(string(out))
		slices.Sort(got)
		if strings.Join(got, " ") != tc.want {
			t.Errorf("%s<TAB>: got %q, want %q", tc.line, got, tc.want)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestCompletionZsh(t *testing.T) {
	t.Parallel()
	script := completionScript(t, "zsh")
	if !strings.HasPrefix(script, "#compdef wo\n") {
		t.Errorf("wo completion zsh does not start with #compdef wo:\n%.80s", script)
	}
	assertNamesEveryCommand(t, "zsh", script, func(n string) string { return "        " + n + ")\n" })
	for _, want := range []string{"'run:execute a work order from where it stopped'", "'--store:URL of the store", "'--base:the REF the PRs are reviewed against (required)'"} {
		if !strings.Contains(script, want) {
			t.Errorf("wo completion zsh lacks %q", want)
		}
	}
}

func TestCompletionFish(t *testing.T) {
	t.Parallel()
	script := completionScript(t, "fish")
	assertNamesEveryCommand(t, "fish", script, func(n string) string { return " -f -a " + n + " -d " })
	for _, want := range []string{
		"complete -c wo -n '__fish_seen_subcommand_from split' -l base -r -d 'the REF the PRs are reviewed against (required)'\n",
		"complete -c wo -n '__fish_seen_subcommand_from run' -l dry-run -d ",
		" -f -a init -d 'create the store\\'s collections and indexes (safe to repeat)'\n",
	} {
		if !strings.Contains(script, want) {
			t.Errorf("wo completion fish lacks %q", want)
		}
	}
}

func TestCompletionNeedsAKnownShell(t *testing.T) {
	t.Parallel()
	for args, want := range map[string]string{
		"":           "wo completion: name one shell: bash, zsh or fish\nRun 'wo completion --help' for usage.\n",
		"powershell": "wo completion: no completion for \"powershell\": use bash, zsh or fish\nRun 'wo completion --help' for usage.\n",
	} {
		r := runWo(t, "", "", append([]string{"completion"}, strings.Fields(args)...)...)
		if r.code != ExitInvalid || r.stdout != "" || r.stderr != want {
			t.Errorf("wo completion %s: exit %d, stdout %q, stderr %q", args, r.code, r.stdout, r.stderr)
		}
	}
}

// What the scripts ask wo: task keys of the store the command line names,
// the values of flags that take one of a few, and nothing (so the shell
// offers files) where wo knows nothing better.
func TestCompletionOfKeysAndValuesComesFromWo(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	mustRun(t, db, "", "import", fixture)
	env := map[string]string{"WO_STORE": db}
	for _, c := range []struct {
		words []string
		want  string
	}{
		{[]string{"show", "task_cr_0"}, "task_cr_01 task_cr_04 task_cr_05"},
		{[]string{"run", "--epic", "task_cr_e"}, "task_cr_epic"},
		{[]string{"--store", db, "undo", "task_cr_05"}, "task_cr_05"},
		{[]string{"status", "--format", "m"}, "markdown mermaid"},
		{[]string{"list", "--status", "in_"}, "in_progress in_review"},
		{[]string{"split", "--mode", ""}, "independent stacked"},
		{[]string{"event", "task_cr_01", "c"}, "clarify"},
		{[]string{"completion", ""}, "bash zsh fish"},
		{[]string{"show", "task_cr_01", ""}, ""},                // one KEY only
		{[]string{"import", ""}, ""},                            // a file: the shell's
		{[]string{"show", "--st"}, ""},                          // flags are the script's
		{[]string{"--store", "/nowhere/wo.db", "show", ""}, ""}, // no store: nothing, and no error
	} {
		r := runWoEnv(t, env, "", "", append([]string{"__complete"}, c.words...)...)
		if got := strings.Join(strings.Fields(r.stdout), " "); r.code != 0 || got != c.want || r.stderr != "" {
			t.Errorf("wo %s<TAB>: exit %d %q (stderr %q), want %q", strings.Join(c.words, " "), r.code, got, r.stderr, c.want)
		}
	}
	if strings.Contains(runWo(t, "", "", "--help").stdout, "__complete") {
		t.Error("the completion verb is listed in the help")
	}
	for shell, call := range map[string]string{"bash": `wo __complete "${COMP_WORDS[@]:1:COMP_CWORD}"`, "zsh": "wo __complete ${words[2,CURRENT]}",
		"fish": "wo __complete $tokens[2..-1] (commandline -ct)"} {
		if !strings.Contains(completionScript(t, shell), call) {
			t.Errorf("wo completion %s does not ask wo for keys and values (%s)", shell, call)
		}
	}
}
