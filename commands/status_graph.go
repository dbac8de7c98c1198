package commands

import (
	"strings"

	"github.com/wo-runner/wo/termtext"
	"github.com/wo-runner/wo/workorder"
)

// graphRows are the children when there are any, else the task itself.
func graphRows(rows []StatusRow) []StatusRow {
	if len(rows) > 1 {
		return rows[1:]
	}
	return rows
}

// graphEdge is a dependency: From must be done before To.
type graphEdge struct{ From, To string }

// graphEdges are the dependencies among rows, in row and blocker order:
// every one with all, else the transitive reduction, without an edge that
// a longer path from the same blocker already implies.
func graphEdges(rows []StatusRow, all bool) []graphEdge {
	blockers := map[string][]string{}
	for _, r := range rows {
		blockers[r.Key] = r.BlockedBy
	}
	// ancestors[k]: every task k depends on, directly or not.
	ancestors := map[string]map[string]bool{}
	var visit func(k string, onPath map[string]bool) map[string]bool
	visit = func(k string, onPath map[string]bool) map[string]bool {
		if a, ok := ancestors[k]; ok {
			return a
		}
		a := map[string]bool{}
		if onPath[k] {
			return a // a cycle (refused on import): stop here
		}
		onPath[k] = true
		for _, b := range blockers[k] {
			a[b] = true
			for x := range visit(b, onPath) {
				a[x] = true
			}
		}
		delete(onPath, k)
		ancestors[k] = a
		return a
	}
	var edges []graphEdge
	for _, r := range rows {
		for _, d := range r.BlockedBy {
			implied := false
			for _, other := range r.BlockedBy {
				if other != d && visit(other, map[string]bool{})[d] {
					implied = true
					break
				}
			}
			if all || !implied {
				edges = append(edges, graphEdge{From: d, To: r.Key})
			}
		}
	}
	return edges
}

// graphMark says whether a task is being run, waits for a blocker, or is
// blocked ("" for none of these).
func graphMark(r StatusRow) string {
	switch {
	case r.HeldBy != "":
		return "running"
	case r.Status == workorder.StatusBlocked:
		return "blocked"
	case len(r.WaitingFor) > 0:
		return "waiting"
	}
	return ""
}

func graphLabelStatus(r StatusRow) string {
	if m := graphMark(r); m != "" && m != string(r.Status) {
		return string(r.Status) + ", " + m
	}
	return string(r.Status)
}

// graphLine is untrusted text on one line of a graph's source: line
// breaks become spaces, every other control character is escaped.
func graphLine(s string) string {
	return termtext.Line(strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(s))
}
