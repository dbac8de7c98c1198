package commands

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

var flagLinePattern = regexp.MustCompile(`(?m)^   (--?[a-z][-a-z]*.*)$`)

// Each flag's default is said once in help, and a zero that says nothing
// (0, 0s, false) is not said at all.
func TestHelpSaysEachDefaultOnce(t *testing.T) {
	t.Parallel()
	for _, name := range everyCommand {
		r := runWo(t, "", "", name, "--help")
		if r.code != 0 {
			t.Fatalf("wo %s --help: exit %d %s", name, r.code, r.stderr)
		}
		lines := flagLinePattern.FindAllStringSubmatch(r.stdout, -1)
		if len(lines) == 0 {
			t.Fatalf("wo %s --help lists no flags:\n%s", name, r.stdout)
		}
		for _, m := range lines {
			line := m[1]
			if n := strings.Count(line, "default"); n > 1 {
				t.Errorf("wo %s --help: %d defaults in %q", name, n, line)
			}
			for _, zero := range []string{"(default: false)", "(default: 0)", "(default: 0s)"} {
				if strings.Contains(line, zero) {
					t.Errorf("wo %s --help: %q says %s", name, line, zero)
				}
			}
		}
	}
	run := runWo(t, "", "", "run", "--help").stdout
	for _, want := range []string{"--max-iterations N        bound on review-fix iterations when a step sets none (default: 5)",
		"--poll-interval DURATION  how often to poll GitHub while waiting (default: 30s) [$WO_POLL_INTERVAL]",
		"--store-timeout DURATION  give up on an ArangoDB operation that takes longer than this DURATION (default: 30s) [$WO_STORE_TIMEOUT]"} {
		if !strings.Contains(run, want) {
			t.Errorf("wo run --help lacks %q:\n%s", want, run)
		}
	}
}

// The store flags every command shares come once, after the command's
// own, under their own heading.
func TestHelpListsInheritedFlagsOnceAfterTheCommandsOwn(t *testing.T) {
	t.Parallel()
	help := runWo(t, "", "", "show", "--help").stdout
	own, inherited, found := strings.Cut(help, "INHERITED OPTIONS")
	if !found || strings.Count(help, "--store URL") != 1 || !strings.Contains(inherited, "--store URL") || strings.Contains(own, "--store URL") {
		t.Errorf("wo show --help:\n%s", help)
	}
	if strings.Count(CLIReference(), "| `--store URL`") != 1 {
		t.Error("docs/cli.md lists the store flags more than once")
	}
}

func TestHelpAndVersionAreVerbsToo(t *testing.T) {
	t.Parallel()
	if verb, flag := runWo(t, "", "", "help", "run"), runWo(t, "", "", "run", "--help"); verb.code != 0 || verb.stdout != flag.stdout {
		t.Errorf("wo help run (exit %d) differs from wo run --help:\n%s", verb.code, verb.stdout)
	}
	v := runWo(t, "", "", "version")
	if v.code != 0 || v.stdout != "wo version "+versionString()+"\n" {
		t.Errorf("wo version: exit %d %q", v.code, v.stdout)
	}
	if top := runWo(t, "", "", "help"); top.code != 0 || !strings.Contains(top.stdout, "version     print wo's version") {
		t.Errorf("wo help: exit %d\n%s", top.code, top.stdout)
	}
}

func TestMistypedCommandsAndFlagsNameTheOneMeant(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"staus", "task_x"}, `wo: unknown command "staus": did you mean "status"?`},
		{[]string{"valdate", "task_x"}, `did you mean "validate"?`},
		{[]string{"run", "task_x", "--parallell", "2"}, "wo run: unknown flag --parallell: did you mean --parallel?"},
		{[]string{"--stor", "x.db", "list"}, "unknown flag --stor: did you mean --store?"},
	} {
		r := runWo(t, "", "", c.args...)
		if r.code != ExitInvalid || !strings.Contains(r.stderr, c.want) {
			t.Errorf("wo %s: exit %d, want 2 saying %q:\n%s", strings.Join(c.args, " "), r.code, c.want, r.stderr)
		}
	}
	// Nothing close: no guess.
	for _, args := range [][]string{{"frobnicate"}, {"list", "--zzzzzz"}} {
		if r := runWo(t, "", "", args...); r.code != ExitInvalid || strings.Contains(r.stderr, "did you mean") {
			t.Errorf("wo %s: exit %d %s", strings.Join(args, " "), r.code, r.stderr)
		}
	}
}

// Serial: a refused URL would have been a file in the working directory,
// which the test changes.
func TestAStoreURLOfAnUnknownSchemeIsRefused(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	for _, u := range []string{"arango://db:8529", "postgres://x/y", "ftp://h/wo.db"} {
		r := runWo(t, u, "", "list")
		if r.code != ExitInvalid || !strings.Contains(r.stderr, "wo does not know the scheme") || !strings.Contains(r.stderr, "arangodb+http://HOST:PORT") ||
			!strings.Contains(r.stderr, "sqlite:./wo.db") {
			t.Errorf("--store %s: exit %d\n%s", u, r.code, r.stderr)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("a refused store URL left %d file(s) behind: %v", len(entries), entries)
	}
	// The forms wo knows are not refused for their form.
	if r := runWo(t, "sqlite:"+filepath.Join(dir, "ok.db"), "", "init"); r.code != 0 {
		t.Errorf("sqlite: exit %d %s", r.code, r.stderr)
	}
}

// wo --help lists every exit code wo has, Ctrl-C's 130 among them, as the
// README and docs/running.md do.
func TestHelpListsEveryExitCode(t *testing.T) {
	t.Parallel()
	help := runWo(t, "", "", "--help").stdout
	_, codes, found := strings.Cut(help, "Exit codes: ")
	codes, _, _ = strings.Cut(codes, ".\n")
	codes = strings.Join(strings.Fields(codes), " ")
	if !found {
		t.Fatalf("wo --help has no exit codes:\n%s", help)
	}
	for _, code := range []int{ExitOK, ExitFailed, ExitInvalid, ExitWaiting, ExitLeaseHeld, ExitUnavailable, ExitInterrupted} {
		if !regexp.MustCompile(`(^|, )` + strconv.Itoa(code) + ` `).MatchString(codes) {
			t.Errorf("wo --help does not list exit %d: %q", code, codes)
		}
	}
	if !strings.Contains(codes, "130 interrupted (Ctrl-C") {
		t.Errorf("wo --help does not say what 130 is: %q", codes)
	}
}
