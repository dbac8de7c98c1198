package commands

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/wo-runner/wo/store"
)

// storeConfigOf runs wo with args and returns the store configuration the
// command would open, without opening anything.
func storeConfigOf(t *testing.T, env map[string]string, args ...string) (StoreConfig, woRun) {
	t.Helper()
	var out, errb bytes.Buffer
	f := NewFactory(strings.NewReader(""), &out, &errb)
	f.Getenv = func(k string) string { return env[k] }
	var got StoreConfig
	f.OpenStore = func(_ context.Context, cfg StoreConfig) (store.Store, error) {
		got = cfg
		return nil, errors.New("not opened in this test")
	}
	code := Run(context.Background(), f, append([]string{"wo"}, args...))
	return got, woRun{stdout: out.String(), stderr: errb.String(), code: code}
}

func TestStoreFlagsBeforeTheVerb(t *testing.T) {
	t.Parallel()
	arango := StoreConfig{URL: "arangodb+http://db:8529", Database: "hades", Collection: "tasks_b", Timeout: 7 * time.Second, ReadOnly: true}
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		want StoreConfig
	}{
		{"before", nil, []string{"--store", "arangodb+http://db:8529", "--database", "hades", "--collection", "tasks_b", "--store-timeout", "7s", "list"}, arango},
		{"before, inline values", nil, []string{"--store=arangodb+http://db:8529", "-database=hades", "--collection=tasks_b", "--store-timeout=7s", "list"}, arango},
		{"after", nil, []string{"list", "--store", "arangodb+http://db:8529", "--database", "hades", "--collection", "tasks_b", "--store-timeout", "7s"}, arango},
		{"mixed, with an argument", nil, []string{"--store", "/tmp/a.db", "show", "task_x", "--collection", "c"},
			StoreConfig{URL: "/tmp/a.db", Collection: "c", ReadOnly: true}},
		{"after the verb wins", nil, []string{"--store", "/tmp/a.db", "list", "--store", "/tmp/b.db"},
			StoreConfig{URL: "/tmp/b.db", Collection: "persephone_tasks", ReadOnly: true}},
		{"flag before the verb beats the environment", map[string]string{"WO_STORE": "/tmp/env.db"}, []string{"--store", "/tmp/a.db", "list"},
			StoreConfig{URL: "/tmp/a.db", Collection: "persephone_tasks", ReadOnly: true}},
		{"environment without flags", map[string]string{"WO_STORE": "/tmp/env.db"}, []string{"list"},
			StoreConfig{URL: "/tmp/env.db", Collection: "persephone_tasks", ReadOnly: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, r := storeConfigOf(t, tc.env, tc.args...)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("wo %s: store config\n got %+v\nwant %+v\nstderr: %s", strings.Join(tc.args, " "), got, tc.want, r.stderr)
			}
			if strings.Contains(r.stderr, "not defined") {
				t.Errorf("flag refused: %s", r.stderr)
			}
		})
	}
}

func TestJSONBeforeTheVerb(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	mustRun(t, "", "", "--store", db, "import", fixture)
	r := mustRun(t, "", "", "--json", "--store", db, "list", "--parent", "task_cr_epic")
	var env Envelope
	if err := json.Unmarshal([]byte(r.stdout), &env); err != nil {
		t.Fatalf("wo --json list: not one envelope: %v\n%s", err, r.stdout)
	}
	if !env.Success || env.Command != "list" || !strings.Contains(r.stdout, `"key": "task_cr_01"`) {
		t.Errorf("wo --json --store DB list: %s", r.stdout)
	}
	if r := mustRun(t, "", "", "--store", db, "show", "task_cr_01"); !strings.Contains(r.stdout, "task_cr_01") {
		t.Errorf("wo --store DB show: %s", r.stdout)
	}
}

func TestUsageErrorsAreOneLineAndExit2(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args    []string
		command string
		message string
	}{
		{[]string{"run", "--bogus"}, "run", "unknown flag --bogus"},
		{[]string{"list", "--bogus"}, "list", "unknown flag --bogus"},
		{[]string{"run", "task_x", "--from-step", "abc"}, "run", `invalid value "abc" for flag -from-step: parse error`},
		{[]string{"revise", "task_x"}, "revise", "missing required --note"},
		{[]string{"split"}, "split", "missing required --base and --source"},
		{[]string{"split", "--base", "main"}, "split", "missing required --source"},
		{[]string{"show"}, "show", "missing task KEY: usage: wo show KEY"},
		{[]string{"--bogus", "list"}, "", "unknown flag --bogus"},
		{[]string{"frob"}, "", `unknown command "frob"`},
	} {
		name := strings.Join(tc.args, " ")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			db := newDB(t)
			r := runWo(t, db, "", tc.args...)
			prog := strings.TrimSpace("wo " + tc.command)
			want := prog + ": " + tc.message + "\nRun '" + prog + " --help' for usage.\n"
			if r.code != ExitInvalid || r.stdout != "" || r.stderr != want {
				t.Errorf("wo %s: exit %d\nstdout %q\nstderr %q\nwant stderr %q", name, r.code, r.stdout, r.stderr, want)
			}

			r = runWo(t, db, "", append(tc.args, "--json")...)
			var env Envelope
			dec := json.NewDecoder(strings.NewReader(r.stdout))
			if err := dec.Decode(&env); err != nil {
				t.Fatalf("wo %s --json: stdout is not an envelope: %v\n%s", name, err, r.stdout)
			}
			if dec.More() {
				t.Errorf("wo %s --json: more than one value on stdout:\n%s", name, r.stdout)
			}
			wantCommand := tc.command
			if wantCommand == "" {
				wantCommand = "wo"
			}
			if r.code != ExitInvalid || env.Success || env.Command != wantCommand || env.Error == nil ||
				env.Error.Code != "USAGE" || env.Error.Message != tc.message || env.Metadata.ExitCode != ExitInvalid {
				t.Errorf("wo %s --json: exit %d, envelope %+v error %+v", name, r.code, env, env.Error)
			}
			if r.stderr != "" {
				t.Errorf("wo %s --json: stderr %q", name, r.stderr)
			}
		})
	}
}

func TestPermuteArgs(t *testing.T) {
	t.Parallel()
	app := NewApp(NewFactory(strings.NewReader(""), &bytes.Buffer{}, &bytes.Buffer{}))
	for _, tc := range []struct{ in, want string }{
		{"wo --store X list", "wo list --store X"},
		{"wo --json --store X show K --database d", "wo show --json --store X --database d -- K"},
		{"wo show K --json", "wo show --json -- K"},
		{"wo --store X", "wo --store X"},
		{"wo --json init", "wo init --json"},
		{"wo --store X list -- --weird", "wo list --store X -- --weird"},
	} {
		if got := strings.Join(permuteArgs(app, strings.Fields(tc.in)), " "); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.in, got, tc.want)
		}
	}
}
