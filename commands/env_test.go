package commands

import (
	"cmp"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/wo-runner/wo/procedure/action"
)

// urfave/cli reads a flag's EnvVars from the process environment itself:
// no flag of wo may have any, or a command would see what the factory did
// not give it. And every flag the environment table names exists.
func TestNoFlagReadsTheProcessEnvironment(t *testing.T) {
	t.Parallel()
	app := NewApp(&Factory{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard, Getenv: func(string) string { return "" }})
	seen := map[string]bool{}
	var walk func(where string, flags []cli.Flag, cmds []*cli.Command)
	walk = func(where string, flags []cli.Flag, cmds []*cli.Command) {
		for _, fl := range flags {
			seen[fl.Names()[0]] = true
			if df, ok := fl.(cli.DocGenerationFlag); ok && len(df.GetEnvVars()) > 0 {
				t.Errorf("%s --%s reads %v from the process environment: add it to flagEnv instead", where, fl.Names()[0], df.GetEnvVars())
			}
		}
		for _, c := range cmds {
			walk("wo "+c.Name, c.Flags, c.Subcommands)
		}
	}
	walk("wo", app.Flags, app.Commands)
	for name, env := range flagEnv {
		if !seen[name] {
			t.Errorf("flagEnv names --%s (%s), which no command has", name, env)
		}
	}
}

// Each name of the design's configuration table, given to the factory, is
// what the command works with; a flag beats it, and the first name of a pair
// beats the second.
func TestEachConfigurationNameIsWhatTheCommandSees(t *testing.T) {
	t.Parallel()
	store := func(t *testing.T, env map[string]string, args ...string) StoreConfig {
		t.Helper()
		cfg, r := storeConfigOf(t, env, append([]string{"list"}, args...)...)
		if strings.Contains(r.stderr, "environment variable") {
			t.Fatalf("wo list: %s", r.stderr)
		}
		return cfg
	}
	run := func(t *testing.T, env map[string]string, args ...string) engineOptions {
		t.Helper()
		o, msg := parseOptionsEnv(t, env, runCommand, append([]string{"task_x"}, args...)...)
		if o == nil {
			t.Fatalf("wo run: %s", msg)
		}
		return o.Engine
	}
	undo := func(t *testing.T, env map[string]string) engineOptions {
		t.Helper()
		o, msg := parseOptionsEnv(t, env, undoCommand, "task_x")
		if o == nil {
			t.Fatalf("wo undo: %s", msg)
		}
		return o.Engine
	}
	sqliteDefault := StoreConfig{Collection: "persephone_tasks", ReadOnly: true}
	for _, tc := range []struct {
		name string
		env  map[string]string
		got  func(*testing.T, map[string]string) any
		want any
	}{
		{"WO_STORE", map[string]string{"WO_STORE": "/env/wo.db"},
			func(t *testing.T, env map[string]string) any { return store(t, env).URL }, "/env/wo.db"},
		{"WO_STORE, a flag beats it", map[string]string{"WO_STORE": "/env/wo.db"},
			func(t *testing.T, env map[string]string) any { return store(t, env, "--store", "/flag.db").URL }, "/flag.db"},
		{"ARANGO_URL", map[string]string{"ARANGO_URL": "http://a:8529"},
			func(t *testing.T, env map[string]string) any { return store(t, env).URL }, "http://a:8529"},
		{"WO_STORE beats ARANGO_URL", map[string]string{"WO_STORE": "arangodb+http://w:8529", "ARANGO_URL": "http://a:8529"},
			func(t *testing.T, env map[string]string) any { return store(t, env).URL }, "arangodb+http://w:8529"},
		{"WO_DATABASE", map[string]string{"WO_DATABASE": "wodb"},
			func(t *testing.T, env map[string]string) any { return store(t, env).Database }, "wodb"},
		{"HADES_DATABASE", map[string]string{"HADES_DATABASE": "hades"},
			func(t *testing.T, env map[string]string) any { return store(t, env).Database }, "hades"},
		{"WO_DATABASE beats HADES_DATABASE", map[string]string{"WO_DATABASE": "wodb", "HADES_DATABASE": "hades"},
			func(t *testing.T, env map[string]string) any { return store(t, env).Database }, "wodb"},
		{"ARANGO_USER", map[string]string{"ARANGO_USER": "alice"},
			func(t *testing.T, env map[string]string) any { return store(t, env).User }, "alice"},
		{"ARANGO_USERNAME", map[string]string{"ARANGO_USERNAME": "bob"},
			func(t *testing.T, env map[string]string) any { return store(t, env).User }, "bob"},
		{"ARANGO_USER beats ARANGO_USERNAME", map[string]string{"ARANGO_USER": "alice", "ARANGO_USERNAME": "bob"},
			func(t *testing.T, env map[string]string) any { return store(t, env).User }, "alice"},
		{"ARANGO_PASSWORD", map[string]string{"ARANGO_PASSWORD": "pw"},
			func(t *testing.T, env map[string]string) any { return store(t, env).Password }, "pw"},
		{"WO_COLLECTION", map[string]string{"WO_COLLECTION": "tasks_b"},
			func(t *testing.T, env map[string]string) any { return store(t, env).Collection }, "tasks_b"},
		{"WO_STORE_TIMEOUT", map[string]string{"WO_STORE_TIMEOUT": "9s"},
			func(t *testing.T, env map[string]string) any { return store(t, env).Timeout }, 9 * time.Second},
		{"empty counts as unset", map[string]string{"WO_STORE": "", "WO_COLLECTION": "", "WO_STORE_TIMEOUT": ""},
			func(t *testing.T, env map[string]string) any { return store(t, env) }, sqliteDefault},
		{"GITHUB_API_URL, wo run", map[string]string{"GITHUB_API_URL": "https://ghe/api/v3/"},
			func(t *testing.T, env map[string]string) any { return run(t, env).GitHubAPI }, "https://ghe/api/v3/"},
		{"GITHUB_API_URL, wo undo", map[string]string{"GITHUB_API_URL": "https://ghe/api/v3/"},
			func(t *testing.T, env map[string]string) any { return undo(t, env).GitHubAPI }, "https://ghe/api/v3/"},
		{"WO_AGENT", map[string]string{"WO_AGENT": "fixer --fast"},
			func(t *testing.T, env map[string]string) any { return run(t, env).Agent }, "fixer --fast"},
		{"WO_AGENT, a flag beats it", map[string]string{"WO_AGENT": "fixer --fast"},
			func(t *testing.T, env map[string]string) any { return run(t, env, "--agent", "mine").Agent }, "mine"},
		{"WO_AGENT_ENV", map[string]string{"WO_AGENT_ENV": "OPENAI_API_KEY, CODEX_HOME"},
			func(t *testing.T, env map[string]string) any { return run(t, env).AgentEnv }, []string{"OPENAI_API_KEY", "CODEX_HOME"}},
		{"WO_AGENT_ENV, a flag replaces it", map[string]string{"WO_AGENT_ENV": "OPENAI_API_KEY"},
			func(t *testing.T, env map[string]string) any { return run(t, env, "--agent-env", "MINE").AgentEnv }, []string{"MINE"}},
		{"WO_AGENT_TIMEOUT", map[string]string{"WO_AGENT_TIMEOUT": "45m"},
			func(t *testing.T, env map[string]string) any { return run(t, env).AgentTimeout }, 45 * time.Minute},
		{"WO_REVIEW_WAIT", map[string]string{"WO_REVIEW_WAIT": "2m"},
			func(t *testing.T, env map[string]string) any { return run(t, env).ReviewWait }, 2 * time.Minute},
		{"WO_REVIEW_WAIT=0 looks once", map[string]string{"WO_REVIEW_WAIT": "0"},
			func(t *testing.T, env map[string]string) any { return run(t, env).NoReviewWait }, true},
		{"WO_POLL_INTERVAL", map[string]string{"WO_POLL_INTERVAL": "7s"},
			func(t *testing.T, env map[string]string) any { return run(t, env).PollInterval }, 7 * time.Second},
		{"WO_GIT_TIMEOUT, wo run", map[string]string{"WO_GIT_TIMEOUT": "20s"},
			func(t *testing.T, env map[string]string) any { return run(t, env).GitTimeout }, 20 * time.Second},
		{"WO_GIT_TIMEOUT, wo undo", map[string]string{"WO_GIT_TIMEOUT": "20s"},
			func(t *testing.T, env map[string]string) any { return undo(t, env).GitTimeout }, 20 * time.Second},
		{"WO_GIT_TIMEOUT, a flag beats it", map[string]string{"WO_GIT_TIMEOUT": "20s"},
			func(t *testing.T, env map[string]string) any { return run(t, env, "--git-timeout", "1m").GitTimeout }, time.Minute},
		{"GITHUB_TOKEN, to the engine", map[string]string{"GITHUB_TOKEN": "ghp_env"},
			func(t *testing.T, env map[string]string) any { return engineToken(env) }, "ghp_env"},
		{"GH_TOKEN, to the engine", map[string]string{"GH_TOKEN": "gho_env"},
			func(t *testing.T, env map[string]string) any { return engineToken(env) }, "gho_env"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := tc.got(t, tc.env); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("with %v: the command sees %#v, want %#v", tc.env, got, tc.want)
			}
		})
	}
}

// engineToken is the GitHub token the engine of wo run would push with.
func engineToken(env map[string]string) string {
	f := &Factory{Getenv: func(k string) string { return env[k] }}
	getenv := f.engine(nil, engineOptions{}).Getenv
	return cmp.Or(getenv("GITHUB_TOKEN"), getenv("GH_TOKEN"))
}

// What a user sees of the two GitHub tokens: without one, wo validate says
// a pull request step would be refused; with either, it does not; and
// neither appears in what wo prints.
func TestAGitHubTokenFromTheFactoryIsTheOneWoUses(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	mustRun(t, db, "", "import", fixture)
	const refused = "step 6: wo run would refuse: no GitHub token"
	offline := "http://127.0.0.1:1/" // nothing is asked of GitHub; if it were, this fails at once
	if r := runWoEnv(t, map[string]string{"GITHUB_API_URL": offline}, db, "", "validate", "task_cr_01"); !strings.Contains(r.stderr, refused) {
		t.Fatalf("without a token, wo validate does not say %q:\n%s", refused, r.stderr)
	}
	for _, name := range []string{"GITHUB_TOKEN", "GH_TOKEN"} {
		r := runWoEnv(t, map[string]string{name: "tok_" + name + "_secret", "GITHUB_API_URL": offline}, db, "", "validate", "task_cr_01")
		if strings.Contains(r.stderr, "no GitHub token") || !strings.Contains(r.stderr, "step 1: wo run would refuse") {
			t.Errorf("with %s, wo validate still misses the token, or stopped saying what else it refuses:\n%s", name, r.stderr)
		}
		if strings.Contains(r.stdout+r.stderr, "_secret") {
			t.Errorf("%s appeared in the output", name)
		}
	}
}

// The default store is $XDG_STATE_HOME/wo/wo.db, else under $HOME, as the
// factory's environment says; with neither, wo says what to set.
func TestTheDefaultStoreComesFromTheFactorysEnvironment(t *testing.T) {
	t.Parallel()
	state, home := t.TempDir(), t.TempDir()
	mustRunEnv(t, map[string]string{"XDG_STATE_HOME": state, "HOME": home}, "", "", "init")
	if _, err := os.Stat(filepath.Join(state, "wo", "wo.db")); err != nil {
		t.Errorf("XDG_STATE_HOME: %v", err)
	}
	mustRunEnv(t, map[string]string{"HOME": home}, "", "", "init")
	if _, err := os.Stat(filepath.Join(home, ".local", "state", "wo", "wo.db")); err != nil {
		t.Errorf("HOME: %v", err)
	}
	r := runWoEnv(t, nil, "", "", "init")
	if r.code == ExitOK || !strings.Contains(r.stderr, "set WO_STORE or XDG_STATE_HOME") {
		t.Errorf("neither: exit %d %s", r.code, r.stderr)
	}
}

// A duration in the environment that is not one stops the command with a
// usage error that names the variable and the flag, and says what to give;
// a command without that flag, or given the flag, is not stopped by it.
func TestAnEnvironmentValueThatIsNotADurationIsAUsageError(t *testing.T) {
	t.Parallel()
	r := runWoEnv(t, map[string]string{"WO_GIT_TIMEOUT": "5"}, newDB(t), "", "run", "task_x")
	want := "wo run: environment variable WO_GIT_TIMEOUT (for --git-timeout): time: missing unit in duration \"5\"; give a duration such as 90s or 5m, or unset it\n" +
		"Run 'wo run --help' for usage.\n"
	if r.code != ExitInvalid || r.stderr != want {
		t.Errorf("exit %d, stderr %q\nwant %q", r.code, r.stderr, want)
	}
	if r := runWoEnv(t, map[string]string{"WO_STORE_TIMEOUT": "soon"}, newDB(t), "", "list", "--json"); r.code != ExitInvalid ||
		!strings.Contains(r.stdout, `"code": "USAGE"`) || !strings.Contains(r.stdout, "WO_STORE_TIMEOUT (for --store-timeout)") {
		t.Errorf("--json: exit %d %s", r.code, r.stdout)
	}
	if r := runWoEnv(t, map[string]string{"WO_STORE_TIMEOUT": "soon"}, "", "", "version"); r.code != ExitOK {
		t.Errorf("wo version, which has no --store-timeout: exit %d %s", r.code, r.stderr)
	}
	if o, msg := parseOptionsEnv(t, map[string]string{"WO_GIT_TIMEOUT": "soon"}, runCommand, "task_x", "--git-timeout", "1m"); o == nil || o.Engine.GitTimeout != time.Minute {
		t.Errorf("the flag given: %+v %s", o, msg)
	}
}

// Serial: it sets the process environment to values a command must not
// see. Each name a command could have read from the process is poisoned;
// commands given their own environment see none of it.
func TestTheProcessEnvironmentIsNotReadWhenATestGivesItsOwn(t *testing.T) {
	poison := t.TempDir()
	for name, value := range map[string]string{
		"WO_STORE": "arangodb+http://poison:1", "ARANGO_URL": "http://poison:2", "WO_DATABASE": "poison", "HADES_DATABASE": "poison",
		"ARANGO_USER": "poison", "ARANGO_USERNAME": "poison", "ARANGO_PASSWORD": "poison", "WO_COLLECTION": "poison",
		"WO_STORE_TIMEOUT": "poison", "GITHUB_API_URL": "https://poison/", "GITHUB_TOKEN": "poison", "GH_TOKEN": "poison",
		"WO_AGENT": "poison", "WO_AGENT_ENV": "POISON", "WO_AGENT_TIMEOUT": "poison", "WO_REVIEW_WAIT": "poison",
		"WO_POLL_INTERVAL": "poison", "WO_GIT_TIMEOUT": "poison", "WO_GIT_STALL": "poison", "XDG_STATE_HOME": poison, "HOME": poison, "CI": "true",
	} {
		t.Setenv(name, value)
	}
	if cfg, r := storeConfigOf(t, nil, "list"); !reflect.DeepEqual(cfg, StoreConfig{Collection: "persephone_tasks", ReadOnly: true}) {
		t.Errorf("wo list opened %+v (%s)", cfg, r.stderr)
	}
	o, msg := parseOptionsEnv(t, nil, runCommand, "--epic", "task_e")
	want := engineOptions{AgentTimeout: 30 * time.Minute, GitTimeout: action.DefaultGitTimeout, GitStall: action.DefaultGitStall}
	if o == nil || !reflect.DeepEqual(o.Engine, want) || o.Wait {
		t.Errorf("wo run: %+v (%s)", o, msg)
	}
	if got := engineToken(nil); got != "" {
		t.Errorf("the engine has the token %q", got)
	}
	state := t.TempDir()
	mustRunEnv(t, map[string]string{"XDG_STATE_HOME": state}, "", "", "init")
	if entries, _ := os.ReadDir(poison); len(entries) != 0 {
		t.Errorf("wo init wrote under the process's XDG_STATE_HOME or HOME: %v", entries)
	}
	if _, err := os.Stat(filepath.Join(state, "wo", "wo.db")); err != nil {
		t.Errorf("wo init did not use the given XDG_STATE_HOME: %v", err)
	}
}
