package stack

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/wo-runner/wo/github"
	"github.com/wo-runner/wo/gitops"
	"github.com/wo-runner/wo/procedure"
	"github.com/wo-runner/wo/procedure/action"
	"github.com/wo-runner/wo/workorder"
)

// A stack of review PRs outlives its first review: the bottom PR is
// merged (often squash-merged, one new commit git cannot tell equals the
// branch's), a fix lands in a lower PR, the base moves. Restack keeps the
// stack true: each open PR targets the branch under it (the base once
// everything under it merged), and its branch is its own change on top of
// that branch's head — rebuilt by construction from what the branch
// changed since the parent it was built on (state.stack_parent), never by
// replaying commits, so a squash merge causes no phantom conflict. Only
// what changed is pushed, with a lease on what wo pushed last: a branch
// someone else pushed to is left alone and reported. A restacked PR goes
// back to its review wait, as after a fix push.

// RestackOptions say how far a restack goes.
type RestackOptions struct {
	// OntoBase rebuilds the bottom of the stack onto a base that moved by
	// an unrelated push (by default it is left: a force-push wakes every
	// reviewer, and GitHub shows each PR's own files anyway, unless the
	// push touched them).
	OntoBase bool
	// Continue takes a branch a person rebased after a conflict, when it
	// is built on the parent wo named.
	Continue bool
}

// RestackStep is what a restack did to one PR of the stack.
type RestackStep struct {
	Key    string `json:"key"`
	PR     int    `json:"pr_number,omitempty"`
	Branch string `json:"branch"`
	// Outcome: merged, restacked, unchanged, conflict, left (someone
	// else's push), refused (the push gate refused the rebuilt commit),
	// closed (closed without merging), not_opened.
	Outcome   string   `json:"outcome"`
	Base      string   `json:"base,omitempty"` // what the PR targets now
	Head      string   `json:"head,omitempty"`
	Conflicts []string `json:"conflicts,omitempty"`
	Reason    string   `json:"reason,omitempty"`
}

// RestackResult is what a restack of an epic did.
type RestackResult struct {
	Epic  string        `json:"epic"`
	Steps []RestackStep `json:"steps"`
	// Stopped says why the PRs above a step were left as they are.
	Stopped string `json:"stopped,omitempty"`
}

// RestackError says a restack stopped at a branch a person must look at:
// a conflict, or someone else's push (exit 3).
type RestackError struct{ Reason string }

func (e *RestackError) Error() string { return e.Reason }

// Classification: the restack waits for a person.
func (e *RestackError) Classification() procedure.Classification {
	return procedure.Classification{Outcome: procedure.OutcomeWaiting, Code: "RESTACK_STOPPED"}
}

// Restack brings an epic's stack of PRs up to date (see above). An epic
// whose children are not a stack (independent mode) has nothing to
// restack.
func (k *Keeper) Restack(ctx context.Context, epicKey string, o RestackOptions) (*RestackResult, error) {
	k.e.FillDefaults()
	children, edges, err := k.e.EpicChildren(ctx, epicKey)
	if err != nil {
		return nil, err
	}
	res := &RestackResult{Epic: epicKey, Steps: []RestackStep{}}
	stack := action.StackOf(children, edges)
	byKey := map[string]workorder.Document{}
	for _, d := range children {
		byKey[workorder.Key(d)] = d
	}
	if len(stack) == 0 || workorder.String(byKey[stack[0].Key], "work_order.context.split_mode") != "stacked" {
		return res, nil
	}
	first := byKey[stack[0].Key]
	repoPath := workorder.String(first, "work_order.context.repo_path")
	base := workorder.String(first, "work_order.context.base_branch")
	remote := workorder.String(first, "work_order.context.remote")
	repo, err := gitops.Open(repoPath)
	if err != nil {
		// A sync from a machine without the repository still syncs the
		// tasks and the stack tables; the branches wait for one that has it.
		res.Stopped = fmt.Sprintf("the stack was not restacked: the repository %s cannot be opened here (%v); run wo sync %s where it is", repoPath, err, epicKey)
		return res, nil
	}
	defer repo.Close()
	client, err := k.githubFor(workorder.String(first, "work_order.context.repo"))
	if err != nil {
		return nil, err
	}
	fetch := func(branch string) (plumbing.Hash, error) {
		return repo.FetchBranch(ctx, gitops.RemoteOptions{Remote: remote, Branch: branch, Token: github.Token(k.e.Getenv), GitHubAPI: k.e.GitHubAPI, Timeout: k.e.GitTimeout})
	}
	parentBranch := base
	parentTip, err := fetch(base)
	if err != nil {
		return nil, err
	}
	for _, entry := range stack {
		doc := byKey[entry.Key]
		st, err := workorder.StateOf(doc)
		if err != nil {
			return nil, err
		}
		step := RestackStep{Key: entry.Key, PR: st.PRNumber, Branch: workorder.String(doc, "work_order.inputs.branch_name")}
		if st.PRNumber == 0 {
			step.Outcome, step.Reason = "not_opened", "its run builds on the branch under it, as it is now"
			res.Steps = append(res.Steps, step)
			break
		}
		pr, err := client.GetPR(ctx, st.PRNumber)
		if err != nil {
			return nil, err
		}
		switch pr.Lifecycle() {
		case github.PRMerged:
			step.Outcome, step.Base = "merged", pr.Base
			res.Steps = append(res.Steps, step)
			if _, err := k.Sync(ctx, entry.Key); err != nil {
				return nil, err
			}
			// What it merged into moved: the PRs above build on it now.
			if parentTip, err = fetch(parentBranch); err != nil {
				return nil, err
			}
			continue
		case github.PRClosed:
			step.Outcome, step.Reason = "closed", "closed without merging: the PRs above it are left as they are"
			res.Steps = append(res.Steps, step)
			res.Stopped = fmt.Sprintf("%s (#%d) was closed without merging", entry.Key, st.PRNumber)
			return res, nil
		}
		step, err = k.restackOne(ctx, repo, client, doc, st, pr, parentBranch, parentTip, base, o)
		res.Steps = append(res.Steps, step)
		if err != nil {
			var stop *RestackError
			var refused *action.RestackRefusedError
			if errors.As(err, &stop) {
				res.Stopped = stop.Reason
			} else if errors.As(err, &refused) {
				res.Stopped = refused.Error()
			}
			return res, err
		}
		parentBranch, parentTip = step.Branch, plumbing.NewHash(step.Head)
	}
	return res, nil
}

// restackOne brings one open PR of the stack onto parentBranch at
// parentTip.
func (k *Keeper) restackOne(ctx context.Context, repo *gitops.Repo, client *github.Client, doc workorder.Document, st workorder.State,
	pr *github.PR, parentBranch string, parentTip plumbing.Hash, base string, o RestackOptions) (RestackStep, error) {
	key := workorder.Key(doc)
	branch := workorder.String(doc, "work_order.inputs.branch_name")
	step := RestackStep{Key: key, PR: st.PRNumber, Branch: branch, Base: pr.Base, Head: pr.HeadSHA}
	oldParent := st.StackParent
	if oldParent == "" {
		oldParent = st.BaseSHA
	}
	head := pr.HeadSHA
	retarget := func() error {
		if pr.Base != parentBranch {
			if err := client.EditPRBase(ctx, st.PRNumber, parentBranch); err != nil {
				return err
			}
			step.Base = parentBranch
		}
		if st.StackBase == parentBranch || (st.StackBase == "" && parentBranch == workorder.String(doc, "work_order.context.base_branch")) {
			return nil
		}
		return k.e.EditState(ctx, key, "", "", func(s *workorder.State) { s.StackBase = parentBranch })
	}
	switch r := st.Restack; {
	case r != nil && r.Outcome == "pushing" && head == r.To:
		// A run killed after its push: the push landed; record it.
		return k.recordRestack(ctx, doc, step, r.From, r.To, r.Onto, parentBranch, retarget)
	case r != nil && r.Outcome == "conflict" && o.Continue && head != st.PushedSHA:
		// A person rebased the branch after a conflict: take it when it is
		// built on the parent wo named.
		if ok, err := repo.Descends(plumbing.NewHash(head), plumbing.NewHash(r.Onto)); err != nil || !ok {
			return k.leave(ctx, doc, step, fmt.Sprintf("%s is at %s, which is not built on %s as the restack needs: rebase it onto %s, push it, and run wo sync --continue", branch, gitops.Short(head), gitops.Short(r.Onto), gitops.Short(r.Onto)))
		}
		return k.recordRestack(ctx, doc, step, st.PushedSHA, head, r.Onto, parentBranch, retarget)
	case head != st.PushedSHA:
		return k.leave(ctx, doc, step, fmt.Sprintf("%s was pushed to by someone else (it is at %s, wo pushed %s): wo leaves it and the PRs above it; rebuild it on %s yourself and run wo sync --continue, or reset it to %s",
			branch, gitops.Short(head), gitops.Short(st.PushedSHA), parentBranch, gitops.Short(st.PushedSHA)))
	}
	if parentTip.String() == oldParent {
		step.Outcome = "unchanged"
		return step, retarget()
	}
	// The base moved on from the commit the branch is built on (a push
	// to it, or a merge commit of the branch under it): its PR still
	// shows only its own files, so it is rebuilt only when the base
	// changed those too, or when asked. A parent the base does not
	// contain (a squash-merged or rebuilt branch under it) always means
	// a rebuild.
	onBase, err := repo.Descends(parentTip, plumbing.NewHash(oldParent))
	if err != nil {
		return step, err
	}
	if parentBranch == base && onBase && !o.OntoBase {
		touched, err := repo.Overlap(plumbing.NewHash(oldParent), parentTip, plumbing.NewHash(head))
		if err != nil {
			return step, err
		}
		if len(touched) == 0 {
			step.Outcome, step.Reason = "unchanged", fmt.Sprintf("%s moved, but not in this PR's files: not rebuilt (wo sync --onto-base rebuilds it)", base)
			return step, retarget()
		}
		step.Reason = fmt.Sprintf("%s moved in this PR's files (%s)", base, strings.Join(touched, ", "))
	}
	author, err := repo.Identity(k.e.Getenv)
	if err != nil {
		return step, err
	}
	title := workorder.String(doc, "work_order.inputs.pr_title")
	if title == "" {
		title = workorder.String(doc, "title")
	}
	rb, err := repo.Rebuild(gitops.RebuildOptions{Head: plumbing.NewHash(head), OldParent: plumbing.NewHash(oldParent), NewParent: parentTip,
		Message: title, Author: author, When: k.e.Now()})
	if err != nil {
		return step, err
	}
	if len(rb.Conflicts) > 0 {
		step.Outcome, step.Conflicts = "conflict", rb.Conflicts
		reason := fmt.Sprintf("restacking %s onto %s (%s): %s changed there too; rebase it yourself (git rebase --onto %s %s %s), settle them, push it, then run wo sync --continue",
			branch, parentBranch, gitops.Short(parentTip.String()), strings.Join(rb.Conflicts, ", "), parentTip, oldParent, branch)
		step.Reason = reason
		err := k.e.EditState(ctx, key, workorder.StatusBlocked, reason, func(s *workorder.State) {
			s.Restack = &workorder.Restack{At: workorder.Timestamp(k.e.Now()), Outcome: "conflict", From: head, Onto: parentTip.String(), Conflicts: rb.Conflicts, Reason: reason}
		})
		if err != nil {
			return step, err
		}
		return step, &RestackError{Reason: reason}
	}
	if rb.Unchanged {
		step.Outcome = "unchanged"
		err := k.e.EditState(ctx, key, "", "", func(s *workorder.State) { s.StackParent, s.StackBase = parentTip.String(), parentBranch })
		if err != nil {
			return step, err
		}
		return step, retarget()
	}
	// The intent first: a run killed after the push finds it and records
	// the push instead of rebuilding (a second rebuild is another commit).
	if err := k.e.EditState(ctx, key, "", "", func(s *workorder.State) {
		s.Restack = &workorder.Restack{At: workorder.Timestamp(k.e.Now()), Outcome: "pushing", From: head, To: rb.Hash.String(), Onto: parentTip.String()}
	}); err != nil {
		return step, err
	}
	k.fault("restack:after_intent")
	local, _, err := repo.BranchHash(branch)
	if err != nil {
		return step, err
	}
	if err := repo.SetBranch(branch, rb.Hash, local); err != nil {
		return step, err
	}
	// The push gate: the rebuilt commit's change against its new parent
	// must be the branch's own paths, and the remote must still be at the
	// head that was rebuilt (the lease).
	task, err := workorder.Parse(doc)
	if err != nil {
		return step, err
	}
	gate := action.RestackGate(task, key, branch, rb.Hash, parentTip, plumbing.NewHash(head),
		gitops.PushOptions{Remote: workorder.String(doc, "work_order.context.remote"), Token: github.Token(k.e.Getenv), GitHubAPI: k.e.GitHubAPI, Timeout: k.e.GitTimeout, ExpectURL: st.PushedTo}, func(point string) { k.fault("restack:" + point) })
	_, err = action.PushThroughGate(ctx, repo, gate)
	var nff *gitops.NonFastForwardError
	var refused *action.RestackRefusedError
	switch {
	case errors.As(err, &nff):
		return k.leave(ctx, doc, step, fmt.Sprintf("%s moved on the remote while wo rebuilt it: wo leaves it and the PRs above it; run wo sync again", branch))
	case errors.As(err, &refused):
		return k.refuse(ctx, repo, doc, step, local, rb.Hash, refused)
	case err != nil:
		return step, err
	}
	k.fault("restack:after_push")
	return k.recordRestack(ctx, doc, step, head, rb.Hash.String(), parentTip.String(), parentBranch, retarget)
}

// recordRestack records a restacked branch, retargets its PR and sends the
// task back to its review wait: the reviewer sees a new head, as after a
// fix push.
func (k *Keeper) recordRestack(ctx context.Context, doc workorder.Document, step RestackStep, from, to, onto, parentBranch string, retarget func() error) (RestackStep, error) {
	key := workorder.Key(doc)
	now := workorder.Timestamp(k.e.Now())
	if err := k.e.EditState(ctx, key, "", "", func(s *workorder.State) {
		s.PushedSHA, s.CommitSHA, s.PushedAt = to, to, now
		s.StackParent, s.StackBase = onto, parentBranch
		s.Restack = &workorder.Restack{At: now, Outcome: "restacked", From: from, To: to, Onto: onto}
	}); err != nil {
		return step, err
	}
	if err := retarget(); err != nil {
		return step, err
	}
	step.Outcome, step.Head = "restacked", to
	k.fault("restack:after_record")
	if err := k.rewaitReview(ctx, key); err != nil {
		step.Reason = "restacked; its review wait was not reset: " + err.Error()
	}
	return step, nil
}

// leave reports a branch wo does not touch, and stops the restack there.
func (k *Keeper) leave(ctx context.Context, doc workorder.Document, step RestackStep, reason string) (RestackStep, error) {
	step.Outcome, step.Reason = "left", reason
	if err := k.e.EditState(ctx, workorder.Key(doc), "", "", func(s *workorder.State) {
		s.Restack = &workorder.Restack{At: workorder.Timestamp(k.e.Now()), Outcome: "left", From: step.Head, Reason: reason}
	}); err != nil {
		return step, err
	}
	return step, &RestackError{Reason: reason}
}

// refuse reports a restack the push gate refused: the local branch goes
// back to where it was (the rebuilt commit is not the branch's), the task
// is blocked with the refusal, and the restack stops there.
func (k *Keeper) refuse(ctx context.Context, repo *gitops.Repo, doc workorder.Document, step RestackStep, was, rebuilt plumbing.Hash, refused *action.RestackRefusedError) (RestackStep, error) {
	step.Outcome, step.Reason = "refused", refused.Error()
	var errs []error
	if !was.IsZero() {
		errs = append(errs, repo.SetBranch(step.Branch, was, rebuilt))
	}
	errs = append(errs, k.e.EditState(ctx, workorder.Key(doc), workorder.StatusBlocked, refused.Error(), func(s *workorder.State) {
		s.Restack = &workorder.Restack{At: workorder.Timestamp(k.e.Now()), Outcome: "refused", From: step.Head, Reason: refused.Error()}
	}))
	if err := errors.Join(errs...); err != nil {
		return step, fmt.Errorf("%w (and recording it: %v)", refused, err)
	}
	return step, refused
}

// rewaitReview sends a task whose review wait is behind it back to that
// wait, so that the next run waits for (and asks for) a review of the
// restacked head.
func (k *Keeper) rewaitReview(ctx context.Context, key string) error {
	doc, task, err := k.e.Load(ctx, key)
	if err != nil {
		return err
	}
	wait, ok := k.e.ActionTable().AwaitingReview(task.WorkOrder.Procedure)
	if !ok {
		return nil
	}
	st, _ := workorder.StateOf(doc)
	to := wait.Step - 1
	if st.CurrentStep <= to {
		return nil
	}
	_, err = k.e.Reset(ctx, key, to)
	return err
}
