package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// fleetEpic imports an epic of chains×depth agent-only work orders, each
// with two steps that deliver a pre-composed note (no git, no GitHub):
// task_fleet_cC_D waits for task_fleet_cC_(D-1).
func fleetEpic(t testing.TB, f *fixture, chains, depth int) []string {
	t.Helper()
	docs := []any{map[string]any{"_key": "task_fleet", "title": "A fleet epic", "type": "epic", "status": "open",
		"description": "Work orders for many runners at once"}}
	var keys []string
	for c := 0; c < chains; c++ {
		for d := 0; d < depth; d++ {
			key := fmt.Sprintf("task_fleet_c%d_%d", c, d)
			keys = append(keys, key)
			var steps []any
			for s := 1; s <= 2; s++ {
				steps = append(steps, map[string]any{"step": s, "action": "agent", "description": "Deliver a note",
					"delivery": []any{map[string]any{"target": "task_note", "content": fmt.Sprintf("note %d of %s", s, key)}}})
			}
			wo := map[string]any{"version": "1.0", "objective": "Deliver the notes of " + key, "procedure": steps}
			if d > 0 {
				wo["dependencies"] = map[string]any{"blocked_by": []any{fmt.Sprintf("task_fleet_c%d_%d", c, d-1)}}
			}
			docs = append(docs, map[string]any{"_key": key, "title": "Notes " + key, "status": "open",
				"parent_key": "task_fleet", "work_order": wo})
		}
	}
	b, _ := json.Marshal(docs)
	path := filepath.Join(f.root, "fleet.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if r := f.wo(nil, "import", path); r.code != 0 {
		t.Fatalf("import: %s", r.stderr)
	}
	return keys
}

// fleetReport counts what the runners did, from the store: how many times
// each step was recorded as completed in the activity log, and how many
// times each note (the work's visible effect) is in the task.
type fleetReport struct {
	duplicates int // steps completed, or notes delivered, more than once
	unfinished []string
}

func checkFleet(t testing.TB, f *fixture, keys []string) fleetReport {
	t.Helper()
	var rep fleetReport
	for _, k := range keys {
		doc := f.doc(k)
		if doc["status"] != "closed" {
			rep.unfinished = append(rep.unfinished, fmt.Sprintf("%s (%v)", k, doc["status"]))
		}
		notes := fmt.Sprint(stateOf(doc)["notes"])
		for s := 1; s <= 2; s++ {
			if n := strings.Count(notes, fmt.Sprintf("note %d of %s]", s, k)) + strings.Count(notes, fmt.Sprintf("note %d of %s ", s, k)); n > 1 {
				rep.duplicates += n - 1
			}
		}
		r := f.wo(nil, "log", k, "--json")
		var env struct {
			Data []struct {
				Action  string
				Details map[string]any
			}
		}
		json.Unmarshal([]byte(r.stdout), &env)
		seen := map[string]int{}
		for _, e := range env.Data {
			if e.Action == "step_completed" {
				seen[fmt.Sprint(e.Details["step"])]++
			}
		}
		for _, n := range seen {
			if n > 1 {
				rep.duplicates += n - 1
			}
		}
	}
	return rep
}

// startRunners starts n `wo run --epic` processes at the same moment.
func startRunners(t testing.TB, f *fixture, n int, extra ...string) []*runner {
	t.Helper()
	out := make([]*runner, n)
	for i := range out {
		args := append([]string{"run", "--epic", "task_fleet", "--parallel", "2", "--wait", "--wait-timeout", "2m"}, extra...)
		r := &runner{cmd: f.cmd(nil, args...)}
		r.cmd.Stdout, r.cmd.Stderr = &r.stdout, &r.stderr
		out[i] = r
	}
	for _, r := range out {
		if err := r.cmd.Start(); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

type runner struct {
	cmd            *exec.Cmd
	stdout, stderr bytes.Buffer
}

func TestManyRunnersOnOneEpicDoEveryStepOnce(t *testing.T) {
	t.Parallel()
	f := emptyFixture(t)
	keys := fleetEpic(t, f, 5, 4)
	runners := startRunners(t, f, 4)
	for i, r := range runners {
		res := result(r.cmd, r.cmd.Wait(), r.stdout.String(), r.stderr.String())
		if res.code != 0 {
			t.Errorf("runner %d: exit %d, want 0 (one round finishes the epic)\n%s%s", i, res.code, res.stdout, res.stderr)
		}
		if strings.Contains(res.stdout, "lease_held") || strings.Contains(res.stderr, "is being run by") && res.code == 4 {
			t.Errorf("runner %d failed on another runner's work:\n%s", i, res.stdout)
		}
	}
	rep := checkFleet(t, f, keys)
	if rep.duplicates != 0 || len(rep.unfinished) != 0 {
		t.Errorf("%d duplicated steps or notes; unfinished: %v", rep.duplicates, rep.unfinished)
	}
}

func TestRunnersKilledMidEpicAndRestartedStillDoEveryStepOnce(t *testing.T) {
	t.Parallel()
	f := emptyFixture(t)
	keys := fleetEpic(t, f, 4, 4)
	rnd := rand.New(rand.NewPCG(7, 11))
	for round := 0; round < 6; round++ {
		runners := startRunners(t, f, 4)
		var wg sync.WaitGroup
		for _, r := range runners {
			if rnd.IntN(2) == 0 {
				continue
			}
			wg.Add(1)
			go func(r *runner, after time.Duration) {
				defer wg.Done()
				time.Sleep(after)
				r.cmd.Process.Signal(syscall.SIGKILL)
			}(r, time.Duration(rnd.IntN(150))*time.Millisecond)
		}
		wg.Wait()
		for _, r := range runners {
			r.cmd.Wait()
		}
		if rep := checkFleet(t, f, keys); len(rep.unfinished) == 0 {
			break
		}
	}
	// A last round without kills finishes whatever is left.
	for _, r := range startRunners(t, f, 2) {
		if res := result(r.cmd, r.cmd.Wait(), r.stdout.String(), r.stderr.String()); res.code != 0 {
			t.Errorf("the round after the kills: exit %d\n%s%s", res.code, res.stdout, res.stderr)
		}
	}
	rep := checkFleet(t, f, keys)
	if rep.duplicates != 0 || len(rep.unfinished) != 0 {
		t.Errorf("after kills and restarts: %d duplicated steps or notes; unfinished: %v", rep.duplicates, rep.unfinished)
	}
}

// BenchmarkFleet runs R runner processes (`wo run --epic --parallel 2
// --wait`) at once on an epic of T two-step agent-only work orders in
// chains of four, on the embedded store, and reports the wall time, the
// steps done twice (must be 0), and the wall time against one runner in
// the same run. Run it with -benchtime=1x.
func BenchmarkFleet(b *testing.B) {
	const tasks, depth = 200, 4
	var single time.Duration
	for _, r := range []int{1, 4, 16} {
		b.Run(fmt.Sprintf("R=%d/T=%d", r, tasks), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				f := emptyFixture(b)
				keys := fleetEpic(b, f, tasks/depth, depth)
				b.StartTimer()
				start := time.Now()
				for j, run := range startRunners(b, f, r) {
					if res := result(run.cmd, run.cmd.Wait(), run.stdout.String(), run.stderr.String()); res.code != 0 {
						b.Fatalf("runner %d: exit %d\n%s", j, res.code, res.stderr)
					}
				}
				wall := time.Since(start)
				b.StopTimer()
				rep := checkFleet(b, f, keys)
				if len(rep.unfinished) != 0 {
					b.Fatalf("unfinished after one round: %v", rep.unfinished)
				}
				if r == 1 {
					single = wall
				}
				b.ReportMetric(float64(rep.duplicates), "duplicates")
				b.ReportMetric(wall.Seconds(), "wall-s")
				if single > 0 {
					b.ReportMetric(wall.Seconds()/single.Seconds(), "x-one-runner")
				}
				b.StartTimer()
			}
		})
	}
}
