package integration

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/wo-runner/wo/internal/gittest"
)

var (
	realOnce     sync.Once
	realDir      string
	realManifest []string
	realErr      error
)

// buildRealisticRepo runs scripts/realisticrepo once per test binary: a
// repository with 1,200 commits of history packed with delta chains, ~330
// files, a bare remote with the base branch, and a 37-file change.
func buildRealisticRepo(b *testing.B) (dir string, manifest []string) {
	realOnce.Do(func() {
		root, err := os.MkdirTemp("", "wo-realistic-")
		if err != nil {
			realErr = err
			return
		}
		realDir = filepath.Join(root, "r")
		cmd := exec.Command("go", "run", "../scripts/realisticrepo", "-out", realDir)
		if out, err := cmd.CombinedOutput(); err != nil {
			realErr = fmt.Errorf("scripts/realisticrepo: %v\n%s", err, out)
			return
		}
		data, err := os.ReadFile(filepath.Join(realDir, "manifest.txt"))
		if err != nil {
			realErr = err
			return
		}
		realManifest = strings.Fields(string(data))
	})
	if realErr != nil {
		b.Fatal(realErr)
	}
	return realDir, realManifest
}

func jsonArray(doc map[string]any) ([]byte, error) { return json.Marshal([]any{doc}) }

// gitHalfTask is a work order of the review procedure's git steps:
// create_worktree, create_branch, checkout_files, commit, push,
// cleanup_worktree.
func gitHalfTask(key, repo, wtRoot, name string, manifest []string) map[string]any {
	m := make([]any, len(manifest))
	for i, p := range manifest {
		m[i] = p
	}
	var steps []any
	for _, s := range gitProcedure() {
		if a := s.(map[string]any)["action"]; a != "update_task" {
			steps = append(steps, s)
		}
	}
	for i, s := range steps {
		s.(map[string]any)["step"] = i + 1
	}
	return map[string]any{"_key": key, "title": "PR #1: bench", "status": "open", "type": "task",
		"work_order": map[string]any{"version": "1.0", "objective": "Benchmark the git half of the review procedure",
			"context":   map[string]any{"repo_path": repo, "base_branch": "review-base", "source_branch": "main", "worktree_root": wtRoot},
			"inputs":    map[string]any{"branch_name": "bench/" + name, "worktree_name": name, "pr_title": "PR #1: bench", "file_manifest": m},
			"procedure": steps}}
}

// BenchmarkGitHalfRealHistory compares `wo run` of the git half of the
// review procedure (create_worktree, create_branch, checkout_files of 37
// files, commit, push to a local bare remote, cleanup_worktree) with the
// git command doing the same, as whole processes, on a repository with a
// realistic history (scripts/realisticrepo). wo's time includes its
// process start, opening the store, the lease and every write-back.
// Target: wo/git-median at most 1.0.
func BenchmarkGitHalfRealHistory(b *testing.B) {
	dir, manifest := buildRealisticRepo(b)
	wo := benchWo(b)
	repo := filepath.Join(dir, "repo")
	work := b.TempDir()
	store := filepath.Join(work, "wo.db")
	for n := 0; n < b.N; n++ {
		benchSeq++
		run := benchSeq
		pairs := benchPairs()
		for i := 0; i < pairs; i++ {
			importDoc(b, wo, store, gitHalfTask(fmt.Sprintf("task_rh%d_%d", run, i), repo, work, fmt.Sprintf("wo-%d-%d", run, i), manifest))
		}
		res := comparePairs(b, pairs, func(i int) sample {
			wt := filepath.Join(work, fmt.Sprintf("git-%d-%d", run, i))
			branch := fmt.Sprintf("bench/git-%d-%d", run, i)
			var s sample
			s.add(runMeasured(b, nil, repo, "git", "worktree", "add", "-q", "--detach", wt, "review-base"))
			s.add(runMeasured(b, nil, wt, "git", "checkout", "-q", "-b", branch))
			s.add(runMeasured(b, nil, wt, "git", append([]string{"checkout", "main", "--"}, manifest...)...))
			s.add(runMeasured(b, nil, wt, "git", "commit", "-q", "-m", "PR #1: bench"))
			s.add(runMeasured(b, nil, wt, "git", "push", "-q", "origin", branch))
			s.add(runMeasured(b, nil, repo, "git", "worktree", "remove", wt))
			return s
		}, func(i int) sample {
			s := runMeasured(b, nil, work, wo, "run", fmt.Sprintf("task_rh%d_%d", run, i), "--store", store)
			branch := fmt.Sprintf("bench/wo-%d-%d", run, i)
			if got := gittest.Run(b, filepath.Join(dir, "origin.git"), "diff", "--name-only", "review-base", branch); len(strings.Fields(got)) != len(manifest) {
				b.Fatalf("wo pushed %s with %d changed files, want %d:\n%s", branch, len(strings.Fields(got)), len(manifest), got)
			}
			return s
		})
		res.report(b, "ms")
	}
}
