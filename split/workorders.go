package split

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/wo-runner/wo/workorder"
)

// DocOptions say where the work orders will run.
type DocOptions struct {
	EpicKey      string // default: derived from repository, base and source
	KeyPrefix    string // default: the epic key + "_pr"
	Repo         string // GitHub owner/name
	RepoPath     string // the main checkout
	WorktreeRoot string
	Mode         string // independent (default) or stacked
}

// DefaultEpicKey is the same for the same repository, base and source, so
// that a rerun of split finds its own documents.
func DefaultEpicKey(repoPath, base, source string) string {
	h := sha1.Sum([]byte(repoPath + "\x00" + base + "\x00" + source))
	return "task_split_" + hex.EncodeToString(h[:4])
}

// Documents turns a plan into an epic and one work order per PR.
func Documents(p *Plan, o DocOptions) (epic map[string]any, tasks []map[string]any, err error) {
	if o.Mode == "" {
		o.Mode = "independent"
	}
	if o.Mode != "independent" && o.Mode != "stacked" {
		return nil, nil, fmt.Errorf("--mode %q: use independent or stacked", o.Mode)
	}
	if o.EpicKey == "" {
		o.EpicKey = DefaultEpicKey(o.RepoPath, p.Change.BaseRef, p.Change.SourceRef)
	}
	if o.KeyPrefix == "" {
		o.KeyPrefix = o.EpicKey + "_pr"
	}
	for _, k := range []string{o.EpicKey, o.KeyPrefix + "01"} {
		if err := workorder.CheckKey(k); err != nil {
			return nil, nil, err
		}
	}
	now := workorder.Timestamp(workorder.Now())
	key := func(n int) string { return fmt.Sprintf("%s%02d", o.KeyPrefix, n) }
	branch := func(pr *PR) string { return fmt.Sprintf("review/%02d-%s", pr.Number, pr.Slug) }
	lines := 0
	for _, pr := range p.PRs {
		lines += pr.Lines
	}
	epic = map[string]any{
		"_key": o.EpicKey, "type": "epic", "status": string(workorder.StatusOpen), "priority": "medium", "labels": []any{"review-split"},
		"title":       fmt.Sprintf("Review of %s against %s in %d PRs", p.Change.SourceRef, p.Change.BaseRef, len(p.PRs)),
		"description": fmt.Sprintf("Review %d changed files (%d lines) of %s against %s, split by wo split into %d pull requests in dependency order.", len(p.Change.Files), lines, p.Change.SourceRef, p.Change.BaseRef, len(p.PRs)),
		"created_at":  now, "updated_at": now,
		"split": map[string]any{"base": p.Change.BaseRef, "source": p.Change.SourceRef, "base_sha": p.Change.Base.String(),
			"source_sha": p.Change.Source.String(), "mode": o.Mode, "prs": len(p.PRs), "excluded": workorder.AnyList(p.Excluded)},
	}
	if e := p.Estimate; e != nil {
		// What wo status may show: how long the review takes at the
		// reviewer's rate.
		s := epic["split"].(map[string]any)
		s["reviews_per_hour"], s["estimated_reviews"], s["estimated_hours"] = e.ReviewsPerHour, e.Reviews, e.Hours
	}
	// A stack is linear: each PR builds on the one before it in dependency
	// order, so its branch holds everything it depends on (a PR with two
	// blockers stacked on one of them would lack the other's files, and CI
	// on it could not build), and the top of the stack is the whole change.
	stackedOn := map[int]int{}
	stackedUnder := map[int][]int{}
	if o.Mode == "stacked" {
		for i := 1; i < len(p.PRs); i++ {
			prev, cur := p.PRs[i-1].Number, p.PRs[i].Number
			stackedOn[cur] = prev
			stackedUnder[prev] = append(stackedUnder[prev], cur)
		}
	}
	for _, pr := range p.PRs {
		base := p.Change.BaseRef
		if prev, ok := stackedOn[pr.Number]; ok {
			base = branch(p.PRs[prev-1])
		}
		var manifest, deleted []any
		parts := map[string]any{}
		for _, f := range pr.Files {
			if f.Kind == "deleted" {
				deleted = append(deleted, f.Path)
				continue
			}
			manifest = append(manifest, f.Path)
			if f.Part != "" {
				parts[f.Path] = f.Part
			}
			if f.OldPath != "" {
				deleted = append(deleted, f.OldPath)
			}
		}
		inputs := map[string]any{
			"branch_name": branch(pr), "worktree_name": fmt.Sprintf("pr-%02d-%s", pr.Number, pr.Slug),
			"pr_title": pr.Title, "packages": workorder.AnyList(pr.Units), "file_manifest": workorder.AnyList(manifest),
			// file_count is what file_manifest lists, as the validator checks;
			// deletions are in delete_manifest.
			"file_count": len(manifest), "line_count": pr.Lines,
		}
		if len(deleted) > 0 {
			inputs["delete_manifest"] = deleted
		}
		if len(parts) > 0 {
			inputs["file_parts"] = parts
		}
		var blockedBy, blocks []any
		for _, d := range unionInts(pr.BlockedBy, stackedOnList(stackedOn, pr.Number)) {
			blockedBy = append(blockedBy, key(d))
		}
		for _, d := range unionInts(pr.Blocks, stackedUnder[pr.Number]) {
			blocks = append(blocks, key(d))
		}
		ctx := map[string]any{"repo_path": o.RepoPath, "base_branch": base, "source_branch": p.Change.SourceRef,
			"worktree_root": o.WorktreeRoot, "split_mode": o.Mode}
		if o.Repo != "" {
			ctx["repo"] = o.Repo
		}
		doc := map[string]any{
			"_key": key(pr.Number), "title": pr.Title, "type": "task", "status": string(workorder.StatusOpen), "priority": "medium",
			"parent_key": o.EpicKey, "labels": []any{"review-split"}, "created_at": now, "updated_at": now,
			"work_order": map[string]any{
				"version":   "1.0",
				"objective": fmt.Sprintf("Put %s (%d files, %d lines) up for review as pull request %d of %d", pr.Theme, len(pr.Files), pr.Lines, pr.Number, len(p.PRs)),
				"context":   ctx, "inputs": inputs,
				"dependencies":     map[string]any{"blocked_by": workorder.AnyList(blockedBy), "blocks": workorder.AnyList(blocks)},
				"procedure":        ReviewProcedure(o.Repo != ""),
				"success_criteria": criteria(o.Repo != "", base),
				"state":            workorder.InitialState(),
			},
		}
		tasks = append(tasks, doc)
	}
	return epic, tasks, nil
}

func stackedOnList(on map[int]int, n int) []int {
	if prev, ok := on[n]; ok {
		return []int{prev}
	}
	return nil
}

// unionInts is a and b, sorted, each once.
func unionInts(a, b []int) []int {
	out := append(slices.Clone(a), b...)
	slices.Sort(out)
	return slices.Compact(out)
}

// criteria are the success criteria of a split's work order.
func criteria(github bool, base string) []any {
	done := "Task status updated to " + string(workorder.StatusInReview)
	if github {
		return []any{"PR created and targeting " + base, "Automated review passes with no unresolved comments",
			"Worktree cleaned up", done}
	}
	return []any{"Branch pushed with the files of this part only", "Worktree cleaned up", done}
}

// ReviewProcedure is the standard review procedure; without a GitHub
// repository it stops after the push and goes straight to cleanup.
func ReviewProcedure(github bool) []any {
	steps := []map[string]any{
		{"action": "create_worktree", "command": "git worktree add <worktree_root>/<worktree_name> <base_branch>", "description": "Create isolated worktree from <base_branch>"},
		{"action": "create_branch", "command": "git checkout -b <branch_name>", "description": "Create the review branch"},
		{"action": "checkout_files", "command": "git checkout <source_branch> -- <file_manifest>", "description": "Copy the PR's files from <source_branch>"},
		{"action": "commit", "command": "git add -A && git commit -m '<pr_title>'", "description": "Commit them"},
		{"action": "push", "command": "git push -u origin <branch_name>", "description": "Push the branch"},
	}
	if github {
		steps = append(steps,
			map[string]any{"action": "create_pr", "command": "gh pr create --base <base_branch> --title '<pr_title>' --body '<body>'", "description": "Open the pull request"},
			map[string]any{"action": "wait_for_review", "duration_minutes": 10, "description": "Wait for the automated reviewer"},
			map[string]any{"action": "check_review", "command": "gh api repos/<repo>/pulls/<pr_number>/comments", "description": "Check for review comments"},
			map[string]any{"action": "conditional_loop", "condition": "review_comments_exist", "loop_to": 7, "fix_action": "Read comments, fix issues, commit, push", "description": "If comments exist, fix and re-check; else proceed"},
		)
	}
	steps = append(steps,
		map[string]any{"action": "cleanup_worktree", "command": "git worktree remove <worktree_root>/<worktree_name>", "description": "Remove the worktree after the review"},
		map[string]any{"action": "update_task", "description": "Update the task status to in_review, record the PR URL and review result"},
	)
	out := make([]any, len(steps))
	for i, s := range steps {
		s["step"] = i + 1
		out[i] = s
	}
	return out
}

// CheckRerun says whether a plan whose work orders are planned can
// replace the stored children of its epic: the same keys, no more, no
// fewer. Another shape means the change moved too far for a rerun.
func CheckRerun(epicKey string, stored, planned []map[string]any) error {
	have := map[string]bool{}
	for _, c := range stored {
		have[workorder.Key(c)] = true
	}
	same := len(stored) == len(planned)
	for _, t := range planned {
		same = same && have[workorder.Key(t)]
	}
	if !same {
		return fmt.Errorf("epic %s exists with %d work orders, and this plan has %d with other keys: the change's shape moved; give a new --epic-key, or remove the old tasks", epicKey, len(stored), len(planned))
	}
	return nil
}

// Revision is what a rerun does to one stored work order.
type Revision struct {
	Key string
	// Patch is the update to write (new manifests and dependencies), nil
	// when the stored work order already has the plan's files.
	Patch map[string]any
	// Started, when set, says why the work order must be left alone: it
	// has started, so its files are no longer the plan's to change.
	Started string
}

// Revise compares a stored work order with the one a new plan makes for
// the same key.
func Revise(stored, planned map[string]any) Revision {
	r := Revision{Key: workorder.Key(planned)}
	wo := planned["work_order"].(map[string]any)
	newIn := wo["inputs"].(map[string]any)
	newDeps := wo["dependencies"].(map[string]any)
	if samePlan(stored, newIn, newDeps) {
		return r
	}
	step, _ := workorder.AsInt(workorder.Get(stored, "work_order.state.current_step"))
	if status := workorder.StatusOf(stored); step > 0 || status != workorder.StatusOpen {
		r.Started = fmt.Sprintf("%s (status %s, step %d)", r.Key, status, step)
		return r
	}
	r.Patch = map[string]any{
		"updated_at": workorder.Timestamp(workorder.Now()),
		"work_order": map[string]any{"inputs": newIn, "dependencies": newDeps},
	}
	return r
}

// StartedError names the work orders that a rerun must not change.
type StartedError struct{ Started []string }

func (e *StartedError) Error() string {
	return fmt.Sprintf("the source changed, but these work orders have started and were left alone: %s; nothing was written", strings.Join(e.Started, ", "))
}

// samePlan compares the files, deletions and dependencies of a stored work
// order with a new plan's. Dependencies count on their own: an edit can
// drop an import without changing which files a PR holds.
func samePlan(old, in, deps map[string]any) bool {
	for _, f := range []string{"file_manifest", "delete_manifest", "branch_name"} {
		if fmt.Sprint(workorder.Get(old, "work_order.inputs."+f)) != fmt.Sprint(in[f]) {
			return false
		}
	}
	for _, f := range []string{"blocked_by", "blocks"} {
		if fmt.Sprint(workorder.Get(old, "work_order.dependencies."+f)) != fmt.Sprint(deps[f]) {
			return false
		}
	}
	return true
}

// Ready lists the work orders that can start now: their blockers closed
// (independent mode) or pushed (stacked mode). It is what --emit-matrix
// prints.
func Ready(docs []map[string]any) []string {
	byKey := map[string]map[string]any{}
	for _, d := range docs {
		byKey[d["_key"].(string)] = d
	}
	var out []string
	for _, d := range docs {
		if workorder.String(d, "type") == "epic" {
			continue
		}
		switch workorder.StatusOf(d) {
		case workorder.StatusOpen, workorder.StatusInProgress, workorder.StatusBlocked:
		default:
			continue
		}
		ok := true
		deps, _ := workorder.Get(d, "work_order.dependencies.blocked_by").([]any)
		for _, x := range deps {
			if !workorder.BlockerSatisfied(d, byKey[fmt.Sprint(x)]) {
				ok = false
			}
		}
		if ok {
			out = append(out, d["_key"].(string))
		}
	}
	sort.Strings(out)
	return out
}
