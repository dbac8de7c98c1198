package integration

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// BenchmarkStatusShowProcess times whole wo processes on an epic of 1,000
// children (the fixture's task_cr_01, each blocked by another), on the
// embedded store: wo status EPIC, wo status EPIC --json, and wo show of a
// child from process start to its first line of output. The baseline of
// each pair is wo --version, the cost of starting a wo process at all, in
// alternating order. Target: wo status at most 50 ms.
func BenchmarkStatusShowProcess(b *testing.B) {
	wo := benchWo(b)
	work := b.TempDir()
	store := filepath.Join(work, "wo.db")
	data, err := os.ReadFile("../fixtures/task_cr_01.json")
	if err != nil {
		b.Fatal(err)
	}
	var tmpl map[string]any
	if err := json.Unmarshal(data, &tmpl); err != nil {
		b.Fatal(err)
	}
	docs := []any{map[string]any{"_key": "task_big_epic", "type": "epic", "status": "open", "title": "A big epic",
		"description": "An epic with a thousand children"}}
	for i := 0; i < 1000; i++ {
		var d map[string]any
		json.Unmarshal(data, &d)
		d["_key"] = fmt.Sprintf("task_big_%04d", i)
		d["parent_key"] = "task_big_epic"
		d["status"] = "open"
		if i > 0 {
			d["work_order"].(map[string]any)["dependencies"] = map[string]any{"blocked_by": []any{fmt.Sprintf("task_big_%04d", i/2)}}
		}
		docs = append(docs, d)
	}
	all, _ := json.Marshal(docs)
	importFile := filepath.Join(work, "epic.json")
	os.WriteFile(importFile, all, 0o644)
	if out, err := exec.Command(wo, "import", importFile, "--store", store).CombinedOutput(); err != nil {
		b.Fatalf("import: %v\n%s", err, out)
	}
	version := func(int) sample { return runMeasured(b, nil, work, wo, "--version") }
	for n := 0; n < b.N; n++ {
		for _, c := range []struct {
			name string
			args []string
		}{
			{"status", []string{"status", "task_big_epic", "--store", store}},
			{"status-json", []string{"status", "task_big_epic", "--json", "--store", store}},
		} {
			res := comparePairs(b, benchPairs(), version, func(int) sample { return runMeasured(b, nil, work, wo, c.args...) })
			b.ReportMetric(float64(medianDur(res.wo).Microseconds())/1000, c.name+"-ms")
			b.ReportMetric(res.medianRatio, c.name+"/version")
		}
		res := comparePairs(b, benchPairs(), version, func(int) sample { return firstLine(b, wo, work, "show", "task_big_0500", "--store", store) })
		b.ReportMetric(float64(medianDur(res.wo).Microseconds())/1000, "show-first-line-ms")
		b.ReportMetric(float64(medianDur(res.base).Microseconds())/1000, "version-ms")
		b.ReportMetric(res.medianRatio, "show/version")
	}
}

// firstLine starts a command and times it until its first line of output.
func firstLine(b *testing.B, name, dir string, args ...string) sample {
	b.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	d := time.Since(start)
	if err != nil || strings.TrimSpace(line) == "" {
		b.Fatalf("%s %v: no first line (%v)", name, args, err)
	}
	cmd.Wait()
	return sample{wall: d}
}
