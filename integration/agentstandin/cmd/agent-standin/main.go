// Command agent-standin is a TEST DOUBLE of three coding-agent command-line
// tools — Claude Code (claude), Codex CLI (codex) and Aider (aider) — for
// wo's tests. Copy or link it under those names into a folder placed first
// on PATH; it behaves as the one its name says, scripted by
// agent-standin.json in that folder. It is none of those tools: it calls no
// model and never uses the network. See package agentstandin.
package main

import (
	"os"

	"github.com/wo-runner/wo/integration/agentstandin"
)

func main() {
	os.Exit(agentstandin.Main(os.Args))
}
