package gittest

import (
	"fmt"
	"strings"
	"testing"
)

func TestRunCommitsAsTheFixedAuthorWhoeverRunsIt(t *testing.T) {
	t.Setenv("GIT_AUTHOR_NAME", "Someone Else") // Env must win over the machine's
	dir := t.TempDir()
	Run(t, dir, "init", "-q", "-b", "main")
	Run(t, dir, "commit", "-q", "--allow-empty", "-m", "first")
	if got := Run(t, dir, "log", "-1", "--format=%an <%ae>|%cn <%ce>|%s"); got != "Test <test@example.com>|Test <test@example.com>|first" {
		t.Errorf("the commit reads %q", got)
	}
}

func TestTryReportsWhatGitSaidWhenItFails(t *testing.T) {
	out, err := Try(t.TempDir(), "rev-parse", "HEAD")
	if err == nil || !strings.Contains(out, "not a git repository") {
		t.Errorf("rev-parse outside a repository: %q, %v", out, err)
	}
}

func TestOutputGivesGitItsInputAndReturnsStandardOutputOnly(t *testing.T) {
	dir := t.TempDir()
	Run(t, dir, "init", "-q")
	cmd := Command(dir, "hash-object", "--stdin")
	cmd.Stdin = strings.NewReader("hello\n")
	if got := Output(t, cmd); got != "ce013625030ba8dba906f756967f9e9ca394464a" {
		t.Errorf("hash-object of hello: %q", got)
	}
}

// fatalTB records a Fatalf instead of stopping the test.
type fatalTB struct {
	testing.TB
	fatal string
}

func (f *fatalTB) Helper()                           {}
func (f *fatalTB) Fatalf(format string, args ...any) { f.fatal = fmt.Sprintf(format, args...) }

func TestAFailingGitFailsTheTestNamingTheCommand(t *testing.T) {
	dir := t.TempDir()
	tb := &fatalTB{TB: t}
	Run(tb, dir, "rev-parse", "--verify", "nosuchref")
	if !strings.Contains(tb.fatal, "git rev-parse --verify nosuchref (in "+dir+")") {
		t.Errorf("Run's failure: %q", tb.fatal)
	}
	tb.fatal = ""
	Output(tb, Command(dir, "cat-file", "-p", "nosuchobject"))
	if !strings.Contains(tb.fatal, "git cat-file -p nosuchobject") || !strings.Contains(tb.fatal, "fatal:") {
		t.Errorf("Output's failure, which should carry git's standard error: %q", tb.fatal)
	}
}

func TestRawTreeWritesWhatGitWouldNot(t *testing.T) {
	dir := t.TempDir()
	Run(t, dir, "init", "-q")
	blob := Input(t, dir, []byte("hello\n"), "hash-object", "-w", "--stdin")
	if blob != "ce013625030ba8dba906f756967f9e9ca394464a" {
		t.Fatalf("hash-object -w of hello: %q", blob)
	}
	tree := RawTree(t, dir, [3]string{"100644", "b", blob}, [3]string{"100644", "a", blob}, [3]string{"100644", "a", blob})
	want := "100644 blob " + blob + "\tb\n100644 blob " + blob + "\ta\n100644 blob " + blob + "\ta"
	if got := Run(t, dir, "ls-tree", tree); got != want {
		t.Errorf("the tree holds\n%s\nwant its entries as given, out of order and twice:\n%s", got, want)
	}
	tb := &fatalTB{TB: t}
	RawTree(tb, dir, [3]string{"100644", "x", "not hex"})
	if !strings.Contains(tb.fatal, `tree entry x: object id "not hex"`) {
		t.Errorf("a bad object id: %q", tb.fatal)
	}
}
