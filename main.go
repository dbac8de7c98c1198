// Command wo runs work orders kept in the Persephone task store.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/wo-runner/wo/commands"
	"github.com/wo-runner/wo/internal/sandbox"
)

// startProfile is set only in profiling builds (-tags woprofile).
var startProfile = func() (stop func()) { return func() {} }

func main() {
	// Non-dumpable: a process of the same user (an agent wo runs, say)
	// cannot read wo's environment, and its token, from /proc.
	_ = sandbox.HardenSelf()
	stopProfile := startProfile()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := commands.Main(ctx, os.Args, os.Stdin, os.Stdout, os.Stderr)
	stop()
	stopProfile()
	os.Exit(code)
}
