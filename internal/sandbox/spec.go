package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// Spec is what a confined command may do.
type Spec struct {
	// Confine turns Landlock on. False runs the command through the
	// launcher only (its processes are still ended with it), as for
	// --agent-sandbox=off or a kernel without Landlock.
	Confine bool `json:"confine"`
	// Writable are the folders and single files the command may write
	// beneath; everything else is read-only. Paths must be absolute and
	// not "/"; they are cleaned, and those that do not exist when the
	// command starts are skipped. A few devices are always writable:
	// /dev/null, /dev/zero, /dev/full, /dev/random, /dev/urandom,
	// /dev/tty, /dev/ptmx and /dev/pts (those that exist).
	Writable []string `json:"writable,omitempty"`
	// Ports are the TCP ports the command may connect to; none means no
	// TCP connect at all. Binding (listening) stays allowed.
	Ports []int `json:"ports,omitempty"`
}

// Magic first arguments of the two re-execs; no user types these.
const (
	launchArg  = "__wo_agent_launch"
	confineArg = "__wo_agent_confine"
)

// exitSandbox is the status of a command that the sandbox did not start
// (as a shell says of a command it cannot execute); exitNotFound when its
// program was not found.
const (
	exitSandbox  = 126
	exitNotFound = 127
)

// refusal starts what the sandbox says on stderr when it did not start a
// command.
const refusal = "wo sandbox: "

// NotStarted says whether a command run through Command ended with the
// sandbox's own refusal to start it (its program not found, confinement
// not possible) rather than by the command, and the sandbox's words.
func NotStarted(exit int, stderr string) (string, bool) {
	if exit != exitSandbox && exit != exitNotFound {
		return "", false
	}
	words, ok := strings.CutPrefix(stderr, refusal)
	if !ok {
		return "", false
	}
	return strings.TrimSpace(words), true
}

// devices are always writable: programs expect to write /dev/null and to
// open their terminal.
var devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/ptmx", "/dev/pts"}

// wireSpec is the spec as the re-execs receive it: one JSON argument,
// visible to anyone in /proc/PID/cmdline, so it holds no secrets.
type wireSpec struct {
	Spec
	// Parent is the pid of the process that started the launcher: if the
	// launcher's parent is another, that one died before the
	// parent-death signal was armed.
	Parent int `json:"parent"`
}

// clean checks and normalises a spec: absolute cleaned paths, ports in
// range.
func (s Spec) clean() (Spec, error) {
	out := Spec{Confine: s.Confine}
	for _, p := range s.Writable {
		if p == "" || !filepath.IsAbs(p) {
			return Spec{}, fmt.Errorf("writable path %q is not absolute", p)
		}
		p = filepath.Clean(p)
		if p == "/" {
			return Spec{}, errors.New(`writable path "/" would leave nothing read-only`)
		}
		if real, err := filepath.EvalSymlinks(p); err == nil && real == "/" {
			return Spec{}, fmt.Errorf(`writable path %q is "/" through a symbolic link`, p)
		}
		out.Writable = append(out.Writable, p)
	}
	for _, port := range s.Ports {
		if port < 1 || port > 65535 {
			return Spec{}, fmt.Errorf("port %d is not a TCP port", port)
		}
		out.Ports = append(out.Ports, port)
	}
	return out, nil
}

// checkCommand checks argv and spec as Command takes them, and cleans
// spec.
func checkCommand(spec Spec, argv []string) (Spec, error) {
	if len(argv) == 0 || argv[0] == "" {
		return Spec{}, errors.New("sandbox: no command to run")
	}
	spec, err := spec.clean()
	if err != nil {
		return Spec{}, fmt.Errorf("sandbox: %w", err)
	}
	return spec, nil
}

// reexecArgs are the arguments after the program's name: magic word, spec
// and the command after "--".
func reexecArgs(magic string, w wireSpec, argv []string) ([]string, error) {
	js, err := json.Marshal(w)
	if err != nil {
		return nil, err
	}
	return append([]string{magic, string(js), "--"}, argv...), nil
}

// parseReexec reads what reexecArgs wrote (args without the program's name).
func parseReexec(args []string) (wireSpec, []string, error) {
	if len(args) < 4 || args[2] != "--" {
		return wireSpec{}, nil, errors.New("malformed arguments: want <magic> <spec> -- <command>…")
	}
	var w wireSpec
	if err := json.Unmarshal([]byte(args[1]), &w); err != nil {
		return wireSpec{}, nil, fmt.Errorf("malformed spec: %w", err)
	}
	return w, args[3:], nil
}
