// Package gittest runs the real git command for tests, the same way in
// every package: in a given folder, with a fixed author and committer and
// without the machine's system configuration, so that what a test builds
// and checks with git does not depend on who runs it where.
package gittest

import (
	"bytes"
	"encoding/hex"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Env is what every test's git runs with, on top of the process's
// environment.
var Env = []string{
	"GIT_AUTHOR_NAME=Test", "GIT_AUTHOR_EMAIL=test@example.com",
	"GIT_COMMITTER_NAME=Test", "GIT_COMMITTER_EMAIL=test@example.com",
	"GIT_CONFIG_NOSYSTEM=1",
}

// Command is git with args in dir, its environment set (Env): for a test
// that adds to the environment or gives git standard input before it runs
// the command with Output.
func Command(dir string, args ...string) *exec.Cmd {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), Env...)
	return cmd
}

// Run runs git in dir and returns its output, standard output and error
// together, trimmed; it fails the test when git fails.
func Run(t testing.TB, dir string, args ...string) string {
	t.Helper()
	out, err := Try(dir, args...)
	if err != nil {
		t.Fatalf("git %s (in %s): %v\n%s", strings.Join(args, " "), dir, err, out)
	}
	return out
}

// Try runs git in dir and returns its trimmed output (standard output and
// error together) and its error, for a test that expects git to fail.
func Try(dir string, args ...string) (string, error) {
	out, err := Command(dir, args...).CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// Output runs a command made by Command and returns its standard output,
// trimmed; it fails the test, with git's standard error, when git fails.
func Output(t testing.TB, cmd *exec.Cmd) string {
	t.Helper()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %s (in %s): %v\n%s", strings.Join(cmd.Args[1:], " "), cmd.Dir, err, stderr.Bytes())
	}
	return strings.TrimSpace(string(out))
}

// Input runs git in dir with stdin as its standard input and returns its
// standard output, trimmed; it fails the test when git fails.
func Input(t testing.TB, dir string, stdin []byte, args ...string) string {
	t.Helper()
	cmd := Command(dir, args...)
	cmd.Stdin = bytes.NewReader(stdin)
	return Output(t, cmd)
}

// RawTree writes a tree object byte for byte as given, entries in order,
// each {mode, name, object id}, and returns its id: git hash-object
// --literally checks nothing, so a test can make the trees an attacker
// would (a name twice, a .git entry) that git itself never writes.
func RawTree(t testing.TB, repo string, entries ...[3]string) string {
	t.Helper()
	var b bytes.Buffer
	for _, e := range entries {
		id, err := hex.DecodeString(e[2])
		if err != nil {
			t.Fatalf("tree entry %s: object id %q: %v", e[1], e[2], err)
			return ""
		}
		b.WriteString(e[0] + " " + e[1] + "\x00")
		b.Write(id)
	}
	return Input(t, repo, b.Bytes(), "hash-object", "-t", "tree", "--literally", "-w", "--stdin")
}
