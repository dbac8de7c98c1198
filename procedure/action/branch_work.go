package action

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/wo-runner/wo/gitops"
	"github.com/wo-runner/wo/internal/gitname"
)

// A rerun never drops work that is on the branch. A step that writes the
// work order's files (checkout_files), run again on a branch that has
// moved on since it first ran — a review fix, a person's commit, a
// restack — looks first: when the branch already holds the step's result
// the step is done and writes nothing; when writing would undo commits
// on the branch, it stops before changing anything, names them and the
// ways on, unless the run was told --discard-commits.

// maxBranchWork bounds the commits looked at on the branch.
const maxBranchWork = 200

// lostCommit is a commit on the branch whose change a step would undo.
type lostCommit struct {
	SHA, Subject string
	Paths        []string
}

// branchWork compares the step's result (files at source, deleted gone)
// with the branch at head: done when head holds it; otherwise the commits
// since the branch's base (state.base_sha) that changed the files that
// differ. A branch that is not a line on its base names no commit: all of
// it is at stake.
func branchWork(sc *StepContext, repo *gitops.Repo, head, source plumbing.Hash, files, deleted []string, parts map[string]string) (done bool, lost []lostCommit, err error) {
	differ, err := differingFiles(repo, head, source, files, deleted, parts)
	if err != nil || len(differ) == 0 {
		return err == nil, nil, err
	}
	base := sc.State().BaseSHA
	if !plumbing.IsHash(base) || base == head.String() {
		return false, nil, nil // nothing on the branch yet: the first run, or one that stopped before its commit
	}
	changes, err := repo.LineChanges(plumbing.NewHash(base), head, maxBranchWork)
	var notLine *gitops.NotALineError
	if errors.As(err, &notLine) {
		return false, []lostCommit{{SHA: head.String(), Subject: "(the branch's history since its base: " + notLine.Error() + ")", Paths: differ}}, nil
	}
	if err != nil {
		return false, nil, err
	}
	// A commit that left a file as the step writes it made the step's own
	// change (wo's commit of it): only the others' would be undone.
	ours := func(c gitops.PathChange) bool {
		at, err := repo.Commit(c.Commit)
		if err != nil {
			return false
		}
		got, gerr := at.File(c.Path)
		hash, mode, serr := repo.WantedFile(source, c.Path, parts[c.Path])
		if serr != nil { // a file the step deletes
			return gerr != nil
		}
		return gerr == nil && got.Hash == hash && got.Mode == mode
	}
	index := map[plumbing.Hash]int{}
	for _, c := range changes {
		if !slices.Contains(differ, c.Path) || ours(c) {
			continue
		}
		i, ok := index[c.Commit]
		if !ok {
			subject := ""
			if commit, err := repo.Commit(c.Commit); err == nil {
				subject = firstLine(commit.Message)
			}
			i = len(lost)
			index[c.Commit] = i
			lost = append(lost, lostCommit{SHA: c.Commit.String(), Subject: subject})
		}
		lost[i].Paths = append(lost[i].Paths, c.Path)
	}
	return false, lost, nil
}

// differingFiles are the files whose content at head is not the step's:
// a manifest file not as at source, a deleted one still there.
func differingFiles(repo *gitops.Repo, head, source plumbing.Hash, files, deleted []string, parts map[string]string) ([]string, error) {
	at, err := repo.Commit(head)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, p := range files {
		hash, mode, err := repo.WantedFile(source, p, parts[p])
		if err != nil {
			out = append(out, p) // not at the source: the step says so itself
			continue
		}
		got, err := at.File(p)
		if err != nil || got.Hash != hash || got.Mode != mode {
			out = append(out, p)
		}
	}
	for _, p := range deleted {
		if _, err := at.File(p); err == nil {
			out = append(out, p)
		}
	}
	return out, nil
}

// keptWork is the waiting error of a step that would undo the commits
// lost: nothing was changed, and here is how to go on.
func keptWork(sc *StepContext, branch string, lost []lostCommit) error {
	var named []string
	for i, c := range lost {
		if i == 5 {
			named = append(named, fmt.Sprintf("and %d more", len(lost)-5))
			break
		}
		named = append(named, fmt.Sprintf("%s %q (%s)", gitname.Short(c.SHA), c.Subject, strings.Join(c.Paths, ", ")))
	}
	after := sc.Step.Step
	for _, s := range sc.Task().WorkOrder.Procedure {
		if s.Step > sc.Step.Step && s.Action == "commit" {
			after = s.Step
			break
		}
	}
	reason := fmt.Sprintf("step %d (%s) would undo work on branch %s: %d commit(s) since the branch's base changed its files: %s; nothing was changed. "+
		"To keep them, go on after the commit they build on: wo run %s --from-step %d; to take back what wo made: wo undo %s; to drop their changes with a new commit: wo run %s --discard-commits",
		sc.Step.Step, sc.Step.Action, branch, len(lost), strings.Join(named, "; "), sc.Key(), after+1, sc.Key(), sc.Key())
	return &WaitingError{Key: sc.Key(), Reason: reason}
}

// ensureWorktree makes the work order's worktree again at its branch when
// a step that needs it finds it gone (a reset to a step after the
// worktree was made, once it was cleaned up): the branch holds the work.
func ensureWorktree(ctx context.Context, sc *StepContext, w *gitops.Worktree) (string, error) {
	if w.Complete() {
		return "", nil
	}
	repo, err := sc.Repo()
	if err != nil {
		return "", err
	}
	branch, err := sc.Branch()
	if err != nil {
		return "", err
	}
	tip, ok, err := repo.BranchHash(branch)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", fmt.Errorf("worktree %s does not exist: run the create_worktree step first (wo reset %s --to-step 0)", w.Path, sc.Key())
	}
	w.Owner = sc.Key()
	if err := w.Create(ctx, tip, nil); err != nil {
		return "", err
	}
	if _, err := w.SwitchBranch(branch); err != nil {
		return "", err
	}
	st := sc.State()
	path := w.Path
	st.WorktreePath = &path
	if err := sc.Checkpoint(ctx, st); err != nil {
		return "", err
	}
	return fmt.Sprintf("worktree %s made again at branch %s (%s)", w.Path, branch, gitname.Short(tip.String())), nil
}

func lostSHAs(lost []lostCommit) []string {
	out := make([]string, len(lost))
	for i, c := range lost {
		out[i] = c.SHA
	}
	return out
}
