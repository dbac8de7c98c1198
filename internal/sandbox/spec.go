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
	// /dev/ptmx and /dev/pts (those that exist; not /dev/tty: the command
	// runs in a session of its own, with no terminal).
	Writable []string `json:"writable,omitempty"`
	// Ports are the TCP ports the command may connect to; none means no
	// TCP connect at all. Binding (listening) stays allowed. In a View the
	// command has a network of its own, and Ports are not used.
	Ports []int `json:"ports,omitempty"`
	// View, when set, runs the command in namespaces of its own: a file
	// system that holds only what View and Writable name, a network with
	// nothing but its own loopback (and wo's proxy on it), and a PID
	// namespace whose every process ends when the command does.
	View *View `json:"view,omitempty"`
}

// View is the file system and network a command sees in its namespaces.
// Paths are shown at the same place as outside, so that the command's
// working folder, HOME and arguments need no translating.
type View struct {
	// ReadOnly are the folders and files bound read-only: the system's
	// folders and toolchains, the repository's .git, what the user lends.
	// Those that do not exist are skipped.
	ReadOnly []string `json:"read_only,omitempty"`
	// Root is an empty folder, outside every path bound, where the view
	// is built (the command never sees it).
	Root string `json:"root"`
	// ProxySocket is the unix socket of an HTTP proxy outside the box;
	// ProxyPort the port on the box's loopback where it is served (0:
	// no proxy, and the box has no way out at all).
	ProxySocket string `json:"proxy_socket,omitempty"`
	ProxyPort   int    `json:"proxy_port,omitempty"`
}

// SystemFolders are the folders a command's view holds read-only by
// default: the system's programs, libraries and configuration. Not
// /home, /root, /run, /var, /tmp or /mnt: other users', sockets, state.
var SystemFolders = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/nix/store"}

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
var devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/ptmx", "/dev/pts"}

// wireSpec is the spec as the re-execs receive it: one JSON argument,
// visible to anyone in /proc/PID/cmdline, so it holds no secrets.
type wireSpec struct {
	Spec
	// Parent is the pid of the process that started the launcher: if the
	// launcher's parent is another, that one died before the
	// parent-death signal was armed.
	Parent int `json:"parent"`
	// Probe makes the box build its view and exit 0 without running
	// the command: Namespaces's trial.
	Probe bool `json:"probe,omitempty"`
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
	if s.View != nil {
		v, err := s.View.clean()
		if err != nil {
			return Spec{}, err
		}
		out.View = &v
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

// clean checks a view: absolute paths, a root, a proxy port in range.
func (v View) clean() (View, error) {
	out := View{ProxyPort: v.ProxyPort}
	for _, p := range append([]string{v.Root}, v.ReadOnly...) {
		if p == "" || !filepath.IsAbs(p) {
			return View{}, fmt.Errorf("view path %q is not absolute", p)
		}
	}
	out.Root = filepath.Clean(v.Root)
	if out.Root == "/" {
		return View{}, errors.New(`the view cannot be built at "/"`)
	}
	for _, p := range v.ReadOnly {
		out.ReadOnly = append(out.ReadOnly, filepath.Clean(p))
	}
	if v.ProxyPort < 0 || v.ProxyPort > 65535 {
		return View{}, fmt.Errorf("proxy port %d is not a TCP port", v.ProxyPort)
	}
	if v.ProxyPort != 0 {
		if !filepath.IsAbs(v.ProxySocket) {
			return View{}, fmt.Errorf("proxy socket %q is not absolute", v.ProxySocket)
		}
		out.ProxySocket = filepath.Clean(v.ProxySocket)
	}
	return out, nil
}
