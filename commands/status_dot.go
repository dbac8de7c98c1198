package commands

import (
	"fmt"
	"strings"

	"github.com/wo-runner/wo/workorder"
)

// dotString is untrusted text as a quoted Graphviz string: quotes and
// backslashes escaped (a backslash would start \l, \N and friends), one
// line.
func dotString(s string) string { return `"` + dotInner(s) + `"` }

func dotInner(s string) string {
	s = graphLine(s)
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s)
}

// dotStatus is --format dot: the dependency graph for Graphviz.
func dotStatus(rows []StatusRow, allEdges bool) string {
	colours := map[workorder.Status]string{workorder.StatusClosed: "palegreen", workorder.StatusInReview: "lightblue",
		workorder.StatusInProgress: "lightyellow", workorder.StatusBlocked: "pink", workorder.StatusOpen: "white"}
	marks := map[string]string{"running": `, style="filled,bold", penwidth=3, color=blue`,
		"waiting": `, style="filled,dashed"`, "blocked": `, penwidth=2, color=red`}
	var b strings.Builder
	b.WriteString("digraph epic {\n  rankdir=LR;\n  node [shape=box, style=filled];\n")
	nodes := graphRows(rows)
	for _, r := range nodes {
		fill := colours[r.Status]
		if fill == "" {
			fill = "white"
		}
		label := dotInner(r.Key) + `\n` + dotInner(r.Title) + `\n` + dotInner(graphLabelStatus(r))
		fmt.Fprintf(&b, "  %s [label=\"%s\", fillcolor=%s%s];\n", dotString(r.Key), label, fill, marks[graphMark(r)])
	}
	for _, e := range graphEdges(nodes, allEdges) {
		fmt.Fprintf(&b, "  %s -> %s;\n", dotString(e.From), dotString(e.To))
	}
	b.WriteString("}\n")
	return b.String()
}
