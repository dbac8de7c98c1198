// Command benchtable turns the output of wo's comparison benchmarks (go
// test -bench, and the store request count test in -v mode) into one
// table of ratios, each against the baseline measured in the same run:
//
//	make bench-compare
//
// It prints the machine, the date and the load average before the table,
// since the machines this runs on are often shared. Lines it does not
// know pass through to standard error; a FAIL makes it exit 1.
package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"time"
)

type row struct {
	what, wo, base, ratio, spread, target string
}

var benchLine = regexp.MustCompile(`^Benchmark(\S+?)(-\d+)?\s+\d+\s+\d+ ns/op\s+(.*)$`)

// targets are the targets, by row.
var targets = map[string]string{
	"GitHalfRealHistory":                    "≤ 1.0",
	"WorktreeCheckoutCommit30k":             "≤ 1.0",
	"WorktreeCheckoutCommit30k peak memory": "≤ 1.2",
	"StatusEpic1000":                        "wo ≤ 50 ms",
	"StatusShowProcess status":              "wo ≤ 50 ms",
}

func main() {
	start := time.Now()
	var rows []row
	failed := false
	var requests string
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "FAIL") || strings.HasPrefix(line, "--- FAIL") || strings.HasPrefix(line, "panic:") {
			failed = true
		}
		if i := strings.Index(line, "store requests: "); i >= 0 {
			requests = strings.TrimSpace(line[i+len("store requests: "):])
		}
		m := benchLine.FindStringSubmatch(line)
		if m == nil {
			fmt.Fprintln(os.Stderr, line)
			continue
		}
		rows = append(rows, rowsOf(m[1], metrics(m[3]))...)
	}
	fmt.Printf("wo bench-compare — %s, %s/%s, %d CPUs (%s), load average %s\n",
		start.UTC().Format("2006-01-02 15:04 MST"), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), cpuModel(), loadAvg())
	fmt.Println("Each ratio is the median of per-pair ratios (wo ÷ baseline) from alternating pairs in one run; spread is min–max.")
	fmt.Println()
	fmt.Println("| benchmark | wo | baseline | wo ÷ baseline | spread | target |")
	fmt.Println("|---|---|---|---|---|---|")
	for _, r := range rows {
		if r.target == "" {
			r.target = targets[r.what]
		}
		fmt.Printf("| %s | %s | %s | %s | %s | %s |\n", r.what, r.wo, r.base, r.ratio, r.spread, r.target)
	}
	if requests != "" {
		fmt.Printf("| store requests per step (SQLite, counted as ArangoDB requests) | %s | | | | ≤ 2 per step |\n", requests)
	}
	if failed {
		fmt.Println("\nSOME BENCHMARKS OR TESTS FAILED: see the output above the table.")
		os.Exit(1)
	}
}

func metrics(s string) map[string]float64 {
	out := map[string]float64{}
	f := strings.Fields(s)
	for i := 0; i+1 < len(f); i += 2 {
		if v, err := strconv.ParseFloat(f[i], 64); err == nil {
			out[f[i+1]] = v
		}
	}
	return out
}

func rowsOf(name string, m map[string]float64) []row {
	var out []row
	num := func(v float64, unit string) string {
		switch {
		case v >= 100:
			return fmt.Sprintf("%.0f %s", v, unit)
		case v >= 10:
			return fmt.Sprintf("%.1f %s", v, unit)
		}
		return fmt.Sprintf("%.2f %s", v, unit)
	}
	pairs := fmt.Sprintf(" (%.0f pairs)", m["pairs"])
	if _, ok := m["wo/git-median"]; ok {
		unit, wo, git := "ms", m["wo-ms"], m["git-ms"]
		if _, ok := m["wo-s"]; ok {
			unit, wo, git = "s", m["wo-s"], m["git-s"]
		}
		out = append(out, row{what: name, wo: num(wo, unit), base: "git " + num(git, unit),
			ratio: fmt.Sprintf("%.2f", m["wo/git-median"]), spread: fmt.Sprintf("%.2f–%.2f%s", m["wo/git-min"], m["wo/git-max"], pairs)})
	}
	if _, ok := m["wo/git-peak"]; ok {
		out = append(out, row{what: name + " peak memory", wo: num(m["wo-peak-MiB"], "MiB"), base: "git " + num(m["git-peak-MiB"], "MiB"),
			ratio: fmt.Sprintf("%.2f", m["wo/git-peak"])})
	}
	if _, ok := m["wo/whole-docs-median"]; ok {
		out = append(out, row{what: name, wo: num(m["wo-ms"], "ms"), base: "whole documents " + num(m["whole-docs-ms"], "ms"),
			ratio: fmt.Sprintf("%.2f", m["wo/whole-docs-median"]), spread: fmt.Sprintf("%.2f–%.2f%s", m["wo/whole-docs-min"], m["wo/whole-docs-max"], pairs)})
	}
	for _, k := range []string{"status", "status-json", "show"} {
		r, ok := m[k+"/version"]
		if !ok {
			continue
		}
		v := m[k+"-ms"]
		what := name + " " + k
		if k == "show" {
			v, what = m["show-first-line-ms"], name+" show (to first line)"
		}
		out = append(out, row{what: what, wo: num(v, "ms"), base: "wo --version " + num(m["version-ms"], "ms"), ratio: fmt.Sprintf("%.2f", r)})
	}
	return out
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "model name") {
			if _, v, ok := strings.Cut(l, ":"); ok {
				return strings.TrimSpace(v)
			}
		}
	}
	return "unknown CPU"
}

func loadAvg() string {
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		f := strings.Fields(string(b))
		if len(f) >= 3 {
			return strings.Join(f[:3], " ")
		}
	}
	if out, err := exec.Command("uptime").Output(); err == nil {
		return strings.TrimSpace(string(out))
	}
	return "unknown"
}
