package stack

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wo-runner/wo/integration/ghstandin"
	"github.com/wo-runner/wo/internal/gittest"
	"github.com/wo-runner/wo/procedure"
	"github.com/wo-runner/wo/procedure/internal/fixture"
	"github.com/wo-runner/wo/workorder"
)

// restackable is stackOnStandin with three parts split in stacked mode,
// each recorded as wo pushed it: its branch, its file, the commit it is
// built on and its head.
func restackable(t *testing.T) *stepHarness {
	t.Helper()
	return restackableWith(t, nil)
}

// restackableWith is restackable on a stand-in set up by standIn.
func restackableWith(t *testing.T, standIn func(*ghstandin.Server)) *stepHarness {
	t.Helper()
	h := stackOnStandinWith(t, 3, standIn)
	parent := gittest.Run(t, h.Repo, "rev-parse", fixture.Base)
	for i := 1; i <= 3; i++ {
		branch := fmt.Sprintf("review/%02d-part", i)
		head := gittest.Run(t, h.Repo, "rev-parse", branch)
		h.patch(fmt.Sprintf("task_ep_pr%02d", i), map[string]any{"work_order": map[string]any{
			"objective": fmt.Sprintf("Put part %d up for review", i),
			"context":   map[string]any{"split_mode": "stacked", "repo_path": h.Repo, "base_branch": fixture.Base},
			"inputs":    map[string]any{"branch_name": branch, "file_manifest": []any{fmt.Sprintf("part%d.txt", i)}},
			"state":     map[string]any{"pushed_sha": head, "base_sha": parent, "stack_parent": parent}}})
		parent = head
	}
	return h
}

// squashMerge lands part 1 on the base as one new commit, as GitHub's
// squash merge does, and marks its pull request merged.
func squashMerge(t *testing.T, h *stepHarness) string {
	t.Helper()
	gittest.Run(t, h.Repo, "checkout", "-q", fixture.Base)
	fixture.WriteFile(t, filepath.Join(h.Repo, "part1.txt"), "part\n")
	gittest.Run(t, h.Repo, "add", "-A")
	gittest.Run(t, h.Repo, "commit", "-q", "-m", "[1/3] part 1 (#1)")
	gittest.Run(t, h.Repo, "push", "-q", "origin", fixture.Base)
	h.GH.Merge(fixture.Repo, 1)
	return gittest.Run(t, h.Repo, "rev-parse", fixture.Base)
}

func TestARestackAfterASquashMergeRebuildsEachPartOnTheOneUnderIt(t *testing.T) {
	h := restackable(t)
	k := h.engine()
	if res, err := k.Restack(h.ctx, "task_ep", RestackOptions{}); err != nil || len(res.Steps) != 3 || res.Steps[1].Outcome != "unchanged" || res.Steps[2].Outcome != "unchanged" {
		t.Fatalf("a stack already in place: %v %+v", err, res)
	}
	base := squashMerge(t, h)
	res, err := k.Restack(h.ctx, "task_ep", RestackOptions{})
	if err != nil || res.Stopped != "" {
		t.Fatalf("restack: %v %+v", err, res)
	}
	var outcomes []string
	for _, s := range res.Steps {
		outcomes = append(outcomes, s.Outcome)
	}
	if got := strings.Join(outcomes, " "); got != "merged restacked restacked" {
		t.Fatalf("outcomes %s, want merged restacked restacked (%+v)", got, res.Steps)
	}
	// Each rebuilt branch is its own file on top of the one under it, on
	// the remote, and recorded so.
	below := base
	for i := 2; i <= 3; i++ {
		branch := fmt.Sprintf("review/%02d-part", i)
		tip := gittest.Run(t, h.Remote, "rev-parse", branch)
		if parent := gittest.Run(t, h.Remote, "rev-parse", tip+"^"); parent != below {
			t.Errorf("%s is built on %s, want %s", branch, parent, below)
		}
		if files := gittest.Run(t, h.Remote, "diff", "--name-only", below, tip); files != fmt.Sprintf("part%d.txt", i) {
			t.Errorf("%s changes %q, want only its own part%d.txt", branch, files, i)
		}
		if res.Steps[i-1].Head != tip {
			t.Errorf("part %d's step says head %s, the remote has %s", i, res.Steps[i-1].Head, tip)
		}
		st := h.StateOf(fmt.Sprintf("task_ep_pr%02d", i))
		if st.PushedSHA != tip || st.StackParent != below || st.Restack == nil || st.Restack.Outcome != "restacked" || st.Restack.To != tip {
			t.Errorf("part %d's state: pushed %s, parent %s, restack %+v", i, st.PushedSHA, st.StackParent, st.Restack)
		}
		below = tip
	}
	// Part 2 targets the base now; part 1's task is closed.
	pr2, err := h.Client().GetPR(h.ctx, 2)
	if err != nil || pr2.Base != fixture.Base {
		t.Errorf("#2 targets %v (%v), want %s", pr2.Base, err, fixture.Base)
	}
	// What wo sync prints of it ("onto …") is the base it targets now.
	if res.Steps[1].Base != fixture.Base {
		t.Errorf("part 2's step says base %q, the PR targets %s", res.Steps[1].Base, fixture.Base)
	}
	if st := h.StateOf("task_ep_pr02"); st.StackBase != fixture.Base {
		t.Errorf("part 2 records stack base %q, want %s", st.StackBase, fixture.Base)
	}
	if doc, _ := h.store.Get(h.ctx, "task_ep_pr01"); workorder.StatusOf(doc) != workorder.StatusClosed {
		t.Errorf("the merged part is %s, want closed", workorder.StatusOf(doc))
	}
	// Again: nothing to do.
	if res, err := k.Restack(h.ctx, "task_ep", RestackOptions{}); err != nil || res.Steps[1].Outcome != "unchanged" || res.Steps[2].Outcome != "unchanged" {
		t.Errorf("a second restack: %v %+v", err, res)
	}
}

func TestARestackLeavesABranchSomeoneElsePushedTo(t *testing.T) {
	h := restackable(t)
	k := h.engine()
	squashMerge(t, h)
	theirs := fixture.SomeonePushes(t, h.Root, h.Remote, "review/02-part", "review/02-part")
	res, err := k.Restack(h.ctx, "task_ep", RestackOptions{})
	var stop *RestackError
	if !errors.As(err, &stop) || procedure.Classify(err).Code != "RESTACK_STOPPED" || procedure.Classify(err).Outcome != procedure.OutcomeWaiting {
		t.Fatalf("restack over someone's push: %v (%+v), want a RestackError, waiting", err, procedure.Classify(err))
	}
	if len(res.Steps) != 2 || res.Steps[1].Outcome != "left" || !strings.Contains(res.Stopped, "was pushed to by someone else") || !strings.Contains(res.Stopped, "wo sync --continue") {
		t.Errorf("the stop: %+v", res)
	}
	if got := gittest.Run(t, h.Remote, "rev-parse", "review/02-part"); got != theirs {
		t.Errorf("their push was replaced: %s, want %s", got, theirs)
	}
	if st := h.StateOf("task_ep_pr02"); st.Restack == nil || st.Restack.Outcome != "left" {
		t.Errorf("part 2 records %+v, want left", st.Restack)
	}
}

func TestALandOfAStackedEpicRestacksBetweenMergesAndMergesTheNewHeads(t *testing.T) {
	h := restackableWith(t, func(gh *ghstandin.Server) {
		gh.Stacks = true
		gh.MergeDelay = time.Millisecond
		gh.Writers = map[string]bool{"alice": true}
	})
	for i := 1; i <= 3; i++ {
		h.patch(fmt.Sprintf("task_ep_pr%02d", i), map[string]any{"status": "in_review"})
		h.GH.AddReview(fixture.Repo, i, "alice", "APPROVED", "Looks right.")
	}
	// The default wait for each asynchronous merge; polled often.
	var said []string
	res, err := h.engine().Land(h.ctx, LandOptions{Epic: "task_ep", PollEvery: time.Millisecond, Progress: func(s string) { said = append(said, s) }})
	if err != nil || !res.Complete || !res.GitHubStacks || len(res.Warnings) != 0 {
		t.Fatalf("land: %v %+v", err, res)
	}
	for i, s := range res.Steps {
		if s.Outcome != "merged" || s.SHA == "" {
			t.Errorf("part %d: %+v, want merged", i+1, s)
		}
		if want := fmt.Sprintf("merged #%d at %s", i+1, s.SHA[:min(12, len(s.SHA))]); !slices.Contains(said, want) {
			t.Errorf("the land did not say %q: %q", want, said)
		}
	}
	if !slices.Contains(said, "restacking the pull requests above #1") {
		t.Errorf("the land did not say it restacked: %q", said)
	}
	// Parts 2 and 3 were rebuilt on what merged under them before their
	// merge, so the base holds each part's file once, and nothing else.
	if files := gittest.Run(t, h.Remote, "ls-tree", "--name-only", fixture.Base); !strings.Contains(files, "part1.txt\npart2.txt\npart3.txt") {
		t.Errorf("the base after the land holds:\n%s", files)
	}
	for i := 2; i <= 3; i++ {
		if st := h.StateOf(fmt.Sprintf("task_ep_pr%02d", i)); st.Restack == nil || st.Restack.Outcome != "restacked" {
			t.Errorf("part %d was not restacked before its merge: %+v", i, st.Restack)
		}
	}
	if st := h.epicState().Land; st == nil || fmt.Sprint(st.Checked) != "[1 2 3]" || fmt.Sprint(st.Merged) != "[1 2 3]" || st.Finished == "" {
		t.Errorf("the epic's land record: %+v", st)
	}
	if records := h.GH.MergeRecords(fixture.Repo); len(records) != 3 || !records[2].Async {
		t.Errorf("merges: %+v, want three through the asynchronous merge", records)
	}
}

func TestABaseMovedElsewhereRebuildsNothingUnlessAsked(t *testing.T) {
	h := restackable(t)
	k := h.engine()
	// An unrelated push to the base: no PR's files.
	gittest.Run(t, h.Repo, "checkout", "-q", fixture.Base)
	fixture.WriteFile(t, filepath.Join(h.Repo, "other.txt"), "other\n")
	gittest.Run(t, h.Repo, "add", "-A")
	gittest.Run(t, h.Repo, "commit", "-q", "-m", "unrelated")
	gittest.Run(t, h.Repo, "push", "-q", "origin", fixture.Base)
	before := gittest.Run(t, h.Remote, "rev-parse", "review/01-part")
	res, err := k.Restack(h.ctx, "task_ep", RestackOptions{})
	if err != nil || res.Steps[0].Outcome != "unchanged" || !strings.Contains(res.Steps[0].Reason, "moved, but not in this PR's files") {
		t.Fatalf("after an unrelated push: %v %+v", err, res)
	}
	if got := gittest.Run(t, h.Remote, "rev-parse", "review/01-part"); got != before {
		t.Errorf("part 1 was pushed (%s, was %s)", got, before)
	}
	// Asked to, wo rebuilds the bottom onto the base, and the parts above.
	res, err = k.Restack(h.ctx, "task_ep", RestackOptions{OntoBase: true})
	if err != nil || res.Steps[0].Outcome != "restacked" || res.Steps[1].Outcome != "restacked" || res.Steps[2].Outcome != "restacked" {
		t.Fatalf("--onto-base: %v %+v", err, res)
	}
	tip := gittest.Run(t, h.Remote, "rev-parse", "review/01-part")
	if parent := gittest.Run(t, h.Remote, "rev-parse", tip+"^"); parent != gittest.Run(t, h.Remote, "rev-parse", fixture.Base) {
		t.Errorf("part 1 is built on %s, not the base's tip", parent)
	}
}
