package action

import (
	"context"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/wo-runner/wo/gitops"
	"github.com/wo-runner/wo/internal/gitname"
	"github.com/wo-runner/wo/workorder"
)

// CheckoutFiles brings inputs.file_manifest in from context.source_branch,
// at the commit recorded when the step first ran, and stages it.
type CheckoutFiles struct{}

func newCheckoutFiles() Action { return CheckoutFiles{} }

// Run copies and stages the files.
func (CheckoutFiles) Run(ctx context.Context, sc *StepContext) (Outcome, error) {
	files := manifest(sc)
	if len(files) == 0 && len(stringList(sc.Task().WorkOrder.Inputs["delete_manifest"])) == 0 {
		return Outcome{}, fmt.Errorf("task %s: work_order.inputs.file_manifest is empty: list the files to bring in", sc.Key())
	}
	w, err := sc.Worktree()
	if err != nil {
		return Outcome{}, err
	}
	remade, err := ensureWorktree(ctx, sc, w)
	if err != nil {
		return Outcome{}, err
	}
	source, err := recordedCommit(ctx, sc, sourceSHA, sc.Context("source_branch"), "source_branch")
	if err != nil {
		return Outcome{}, err
	}
	// Files the change deletes (inputs.delete_manifest, as wo split
	// writes).
	deleted := stringList(sc.Task().WorkOrder.Inputs["delete_manifest"])
	// Run again on a branch that moved on: its result may be there
	// already, or writing it would undo commits (branch_work.go).
	repo, err := sc.Repo()
	if err != nil {
		return Outcome{}, err
	}
	head, branch, err := w.Head()
	if err != nil {
		return Outcome{}, err
	}
	done, lost, err := branchWork(sc, repo, head, source, files, deleted, fileParts(sc))
	if err != nil {
		return Outcome{}, err
	}
	if done {
		note := fmt.Sprintf("the %d file(s) from %s (%s) are on branch %s at %s already: nothing to write", len(files), sc.Context("source_branch"), source.String()[:12], branch, gitname.Short(head.String()))
		if remade != "" {
			note = remade + "; " + note
		}
		return Outcome{Note: note}, nil
	}
	if len(lost) > 0 {
		if !sc.Settings().DiscardCommits {
			err := keptWork(sc, branch, lost)
			return Outcome{Status: workorder.StatusBlocked, BlockReason: err.Error(), State: sc.withPhase(workorder.PhaseNeedsFix)}, err
		}
		sc.Log(ctx, "commits_discarded", map[string]any{"step": sc.Step.Step, "branch": branch, "commits": lostSHAs(lost)})
	}
	if err := writeChange(ctx, sc, w, source, files, deleted); err != nil {
		return Outcome{}, err
	}
	note := fmt.Sprintf("%d file(s) checked out from %s (%s)", len(files), sc.Context("source_branch"), source.String()[:12])
	if len(deleted) > 0 {
		note += fmt.Sprintf(", %d deleted", len(deleted))
	}
	return Outcome{Note: note}, nil
}

// writeChange writes files as they are at source (or the lines of them
// that parts names) and removes deleted,
// the deletions checked before anything is written.
func writeChange(ctx context.Context, sc *StepContext, w *gitops.Worktree, source plumbing.Hash, files, deleted []string) error {
	if err := w.CheckRemoveFiles(deleted); err != nil {
		return err
	}
	if err := w.CheckoutFiles(ctx, source, sc.Context("source_branch"), files, fileParts(sc)); err != nil {
		return err
	}
	if err := w.RemoveFiles(deleted); err != nil {
		return err
	}
	sc.Fault("files_written")
	return nil
}

// Check makes sure every manifest file exists at the source commit (the
// recorded one, else the branch's tip) and stays inside the repository.
func (CheckoutFiles) Check(ctx context.Context, sc *StepContext) error {
	files := manifest(sc)
	if len(files) == 0 && len(stringList(sc.Task().WorkOrder.Inputs["delete_manifest"])) == 0 {
		return inDocument(fmt.Errorf("work_order.inputs.file_manifest is empty: list the files to bring in"))
	}
	repo, err := sc.Repo()
	if err != nil {
		return err
	}
	source := sc.State().SourceSHA
	if !plumbing.IsHash(source) {
		h, err := repo.Resolve(sc.Context("source_branch"))
		if err != nil {
			return fmt.Errorf("context.source_branch: %w", err)
		}
		source = h.String()
	}
	if err := repo.CheckFiles(plumbing.NewHash(source), sc.Context("source_branch"), files, fileParts(sc)); err != nil {
		return err
	}
	// A worktree from an earlier run: no link may stand above a path.
	if w, err := sc.Worktree(); err == nil && w.Complete() {
		if err := w.CheckWriteFiles(files); err != nil {
			return err
		}
		return w.CheckRemoveFiles(stringList(sc.Task().WorkOrder.Inputs["delete_manifest"]))
	}
	return nil
}

// Plan lists the files.
func (CheckoutFiles) Plan(sc *StepContext) string {
	files := manifest(sc)
	shown := files
	if len(shown) > 5 {
		shown = append(shown[:5:5], fmt.Sprintf("… and %d more", len(files)-5))
	}
	return fmt.Sprintf("copy %d file(s) from %s and stage them: %s", len(files), sc.Context("source_branch"), strings.Join(shown, ", "))
}

func manifest(sc *StepContext) []string {
	return stringList(sc.Task().WorkOrder.Inputs["file_manifest"])
}

// fileParts are the files of the manifest of which only some lines are
// brought (inputs.file_parts, as wo split writes): path → line ranges.
func fileParts(sc *StepContext) map[string]string {
	in, _ := sc.Task().WorkOrder.Inputs["file_parts"].(map[string]any)
	out := map[string]string{}
	for p, r := range in {
		if s, ok := r.(string); ok {
			out[p] = s
		}
	}
	return out
}

func stringList(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, x := range list {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}
