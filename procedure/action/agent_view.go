package action

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/wo-runner/wo/agent"
	"github.com/wo-runner/wo/internal/egress"
	"github.com/wo-runner/wo/internal/sandbox"
	"github.com/wo-runner/wo/termtext"
)

// proxyPort is where wo's proxy is served on the box's own loopback.
const proxyPort = 3128

// agentLaunch is the agent's process as wo starts it, and what goes with
// it: variables for its environment, the proxy that is its way out, the
// folder its view was built in.
type agentLaunch struct {
	cmd   *exec.Cmd
	env   []string
	proxy *egress.Proxy
	root  string
}

// finish ends what the launch started, once the agent has ended: the
// proxy, whose refusals go into the task's activity log and, once, into
// the run's warnings (each host with the flag that allows it).
func (l agentLaunch) finish(ctx context.Context, sc *StepContext) {
	if l.proxy != nil {
		l.proxy.Close()
		refused := l.proxy.Refusals()
		var said []string
		for _, r := range refused {
			hostPort := net.JoinHostPort(r.Host, strconv.Itoa(r.Port))
			sc.Log(ctx, "agent_connection_refused", map[string]any{"host": r.Host, "port": r.Port, "count": r.Count, "why": r.Why})
			if len(said) < 5 {
				said = append(said, fmt.Sprintf("%s (%d×: %s)", termtext.Line(hostPort), r.Count, r.Why))
			}
		}
		if len(refused) > len(said) {
			said = append(said, fmt.Sprintf("and %d more (wo log %s)", len(refused)-len(said), sc.Key()))
		}
		if len(said) > 0 {
			sc.Warn("the agent's proxy refused connections to %s", strings.Join(said, "; "))
		}
	}
	if l.root != "" {
		os.RemoveAll(l.root)
	}
}

// CheckAgentHost says why --agent-allow-host cannot take h, or nil.
func CheckAgentHost(h string) error {
	if _, err := egress.ParseHost(h); err != nil {
		return fmt.Errorf("--agent-allow-host: %v", err)
	}
	return nil
}

// agentView is the agent's box: what it sees read-only (the system's
// folders, the toolchains on its PATH, its own program, the repository's
// .git, what --agent-readable lends) besides what it may write, and its
// proxy, served on a socket in its own folder, to the hosts its profile
// names, the gateways its variables name and --agent-allow-host's. env is
// the agent's environment.
func agentView(sc *StepContext, box agentBox, p *agent.Profile, argv, env []string) (*sandbox.View, agentLaunch, error) {
	getenv := envLookup(env)
	readOnly := slices.Concat(sandbox.SystemFolders, pathFolders(getenv("PATH"), sc.Getenv("HOME")),
		programFolders(argv[0], getenv("PATH")), sc.Settings().AgentReadable)
	// The repository's common .git (objects, refs, config, and the
	// worktree's admin folder in it), as wo opened it: never where the
	// worktree's .git file says, which the agent of an earlier round could
	// write.
	if repo, err := sc.Repo(); err == nil {
		readOnly = append(readOnly, repo.GitDir)
	}
	root, err := os.MkdirTemp("", "wo-view-")
	if err != nil {
		return nil, agentLaunch{}, fmt.Errorf("making the agent's box for task %s: %w", sc.Key(), err)
	}
	launch := agentLaunch{root: root}
	sockDir := filepath.Join(box.root, "proxy")
	if err := os.Mkdir(sockDir, 0o700); err != nil {
		launch.finish(context.Background(), sc)
		return nil, agentLaunch{}, fmt.Errorf("making the agent's proxy for task %s: %w", sc.Key(), err)
	}
	sock := filepath.Join(sockDir, "proxy.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		launch.finish(context.Background(), sc)
		return nil, agentLaunch{}, fmt.Errorf("making the agent's proxy for task %s: %w", sc.Key(), err)
	}
	launch.proxy = egress.New(agentHosts(p, getenv, sc.Settings().AgentHosts))
	launch.proxy.Serve(ln)
	proxy := "http://127.0.0.1:" + strconv.Itoa(proxyPort)
	for _, name := range []string{"HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"} {
		launch.env = append(launch.env, name+"="+proxy)
	}
	// Everything goes through the proxy (a gateway on loopback too: the
	// box's loopback is not the host's), and Node's own fetch reads the
	// variables only when told.
	launch.env = append(launch.env, "NO_PROXY=", "no_proxy=", "NODE_USE_ENV_PROXY=1")
	view := &sandbox.View{Root: root, ReadOnly: readOnly, ProxySocket: sock, ProxyPort: proxyPort}
	return view, launch, nil
}

// envLookup reads a variable of an environment list (the last wins, as
// os/exec takes it).
func envLookup(env []string) func(string) string {
	return func(name string) string {
		for i := len(env) - 1; i >= 0; i-- {
			if v, ok := strings.CutPrefix(env[i], name+"="); ok {
				return v
			}
		}
		return ""
	}
}

// pathFolders are the folders of a PATH the box shows, read-only, so that
// the toolchains the agent runs are there (a Go or Node install in a
// folder of its own, ~/go/bin): absolute ones only, and never one that
// holds the user's HOME (a PATH entry of the home itself would show all
// of it).
func pathFolders(path, home string) []string {
	var out []string
	for _, d := range filepath.SplitList(path) {
		if !filepath.IsAbs(d) {
			continue
		}
		d = filepath.Clean(d)
		if d == "/" || (home != "" && within(home, d)) {
			continue
		}
		out = append(out, d)
	}
	return out
}

// programFolders are what the agent's program needs shown: the program
// itself, and where it really is when it is a link (the files, not their
// folders: a script kept in a folder of the user's must not show its
// neighbours); an npm package's whole node_modules, since its entry point
// loads its neighbours.
func programFolders(program, path string) []string {
	found := program
	if !strings.Contains(program, "/") {
		found = ""
		for _, d := range filepath.SplitList(path) {
			if c := filepath.Join(d, program); filepath.IsAbs(c) && isExecutable(c) {
				found = c
				break
			}
		}
	}
	if found == "" || !filepath.IsAbs(found) {
		return nil
	}
	out := []string{found}
	if real, err := filepath.EvalSymlinks(found); err == nil {
		out = append(out, real)
		for _, p := range []string{found, real} {
			if i := strings.LastIndex(p, "/node_modules/"); i >= 0 {
				out = append(out, p[:i+len("/node_modules")])
			}
		}
	}
	return out
}

func isExecutable(path string) bool {
	info, err := os.Stat(path)
	return err == nil && !info.IsDir() && info.Mode()&0o111 != 0
}

// within reports whether path is dir or beneath it.
func within(path, dir string) bool {
	return path == dir || dir == "/" || strings.HasPrefix(path, dir+"/")
}

// agentHosts are the HOST:PORT the agent's proxy lets through: its
// profile's API hosts (those naming a variable, such as a region, only
// when it is set), the host of each gateway variable it has set
// (ANTHROPIC_BASE_URL, OPENAI_BASE_URL, …), and what the user allows.
func agentHosts(p *agent.Profile, getenv func(string) string, allowed []string) []string {
	var out []string
	for _, h := range p.Hosts {
		if h = expandHost(h, getenv); h != "" {
			out = append(out, h)
		}
	}
	for _, name := range p.GatewayVars {
		if h := urlHost(getenv(name)); h != "" {
			out = append(out, h)
		}
	}
	for _, h := range allowed {
		if key, err := egress.ParseHost(h); err == nil {
			out = append(out, key)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// expandHost fills ${NAME} in a profile's host from the agent's
// environment; "" when one is unset.
func expandHost(h string, getenv func(string) string) string {
	missing := false
	out := os.Expand(h, func(name string) string {
		v := getenv(name)
		if v == "" || strings.ContainsAny(v, "/:@ ") {
			missing = true
		}
		return v
	})
	if missing {
		return ""
	}
	key, err := egress.ParseHost(out)
	if err != nil {
		return ""
	}
	return key
}

// urlHost is the HOST:PORT of a base URL ("" when it is not one).
func urlHost(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Hostname() == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return ""
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	key, err := egress.ParseHost(net.JoinHostPort(u.Hostname(), port))
	if err != nil {
		return ""
	}
	return key
}
