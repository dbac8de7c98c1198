package split

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"

	"github.com/wo-runner/wo/store"
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
		"_key": o.EpicKey, "type": "epic", "status": "open", "priority": "medium", "labels": []any{"review-split"},
		"title":       fmt.Sprintf("Review of %s against %s in %d PRs", p.Change.SourceRef, p.Change.BaseRef, len(p.PRs)),
		"description": fmt.Sprintf("Review %d changed files (%d lines) of %s against %s, split by wo split into %d pull requests in dependency order.", len(p.Change.Files), lines, p.Change.SourceRef, p.Change.BaseRef, len(p.PRs)),
		"created_at":  now, "updated_at": now,
		"split": map[string]any{"base": p.Change.BaseRef, "source": p.Change.SourceRef, "base_sha": p.Change.Base.String(),
			"source_sha": p.Change.Source.String(), "mode": o.Mode, "prs": len(p.PRs), "excluded": workorder.AnyList(p.Excluded)},
	}
	for _, pr := range p.PRs {
		base := p.Change.BaseRef
		if o.Mode == "stacked" && len(pr.BlockedBy) > 0 {
			base = branch(p.PRs[pr.BlockedBy[len(pr.BlockedBy)-1]-1])
		}
		var manifest, deleted []any
		for _, f := range pr.Files {
			if f.Kind == "deleted" {
				deleted = append(deleted, f.Path)
				continue
			}
			manifest = append(manifest, f.Path)
			if f.OldPath != "" {
				deleted = append(deleted, f.OldPath)
			}
		}
		inputs := map[string]any{
			"branch_name": branch(pr), "worktree_name": fmt.Sprintf("pr-%02d-%s", pr.Number, pr.Slug),
			"pr_title": pr.Title, "packages": workorder.AnyList(pr.Units), "file_manifest": workorder.AnyList(manifest),
			"file_count": len(pr.Files), "line_count": pr.Lines,
		}
		if len(deleted) > 0 {
			inputs["delete_manifest"] = deleted
		}
		var blockedBy, blocks []any
		for _, d := range pr.BlockedBy {
			blockedBy = append(blockedBy, key(d))
		}
		for _, d := range pr.Blocks {
			blocks = append(blocks, key(d))
		}
		ctx := map[string]any{"repo_path": o.RepoPath, "base_branch": base, "source_branch": p.Change.SourceRef,
			"worktree_root": o.WorktreeRoot, "split_mode": o.Mode}
		if o.Repo != "" {
			ctx["repo"] = o.Repo
		}
		doc := map[string]any{
			"_key": key(pr.Number), "title": pr.Title, "type": "task", "status": "open", "priority": "medium",
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

// criteria are the success criteria of a split's work order.
func criteria(github bool, base string) []any {
	if github {
		return []any{"PR created and targeting " + base, "Automated review passes with no unresolved comments",
			"Worktree cleaned up", "Task status updated to in_review"}
	}
	return []any{"Branch pushed with the files of this part only", "Worktree cleaned up", "Task status updated to in_review"}
}

// ReviewProcedure is the seed's standard procedure; without a GitHub
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

// WriteResult says what Write did.
type WriteResult struct {
	Created []string `json:"created,omitempty"`
	Updated []string `json:"updated,omitempty"`
	Same    []string `json:"unchanged,omitempty"`
}

// Write stores the epic and its work orders. On a first run all are created
// in one all-or-nothing import. On a rerun with the same keys, work orders
// whose manifest changed are updated if they have not started; a started
// one is refused (nothing is written), and a plan of another shape too.
func Write(ctx context.Context, s store.Store, epic map[string]any, tasks []map[string]any) (*WriteResult, error) {
	epicKey := epic["_key"].(string)
	_, err := s.Get(ctx, epicKey)
	if store.IsNotFound(err) {
		docs := append([]map[string]any{epic}, tasks...)
		if err := s.Create(ctx, docs...); err != nil {
			return nil, err
		}
		res := &WriteResult{}
		for _, d := range docs {
			res.Created = append(res.Created, d["_key"].(string))
		}
		return res, nil
	}
	if err != nil {
		return nil, err
	}
	children, err := s.List(ctx, store.Filter{ParentKey: epicKey})
	if err != nil {
		return nil, err
	}
	have := map[string]map[string]any{}
	for _, c := range children {
		have[c["_key"].(string)] = c
	}
	var want []string
	for _, t := range tasks {
		want = append(want, t["_key"].(string))
	}
	if len(have) != len(tasks) || !sameKeys(have, want) {
		return nil, fmt.Errorf("epic %s exists with %d work orders, and this plan has %d with other keys: the change's shape moved; give a new --epic-key, or remove the old tasks", epicKey, len(have), len(tasks))
	}
	res := &WriteResult{}
	type update struct {
		key, rev string
		patch    map[string]any
	}
	var updates []update
	var started []string
	for _, t := range tasks {
		k := t["_key"].(string)
		old := have[k]
		newIn := t["work_order"].(map[string]any)["inputs"].(map[string]any)
		if sameManifest(old, newIn) {
			res.Same = append(res.Same, k)
			continue
		}
		step, _ := workorder.AsInt(workorder.Get(old, "work_order.state.current_step"))
		if step > 0 || workorder.String(old, "status") != "open" {
			started = append(started, fmt.Sprintf("%s (status %s, step %d)", k, workorder.String(old, "status"), step))
			continue
		}
		updates = append(updates, update{key: k, rev: old["_rev"].(string), patch: map[string]any{
			"updated_at": workorder.Timestamp(workorder.Now()),
			"work_order": map[string]any{"inputs": newIn, "dependencies": t["work_order"].(map[string]any)["dependencies"]},
		}})
	}
	if len(started) > 0 {
		return nil, fmt.Errorf("the source changed, but these work orders have started and were left alone: %s; nothing was written", strings.Join(started, ", "))
	}
	for _, u := range updates {
		if _, err := s.Update(ctx, u.key, u.rev, u.patch); err != nil {
			return res, fmt.Errorf("updating %s: %w", u.key, err)
		}
		res.Updated = append(res.Updated, u.key)
	}
	return res, nil
}

func sameKeys(have map[string]map[string]any, want []string) bool {
	for _, k := range want {
		if have[k] == nil {
			return false
		}
	}
	return true
}

// sameManifest compares the files and deletions of a stored work order
// with a new plan's.
func sameManifest(old map[string]any, in map[string]any) bool {
	for _, f := range []string{"file_manifest", "delete_manifest", "branch_name"} {
		if fmt.Sprint(workorder.Get(old, "work_order.inputs."+f)) != fmt.Sprint(in[f]) {
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
		status := workorder.String(d, "status")
		if status != "open" && status != "in_progress" && status != "blocked" {
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
