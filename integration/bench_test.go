package integration

import (
	"bytes"
	"context"
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

	"github.com/wo-runner/wo/github"
	"github.com/wo-runner/wo/integration/ghstandin"
	"github.com/wo-runner/wo/internal/gittest"
)

// The big repository of the worktree benchmark: 30,000 files of about 4 KB
// (~120 MB) on the base branch, and 300 of them changed on main.
const (
	bigFiles    = 30000
	bigFileSize = 4096
	bigManifest = 300
)

var (
	bigOnce sync.Once
	bigRepo string
	bigErr  error
	bigList []string

	benchSeq int
)

// buildBigRepo makes the repository once per test binary run, outside any
// timing.
func buildBigRepo(b *testing.B) (string, []string) {
	bigOnce.Do(func() {
		root, err := os.MkdirTemp("", "wo-bench-")
		if err != nil {
			bigErr = err
			return
		}
		bigRepo = filepath.Join(root, "repo")
		run := func(dir string, args ...string) {
			if bigErr != nil {
				return
			}
			if out, err := gittest.Try(dir, args...); err != nil {
				bigErr = fmt.Errorf("git %s: %v\n%s", strings.Join(args, " "), err, out)
			}
		}
		run(root, "init", "-q", "-b", "main", bigRepo)
		run(bigRepo, "config", "user.name", "Bench")
		run(bigRepo, "config", "user.email", "bench@example.com")
		run(bigRepo, "config", "gc.auto", "0")
		rng := rand.New(rand.NewPCG(1, 2))
		words := strings.Fields("func return if else for range package import type struct interface map chan go defer select case switch var const error nil true false string int byte rune")
		content := func() []byte {
			var buf bytes.Buffer
			for buf.Len() < bigFileSize {
				buf.WriteString(words[rng.IntN(len(words))])
				if rng.IntN(8) == 0 {
					buf.WriteByte('\n')
				} else {
					buf.WriteByte(' ')
				}
			}
			return buf.Bytes()
		}
		for i := 0; i < bigFiles; i++ {
			p := filepath.Join(bigRepo, fmt.Sprintf("mod%02d/pkg%03d/file%05d.go", i%30, i%600, i))
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.WriteFile(p, content(), 0o644); err != nil {
				bigErr = err
				return
			}
		}
		run(bigRepo, "add", "-A")
		run(bigRepo, "commit", "-q", "-m", "base")
		run(bigRepo, "branch", "code-review-base")
		for i := 0; i < bigManifest; i++ {
			rel := fmt.Sprintf("mod%02d/pkg%03d/file%05d.go", (i*97)%30, (i*97)%600, i*97)
			os.WriteFile(filepath.Join(bigRepo, rel), content(), 0o644)
			bigList = append(bigList, rel)
		}
		run(bigRepo, "add", "-A")
		run(bigRepo, "commit", "-q", "-m", "the change")
		run(bigRepo, "gc", "-q") // packed, as a real clone is
	})
	if bigErr != nil {
		b.Fatal(bigErr)
	}
	return bigRepo, bigList
}

// measure runs a command and returns its wall time and peak RSS in KiB.
func measure(b *testing.B, env []string, dir string, name string, args ...string) (time.Duration, int64) {
	b.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), gittest.Env...), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	if err := cmd.Run(); err != nil {
		b.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out.String())
	}
	return time.Since(start), cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss
}

// BenchmarkWorktreeCheckoutCommit30k compares wo's create_worktree +
// create_branch + checkout_files + commit with the git command doing the
// same (git worktree add, git checkout -b, git checkout SRC -- files,
// git commit), on the same repository, in honest pairs (pairs_test.go):
// alternating order, the disk settled between sides. wo's time is one
// whole process, including loading the task, the lease and the state
// write-backs; git's is its four processes. Peak memory is the largest
// max RSS of a side's processes. Targets: wo/git-median at most 1.0,
// wo/git-peak at most 1.2.
func BenchmarkWorktreeCheckoutCommit30k(b *testing.B) {
	repo, files := buildBigRepo(b)
	wo := benchWo(b)
	work := b.TempDir()
	store := filepath.Join(work, "wo.db")
	manifest := make([]any, len(files))
	for j, f := range files {
		manifest[j] = f
	}
	for n := 0; n < b.N; n++ {
		benchSeq++
		run := benchSeq // names unique across -count runs on the shared repository
		pairs := benchPairs()
		for i := 0; i < pairs; i++ {
			key := fmt.Sprintf("task_bench%d_%d", run, i)
			importDoc(b, wo, store, map[string]any{"_key": key, "title": "PR #1: bench", "status": "open",
				"work_order": map[string]any{"version": "1.0", "objective": "Benchmark the git steps of wo",
					"context": map[string]any{"repo_path": repo, "base_branch": "code-review-base", "source_branch": "main", "worktree_root": work},
					"inputs": map[string]any{"branch_name": fmt.Sprintf("bench/wo-%d-%d", run, i), "worktree_name": fmt.Sprintf("wo-%d-%d", run, i),
						"pr_title": "PR #1: bench", "file_manifest": manifest},
					"procedure": []any{
						map[string]any{"step": 1, "action": "create_worktree"},
						map[string]any{"step": 2, "action": "create_branch"},
						map[string]any{"step": 3, "action": "checkout_files"},
						map[string]any{"step": 4, "action": "commit"},
					}}})
		}
		res := comparePairs(b, pairs, func(i int) sample {
			wt := filepath.Join(work, fmt.Sprintf("git-%d-%d", run, i))
			s := runMeasured(b, nil, repo, "git", "worktree", "add", "-q", "--detach", wt, "code-review-base")
			s.add(runMeasured(b, nil, wt, "git", "checkout", "-q", "-b", fmt.Sprintf("bench/git-%d-%d", run, i)))
			s.add(runMeasured(b, nil, wt, "git", append([]string{"checkout", "main", "--"}, files...)...))
			s.add(runMeasured(b, nil, wt, "git", "commit", "-q", "-m", "PR #1: bench"))
			return s
		}, func(i int) sample {
			s := runMeasured(b, nil, work, wo, "run", fmt.Sprintf("task_bench%d_%d", run, i), "--store", store)
			if st := gittest.Run(b, filepath.Join(work, fmt.Sprintf("wo-%d-%d", run, i)), "status", "--porcelain"); st != "" {
				b.Fatalf("wo's worktree is not clean after the commit:\n%s", st)
			}
			return s
		})
		res.report(b, "s")
		// The worktrees are 120 MB each: remove them before the next run.
		for i := 0; i < pairs; i++ {
			gittest.Run(b, repo, "worktree", "remove", "--force", filepath.Join(work, fmt.Sprintf("git-%d-%d", run, i)))
			gittest.Run(b, repo, "worktree", "remove", "--force", filepath.Join(work, fmt.Sprintf("wo-%d-%d", run, i)))
		}
	}
}

// BenchmarkGitHubRequestsPerLifecycle counts, on the GitHub stand-in, the
// requests of one PR's life under wo run: create, one review round with two
// comments fixed by an agent, one clean check, the final PR check. It also
// counts an unchanged poll. 304s are free of GitHub's rate limit; the
// targets are 0 rate-limited requests per unchanged poll and at most 15 in
// the whole lifecycle.
func BenchmarkGitHubRequestsPerLifecycle(b *testing.B) {
	var limited, free, poll304, pollLimited int
	for i := 0; i < b.N; i++ {
		f := newFixture(b, 10)
		gh := ghstandin.New(secretToken)
		gh.Remotes["acme/hermes"] = f.origin
		gh.ReviewDelay = 100 * time.Millisecond
		gh.ReviewRounds = [][]ghstandin.Comment{{{Path: "foundation/new0.go", Line: 3, Body: "One."}, {Path: "foundation/new1.go", Line: 3, Body: "Two."}}}
		if err := gh.Start(); err != nil {
			b.Fatal(err)
		}
		doc := f.seedTask("task_cr_01")
		f.importTask(doc)
		agent := filepath.Join(f.root, "agent.sh")
		writeFile(b, agent, "#!/bin/sh\necho '// fixed' >> foundation/new0.go\necho '// fixed' >> foundation/new1.go\n")
		os.Chmod(agent, 0o755)
		env := []string{"GITHUB_TOKEN=" + secretToken, "GITHUB_API_URL=" + gh.URL, "WO_REVIEW_WAIT=20s",
			"WO_POLL_INTERVAL=250ms", "WO_AGENT=" + agent}
		if r := f.wo(env, "run", "task_cr_01"); r.code != 0 {
			b.Fatalf("run: %s", r.stderr)
		}
		limited, free = tally(b, gh, limited, free)
		// An unchanged poll, through wo's own client: the second read of the
		// same list is a 304.
		c, _ := github.New(github.Config{BaseURL: gh.URL, Token: secretToken, Repo: "acme/hermes"})
		c.Reviews(context.Background(), 1)
		mid := len(gh.Requests())
		c.Reviews(context.Background(), 1)
		for _, req := range gh.Requests()[mid:] {
			if req.Status == 304 {
				poll304++
			} else {
				pollLimited++
			}
		}
		gh.Close()
	}
	n := float64(b.N)
	b.ReportMetric(float64(limited)/n, "counted-req/lifecycle")
	b.ReportMetric(float64(free)/n, "304/lifecycle")
	b.ReportMetric(float64(pollLimited)/n, "counted-req/unchanged-poll")
	b.ReportMetric(float64(poll304)/n, "304/unchanged-poll")
}

var (
	splitOnce sync.Once
	splitRepo string
	splitErr  error
)

// buildSplitRepo makes a Go module with a change of 10,000 files across
// 1,000 packages: package i imports package i/2.
func buildSplitRepo(b *testing.B) string {
	splitOnce.Do(func() {
		root, err := os.MkdirTemp("", "wo-split-bench-")
		if err != nil {
			splitErr = err
			return
		}
		splitRepo = filepath.Join(root, "repo")
		run := func(dir string, args ...string) {
			if splitErr != nil {
				return
			}
			if out, err := gittest.Try(dir, args...); err != nil {
				splitErr = fmt.Errorf("git %v: %v\n%s", args, err, out)
			}
		}
		run(root, "init", "-q", "-b", "main", splitRepo)
		run(splitRepo, "config", "gc.auto", "0")
		os.WriteFile(filepath.Join(splitRepo, "go.mod"), []byte("module example.com/huge\n\ngo 1.22\n"), 0o644)
		run(splitRepo, "add", "-A")
		run(splitRepo, "commit", "-q", "-m", "base")
		run(splitRepo, "branch", "base")
		for p := 0; p < 1000; p++ {
			dir := filepath.Join(splitRepo, fmt.Sprintf("m%02d", p%10), fmt.Sprintf("p%04d", p))
			os.MkdirAll(dir, 0o755)
			for i := 0; i < 10; i++ {
				imp := ""
				if i == 0 && p > 0 {
					imp = fmt.Sprintf("import _ \"example.com/huge/m%02d/p%04d\"\n", (p/2)%10, p/2)
				}
				body := fmt.Sprintf("package p%04d\n\n%s\n", p, imp) + strings.Repeat("// a line of the change\n", 20)
				os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d.go", i)), []byte(body), 0o644)
			}
		}
		run(splitRepo, "add", "-A")
		run(splitRepo, "commit", "-q", "-m", "the huge change")
		run(splitRepo, "gc", "-q")
	})
	if splitErr != nil {
		b.Fatal(splitErr)
	}
	return splitRepo
}

// BenchmarkSplitPlan10k is wo split --dry-run on a change of 10,000 files
// across 1,000 packages: reading the change from git, parsing the Go
// imports, planning. Targets: under 1 s, under 200 MB.
func BenchmarkSplitPlan10k(b *testing.B) {
	repo := buildSplitRepo(b)
	store := filepath.Join(b.TempDir(), "wo.db")
	var total time.Duration
	var peak int64
	for i := 0; i < b.N; i++ {
		d, rss := measure(b, nil, repo, woBin, "split", "--repo", repo, "--base", "base", "--source", "main",
			"--dry-run", "--store", store, "--max-lines", "800", "--max-files", "40")
		total += d
		peak = max(peak, rss)
	}
	b.ReportMetric(total.Seconds()/float64(b.N), "s/split")
	b.ReportMetric(float64(peak)/1024, "peak-MiB")
}

// BenchmarkGitHubRequestsCodeRabbit counts what one pull request's life
// costs against the stand-in's CodeRabbit mode (its base not the default
// branch, so each head is skipped until wo asks): two rounds, the first
// with two comments fixed by an agent, the second clean with no review
// object. Then a long wait while CodeRabbit's status stays pending: every
// look after the first is four 304s.
func BenchmarkGitHubRequestsCodeRabbit(b *testing.B) {
	var limited, free, waitLooks, waitLimited, waitFree int
	for i := 0; i < b.N; i++ {
		f := newFixture(b, 10)
		gh := ghstandin.New(secretToken)
		gh.Remotes["acme/hermes"] = f.origin
		gh.Mode, gh.ReviewDelay = ghstandin.ModeCodeRabbit, 100*time.Millisecond
		gh.ReviewRounds = [][]ghstandin.Comment{{{Path: "foundation/new0.go", Line: 3, Body: "One."}, {Path: "foundation/new1.go", Line: 3, Body: "Two."}}, {}}
		if err := gh.Start(); err != nil {
			b.Fatal(err)
		}
		f.importTask(f.seedTask("task_cr_01"))
		agent := filepath.Join(f.root, "agent.sh")
		writeFile(b, agent, "#!/bin/sh\necho '// fixed' >> foundation/new0.go\necho '// fixed' >> foundation/new1.go\n")
		os.Chmod(agent, 0o755)
		env := []string{"GITHUB_TOKEN=" + secretToken, "GITHUB_API_URL=" + gh.URL, "WO_REVIEW_WAIT=3m",
			"WO_POLL_INTERVAL=250ms", "WO_AGENT=" + agent}
		if r := f.wo(env, "run", "task_cr_01"); r.code != 0 {
			b.Fatalf("run: %s", r.stderr)
		}
		limited, free = tally(b, gh, limited, free)
		gh.Close()

		// The long wait: a review that stays in progress for the whole of
		// a 3s wait, looked at every 50ms.
		w := newFixture(b, 10)
		slow := ghstandin.New(secretToken)
		slow.Remotes["acme/hermes"] = w.origin
		slow.Mode, slow.ReviewDelay, slow.CodeRabbit.AllBases = ghstandin.ModeCodeRabbit, time.Hour, true
		if err := slow.Start(); err != nil {
			b.Fatal(err)
		}
		w.importTask(w.seedTask("task_cr_01"))
		env = []string{"GITHUB_TOKEN=" + secretToken, "GITHUB_API_URL=" + slow.URL, "WO_REVIEW_WAIT=3s", "WO_POLL_INTERVAL=50ms"}
		if r := w.wo(env, "run", "task_cr_01"); r.code != 3 || !strings.Contains(r.stderr, "review in progress") {
			b.Fatalf("the long wait: exit %d\n%s", r.code, r.stderr)
		}
		for _, req := range slow.Requests() {
			if strings.HasSuffix(req.Path, "/reviews") {
				waitLooks++
			}
			if !strings.Contains(req.Path, "/commits/") && !strings.HasSuffix(req.Path, "/reviews") && !strings.HasSuffix(req.Path, "/issues/1/comments") {
				continue // creating the PR
			}
			if req.Status == 304 {
				waitFree++
			} else {
				waitLimited++
			}
		}
		slow.Close()
	}
	n := float64(b.N)
	b.ReportMetric(float64(limited)/n, "counted-req/lifecycle")
	b.ReportMetric(float64(free)/n, "304/lifecycle")
	b.ReportMetric(float64(waitLooks)/n, "looks/3s-wait")
	b.ReportMetric(float64(waitLimited)/n, "counted-req/3s-wait")
	b.ReportMetric(float64(waitFree)/n, "304/3s-wait")
}

// tally adds the stand-in's requests to the counts of those GitHub
// charges to the rate limit and the free 304s, and logs the charged ones
// by kind.
func tally(b *testing.B, gh *ghstandin.Server, limited, free int) (int, int) {
	var charged []ghstandin.Request
	for _, r := range gh.Requests() {
		if r.Status == 304 {
			free++
		} else {
			limited++
			charged = append(charged, r)
		}
	}
	b.Logf("counted requests: %v", ghstandin.Summarize(charged).ByKind)
	return limited, free
}
