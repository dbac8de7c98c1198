package action

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"unicode"

	"github.com/wo-runner/wo/agent"
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
	// agentStoreEnv are the store's address and credentials: the agent
	// never writes the task it works on.
	agentStoreEnv = []string{"ARANGO_PASSWORD", "ARANGO_USER", "ARANGO_USERNAME", "ARANGO_URL", "WO_STORE", "WO_DATABASE", "HADES_DATABASE"}
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
	case slices.Contains(agentStoreEnv, name):
		return fmt.Errorf("--agent-env %s: the agent never gets the store's address or credentials; wo writes the task for it", name)
	case slices.Contains(agentOwnEnv, name):
		return fmt.Errorf("--agent-env %s: wo sets %s for the agent itself", name, name)
	}
	return nil
}

// agentEnv is what the agent's environment is made of.
type agentEnv struct {
	getenv  func(string) string
	optIn   []string          // --agent-env
	own     map[string]string // WO_TASK_KEY, WO_WORKTREE, WO_PROMPT_FILE
	home    string            // the agent's HOME: a new, empty folder of its own
	tmp     string            // its TMPDIR, a folder of its own
	profile *agent.Profile    // the named agent's credentials and settings; nil for a command of the user's
	login   string            // the user's own config folder for the profile's ConfigVar (--agent-login), or ""
	caches  map[string]string // the build caches it may use and write: variable → folder
}

// environment is the agent's whole environment: the allow-list from wo's
// environment, its own HOME and TMPDIR, git kept from the user's and the
// system's configuration and from credential helpers, the build caches, the
// named agent's own credential variables when set and its settings, its
// config folder only when the user asked, every --agent-env name (which
// may override these), then wo's own variables.
func (a agentEnv) environment() []string {
	var e envList
	base := agentBaseEnv
	if runtime.GOOS == "windows" {
		base = append(slices.Clip(base), agentWindowsEnv...)
	}
	for _, name := range base {
		if v := a.getenv(name); v != "" && name != "TMPDIR" {
			e.put(name, v)
		}
	}
	e.put("HOME", a.home)
	if a.tmp != "" {
		e.put("TMPDIR", a.tmp)
	}
	// git in the agent reads neither ~/.gitconfig nor /etc/gitconfig (the
	// credential helpers, url rewrites and tokens they may hold), never
	// prompts, and has no credential helper even from the repository's
	// own configuration (an empty value resets git's list of helpers).
	e.put("GIT_CONFIG_GLOBAL", os.DevNull)
	e.put("GIT_CONFIG_NOSYSTEM", "1")
	e.put("GIT_TERMINAL_PROMPT", "0")
	e.put("GIT_CONFIG_COUNT", "1")
	e.put("GIT_CONFIG_KEY_0", "credential.helper")
	e.put("GIT_CONFIG_VALUE_0", "")
	for _, name := range slices.Sorted(maps.Keys(a.caches)) {
		e.put(name, a.caches[name])
	}
	a.profileEnv(&e)
	for _, name := range a.optIn {
		if CheckAgentEnv(name) != nil {
			continue
		}
		if v := a.getenv(name); v != "" {
			e.put(name, v)
		}
	}
	for _, name := range agentOwnEnv {
		e.put(name, a.own[name])
	}
	return e.env
}

// profileEnv adds what the agent's profile needs: its credentials from
// wo's environment (never the store's or GitHub's), its settings, and its
// login folder when one is lent.
func (a agentEnv) profileEnv(e *envList) {
	p := a.profile
	if p == nil {
		return
	}
	for _, name := range p.Credentials {
		if slices.Contains(agentNeverEnv, name) || slices.Contains(agentStoreEnv, name) {
			continue
		}
		if v := a.getenv(name); v != "" {
			e.put(name, v)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(p.Settings)) {
		e.put(name, p.Settings[name])
	}
	if a.login != "" && p.ConfigVar != "" {
		e.put(p.ConfigVar, a.login)
	}
}

// envList is an environment being built: a name set again keeps its
// place and takes the new value.
type envList struct {
	env   []string
	index map[string]int
}

func (e *envList) put(name, value string) {
	if i, ok := e.index[name]; ok {
		e.env[i] = name + "=" + value
		return
	}
	if e.index == nil {
		e.index = map[string]int{}
	}
	e.index[name] = len(e.env)
	e.env = append(e.env, name+"="+value)
}

// agentHas reports whether the agent's environment sets name.
func agentHas(env []string, name string) bool {
	return slices.ContainsFunc(env, func(kv string) bool { return strings.HasPrefix(kv, name+"=") && len(kv) > len(name)+1 })
}

// loginFolder is the user's own config folder of a profile: its variable
// in wo's environment, else the default under the user's home.
func loginFolder(p *agent.Profile, getenv func(string) string) string {
	if p == nil || p.ConfigVar == "" {
		return ""
	}
	if v := getenv(p.ConfigVar); v != "" {
		return v
	}
	if home := getenv("HOME"); home != "" {
		return filepath.Join(home, p.ConfigDefault)
	}
	return ""
}

// buildCaches are the build caches an agent's checks use (go test, npm,
// pip), writable in its sandbox: variable → folder. They are the task's
// own, under the user's cache folder (wo/agent/tasks/KEY), never the
// user's and never another task's: what an agent writes into a cache runs
// in the next build that reads it, so a cache shared between tasks would
// let one task's agent run code in the next one's (and a cache of the
// user's, in the user's own builds). A second round of the same task
// finds its cache warm; a new task starts cold, and cleanup_worktree
// removes the task's caches with its worktree. To share yours anyway,
// pass the variable and the folder: --agent-env GOCACHE --agent-writable
// "$(go env GOCACHE)".
func buildCaches(getenv func(string) string, key string) map[string]string {
	root := taskCacheRoot(getenv, key)
	if root == "" {
		return map[string]string{}
	}
	return map[string]string{
		"GOCACHE":          filepath.Join(root, "go-build"),
		"GOMODCACHE":       filepath.Join(root, "go-mod"),
		"npm_config_cache": filepath.Join(root, "npm"),
		"PIP_CACHE_DIR":    filepath.Join(root, "pip"),
	}
}

// taskCacheRoot is the folder of a task's agent caches ("" with no cache
// folder): its name is the key's letters and a hash of the key, so that
// no key (a document's) names a path elsewhere or another task's folder.
func taskCacheRoot(getenv func(string) string, key string) string {
	base := getenv("XDG_CACHE_HOME")
	if base == "" {
		home := getenv("HOME")
		if home == "" {
			return ""
		}
		base = filepath.Join(home, ".cache")
	}
	sum := sha256.Sum256([]byte(key))
	safe := strings.Map(func(r rune) rune {
		if r < 0x80 && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '-') {
			return r
		}
		return '_'
	}, key)
	if len(safe) > 64 {
		safe = safe[:64]
	}
	return filepath.Join(base, "wo", "agent", "tasks", safe+"-"+hex.EncodeToString(sum[:6]))
}

// removeTaskCaches removes a task's agent caches (Go's module cache is
// read-only on disk: made writable first).
func removeTaskCaches(getenv func(string) string, key string) error {
	root := taskCacheRoot(getenv, key)
	if root == "" {
		return nil
	}
	filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			os.Chmod(path, 0o700)
		}
		return nil
	})
	return os.RemoveAll(root)
}
