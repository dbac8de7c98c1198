// This file is part of a TEST DOUBLE. The programs here imitate the
// command-line behaviour of Claude Code, Codex CLI and Aider for wo's tests;
// they are not those tools and call no model. Only when a script asks
// (reach_model) do they make one request to their model's address, as the
// real tools do: the base URL variable each reads, through HTTPS_PROXY or
// HTTP_PROXY when set (for every host, loopback too: the real tools make no
// exception for it), so that a test can see the request get through wo's
// proxy to a server of the test's own.

package agentstandin

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/mattn/go-isatty"
)

// ScriptFile is the name of the per-test script looked up beside the
// executable as invoked (the bin folder a test put first on PATH).
const ScriptFile = "agent-standin.json"

// LogFile is the name of the invocation log appended to in the same folder.
const LogFile = "agent-standin.log"

// Outcomes a script may ask for.
const (
	OutcomeFix       = "fix"
	OutcomeNoChange  = "no_change"
	OutcomeAuth      = "auth"
	OutcomeRateLimit = "rate_limit"
	OutcomeTurnLimit = "turn_limit"
	OutcomeCrash     = "crash"
)

// Edit is one change the scripted agent makes, relative to its working
// folder. An empty Find writes Replace as the whole file (creating it).
type Edit struct {
	Path    string `json:"path"`
	Find    string `json:"find,omitempty"`
	Replace string `json:"replace"`
}

// Script is what one tool does in one test.
type Script struct {
	Outcome       string  `json:"outcome"`
	Edits         []Edit  `json:"edits,omitempty"`
	CostUSD       float64 `json:"cost_usd,omitempty"`
	Turns         int     `json:"turns,omitempty"`
	Message       string  `json:"message,omitempty"`
	InputTokens   int     `json:"input_tokens,omitempty"`
	OutputTokens  int     `json:"output_tokens,omitempty"`
	RetryAt       string  `json:"retry_at,omitempty"`       // codex/claude usage-limit reset text, e.g. "7:23 PM"
	CommitMessage string  `json:"commit_message,omitempty"` // aider's commit message
	// ReachModel makes the tool ask its model's address once before it
	// works; a request that does not get through fails the run as the
	// tool's own connection error does.
	ReachModel bool `json:"reach_model,omitempty"`
}

// Scripts is the whole file: one Script per tool name.
type Scripts map[string]Script

// invocation is what the stand-in records about one run, for tests to
// assert what wo passed. Environment values are never recorded.
type invocation struct {
	Tool      string   `json:"tool"`
	Argv      []string `json:"argv"`
	EnvNames  []string `json:"env_names"`
	Cwd       string   `json:"cwd"`
	StdinRead bool     `json:"stdin_read"`
	Outcome   string   `json:"outcome"`
	Model     string   `json:"model,omitempty"` // what the model's address answered (reach_model)
	Exit      int      `json:"exit"`
	Time      string   `json:"time"`
}

// proc is the process's surroundings, shared by the three imitations.
type proc struct {
	tool    string
	args    []string
	binDir  string
	cwd     string
	stdin   *trackedReader
	stdout  io.Writer
	stderr  io.Writer
	script  Script
	scriptE error
	model   string
}

type trackedReader struct {
	r     io.Reader
	tty   bool
	read  bool
	cache *string
}

// ReadAll reads stdin to EOF once and remembers it.
func (t *trackedReader) ReadAll() string {
	if t.cache != nil {
		return *t.cache
	}
	t.read = true
	b, _ := io.ReadAll(t.r)
	s := string(b)
	t.cache = &s
	return s
}

// Main runs the stand-in named by argv[0]'s base name and returns the exit
// code.
func Main(argv []string) int {
	name := filepath.Base(argv[0])
	name = strings.TrimSuffix(name, ".exe")
	cwd, _ := os.Getwd()
	p := &proc{
		tool:   name,
		args:   argv[1:],
		binDir: invokedDir(argv[0]),
		cwd:    cwd,
		stdin:  &trackedReader{r: os.Stdin, tty: isatty.IsTerminal(os.Stdin.Fd()) || isatty.IsCygwinTerminal(os.Stdin.Fd())},
		stdout: os.Stdout,
		stderr: os.Stderr,
	}
	p.script, p.scriptE = loadScript(p.binDir, name)
	if p.script.ReachModel {
		answer, err := reachModel(name)
		p.model = answer
		if err != nil {
			fmt.Fprintf(p.stderr, "API Error: Connection error. (%v)\n", err)
			p.record(1)
			return 1
		}
	}
	var code int
	switch name {
	case "claude":
		code = runClaude(p)
	case "codex":
		code = runCodex(p)
	case "aider":
		code = runAider(p)
	default:
		fmt.Fprintf(os.Stderr, "agent-standin: a test double; invoke it as claude, codex or aider (got %q)\n", name)
		return 2
	}
	p.record(code)
	return code
}

// invokedDir is the folder of the executable as invoked: argv[0]'s folder if
// it has one, else the PATH entry that supplied it, without following a
// symbolic link to its target's folder.
func invokedDir(argv0 string) string {
	if strings.ContainsRune(argv0, os.PathSeparator) {
		if abs, err := filepath.Abs(filepath.Dir(argv0)); err == nil {
			return abs
		}
		return filepath.Dir(argv0)
	}
	if lp, err := exec.LookPath(argv0); err == nil {
		if abs, err := filepath.Abs(filepath.Dir(lp)); err == nil {
			return abs
		}
	}
	if exe, err := os.Executable(); err == nil {
		return filepath.Dir(exe)
	}
	return "."
}

func loadScript(dir, tool string) (Script, error) {
	b, err := os.ReadFile(filepath.Join(dir, ScriptFile))
	if errors.Is(err, os.ErrNotExist) {
		return Script{Outcome: OutcomeFix}, nil
	}
	if err != nil {
		return Script{Outcome: OutcomeFix}, err
	}
	var all Scripts
	if err := json.Unmarshal(b, &all); err != nil {
		return Script{Outcome: OutcomeFix}, fmt.Errorf("%s: %w", ScriptFile, err)
	}
	s, ok := all[tool]
	if !ok || s.Outcome == "" {
		s.Outcome = OutcomeFix
	}
	return s, nil
}

func (p *proc) record(code int) {
	names := make([]string, 0, 32)
	for _, kv := range os.Environ() {
		if i := strings.IndexByte(kv, '='); i > 0 {
			names = append(names, kv[:i])
		}
	}
	sort.Strings(names)
	inv := invocation{
		Tool: p.tool, Argv: append([]string{p.tool}, p.args...), EnvNames: names,
		Cwd: p.cwd, StdinRead: p.stdin.read, Outcome: p.script.Outcome, Model: p.model, Exit: code,
		Time: time.Now().UTC().Format(time.RFC3339Nano),
	}
	line, err := json.Marshal(inv)
	if err != nil {
		return
	}
	f, err := os.OpenFile(filepath.Join(p.binDir, LogFile), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return // the folder is not writable: record nothing
	}
	defer f.Close()
	_, _ = f.Write(append(line, '\n'))
}

// applied is one edit as made (or refused).
type applied struct {
	Path    string // as scripted (relative)
	Abs     string
	Created bool
	Err     error
}

// resolveInside joins rel to root and refuses a path that leaves root,
// also through a symbolic link in an existing parent folder.
func resolveInside(root, rel string) (string, error) {
	if rel == "" || filepath.IsAbs(rel) {
		return "", fmt.Errorf("path %q is not relative to the working folder", rel)
	}
	clean := filepath.Clean(filepath.Join(root, rel))
	r, err := filepath.Rel(root, clean)
	if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(os.PathSeparator)) {
		return "", fmt.Errorf("path %q leaves the working folder", rel)
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", err
	}
	dir := filepath.Dir(clean)
	for {
		if _, err := os.Lstat(dir); err == nil {
			break
		}
		dir = filepath.Dir(dir)
	}
	realDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", err
	}
	if r, err := filepath.Rel(realRoot, realDir); err != nil || r == ".." || strings.HasPrefix(r, ".."+string(os.PathSeparator)) {
		return "", fmt.Errorf("path %q leaves the working folder through a link", rel)
	}
	if fi, err := os.Lstat(clean); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		return "", fmt.Errorf("path %q is a symbolic link", rel)
	}
	return clean, nil
}

// applyEdits makes the scripted edits under root. An edit whose text is
// not found, or whose path leaves root, is refused and reported.
func applyEdits(root string, edits []Edit) []applied {
	var out []applied
	for _, e := range edits {
		a := applied{Path: e.Path}
		abs, err := resolveInside(root, e.Path)
		if err != nil {
			a.Err = err
			out = append(out, a)
			continue
		}
		a.Abs = abs
		old, rerr := os.ReadFile(abs)
		switch {
		case e.Find == "":
			a.Created = errors.Is(rerr, os.ErrNotExist)
			if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
				a.Err = err
			} else {
				a.Err = os.WriteFile(abs, []byte(e.Replace), 0o644)
			}
		case rerr != nil:
			a.Err = fmt.Errorf("cannot read %s: %w", e.Path, rerr)
		case !strings.Contains(string(old), e.Find):
			a.Err = fmt.Errorf("the text to replace was not found in %s", e.Path)
		default:
			mode := os.FileMode(0o644)
			if fi, err := os.Stat(abs); err == nil {
				mode = fi.Mode().Perm()
			}
			a.Err = os.WriteFile(abs, []byte(strings.Replace(string(old), e.Find, e.Replace, 1)), mode)
		}
		out = append(out, a)
	}
	return out
}

func okEdits(as []applied) []applied {
	var out []applied
	for _, a := range as {
		if a.Err == nil {
			out = append(out, a)
		}
	}
	return out
}

// newUUID returns a random version-4 UUID.
func newUUID() string {
	var b [16]byte
	f, err := os.Open("/dev/urandom")
	if err == nil {
		_, _ = io.ReadFull(f, b[:])
		f.Close()
	} else {
		n := time.Now().UnixNano()
		for i := range b {
			b[i] = byte(n >> (i % 8 * 8))
		}
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

func homeDir() string {
	if h := os.Getenv("HOME"); h != "" {
		return h
	}
	h, _ := os.UserHomeDir()
	return h
}

// gitRoot walks up from dir to the folder holding .git, or "".
func gitRoot(dir string) string {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

func orInt(n, d int) int {
	if n == 0 {
		return d
	}
	return n
}

// modelAddress is where each tool sends its model requests: the variable
// it reads, its default, and the request's path.
var modelAddress = map[string]struct{ env, def, path string }{
	"claude": {"ANTHROPIC_BASE_URL", "https://api.anthropic.com", "/v1/messages"},
	"codex":  {"OPENAI_BASE_URL", "https://api.openai.com/v1", "/responses"},
	"aider":  {"OPENAI_API_BASE", "https://api.openai.com/v1", "/chat/completions"},
}

// reachModel makes the one request of reach_model and returns the
// status it got.
func reachModel(tool string) (string, error) {
	a := modelAddress[tool]
	base := orDefault(os.Getenv(a.env), a.def)
	proxy := func(r *http.Request) (*url.URL, error) {
		names := []string{"HTTP_PROXY", "http_proxy"}
		if r.URL.Scheme == "https" {
			names = []string{"HTTPS_PROXY", "https_proxy"}
		}
		for _, name := range names {
			if v := os.Getenv(name); v != "" {
				return url.Parse(v)
			}
		}
		return nil, nil
	}
	client := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{Proxy: proxy}}
	resp, err := client.Post(strings.TrimRight(base, "/")+a.path, "application/json", strings.NewReader(`{"model":"stand-in","stream":false}`))
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		return resp.Status, fmt.Errorf("%s from %s", resp.Status, base)
	}
	return resp.Status, nil
}
