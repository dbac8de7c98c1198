package sandbox

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestCommandRefusesBadSpecs(t *testing.T) {
	t.Parallel()
	link := filepath.Join(t.TempDir(), "root")
	if err := os.Symlink("/", link); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		spec Spec
		argv []string
		want string
	}{
		{"root", Spec{Writable: []string{"/"}}, []string{"true"}, `"/"`},
		{"root uncleaned", Spec{Writable: []string{"/tmp/.."}}, []string{"true"}, `"/"`},
		{"root through a link", Spec{Writable: []string{link}}, []string{"true"}, "symbolic link"},
		{"empty", Spec{Writable: []string{""}}, []string{"true"}, "not absolute"},
		{"relative", Spec{Writable: []string{"work/tree"}}, []string{"true"}, "not absolute"},
		{"port zero", Spec{Ports: []int{0}}, []string{"true"}, "not a TCP port"},
		{"port too large", Spec{Ports: []int{65536}}, []string{"true"}, "not a TCP port"},
		{"no command", Spec{}, nil, "no command"},
		{"empty command", Spec{}, []string{""}, "no command"},
	} {
		cmd, err := Command(c.spec, c.argv)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Command(%+v, %q) = %v, %v; want an error saying %s", c.name, c.spec, c.argv, cmd, err, c.want)
		}
	}
}

func TestSpecCleansPaths(t *testing.T) {
	t.Parallel()
	got, err := Spec{Confine: true, Writable: []string{"/a/b/../c/", "/d//e"}, Ports: []int{1, 65535}}.clean()
	want := Spec{Confine: true, Writable: []string{"/a/c", "/d/e"}, Ports: []int{1, 65535}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("clean() = %+v, %v; want %+v", got, err, want)
	}
}

func TestReexecArgumentsRoundTrip(t *testing.T) {
	t.Parallel()
	w := wireSpec{Spec: Spec{Confine: true, Writable: []string{"/w"}, Ports: []int{443}}, Parent: 42}
	argv := []string{"agent", "--", "-p", "fix it"}
	args, err := reexecArgs(launchArg, w, argv)
	if err != nil {
		t.Fatal(err)
	}
	if args[0] != launchArg || args[2] != "--" {
		t.Fatalf("reexecArgs = %q", args)
	}
	gotW, gotArgv, err := parseReexec(args)
	if err != nil || !reflect.DeepEqual(gotW, w) || !reflect.DeepEqual(gotArgv, argv) {
		t.Errorf("parseReexec(%q) = %+v, %q, %v", args, gotW, gotArgv, err)
	}
}

func TestNotStartedTellsTheSandboxsRefusalFromTheCommands(t *testing.T) {
	for _, c := range []struct {
		exit   int
		stderr string
		words  string
		ok     bool
	}{
		{126, "wo sandbox: claude was not started: no Landlock\n", "claude was not started: no Landlock", true},
		{127, "wo sandbox: exec: \"claude\": executable file not found in $PATH\n", `exec: "claude": executable file not found in $PATH`, true},
		{126, "sh: permission denied\n", "", false}, // the command's own 126
		{1, "wo sandbox: not ours: the status is the command's\n", "", false},
		{0, "", "", false},
	} {
		words, ok := NotStarted(c.exit, c.stderr)
		if words != c.words || ok != c.ok {
			t.Errorf("NotStarted(%d, %q) = %q, %v; want %q, %v", c.exit, c.stderr, words, ok, c.words, c.ok)
		}
	}
}
