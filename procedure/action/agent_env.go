package action

import (
	"fmt"
	"os"
	"regexp"
	"runtime"
	"slices"
)

// The agent's environment is an allow-list, not wo's environment less a
// few names: wo's own holds the store's password and URL, cloud keys, an
// SSH agent and, in GitHub Actions, the files that set later steps' env and
// path, none of which the agent needs to edit files (issue 24, finding 3).

// agentBaseEnv are the variables an agent gets from wo's environment.
// LC_* is spelt out: the engine reads its environment by name.
var agentBaseEnv = []string{"PATH", "LANG", "TERM", "TMPDIR",
	"LC_ALL", "LC_ADDRESS", "LC_COLLATE", "LC_CTYPE", "LC_IDENTIFICATION", "LC_MEASUREMENT", "LC_MESSAGES",
	"LC_MONETARY", "LC_NAME", "LC_NUMERIC", "LC_PAPER", "LC_TELEPHONE", "LC_TIME"}

// agentWindowsEnv are what Windows programs cannot start without.
var agentWindowsEnv = []string{"SYSTEMROOT", "WINDIR", "COMSPEC", "PATHEXT", "TEMP", "TMP"}

// agentOwnEnv are the names wo sets for the agent itself; agentNeverEnv
// are never passed, whatever --agent-env says: the token wo pushes and
// talks to GitHub with.
var (
	agentOwnEnv   = []string{"WO_TASK_KEY", "WO_WORKTREE", "WO_PROMPT_FILE"}
	agentNeverEnv = []string{"GITHUB_TOKEN", "GH_TOKEN"}
)

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// CheckAgentEnv says why a name cannot be passed to the agent with
// --agent-env, or nil.
func CheckAgentEnv(name string) error {
	switch {
	case !envName.MatchString(name):
		return fmt.Errorf("--agent-env %q: name one environment variable (letters, digits and _), such as ANTHROPIC_API_KEY", name)
	case slices.Contains(agentNeverEnv, name):
		return fmt.Errorf("--agent-env %s: the agent never gets the GitHub token wo pushes with; wo commits, pushes and talks to GitHub for it", name)
	case slices.Contains(agentOwnEnv, name):
		return fmt.Errorf("--agent-env %s: wo sets %s for the agent itself", name, name)
	}
	return nil
}

// agentEnvironment is the agent's whole environment: the allow-list from
// wo's environment, a new empty HOME (unless --agent-env HOME passes
// yours), git kept from the user's and the system's configuration and from
// credential helpers (every --agent-env name may override these), then
// wo's own variables. done removes the temporary HOME.
func agentEnvironment(getenv func(string) string, optIn []string, own map[string]string) (env []string, done func(), err error) {
	index := map[string]int{}
	put := func(name, value string) {
		if i, ok := index[name]; ok {
			env[i] = name + "=" + value
			return
		}
		index[name] = len(env)
		env = append(env, name+"="+value)
	}
	base := agentBaseEnv
	if runtime.GOOS == "windows" {
		base = append(slices.Clip(base), agentWindowsEnv...)
	}
	for _, name := range base {
		if v := getenv(name); v != "" {
			put(name, v)
		}
	}
	home, err := os.MkdirTemp("", "wo-agent-home-")
	if err != nil {
		return nil, nil, fmt.Errorf("making the agent's HOME: %w", err)
	}
	put("HOME", home)
	// git in the agent reads neither ~/.gitconfig nor /etc/gitconfig (the
	// credential helpers, url rewrites and tokens they may hold), never
	// prompts, and has no credential helper even from the repository's
	// own configuration (an empty value resets git's list of helpers).
	put("GIT_CONFIG_GLOBAL", os.DevNull)
	put("GIT_CONFIG_NOSYSTEM", "1")
	put("GIT_TERMINAL_PROMPT", "0")
	put("GIT_CONFIG_COUNT", "1")
	put("GIT_CONFIG_KEY_0", "credential.helper")
	put("GIT_CONFIG_VALUE_0", "")
	for _, name := range optIn {
		if CheckAgentEnv(name) != nil {
			continue
		}
		if v := getenv(name); v != "" {
			put(name, v)
		}
	}
	for _, name := range agentOwnEnv {
		put(name, own[name])
	}
	return env, func() { os.RemoveAll(home) }, nil
}
