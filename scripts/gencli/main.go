// Command gencli writes wo's generated documentation from the app's own
// definitions: docs/cli.md, the command reference, and the field and
// action reference inside docs/work-order.md.
//
//	go run ./scripts/gencli > docs/cli.md
//	go run ./scripts/gencli -fields docs/work-order.md
//	go run ./scripts/gencli -json docs/json
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/wo-runner/wo/commands"
)

func main() {
	fields := flag.String("fields", "", "rewrite the generated part of this guide (docs/work-order.md) in place")
	schemas := flag.String("json", "", "write the JSON Schemas of the commands' --json output into this folder (docs/json)")
	flag.Parse()
	if *schemas != "" {
		for name, text := range commands.PublishedSchemas() {
			if err := os.WriteFile(filepath.Join(*schemas, name), text, 0o644); err != nil {
				fmt.Fprintln(os.Stderr, "gencli:", err)
				os.Exit(1)
			}
		}
		return
	}
	if *fields == "" {
		fmt.Print(commands.CLIReference())
		return
	}
	guide, err := os.ReadFile(*fields)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gencli:", err)
		os.Exit(1)
	}
	out, ok := commands.WithFieldReference(string(guide))
	if !ok {
		fmt.Fprintf(os.Stderr, "gencli: %s has no generated part: put the lines\n%s\n%s\nwhere it goes\n", *fields, commands.FieldsBegin, commands.FieldsEnd)
		os.Exit(1)
	}
	if err := os.WriteFile(*fields, []byte(out), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "gencli:", err)
		os.Exit(1)
	}
}
