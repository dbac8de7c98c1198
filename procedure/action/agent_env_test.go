//go:build unix

package action

import (
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/wo-runner/wo/internal/gittest"
	"github.com/wo-runner/wo/internal/sandbox"
	"github.com/wo-runner/wo/procedure/internal/fixture"
)

// The agent's environment (issue 24, finding 3), seen from inside an
// agent: a shell script that writes what it has where the test reads it.

// credentialHelper is a git credential helper that leaves a mark when git
// asks it, and answers with a token.
func credentialHelper(t *testing.T, mark string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "helper.sh")
	fixture.WriteFile(t, path, "#!/bin/sh\necho asked >> "+mark+"\necho username=x-access-token\necho password=ghs_FROM_THE_HELPER\n")
	if err := os.Chmod(path, 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestTheAgentGetsOnlyItsAllowList(t *testing.T) {
	out := t.TempDir() // the agent's TMPDIR, where it writes what it sees
	realHome := t.TempDir()
	mark := filepath.Join(t.TempDir(), "helper-was-asked")
	helper := credentialHelper(t, mark)
	fixture.WriteFile(t, filepath.Join(realHome, ".gitconfig"), "[credential]\n\thelper = "+helper+"\n")
	fixture.WriteFile(t, filepath.Join(realHome, ".ssh/id_ed25519"), "PRIVATE KEY\n")
	// The user has a Go build cache: the agent never gets it (what it
	// writes there would run in the user's next build).
	if err := os.MkdirAll(filepath.Join(realHome, ".cache", "go-build"), 0o755); err != nil {
		t.Fatal(err)
	}
	secrets := map[string]string{
		"ARANGO_PASSWORD": "hunter2", "ARANGO_URL": "arangodb+https://root:pw@db:8529", "WO_STORE": "arangodb+https://db:8529",
		"AWS_SECRET_ACCESS_KEY": "aws-secret", "AWS_ACCESS_KEY_ID": "AKIA", "SSH_AUTH_SOCK": "/tmp/ssh-agent.sock",
		"GITHUB_ENV": "/home/runner/env", "GITHUB_PATH": "/home/runner/path", "GITHUB_OUTPUT": "/home/runner/out",
		"GITHUB_TOKEN": fixture.Token, "GH_TOKEN": "gho_other", "WO_AGENT": "/opt/secret-agent-command", "ACTIONS_RUNTIME_TOKEN": "runtime-token-secret",
		"GIT_ASKPASS": "/usr/bin/askpass", "GIT_CONFIG_PARAMETERS": "'credential.helper'='store'",
	}
	env := map[string]string{"PATH": os.Getenv("PATH"), "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "TERM": "xterm",
		"TMPDIR": out, "HOME": realHome, "MY_API_KEY": "sk-opted-in", "XDG_CONFIG_HOME": realHome}
	for k, v := range secrets {
		env[k] = v
	}
	// The agent's TMPDIR is a folder of its own: it writes what it sees
	// to out, named in the script.
	h := loopReady(t, stepOpts{Env: env, Agent: fixOf + strings.ReplaceAll(`env > "OUT/env"
ls -A "$HOME" > "OUT/home"
echo "$HOME" > "OUT/home-path"
git config --get-all credential.helper > "OUT/helpers"
printf 'protocol=https\nhost=github.com\n\n' | git credential fill > "OUT/fill" 2>&1
echo "$?" > "OUT/fill-status"
`, "OUT", out)})
	h.settings().AgentEnv = []string{"MY_API_KEY", "GITHUB_TOKEN", "NOT_SET_ANYWHERE", "WO_TASK_KEY"}
	h.settings().AgentWritable = append(h.settings().AgentWritable, out) // --agent-writable: where it writes what it sees
	// The repository's own configuration names the helper too.
	gittest.Run(t, h.Repo, "config", "credential.helper", helper)
	if _, err := h.run("conditional_loop"); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(fixture.ReadFile(t, filepath.Join(out, "env"))), "\n") {
		name, value, _ := strings.Cut(line, "=")
		got[name] = value
	}
	var names []string
	for name := range got {
		names = append(names, name)
	}
	sort.Strings(names)
	allowed := map[string]bool{"PATH": true, "LANG": true, "LC_ALL": true, "TERM": true, "TMPDIR": true, "HOME": true,
		"MY_API_KEY": true, "WO_TASK_KEY": true, "WO_WORKTREE": true, "WO_PROMPT_FILE": true,
		"GIT_CONFIG_GLOBAL": true, "GIT_CONFIG_NOSYSTEM": true, "GIT_TERMINAL_PROMPT": true,
		"GIT_CONFIG_COUNT": true, "GIT_CONFIG_KEY_0": true, "GIT_CONFIG_VALUE_0": true,
		"GOCACHE": true, "GOMODCACHE": true, "npm_config_cache": true, "PIP_CACHE_DIR": true, // the build caches
		"PWD": true, "OLDPWD": true, "SHLVL": true, "_": true} // the last four are the shell's own
	if ok, _ := sandbox.Namespaces(); ok {
		// In a box: its way out is wo's proxy on its own loopback, for
		// every client (Node's fetch reads the variables when told).
		for _, name := range []string{"HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy", "NO_PROXY", "no_proxy", "NODE_USE_ENV_PROXY"} {
			allowed[name] = true
		}
		if got["HTTPS_PROXY"] != "http://127.0.0.1:3128" || got["NO_PROXY"] != "" {
			t.Errorf("in a box: HTTPS_PROXY=%q NO_PROXY=%q, want wo's proxy for everything", got["HTTPS_PROXY"], got["NO_PROXY"])
		}
	}
	for _, name := range names {
		if !allowed[name] {
			t.Errorf("the agent has %s, which is not on its allow-list", name)
		}
	}
	for name, value := range secrets {
		if _, ok := got[name]; ok {
			t.Errorf("the agent has %s", name)
		}
		if strings.Contains(fixture.ReadFile(t, filepath.Join(out, "env")), value) {
			t.Errorf("the value of %s reached the agent", name)
		}
	}
	if tmp := got["TMPDIR"]; filepath.Base(tmp) != "tmp" || !strings.HasPrefix(filepath.Base(filepath.Dir(tmp)), "wo-agent-") {
		t.Errorf("TMPDIR=%q, want the agent's own folder (wo-agent-*/tmp), not wo's %s", tmp, out)
	}
	for name, dir := range map[string]string{"GOCACHE": "go-build", "GOMODCACHE": "go-mod", "npm_config_cache": "npm", "PIP_CACHE_DIR": "pip"} {
		if want := filepath.Join(taskCacheRoot(func(n string) string { return env[n] }, fixture.Key), dir); got[name] != want ||
			!strings.HasPrefix(want, filepath.Join(realHome, ".cache", "wo", "agent", "tasks", fixture.Key+"-")) {
			t.Errorf("%s=%q, want the task's own cache for agents %s, never the user's own", name, got[name], want)
		}
	}
	for name, want := range map[string]string{"PATH": os.Getenv("PATH"), "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "TERM": "xterm",
		"MY_API_KEY": "sk-opted-in", "WO_TASK_KEY": fixture.Key, "WO_WORKTREE": h.Worktree,
		"GIT_CONFIG_GLOBAL": os.DevNull, "GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0"} {
		if got[name] != want {
			t.Errorf("%s=%q, want %q", name, got[name], want)
		}
	}
	if _, ok := got["NOT_SET_ANYWHERE"]; ok {
		t.Error("an opted-in name that wo's environment lacks was passed (empty)")
	}
	// The prompt, HOME and TMPDIR are in one folder of the agent's own.
	box := filepath.Dir(got["WO_PROMPT_FILE"])
	if !strings.HasPrefix(filepath.Base(box), "wo-agent-") || filepath.Dir(got["TMPDIR"]) != box {
		t.Errorf("WO_PROMPT_FILE=%s", got["WO_PROMPT_FILE"])
	}
	// HOME is a new empty folder, gone after the run.
	home := strings.TrimSpace(fixture.ReadFile(t, filepath.Join(out, "home-path")))
	if home == realHome || got["HOME"] != home || filepath.Dir(home) != box {
		t.Errorf("HOME=%s (the real one is %s)", home, realHome)
	}
	if listing := fixture.ReadFile(t, filepath.Join(out, "home")); listing != "" {
		t.Errorf("the agent's HOME holds:\n%s", listing)
	}
	if _, err := os.Stat(box); !os.IsNotExist(err) {
		t.Errorf("the agent's folder %s (its HOME, TMPDIR and prompt) is still there: %v", box, err)
	}
	// No credential helper answers git in the agent: neither the user's
	// (~/.gitconfig) nor the repository's.
	if status := strings.TrimSpace(fixture.ReadFile(t, filepath.Join(out, "fill-status"))); status == "0" {
		t.Errorf("git credential fill succeeded in the agent:\n%s", fixture.ReadFile(t, filepath.Join(out, "fill")))
	}
	if _, err := os.Stat(mark); err == nil {
		t.Error("a credential helper was asked from inside the agent")
	}
	if fill := fixture.ReadFile(t, filepath.Join(out, "fill")); strings.Contains(fill, "ghs_FROM_THE_HELPER") {
		t.Errorf("the agent read a token:\n%s", fill)
	}
	// Outside the agent, the same git in the same worktree does ask the
	// helper: the agent's refusal is wo's doing, not a broken helper.
	cmd := exec.Command("git", "credential", "fill")
	cmd.Dir = h.Worktree
	cmd.Env = append(os.Environ(), "HOME="+realHome, "GIT_TERMINAL_PROMPT=0")
	cmd.Stdin = strings.NewReader("protocol=https\nhost=github.com\n\n")
	if fill, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(fill), "ghs_FROM_THE_HELPER") {
		t.Errorf("git credential fill outside the agent: %v\n%s", err, fill)
	}
}

func TestAnOptedInHOMEReplacesTheTemporaryOne(t *testing.T) {
	realHome := t.TempDir()
	env := agentEnv{getenv: func(k string) string {
		// SYSTEMROOT is Windows' alone: not passed on a unix.
		return map[string]string{"HOME": realHome, "GIT_CONFIG_GLOBAL": "/mine", "PATH": "/bin", "GITHUB_TOKEN": "ghs_x", "SYSTEMROOT": `C:\Windows`}[k]
	}, optIn: []string{"HOME", "GIT_CONFIG_GLOBAL", "GITHUB_TOKEN", "WO_WORKTREE", "bad name"}, home: "/tmp/agent-home",
		own: map[string]string{"WO_TASK_KEY": "k", "WO_WORKTREE": "/wt", "WO_PROMPT_FILE": "/p"}}.environment()
	want := []string{"PATH=/bin", "HOME=" + realHome, "GIT_CONFIG_GLOBAL=/mine", "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0",
		"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=credential.helper", "GIT_CONFIG_VALUE_0=", "WO_TASK_KEY=k", "WO_WORKTREE=/wt", "WO_PROMPT_FILE=/p"}
	if strings.Join(env, "\n") != strings.Join(want, "\n") {
		t.Errorf("env:\n%s\nwant:\n%s", strings.Join(env, "\n"), strings.Join(want, "\n"))
	}
}

func TestCheckAgentEnv(t *testing.T) {
	for name, want := range map[string]string{
		"ANTHROPIC_API_KEY": "",
		"_x1":               "",
		"HOME":              "",
		"1X":                `--agent-env "1X": name one environment variable (letters, digits and _), such as ANTHROPIC_API_KEY`,
		"A=B":               `--agent-env "A=B": name one environment variable (letters, digits and _), such as ANTHROPIC_API_KEY`,
		"":                  `--agent-env "": name one environment variable (letters, digits and _), such as ANTHROPIC_API_KEY`,
		"GITHUB_TOKEN":      "--agent-env GITHUB_TOKEN: the agent never gets the GitHub token wo pushes with; wo commits, pushes and talks to GitHub for it",
		"GH_TOKEN":          "--agent-env GH_TOKEN: the agent never gets the GitHub token wo pushes with; wo commits, pushes and talks to GitHub for it",
		"WO_PROMPT_FILE":    "--agent-env WO_PROMPT_FILE: wo sets WO_PROMPT_FILE for the agent itself",
	} {
		got := ""
		if err := CheckAgentEnv(name); err != nil {
			got = err.Error()
		}
		if got != want {
			t.Errorf("CheckAgentEnv(%q) = %q, want %q", name, got, want)
		}
	}
}
