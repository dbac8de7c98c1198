// Command gencli writes docs/cli.md, wo's command reference, from the
// app's own command and flag definitions:
//
//	go run ./scripts/gencli > docs/cli.md
package main

import (
	"fmt"

	"github.com/wo-runner/wo/commands"
)

func main() {
	fmt.Print(commands.CLIReference())
}
