// Command wo runs work orders kept in the Persephone task store.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/wo-runner/wo/commands"
)

// startProfile is set only in profiling builds (-tags woprofile).
var startProfile = func() (stop func()) { return func() {} }

func main() {
	stopProfile := startProfile()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := commands.Main(ctx, os.Args, os.Stdin, os.Stdout, os.Stderr)
	stop()
	stopProfile()
	os.Exit(code)
}
