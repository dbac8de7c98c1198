package integration

// Go starts a package's tests in the order of their files' names, then of
// their declarations. The tests here wait the longest on the clock (one
// waits out CodeRabbit's rate limit of a whole minute), so they should
// start early and the rest of the package run while they wait: the files
// whose names sort before this one hold five tests, fewer than -parallel
// runs at once (TestMain: 4 per core), so these are in the first batch.
// The epic-in-waves test is here for that reason too.

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/wo-runner/wo/integration/ghstandin"
	"github.com/wo-runner/wo/internal/gittest"
	"github.com/wo-runner/wo/workorder"
)

// TestCodeRabbitsNewerRateLimitNoticeIsWaitedOut is one of the situations
// of TestCodeRabbitSituationsEndInReview, on its own because it waits the
// longest: the newer notice gives the wait in whole minutes ("Next review
// available in: **1 minutes**"), and wo waits it out in the run.
func TestCodeRabbitsNewerRateLimitNoticeIsWaitedOut(t *testing.T) {
	t.Parallel()
	codeRabbitCase{
		name: "rate limited, with the newer wording", cfg: func(c *ghstandin.CodeRabbitBot) {
			c.AllBases, c.RateLimit, c.RateLimitWait, c.NewerWording = true, 1, 2*time.Second, true
		},
		commands: "@coderabbitai review",
	}.run(t)
}

// TestCodeRabbitSituationsEndInReview drives the example task through the
// ways CodeRabbit answers on GitHub. Each ends in review, with one pull
// request, one fix round, no request for review posted twice, and without
// waiting out the review wait.
func TestCodeRabbitSituationsEndInReview(t *testing.T) {
	t.Parallel()
	cases := []codeRabbitCase{{
		// The base is not the default branch: every push is skipped
		// until someone asks, and wo asks once for each head.
		name:     "skipped: the base is not the default branch",
		commands: "@coderabbitai review|@coderabbitai review",
	}, {
		name: "a clean re-review posts no review object", cfg: func(c *ghstandin.CodeRabbitBot) { c.AllBases = true },
		check: func(t *testing.T, gh *ghstandin.Server, st workorder.State) {
			if got := gh.Status("acme/hermes", st.PushedSHA); got != "success: Review completed" {
				t.Errorf("status of the fix %q", got)
			}
			if _, ok := st.ReviewVerdicts["coderabbitai[bot]"]; ok {
				t.Errorf("a verdict on the fix, which had no review: %v", st.ReviewVerdicts)
			}
		},
	}, {
		name: "an older CodeRabbit posts a review for a clean re-review", cfg: func(c *ghstandin.CodeRabbitBot) { c.AllBases, c.ReviewObjectWhenClean = true, true },
	}, {
		// Rate limited after its first review: the notice says to wait two
		// seconds, wo waits them in the run, then asks.
		name: "rate limited", cfg: func(c *ghstandin.CodeRabbitBot) {
			c.AllBases, c.RateLimit, c.RateLimitWait = true, 1, 2*time.Second
		},
		commands: "@coderabbitai review",
		check: func(t *testing.T, gh *ghstandin.Server, st workorder.State) {
			if st.ReviewNotBefore != "" {
				t.Errorf("review_not_before %q left after the review", st.ReviewNotBefore)
			}
			if !strings.Contains(strings.Join(st.Notes, "\n"), "asked: @coderabbitai review (coderabbitai[bot], rate_limited)") {
				t.Errorf("the notes do not say wo asked after the limit:\n%s", strings.Join(st.Notes, "\n"))
			}
		},
	}, {
		// Paused after its first reviewed commit: resume, then review.
		name: "paused", cfg: func(c *ghstandin.CodeRabbitBot) { c.AllBases, c.PauseAfter = true, 1 },
		commands: "@coderabbitai resume|@coderabbitai review",
	}, {
		// The first review fails as when the head changes under it.
		name: "review failed: the head changed", cfg: func(c *ghstandin.CodeRabbitBot) { c.AllBases, c.AbortNext = true, 1 },
		commands: "@coderabbitai review",
	}, {
		// Killed just after its request for review was posted: the rerun
		// finds the request and does not post it again.
		name: "skipped, killed after the request", kill: "wait_for_review:after_ask",
		commands: "@coderabbitai review|@coderabbitai review",
	}, {
		name: "paused, killed after the first of its two requests", kill: "wait_for_review:after_ask",
		cfg:      func(c *ghstandin.CodeRabbitBot) { c.AllBases, c.PauseAfter = true, 1 },
		commands: "@coderabbitai resume|@coderabbitai review",
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.run(t)
		})
	}
}

// codeRabbitCase is one of the situations: how the bot is set up, where a
// first run is killed, the requests for review wo posts, and what else
// the task's state shows.
type codeRabbitCase struct {
	name     string
	cfg      func(*ghstandin.CodeRabbitBot)
	kill     string // WO_FAULT of a first run, killed there
	commands string // wo's requests for review, in order
	check    func(*testing.T, *ghstandin.Server, workorder.State)
}

func (c codeRabbitCase) run(t *testing.T) {
	t.Helper()
	f := newFixture(t, 10)
	gh, env := withGitHub(t, f, codeRabbit(c.cfg))
	f.importTask(f.seedTask("task_cr_01"))
	env = reviewEnv(t, f, env)
	if c.kill != "" {
		if r := f.wo(append(env, "WO_FAULT="+c.kill), "run", "task_cr_01"); !r.killed {
			t.Fatalf("not killed at %s: exit %d\n%s", c.kill, r.code, r.stderr)
		}
	}
	st := endsReviewed(t, f, gh, f.wo(env, "run", "task_cr_01"), c.commands)
	if c.check != nil {
		c.check(t, gh, st)
	}
}

func TestSplitAndRunAnEpicInWaves(t *testing.T) {
	t.Parallel()
	f := goModuleFixture(t, 40)
	gh, env := approvingGitHub(t, "acme/big", f.origin)

	r := f.wo(env, "split", "--repo", f.repo, "--base", "base", "--source", "main", "--mode", "stacked",
		"--github-repo", "acme/big", "--worktree-root", f.wtRoot, "--max-lines", "40", "--epic-key", "task_big", "--json")
	if r.code != 0 {
		t.Fatalf("split: exit %d\n%s", r.code, r.stderr)
	}
	var split struct {
		Data struct {
			PRs []struct {
				Number    int
				BlockedBy []int `json:"blocked_by"`
				Files     []struct{ Path string }
			} `json:"prs"`
			Matrix struct{ Include []struct{ Key string } } `json:"matrix"`
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &split); err != nil {
		t.Fatal(err)
	}
	prs := split.Data.PRs
	if len(prs) < 5 {
		t.Fatalf("%d PRs for 40 packages at 40 lines each", len(prs))
	}
	if len(split.Data.Matrix.Include) == 0 {
		t.Error("the matrix has nothing to run")
	}
	// wo status says how long the review takes at the reviewer's rate
	// (two reviews a PR, five an hour by default).
	want := fmt.Sprintf("review estimate: about %d reviews at 5 an hour", 2*len(prs))
	if st := f.wo(env, "status", "task_big", "--wide"); !strings.Contains(st.stdout, want) {
		t.Errorf("wo status does not say %q:\n%s", want, st.stdout)
	}

	r = f.wo(env, "run", "--epic", "task_big", "--parallel", "3")
	if r.code != 0 {
		t.Fatalf("run --epic: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}

	// Every PR's branch holds exactly its manifest on top of its base.
	for _, pr := range prs {
		doc := f.doc(fmt.Sprintf("task_big_pr%02d", pr.Number))
		wo := doc["work_order"].(map[string]any)
		branch := wo["inputs"].(map[string]any)["branch_name"].(string)
		base := wo["context"].(map[string]any)["base_branch"].(string)
		got := strings.Split(gittest.Run(t, f.origin, "diff", "--name-only", "refs/heads/"+base, "refs/heads/"+branch), "\n")
		var want []string
		for _, file := range pr.Files {
			want = append(want, file.Path)
		}
		sort.Strings(want)
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("PR #%d (%s on %s) holds %v, want %v", pr.Number, branch, base, got, want)
		}
		if n := gittest.Run(t, f.origin, "rev-list", "--count", "refs/heads/"+base+"..refs/heads/"+branch); n != "1" {
			t.Errorf("PR #%d: %s commits on top of %s, want 1", pr.Number, n, base)
		}
	}
	if n := len(gh.PullRequests("acme/big")); n != len(prs) {
		t.Errorf("%d pull requests on the stand-in for %d work orders", n, len(prs))
	}
	// The stack is linear: every branch holds the files of every PR it
	// depends on, and the top of the stack is the whole change.
	branchOf := func(n int) string {
		return f.doc(fmt.Sprintf("task_big_pr%02d", n))["work_order"].(map[string]any)["inputs"].(map[string]any)["branch_name"].(string)
	}
	for _, pr := range prs {
		for _, dep := range pr.BlockedBy {
			for _, dp := range prs[dep-1].Files {
				if _, err := exec.Command("git", "-C", f.origin, "cat-file", "-e", "refs/heads/"+branchOf(pr.Number)+":"+dp.Path).CombinedOutput(); err != nil {
					t.Errorf("PR #%d's branch lacks %s of PR #%d, which it depends on", pr.Number, dp.Path, dep)
				}
			}
		}
	}
	top := branchOf(prs[len(prs)-1].Number)
	if diff := gittest.Run(t, f.repo, "diff", "--name-only", "refs/heads/"+top, "main"); diff != "" {
		t.Errorf("the top of the stack (%s) differs from the source tree in:\n%s", top, diff)
	}
	st := f.wo(nil, "status", "task_big", "--json")
	var status struct{ Data []StatusRowJSON }
	if err := json.Unmarshal([]byte(st.stdout), &status); err != nil {
		t.Fatal(err)
	}
	for _, row := range status.Data[1:] {
		if row.Status != "in_review" {
			t.Errorf("%s is %s, want in_review", row.Key, row.Status)
		}
	}
}
