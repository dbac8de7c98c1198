package workorder

import (
	"slices"
	"sort"
)

// A dependency can be written on either side: B's blocked_by names A, or
// A's blocks names B, or the store holds an edge B → A. All three mean the
// same thing, "B waits for A", and Graph is the one place that reads them,
// so that wo run, epic waves, wo status and every export draw the same
// graph.

// BlockedByOf reads work_order.dependencies.blocked_by of a document.
func BlockedByOf(doc Document) []string { return stringsAt(doc, "work_order.dependencies.blocked_by") }

// BlocksOf reads work_order.dependencies.blocks of a document.
func BlocksOf(doc Document) []string { return stringsAt(doc, "work_order.dependencies.blocks") }

func stringsAt(doc Document, path string) []string {
	var out []string
	switch list := Get(doc, path).(type) {
	case []any:
		for _, x := range list {
			if s, ok := x.(string); ok && s != "" {
				out = append(out, s)
			}
		}
	case []string:
		out = append(out, list...)
	}
	return out
}

// Graph says who waits for whom among a set of documents.
type Graph struct {
	waitsFor map[string][]string
}

// NewGraph builds the graph of docs: each document's blocked_by, each
// document's blocks read backwards, and edges (task → the tasks it is
// blocked by, as the store's edges collection holds them; may be nil).
func NewGraph(docs []Document, edges map[string][]string) *Graph {
	g := &Graph{waitsFor: map[string][]string{}}
	for _, d := range docs {
		k := Key(d)
		g.add(k, BlockedByOf(d)...)
		for _, waiter := range BlocksOf(d) {
			g.add(waiter, k)
		}
	}
	for k, blockers := range edges {
		g.add(k, blockers...)
	}
	for k, list := range g.waitsFor {
		sort.Strings(list)
		g.waitsFor[k] = slices.Compact(list)
	}
	return g
}

func (g *Graph) add(task string, blockers ...string) {
	for _, b := range blockers {
		if b != "" && b != task {
			g.waitsFor[task] = append(g.waitsFor[task], b)
		}
	}
}

// BlockersOf lists the tasks that key waits for, sorted.
func (g *Graph) BlockersOf(key string) []string { return slices.Clone(g.waitsFor[key]) }

// Within restricts the graph to the given keys: what each waits for among
// them, for ordering a set of tasks into waves.
func (g *Graph) Within(keys map[string]bool) map[string][]string {
	out := map[string][]string{}
	for k := range keys {
		for _, b := range g.waitsFor[k] {
			if keys[b] {
				out[k] = append(out[k], b)
			}
		}
	}
	return out
}

// Done says whether a task is finished as far as the tasks that wait for it
// are concerned: closed, or its pull request merged (sync closes it next).
func Done(doc Document) bool {
	if doc == nil {
		return false
	}
	return StatusOf(doc) == StatusClosed || String(doc, "work_order.state.pr_state") == PRStateMerged
}
