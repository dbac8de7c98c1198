package commands

import (
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"
)

// diamondStore is an epic of four tasks, a → b → c → d, with the shortcuts
// a → c, a → d and b → d that the chain already implies; c is blocked.
func diamondStore(t *testing.T) string {
	t.Helper()
	db := newDB(t)
	docs := []any{fixtureDoc(t, "task_cr_epic")}
	for key, blockers := range map[string][]any{
		"task_a": {}, "task_b": {"task_a"}, "task_c": {"task_a", "task_b"}, "task_d": {"task_a", "task_b", "task_c"},
	} {
		d := fixtureDoc(t, "task_cr_01")
		d["_key"], d["title"] = key, "Task "+strings.TrimPrefix(key, "task_")
		d["work_order"].(map[string]any)["dependencies"] = map[string]any{"blocked_by": blockers, "blocks": []any{}}
		if key == "task_c" {
			d["status"], d["block_reason"] = "blocked", "waiting for the schema review"
		}
		docs = append(docs, d)
	}
	mustRun(t, db, string(mustJSON(t, docs)), "import", "-")
	return db
}

func edgeLines(out, arrow string) []string {
	var edges []string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, arrow) {
			edges = append(edges, strings.TrimSpace(l))
		}
	}
	slices.Sort(edges)
	return edges
}

func TestStatusGraphDrawsTheTransitiveReduction(t *testing.T) {
	t.Parallel()
	db := diamondStore(t)
	for _, tc := range []struct {
		format, arrow string
		reduced, all  []string
	}{
		{"mermaid", " --> ",
			[]string{"task_a --> task_b", "task_b --> task_c", "task_c --> task_d"},
			[]string{"task_a --> task_b", "task_a --> task_c", "task_a --> task_d", "task_b --> task_c", "task_b --> task_d", "task_c --> task_d"}},
		{"dot", " -> ",
			[]string{`"task_a" -> "task_b";`, `"task_b" -> "task_c";`, `"task_c" -> "task_d";`},
			[]string{`"task_a" -> "task_b";`, `"task_a" -> "task_c";`, `"task_a" -> "task_d";`, `"task_b" -> "task_c";`, `"task_b" -> "task_d";`, `"task_c" -> "task_d";`}},
	} {
		out := mustRun(t, db, "", "status", "task_cr_epic", "--format", tc.format).stdout
		if got := edgeLines(out, tc.arrow); !slices.Equal(got, tc.reduced) {
			t.Errorf("wo status --format %s: edges\n%s\nwant\n%s", tc.format, strings.Join(got, "\n"), strings.Join(tc.reduced, "\n"))
		}
		out = mustRun(t, db, "", "status", "task_cr_epic", "--format", tc.format, "--all-edges").stdout
		if got := edgeLines(out, tc.arrow); !slices.Equal(got, tc.all) {
			t.Errorf("wo status --format %s --all-edges: edges\n%s\nwant\n%s", tc.format, strings.Join(got, "\n"), strings.Join(tc.all, "\n"))
		}
	}
}

func TestStatusGraphMarksBlockedAndWaitingTasks(t *testing.T) {
	t.Parallel()
	db := diamondStore(t)
	mermaid := mustRun(t, db, "", "status", "task_cr_epic", "--format", "mermaid").stdout
	for _, want := range []string{
		`  task_a["Task a<br/>open"]:::open` + "\n",
		`  task_b["Task b<br/>open, waiting"]:::open` + "\n",
		`  task_c["Task c<br/>blocked"]:::blocked` + "\n",
		"  class task_b mark_waiting\n", "  class task_c mark_blocked\n", "  class task_d mark_waiting\n",
		"  classDef mark_waiting stroke-dasharray:4 3\n", "  classDef mark_blocked stroke:#c00,stroke-width:2px\n",
	} {
		if !strings.Contains(mermaid, want) {
			t.Errorf("mermaid lacks %q:\n%s", want, mermaid)
		}
	}
	if strings.Contains(mermaid, "class task_a ") {
		t.Errorf("task_a waits for nothing, yet is marked:\n%s", mermaid)
	}
	dot := mustRun(t, db, "", "status", "task_cr_epic", "--format", "dot").stdout
	for _, want := range []string{
		`  "task_a" [label="task_a\nTask a\nopen", fillcolor=white];` + "\n",
		`  "task_b" [label="task_b\nTask b\nopen, waiting", fillcolor=white, style="filled,dashed"];` + "\n",
		`  "task_c" [label="task_c\nTask c\nblocked", fillcolor=pink, penwidth=2, color=red];` + "\n",
	} {
		if !strings.Contains(dot, want) {
			t.Errorf("dot lacks %q:\n%s", want, dot)
		}
	}
	running := graphMark(StatusRow{Key: "k", Status: "in_progress", HeldBy: "ci@host:12", WaitingFor: []string{"x"}})
	if running != "running" {
		t.Errorf("a task a runner holds is marked %q, want running", running)
	}
}

// On random DAGs, the drawn edges are exactly the transitive reduction:
// the same reachability as every edge, and no drawn edge implied by the
// others; --all-edges draws them all.
func TestGraphEdgesAreTheTransitiveReduction(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewSource(18))
	for round := 0; round < 200; round++ {
		n := 2 + r.Intn(9)
		var rows []StatusRow
		var all []graphEdge
		for i := 0; i < n; i++ {
			row := StatusRow{Key: fmt.Sprintf("t%d", i)}
			for j := 0; j < i; j++ { // edges only from lower to higher: a DAG
				if r.Intn(3) == 0 {
					row.BlockedBy = append(row.BlockedBy, fmt.Sprintf("t%d", j))
					all = append(all, graphEdge{From: fmt.Sprintf("t%d", j), To: row.Key})
				}
			}
			rows = append(rows, row)
		}
		r.Shuffle(len(rows), func(i, j int) { rows[i], rows[j] = rows[j], rows[i] })
		if got := graphEdges(rows, true); len(got) != len(all) {
			t.Fatalf("round %d: --all-edges drew %d of %d edges", round, len(got), len(all))
		}
		reduced := graphEdges(rows, false)
		if !sameReach(reduced, all) {
			t.Fatalf("round %d: the reduction %v does not connect what %v does", round, reduced, all)
		}
		for i := range reduced {
			others := slices.Delete(slices.Clone(reduced), i, i+1)
			if reaches(others, reduced[i].From, reduced[i].To) {
				t.Fatalf("round %d: edge %v is implied by the other drawn edges %v", round, reduced[i], others)
			}
		}
	}
}

func reaches(edges []graphEdge, from, to string) bool {
	seen := map[string]bool{from: true}
	queue := []string{from}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		for _, e := range edges {
			if e.From == cur && !seen[e.To] {
				if e.To == to {
					return true
				}
				seen[e.To] = true
				queue = append(queue, e.To)
			}
		}
	}
	return false
}

func sameReach(a, b []graphEdge) bool {
	nodes := map[string]bool{}
	for _, e := range append(slices.Clone(a), b...) {
		nodes[e.From], nodes[e.To] = true, true
	}
	for x := range nodes {
		for y := range nodes {
			if x != y && reaches(a, x, y) != reaches(b, x, y) {
				return false
			}
		}
	}
	return true
}
