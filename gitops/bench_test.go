//go:build unix

package gitops

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// cpuTime is the process's user and system time so far: on a shared
// machine it moves far less with the load than the wall clock does.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkWorktreeCreate5k times Create on a tree of 5,000 small files in
// 250 directories three levels deep: the confined writes (one directory
// handle per writer, no path walk per file) must not cost much more than
// the plain path writes did.
func BenchmarkWorktreeCreate5k(b *testing.B) {
	root := b.TempDir()
	repoPath := filepath.Join(root, "repo")
	runGit(b, root, "init", "-q", "-b", "main", repoPath)
	for i := 0; i < 5000; i++ {
		p := filepath.Join(repoPath, fmt.Sprintf("d%02d/e%d/f%d/file%04d.txt", i%10, i%5, i%5, i))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(fmt.Sprintf("file %d\n%0500d\n", i, i)), 0o644)
	}
	runGit(b, repoPath, "add", "-A")
	runGit(b, repoPath, "commit", "-q", "-m", "base")
	runGit(b, repoPath, "gc", "-q")
	r, err := Open(repoPath)
	if err != nil {
		b.Fatal(err)
	}
	base, _ := r.Resolve("main")
	b.ResetTimer()
	cpu := cpuTime()
	for n := 0; n < b.N; n++ {
		w, err := r.Worktree(fmt.Sprintf("wt%d", n), filepath.Join(root, fmt.Sprintf("wt%d", n)))
		if err != nil {
			b.Fatal(err)
		}
		if err := w.Create(context.Background(), base, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((cpuTime()-cpu).Milliseconds())/float64(b.N), "cpu-ms/op")
}
