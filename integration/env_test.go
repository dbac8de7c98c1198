package integration

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The wo binary reads its configuration from the real process environment:
// inside, commands read it through the factory, which main gives os.Getenv.
func TestTheBinaryReadsItsConfigurationFromTheEnvironment(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	run := func(env map[string]string, args ...string) woResult {
		t.Helper()
		cmd := exec.Command(woBin, args...)
		cmd.Dir = dir
		for _, kv := range os.Environ() { // only what this test gives: none of the runner's wo settings
			name, _, _ := strings.Cut(kv, "=")
			if !strings.HasPrefix(name, "WO_") && !strings.HasPrefix(name, "ARANGO_") && !strings.HasPrefix(name, "GITHUB_") &&
				name != "HADES_DATABASE" && name != "GH_TOKEN" && name != "XDG_STATE_HOME" && name != "HOME" {
				cmd.Env = append(cmd.Env, kv)
			}
		}
		for k, v := range env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		return result(cmd, cmd.Run(), out.String(), errb.String())
	}
	fixture, err := filepath.Abs("../fixtures/hermes-review.json")
	if err != nil {
		t.Fatal(err)
	}

	// WO_STORE names the store every command opens.
	db := filepath.Join(dir, "env.db")
	if r := run(map[string]string{"WO_STORE": db}, "import", fixture); r.code != 0 {
		t.Fatalf("WO_STORE=%s wo import: exit %d %s", db, r.code, r.stderr)
	}
	r := run(map[string]string{"WO_STORE": db}, "list", "--json")
	var env struct {
		Data     []map[string]any
		Metadata struct{ Store string }
	}
	if err := json.Unmarshal([]byte(r.stdout), &env); err != nil || len(env.Data) != 4 || env.Metadata.Store != "sqlite:"+db {
		t.Errorf("WO_STORE=%s wo list --json: %v, %d task(s) from %q\n%s", db, err, len(env.Data), env.Metadata.Store, r.stderr)
	}

	// Without WO_STORE, the store is under XDG_STATE_HOME.
	state := filepath.Join(dir, "state")
	if r := run(map[string]string{"XDG_STATE_HOME": state}, "init"); r.code != 0 {
		t.Fatalf("XDG_STATE_HOME=%s wo init: exit %d %s", state, r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(state, "wo", "wo.db")); err != nil {
		t.Errorf("wo init with XDG_STATE_HOME: %v", err)
	}

	// A duration flag's variable is read, and refused when it is none.
	r = run(map[string]string{"WO_STORE": db, "WO_STORE_TIMEOUT": "soon"}, "list")
	if r.code != 2 || !strings.Contains(r.stderr, "environment variable WO_STORE_TIMEOUT (for --store-timeout)") {
		t.Errorf("WO_STORE_TIMEOUT=soon wo list: exit %d %s", r.code, r.stderr)
	}

	// Other configuration the commands read: the job summary of GitHub Actions.
	summary := filepath.Join(dir, "summary.md")
	r = run(map[string]string{"WO_STORE": db, "GITHUB_STEP_SUMMARY": summary}, "status", "task_cr_epic", "--format", "markdown")
	if b, err := os.ReadFile(summary); r.code != 0 || err != nil || string(b) != r.stdout || !strings.Contains(r.stdout, "| `task_cr_04`") {
		t.Errorf("GITHUB_STEP_SUMMARY: exit %d, file %q (%v), stdout %q", r.code, b, err, r.stdout)
	}
}
