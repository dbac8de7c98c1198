//go:build unix

package gitops

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/wo-runner/wo/internal/gittest"
)

// cpuTime is the process's user and system time so far: on a shared
// machine it moves far less with the load than the wall clock does.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkWorktreeCreate5k compares Create on a tree of 5,000 small
// files in 250 directories three levels deep with git worktree add of the
// same tree, in pairs that alternate which goes first, with sync between
// them so that one side's writeback does not land on the other. Create
// runs in this process (no process start, unlike git): the figure is the
// cost of writing a tree, not of a command. It reports the median of the
// per-pair ratios and their spread (WO_BENCH_PAIRS pairs, default 7, per
// iteration).
func BenchmarkWorktreeCreate5k(b *testing.B) {
	root := b.TempDir()
	repoPath := filepath.Join(root, "repo")
	gittest.Run(b, root, "init", "-q", "-b", "main", repoPath)
	for i := 0; i < 5000; i++ {
		p := filepath.Join(repoPath, fmt.Sprintf("d%02d/e%d/f%d/file%04d.txt", i%10, i%5, i%5, i))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(fmt.Sprintf("file %d\n%0500d\n", i, i)), 0o644)
	}
	gittest.Run(b, repoPath, "add", "-A")
	gittest.Run(b, repoPath, "commit", "-q", "-m", "base")
	gittest.Run(b, repoPath, "gc", "-q")
	r, err := Open(repoPath)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	base, _ := r.Resolve("main")
	pairs := 7
	if n, err := fmt.Sscan(os.Getenv("WO_BENCH_PAIRS"), &pairs); n != 1 || err != nil || pairs < 1 {
		pairs = 7
	}
	b.ResetTimer()
	cpu := cpuTime()
	var ratios []float64
	var gitTimes, woTimes []time.Duration
	for n := 0; n < b.N; n++ {
		for i := 0; i < pairs; i++ {
			gitSide := func() time.Duration {
				wt := filepath.Join(root, fmt.Sprintf("git%d-%d", n, i))
				cmd := exec.Command("git", "worktree", "add", "-q", "--detach", wt, "main")
				cmd.Dir = repoPath
				start := time.Now()
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("git worktree add: %v\n%s", err, out)
				}
				return time.Since(start)
			}
			woSide := func() time.Duration {
				w, err := r.Worktree(fmt.Sprintf("wt%d-%d", n, i), filepath.Join(root, fmt.Sprintf("wt%d-%d", n, i)))
				if err != nil {
					b.Fatal(err)
				}
				start := time.Now()
				if err := w.Create(context.Background(), base, nil); err != nil {
					b.Fatal(err)
				}
				return time.Since(start)
			}
			var g, w time.Duration
			syscall.Sync()
			if i%2 == 0 {
				g = gitSide()
				syscall.Sync()
				w = woSide()
			} else {
				w = woSide()
				syscall.Sync()
				g = gitSide()
			}
			gitTimes, woTimes = append(gitTimes, g), append(woTimes, w)
			ratios = append(ratios, float64(w)/float64(g))
		}
	}
	b.StopTimer()
	slices.Sort(ratios)
	b.ReportMetric(ratios[len(ratios)/2], "wo/git-median")
	b.ReportMetric(ratios[0], "wo/git-min")
	b.ReportMetric(ratios[len(ratios)-1], "wo/git-max")
	b.ReportMetric(float64(len(ratios)), "pairs")
	slices.Sort(gitTimes)
	slices.Sort(woTimes)
	b.ReportMetric(float64(gitTimes[len(gitTimes)/2].Microseconds())/1000, "git-ms")
	b.ReportMetric(float64(woTimes[len(woTimes)/2].Microseconds())/1000, "wo-ms")
	b.ReportMetric(float64((cpuTime()-cpu).Milliseconds())/float64(b.N*pairs), "cpu-ms/op")
}
