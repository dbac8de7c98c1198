package integration

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Honest pairs: every git-vs-wo benchmark runs several pairs, alternates
// which side goes first, and lets the first side's dirty pages reach the
// disk before the second side starts, so that one side's writeback is not
// timed as the other's work. The figure is the median of the per-pair
// ratios, with their spread.

// benchPairs is how many pairs a comparison runs (WO_BENCH_PAIRS, default 7).
func benchPairs() int {
	if n, err := strconv.Atoi(os.Getenv("WO_BENCH_PAIRS")); err == nil && n >= 1 {
		return n
	}
	return 7
}

// sample is one side's measurement: wall time and the largest peak RSS of
// its processes.
type sample struct {
	wall time.Duration
	rss  int64 // KiB
}

func (s *sample) add(o sample) {
	s.wall += o.wall
	s.rss = max(s.rss, o.rss)
}

// settle flushes dirty pages and waits (at most 10 s) until the kernel has
// no writeback in flight, so the next side starts on a quiet disk.
func settle() {
	syscall.Sync()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if wb, dirty := writeback(); wb == 0 && dirty < 4<<10 {
			return
		}
		time.Sleep(20 * time.Millisecond)
		syscall.Sync()
	}
}

// writeback reads Writeback and Dirty (KiB) from /proc/meminfo; on systems
// without it both are 0 and settle relies on sync alone.
func writeback() (wb, dirty int64) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 {
			continue
		}
		v, _ := strconv.ParseInt(fields[1], 10, 64)
		switch fields[0] {
		case "Writeback:":
			wb = v
		case "Dirty:":
			dirty = v
		}
	}
	return wb, dirty
}

// pairResult is the outcome of a comparison.
type pairResult struct {
	ratios         []float64 // wo/git per pair, in run order
	base, wo       []sample
	medianRatio    float64
	minRat, maxRat float64
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func medianDur(ss []sample) time.Duration {
	xs := make([]float64, len(ss))
	for i, s := range ss {
		xs[i] = float64(s.wall)
	}
	return time.Duration(median(xs))
}

func maxRSS(ss []sample) int64 {
	var m int64
	for _, s := range ss {
		m = max(m, s.rss)
	}
	return m
}

// comparePairs runs pairs of (baseline, wo), baseline first in even pairs
// and wo first in odd ones, settling the disk before each side. Each side
// gets the pair's number, so it can use fresh names.
func comparePairs(b *testing.B, pairs int, baseline, wo func(i int) sample) pairResult {
	b.Helper()
	var r pairResult
	for i := 0; i < pairs; i++ {
		var bs, ws sample
		if i%2 == 0 {
			settle()
			bs = baseline(i)
			settle()
			ws = wo(i)
		} else {
			settle()
			ws = wo(i)
			settle()
			bs = baseline(i)
		}
		r.base = append(r.base, bs)
		r.wo = append(r.wo, ws)
		r.ratios = append(r.ratios, float64(ws.wall)/float64(bs.wall))
	}
	r.medianRatio = median(r.ratios)
	r.minRat, r.maxRat = slices.Min(r.ratios), slices.Max(r.ratios)
	return r
}

// report puts a comparison into the benchmark's metrics: the median ratio
// and its spread, each side's median time, and each side's peak memory.
func (r pairResult) report(b *testing.B, unit string) {
	b.Helper()
	b.ReportMetric(r.medianRatio, "wo/git-median")
	b.ReportMetric(r.minRat, "wo/git-min")
	b.ReportMetric(r.maxRat, "wo/git-max")
	b.ReportMetric(float64(len(r.ratios)), "pairs")
	scale := map[string]float64{"ms": float64(time.Millisecond), "s": float64(time.Second)}[unit]
	b.ReportMetric(float64(medianDur(r.base))/scale, "git-"+unit)
	b.ReportMetric(float64(medianDur(r.wo))/scale, "wo-"+unit)
	if g, w := maxRSS(r.base), maxRSS(r.wo); g > 0 && w > 0 {
		b.ReportMetric(float64(g)/1024, "git-peak-MiB")
		b.ReportMetric(float64(w)/1024, "wo-peak-MiB")
		b.ReportMetric(float64(w)/float64(g), "wo/git-peak")
	}
	parts := make([]string, len(r.ratios))
	for i, x := range r.ratios {
		parts[i] = fmt.Sprintf("%.2f", x)
	}
	b.Logf("wo/git per pair (git first in pairs 1, 3, …): %s", strings.Join(parts, " "))
}

// run runs a command and returns its wall time and peak RSS.
func runMeasured(b *testing.B, env []string, dir string, name string, args ...string) sample {
	b.Helper()
	d, rss := measure(b, env, dir, name, args...)
	return sample{wall: d, rss: rss}
}

var (
	plainWoOnce sync.Once
	plainWo     string
	plainWoErr  error
)

// benchWo is wo as users build it (no fault hooks), for timing.
func benchWo(b *testing.B) string {
	plainWoOnce.Do(func() {
		dir, err := os.MkdirTemp("", "wo-bench-bin-")
		if err != nil {
			plainWoErr = err
			return
		}
		plainWo = filepath.Join(dir, "wo")
		if out, err := exec.Command("go", "build", "-o", plainWo, "..").CombinedOutput(); err != nil {
			plainWoErr = fmt.Errorf("building wo: %v\n%s", err, out)
		}
	})
	if plainWoErr != nil {
		b.Fatal(plainWoErr)
	}
	return plainWo
}

// importDoc stores one document with wo import, outside any timing.
func importDoc(b *testing.B, wo, store string, doc map[string]any) {
	b.Helper()
	data, err := jsonArray(doc)
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(wo, "import", "-", "--store", store)
	cmd.Stdin = bytes.NewReader(data)
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("wo import: %v\n%s", err, out)
	}
}
