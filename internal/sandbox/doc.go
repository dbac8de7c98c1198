// Package sandbox runs an untrusted command — a coding agent — so that it
// cannot reach what wo itself can: wo's environment (its GitHub token),
// the task store, the repository's shared .git, local services, and the
// processes of wo's user.
//
// # The re-execs
//
// On Linux, [Command] runs the agent through small re-execs of the
// current binary. The hook lives in this package's init, so any binary that
// imports the package — wo, or a test binary — can serve; it looks only at
// os.Args[1] and never returns when that is one of its magic words, so none
// of the binary's normal start-up runs:
//
//	wo ──> [self] __wo_agent_launch <spec> -- argv…    the launcher: not confined
//	       └─> [self] __wo_agent_confine <spec> -- argv…   restricts itself, then execs argv
//
// With a [View] in the spec, the launcher clones a box in between (user,
// mount, PID, network, IPC and UTS namespaces; box_linux.go):
//
//	wo ──> launcher ──clone──> [self] __wo_agent_box <spec> -- argv…   pid 1: builds the view, serves the proxy
//	                           └─> [self] __wo_agent_confine …          Landlock, then execs argv
//
// The launcher is a child subreaper: every process the agent starts, setsid
// or double-forked, becomes the launcher's child when its parent exits, so
// once the agent exits the launcher kills whatever is left and exits with the
// agent's status. It forwards SIGTERM, SIGINT, SIGHUP and SIGQUIT to the
// agent's processes, and when wo dies (parent-death signal) it stops them
// and exits. The confine step restricts itself with Landlock and execs the
// agent, so the agent's whole tree is in a Landlock domain that neither wo
// nor the launcher is in. Landlock then denies the agent ptrace of — and so
// reading /proc/PID/environ, mem, fd of — any process outside its domain,
// and (ABI 6+) signalling them or connecting to their abstract unix
// sockets. Why not restrict the launcher: it must stay able to signal and
// reap the agent, and a domain cannot be left.
//
// # What is confined, what is not
//
// Confined: writing anywhere but the Spec's Writable paths (and a few
// devices every program needs); TCP connect() to any port not in the Spec's
// Ports (ABI 4+), Multipath TCP included; signals, ptrace and abstract unix sockets towards
// processes outside the domain; privileges: no_new_privs is set (setuid
// programs such as sudo do not elevate) and every capability is dropped, so
// a command run by root keeps uid 0 but not root's powers (with
// CAP_SYS_ADMIN or CAP_PERFMON, Linux 6.18 lets a confined process read
// other processes' /proc/PID/environ despite Landlock).
//
// Not confined by Landlock alone: reading — Landlock grants by hierarchy,
// and the agent needs its tools, so it may read every file its user may
// read. UDP, and so DNS, is not restricted at ABI 7. Unix sockets by path
// (a D-Bus, docker or ssh-agent socket) are not restricted below ABI 9, and
// this package asks for no more than ABI 7. A [View] closes these: the box
// holds only the folders it names, and its network only its own loopback,
// where the proxy's socket is the one way out; its PID namespace ends every
// process with the command. [Namespaces] says whether a box can be built.
//
// Landlock's TCP rules do not cover Multipath TCP: a seccomp filter makes
// such sockets (and io_uring) unavailable instead, on amd64, arm64,
// riscv64 and loong64 only. TCP bind and listen are allowed (test servers
// bind). Process, memory and CPU limits are not set. The command runs in a
// session of its own (no controlling terminal), and the seccomp filter
// refuses pushing input into a terminal (TIOCSTI, TIOCLINUX).
//
// Confinement fails closed: when a Spec asks for it and the kernel has no
// Landlock, or restricting fails, the agent is not started: the command
// exits 126 with a "wo sandbox: …" message on stderr. [Status] says
// beforehand whether confinement is available.
//
// On other systems there is no Landlock: [Command] runs the command
// directly (in its own process group where the system has them) and
// refuses a Spec that asks for confinement.
package sandbox
