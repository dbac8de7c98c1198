package integration

import (
	"bytes"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// A CI lint job has no checkout, no token and no store: wo validate
// --offline -f checks its documents there, in a process that reaches
// nothing — a valid document passes, one with an error fails with the
// document's code (2) — while the preflight of this machine, asked for,
// fails the same valid document with this machine's code (1).
func TestALintJobChecksDocumentsWithoutARepositoryATokenOrTheNetwork(t *testing.T) {
	t.Parallel()
	// A tripwire wherever wo could go: the store, GitHub, a proxy.
	trip, reached := tripwire(t)
	job, home := t.TempDir(), t.TempDir()
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "LANG=C",
		"WO_STORE=arangodb+http://" + trip, "WO_DATABASE=lint", "GITHUB_API_URL=http://" + trip + "/",
		"HTTP_PROXY=http://" + trip, "HTTPS_PROXY=http://" + trip, "ALL_PROXY=http://" + trip}
	lint := func(args ...string) woResult {
		t.Helper()
		cmd := exec.Command(woBin, args...)
		cmd.Dir, cmd.Env = job, env
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		return result(cmd, err, out.String(), errb.String())
	}

	// The README's example, its repository on the author's machine, and
	// the example documents of fixtures/, as written.
	hello := readmeExample(t, filepath.Join(job, "hello.json"), "/home/author/hello")
	for _, file := range []string{"hello.json", abs(t, "../fixtures/task_cr_01.json"), abs(t, "../fixtures/hermes-review.json")} {
		if r := lint("validate", "--offline", "-f", file); r.code != 0 || !strings.Contains(r.stdout, ": valid") {
			t.Errorf("wo validate --offline -f %s: exit %d, want 0\n%s%s", file, r.code, r.stdout, r.stderr)
		}
	}

	hello["work_order"].(map[string]any)["procedure"].([]any)[0].(map[string]any)["action"] = "make_worktree"
	writeJSON(t, filepath.Join(job, "broken.json"), hello)
	r := lint("validate", "--offline", "-f", "broken.json", "--json")
	env1 := envelopeOf(t, r)
	if r.code != 2 || env1.Error.Code != "INVALID_DOCUMENT" || !strings.Contains(env1.Error.Message, `step 1 action: unknown action "make_worktree"`) ||
		env1.kinds() != "document" {
		t.Errorf("a document with an error: exit %d, code %s, problems of %q, want 2, INVALID_DOCUMENT, document\n%s", r.code, env1.Error.Code, env1.kinds(), r.stdout)
	}

	if n := reached.Load(); n > 0 {
		t.Errorf("wo validate --offline made %d connection(s)", n)
	}
	if left, _ := os.ReadDir(home); len(left) > 0 {
		t.Errorf("wo validate --offline left %s in $HOME (a store?)", left[0].Name())
	}
	if left, _ := os.ReadDir(job); len(left) != 2 {
		t.Errorf("wo validate --offline wrote in the job's folder: %d entries, want hello.json and broken.json", len(left))
	}
	// With no network at all, where this machine allows a namespace for it.
	if exec.Command("unshare", "-rn", "true").Run() == nil {
		cmd := exec.Command("unshare", "-rn", woBin, "validate", "--offline", "-f", "hello.json")
		cmd.Dir, cmd.Env = job, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("wo validate --offline in a network namespace of its own: %v\n%s", err, out)
		}
	} else {
		t.Log("no network namespace here (unshare -rn): the tripwire alone shows that nothing was reached")
	}

	// The preflight of this machine, which a lint job leaves out: the
	// valid document is one this machine cannot run (no repository, no
	// token), exit 1, each problem the machine's.
	r = lint("validate", "-f", "hello.json", "--store", filepath.Join(t.TempDir(), "wo.db"), "--json")
	env2 := envelopeOf(t, r)
	if r.code != 1 || env2.Error.Code != "CANNOT_RUN_HERE" || env2.kinds() != "machine" ||
		!strings.Contains(env2.Error.Message, "the document is valid, but this machine cannot run it") ||
		!strings.Contains(env2.Error.Message, "opening repository /home/author/hello/repo") || !strings.Contains(env2.Error.Message, "no GitHub token") {
		t.Errorf("the preflight: exit %d, code %s, problems of %q, want 1, CANNOT_RUN_HERE, machine\n%s", r.code, env2.Error.Code, env2.kinds(), r.stdout)
	}
}

// tripwire listens on loopback and counts the connections made to it.
func tripwire(t *testing.T) (addr string, reached *atomic.Int32) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	reached = new(atomic.Int32)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			reached.Add(1)
			c.Close()
		}
	}()
	return ln.Addr().String(), reached
}

// readmeExample writes the tour's (docs/tour.md) hello.json to path, with dir for
// $T (the tour's folder), and returns it.
func readmeExample(t *testing.T, path, dir string) map[string]any {
	t.Helper()
	readme, err := os.ReadFile("../docs/tour.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(readme), "cat > hello.json <<EOF\n")
	body, _, ok2 := strings.Cut(rest, "\nEOF\n")
	if !ok || !ok2 {
		t.Fatal("docs/tour.md has no cat > hello.json <<EOF … EOF block")
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(strings.ReplaceAll(body, "$T", dir)), &doc); err != nil {
		t.Fatalf("the README's hello.json: %v", err)
	}
	writeJSON(t, path, doc)
	return doc
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, string(b))
}

func abs(t *testing.T, path string) string {
	t.Helper()
	p, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// lintEnvelope is what a test reads of wo validate's --json.
type lintEnvelope struct {
	Data []struct {
		Problems []struct {
			Severity, Kind string
		}
	}
	Error struct{ Code, Message string }
}

func envelopeOf(t *testing.T, r woResult) lintEnvelope {
	t.Helper()
	var env lintEnvelope
	if err := json.Unmarshal([]byte(r.stdout), &env); err != nil {
		t.Fatalf("not a --json envelope (exit %d): %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	return env
}

// kinds are the kinds of the envelope's errors, "," between.
func (e lintEnvelope) kinds() string {
	seen := map[string]bool{}
	var out []string
	for _, d := range e.Data {
		for _, p := range d.Problems {
			if p.Severity == "error" && !seen[p.Kind] {
				seen[p.Kind] = true
				out = append(out, p.Kind)
			}
		}
	}
	return strings.Join(out, ",")
}
