package integration

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wo-runner/wo/internal/gittest"
	"github.com/wo-runner/wo/internal/sandbox"
)

// The agent in a box, through the wo binary: an agent that does the
// honest fix, then reaches for everything wo can reach — wo's token in
// /proc, the store, the repository's shared .git (a ref, a hook, a loose
// object), a process that outlives it and moves the branch before the
// loop's push comes round again, a local TCP service. The honest part
// lands; nothing else happens.

// boxTask is a work order with a review comment to fix, the paths the
// attacks aim at, and a listener on loopback that counts connections.
type boxTask struct {
	f        *fixture
	key      string
	agent    string // the agent script's path
	out      string // where the agent reports what it managed (writable for it)
	port     int
	accepted *atomic.Int64
}

func newBoxTask(t *testing.T, key string) *boxTask {
	t.Helper()
	f, agent := loopTask(t, key)
	return boxFor(t, f, key, agent)
}

// boxFor is a boxTask of a work order already imported into f, whose
// agent script is to be written at agent.
func boxFor(t *testing.T, f *fixture, key, agent string) *boxTask {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var accepted atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	return &boxTask{f: f, key: key, agent: agent, out: t.TempDir(), port: ln.Addr().(*net.TCPAddr).Port, accepted: &accepted}
}

// attacks is the agent's misbehaviour after its fix; each that works
// leaves a file named after it in out.
func (b *boxTask) attacks(t *testing.T) string {
	t.Helper()
	head := gittest.Run(t, b.f.repo, "rev-parse", "review/01-foundation")
	object := filepath.Join(b.f.repo, ".git", "objects", head[:2], head[2:])
	if _, err := os.Stat(object); err != nil {
		// Packed: aim at the pack instead.
		packs, _ := filepath.Glob(filepath.Join(b.f.repo, ".git", "objects", "pack", "*.pack"))
		if len(packs) == 0 {
			t.Fatalf("no object file for %s", head)
		}
		object = packs[0]
	}
	wt := filepath.Join(b.f.wtRoot, "pr-01-foundation")
	r := strings.NewReplacer("OUT", b.out, "STORE", b.f.store, "REPO", b.f.repo, "OBJECT", object, "WT", wt, "PORT", strconv.Itoa(b.port))
	return r.Replace(`
# wo's token, from the environment of any process it can read
token=$(for e in /proc/[0-9]*/environ; do tr '\0' '\n' < "$e" 2>/dev/null; done | sed -n 's/^GITHUB_TOKEN=//p' | head -n 1)
if [ -n "$token" ]; then echo "$token" > OUT/token; echo "// $token" >> foundation/new0.go; fi
# the store, and its folder
printf forged >> STORE 2>/dev/null && touch OUT/store || true
touch "$(dirname STORE)/evil" 2>/dev/null && touch OUT/store-folder || true
# the repository's shared .git: a ref later work orders start from, a hook, a loose object
git -C REPO branch evil >/dev/null 2>&1 && touch OUT/ref || true
{ printf '#!/bin/sh\ntouch OUT/hook-ran\n' > REPO/.git/hooks/post-checkout; } 2>/dev/null && touch OUT/hook || true
printf x >> OBJECT 2>/dev/null && touch OUT/object || true
# a local service
bash -c 'echo hello > /dev/tcp/127.0.0.1/PORT' 2>/dev/null && touch OUT/tcp || true
# a process that outlives the agent and, later, moves the branch
setsid sh -c 'echo $$ > OUT/leftover-pid; sleep 2; mkdir -p WT/.github/workflows; echo "on: push" > WT/.github/workflows/x.yml; git -C WT add -A; git -C WT -c user.name=x -c user.email=x@x commit -qm late && touch OUT/late-commit' </dev/null >/dev/null 2>&1 &
sleep 0.2
`)
}

const boxToken = "ghs_wo_own_token_1234567890abcdefABCDEF"

func TestAnAgentInTheBoxReachesNothingButItsWorktree(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("the attack's TCP probe is written for bash, which this machine lacks")
	}
	if _, ok, why := sandbox.Status(); !ok {
		t.Skip("this machine cannot confine an agent, so there is no box to test: " + why)
	}
	b := newBoxTask(t, "task_box")
	f := b.f
	writeAgent(t, b.agent, b.attacks(t))
	hooksBefore, _ := os.ReadDir(filepath.Join(f.repo, ".git", "hooks"))
	r := f.wo([]string{"WO_AGENT=" + b.agent, "GITHUB_TOKEN=" + boxToken, "WO_AGENT_WRITABLE=" + b.out}, "run", b.key)
	if r.code != 0 {
		t.Fatalf("exit %d:\n%s", r.code, r.stderr)
	}
	if strings.Contains(r.stderr, "runs unconfined") {
		t.Errorf("wo says the agent ran unconfined on a machine with Landlock:\n%s", r.stderr)
	}
	// The honest part of the fix landed.
	if got := gittest.Run(t, f.origin, "show", "review/01-foundation:foundation/new0.go"); !strings.Contains(got, "const Named = 1") {
		t.Errorf("the fix is not on the remote:\n%s", got)
	}
	// The token is nowhere on the remote: in no object of any kind.
	all := exec.Command("git", "cat-file", "--batch-all-objects", "--batch")
	all.Dir = f.origin
	objects, err := all.Output()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(objects), boxToken) {
		t.Error("wo's token reached the remote")
	}
	// Each attack failed: what the agent reports, and the world itself.
	for _, name := range []string{"token", "store", "store-folder", "ref", "hook", "object", "tcp"} {
		if _, err := os.Stat(filepath.Join(b.out, name)); err == nil {
			t.Errorf("the agent managed %s", name)
		}
	}
	if n := b.accepted.Load(); n != 0 {
		t.Errorf("the local listener accepted %d connection(s) from the agent", n)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(f.store), "evil")); err == nil {
		t.Error("the agent wrote into the store's folder")
	}
	if st := stateOf(f.doc(b.key)); st["pushed_sha"] != gittest.Run(t, f.origin, "rev-parse", "review/01-foundation") {
		t.Errorf("the store's pushed_sha %v is not the remote's tip", st["pushed_sha"])
	}
	if refs := gittest.Run(t, f.repo, "branch", "--list", "evil"); refs != "" {
		t.Errorf("the agent made a branch in the repository: %s", refs)
	}
	if hooks, _ := os.ReadDir(filepath.Join(f.repo, ".git", "hooks")); len(hooks) != len(hooksBefore) {
		t.Errorf("the repository's hooks changed: %d, were %d", len(hooks), len(hooksBefore))
	}
	gittest.Run(t, f.repo, "fsck", "--no-progress", "--no-dangling")
	// Nothing of the agent is alive once wo has exited, setsid or not, and
	// what it meant to do later never happened.
	if readFileOr(filepath.Join(b.out, "leftover-pid")) == "" {
		t.Fatal("the agent's setsid process never started")
	}
	if left := f.agentProcesses(); len(left) != 0 {
		t.Errorf("the agent's processes %v outlived wo", left)
	}
	time.Sleep(2500 * time.Millisecond) // past when it would have committed
	if _, err := os.Stat(filepath.Join(b.out, "late-commit")); err == nil {
		t.Error("the agent's leftover process committed after the agent ended")
	}
	if files := gittest.Run(t, f.origin, "ls-tree", "-r", "--name-only", "review/01-foundation"); strings.Contains(files, ".github") {
		t.Errorf("a workflow reached the remote:\n%s", files)
	}
}

// On a machine without Landlock: wo says plainly that the agent runs
// unconfined, and in GitHub Actions refuses to run it so unless told.
func TestWithoutLandlockWoWarnsAndRefusesInActions(t *testing.T) {
	t.Parallel()
	b := newBoxTask(t, "task_nobox")
	f := b.f
	writeAgent(t, b.agent, `setsid sh -c 'echo $$ > OUT/leftover-pid; sleep 30' </dev/null >/dev/null 2>&1 &
sleep 0.2
`)
	writeFile(t, b.agent, strings.ReplaceAll(readFileOr(b.agent), "OUT", b.out))
	noLandlock := []string{"WO_AGENT=" + b.agent, "WO_FAULT_NO_LANDLOCK=1", "WO_AGENT_WRITABLE=" + b.out}
	before := remoteRefs(t, f)
	r := f.wo(append(noLandlock, "GITHUB_ACTIONS=true"), "run", b.key)
	if r.code != 1 || !strings.Contains(r.stderr, "refusing to run the agent unconfined in GitHub Actions") || !strings.Contains(r.stderr, "--agent-sandbox off") {
		t.Fatalf("in Actions: exit %d, want 1 refusing to run the agent unconfined:\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(b.out, "leftover-pid")); err == nil {
		t.Error("the agent ran")
	}
	if after := remoteRefs(t, f); after != before {
		t.Errorf("the remote changed:\n%s", after)
	}
	// Elsewhere it runs, saying so once; its processes still end with it.
	r = f.wo(noLandlock, "run", b.key)
	if r.code != 0 || strings.Count(r.stderr, "the agent runs unconfined") != 1 {
		t.Fatalf("outside Actions: exit %d, want 0 and one warning:\n%s", r.code, r.stderr)
	}
	if left := f.agentProcesses(); readFileOr(filepath.Join(b.out, "leftover-pid")) == "" || len(left) != 0 {
		t.Errorf("the unconfined agent's setsid process: started %q, alive %v after wo exited", readFileOr(filepath.Join(b.out, "leftover-pid")), left)
	}
	// --agent-sandbox on where there is none: an error, nothing run.
	seedComments(t, f, b.key, []any{map[string]any{"id": 12, "author": "coderabbitai", "path": "foundation/new0.go", "line": 3, "body": "Once more."}})
	if r := f.wo(append(noLandlock, "WO_AGENT_SANDBOX=on"), "run", b.key, "--from-step", "6"); r.code == 0 || !strings.Contains(r.stderr, "this machine cannot confine the agent") {
		t.Errorf("--agent-sandbox on without Landlock: exit %d\n%s", r.code, r.stderr)
	}
}

func readFileOr(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

// Where the system refuses user namespaces: wo says once which
// protections are off, the agent still runs under Landlock (it cannot
// write the store's folder), and in GitHub Actions it still runs so,
// confined; without Landlock either it is refused there.
func TestWithoutNamespacesWoSaysWhatIsOffAndLandlockStillHolds(t *testing.T) {
	t.Parallel()
	if _, ok, why := sandbox.Status(); !ok {
		t.Skip("this machine cannot confine an agent, so there is no Landlock to fall back on: " + why)
	}
	b := newBoxTask(t, "task_nons")
	f := b.f
	writeAgent(t, b.agent, strings.NewReplacer("OUT", b.out, "STOREDIR", filepath.Dir(f.store)).Replace(`touch STOREDIR/evil 2>/dev/null && touch OUT/store-folder || true
[ "$(cat /proc/1/comm)" = wo ] && touch OUT/in-a-box || true
`))
	env := []string{"WO_AGENT=" + b.agent, "WO_FAULT_NO_USERNS=1", "WO_AGENT_WRITABLE=" + b.out, "GITHUB_ACTIONS=true"}
	r := f.wo(env, "run", b.key)
	if r.code != 0 {
		t.Fatalf("exit %d:\n%s", r.code, r.stderr)
	}
	warn := "the agent has no box of its own here"
	if strings.Count(r.stderr, warn) != 1 {
		t.Errorf("want the warning once:\n%s", r.stderr)
	}
	for _, off := range []string{"read every file your user can", "unix sockets by path", "send UDP", "the launcher's sweep"} {
		if !strings.Contains(r.stderr, off) {
			t.Errorf("the warning does not say %q is off:\n%s", off, r.stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(b.out, "store-folder")); err == nil {
		t.Error("under Landlock alone the agent wrote the store's folder")
	}
	if _, err := os.Stat(filepath.Join(b.out, "in-a-box")); err == nil {
		t.Error("the agent ran in a PID namespace although namespaces were refused")
	}
	if got := gittest.Run(t, f.origin, "show", "review/01-foundation:foundation/new0.go"); !strings.Contains(got, "const Named = 1") {
		t.Errorf("the fix is not on the remote:\n%s", got)
	}
}
