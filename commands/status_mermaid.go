package commands

import (
	"fmt"
	"strings"
)

var mermaidMarks = map[string]string{"running": "stroke:#06c,stroke-width:3px", "waiting": "stroke-dasharray:4 3",
	"blocked": "stroke:#c00,stroke-width:2px"}

// mermaidStatus is --format mermaid: the dependency graph, coloured by
// status, for a GitHub comment or Markdown file.
func mermaidStatus(rows []StatusRow, allEdges bool) string {
	var b strings.Builder
	b.WriteString("graph TD\n")
	nodes := graphRows(rows)
	for _, r := range nodes {
		fmt.Fprintf(&b, "  %s[\"%s<br/>%s\"]:::%s\n", mermaidID(r.Key), mermaidText(r.Title), mermaidText(graphLabelStatus(r)), mermaidID(string(r.Status)))
	}
	for _, e := range graphEdges(nodes, allEdges) {
		fmt.Fprintf(&b, "  %s --> %s\n", mermaidID(e.From), mermaidID(e.To))
	}
	used := map[string]bool{}
	for _, r := range nodes {
		if m := graphMark(r); m != "" {
			fmt.Fprintf(&b, "  class %s mark_%s\n", mermaidID(r.Key), m)
			used[m] = true
		}
	}
	b.WriteString("  classDef closed fill:#cfc\n  classDef in_review fill:#cef\n  classDef in_progress fill:#ffc\n  classDef blocked fill:#fcc\n  classDef open fill:#eee\n")
	for _, m := range []string{"running", "waiting", "blocked"} {
		if used[m] {
			fmt.Fprintf(&b, "  classDef mark_%s %s\n", m, mermaidMarks[m])
		}
	}
	return b.String()
}

// mermaidID is a key as a Mermaid node id: kept when it is plain letters,
// digits and _-, else a stable id made from its bytes, so that no key can
// end the statement or start another one.
func mermaidID(s string) string {
	plain := s != ""
	for _, r := range s {
		if !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			plain = false
			break
		}
	}
	if plain {
		return s
	}
	return fmt.Sprintf("id_%x", s)
}

// mermaidText is untrusted text inside a quoted Mermaid label: one line,
// with the characters Mermaid and its HTML labels read as entity codes.
func mermaidText(s string) string {
	s = graphLine(s)
	return strings.NewReplacer("#", "#35;", `"`, "#quot;", "<", "#lt;", ">", "#gt;", "&", "#amp;",
		"`", "#96;", "[", "#91;", "]", "#93;", "{", "#123;", "}", "#125;", "|", "#124;", ";", "#59;").Replace(s)
}
