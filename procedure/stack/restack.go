package stack

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/wo-runner/wo/github"
	"github.com/wo-runner/wo/gitops"
	"github.com/wo-runner/wo/internal/gitname"
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
		return repo.FetchBranch(ctx, gitops.RemoteOptions{Remote: remote, Branch: branch, Token: github.Token(k.e.Getenv), GitHubAPI: k.e.GitHubAPI, Timeout: k.e.GitTimeout, Stall: k.e.GitStall})
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

// restacking is one open PR of the stack being brought onto parentBranch
// at parentTip.
type restacking struct {
	k      *Keeper
	repo   *gitops.Repo
	client *github.Client
	doc    workorder.Document
	st     workorder.State
	pr     *github.PR
	o      RestackOptions
	// key and branch are the task's; head is the PR's head, oldParent the
	// commit its branch was built on.
	key, branch, head, oldParent string
	parentBranch, base           string
	parentTip                    plumbing.Hash
	// step is what the restack did; retarget keeps its Base.
	step RestackStep
}

// restackOne brings one open PR of the stack onto parentBranch at
// parentTip.
func (k *Keeper) restackOne(ctx context.Context, repo *gitops.Repo, client *github.Client, doc workorder.Document, st workorder.State,
	pr *github.PR, parentBranch string, parentTip plumbing.Hash, base string, o RestackOptions) (RestackStep, error) {
	r := &restacking{k: k, repo: repo, client: client, doc: doc, st: st, pr: pr, o: o,
		key: workorder.Key(doc), branch: workorder.String(doc, "work_order.inputs.branch_name"), head: pr.HeadSHA, oldParent: st.StackParent,
		parentBranch: parentBranch, parentTip: parentTip, base: base}
	r.step = RestackStep{Key: r.key, PR: st.PRNumber, Branch: r.branch, Base: pr.Base, Head: pr.HeadSHA}
	if r.oldParent == "" {
		r.oldParent = st.BaseSHA
	}
	if step, done, err := r.resume(ctx); done {
		return step, err
	}
	if done, err := r.unchanged(); done || err != nil {
		if err != nil {
			return r.step, err
		}
		err := r.retarget(ctx)
		return r.step, err
	}
	return r.rebuild(ctx)
}

// retarget makes the PR target the branch under it, and records that
// branch as the one its branch is built on.
func (r *restacking) retarget(ctx context.Context) error {
	if r.pr.Base != r.parentBranch {
		if err := r.client.EditPRBase(ctx, r.st.PRNumber, r.parentBranch); err != nil {
			return err
		}
		r.step.Base = r.parentBranch
	}
	if r.st.StackBase == r.parentBranch || (r.st.StackBase == "" && r.parentBranch == workorder.String(r.doc, "work_order.context.base_branch")) {
		return nil
	}
	return r.k.e.EditState(ctx, r.key, "", "", func(s *workorder.State) { s.StackBase = r.parentBranch })
}

// resume handles a branch whose head is not what wo pushed last: a
// restack's push that landed before a kill (recorded now), a person's
// rebase after a conflict (taken with --continue when it is built on the
// parent wo named), or someone else's push (left). done is false when the
// head is wo's own.
func (r *restacking) resume(ctx context.Context) (step RestackStep, done bool, err error) {
	rs, head := r.st.Restack, r.head
	switch {
	case rs != nil && rs.Outcome == "pushing" && head == rs.To:
		// A run killed after its push: the push landed; record it.
		step, err = r.record(ctx, rs.From, rs.To, rs.Onto)
		return step, true, err
	case rs != nil && rs.Outcome == "conflict" && r.o.Continue && head != r.st.PushedSHA:
		// A person rebased the branch after a conflict: take it when it is
		// built on the parent wo named.
		if ok, err := r.repo.Descends(plumbing.NewHash(head), plumbing.NewHash(rs.Onto)); err != nil || !ok {
			step, err = r.k.leave(ctx, r.doc, r.step, fmt.Sprintf("%s is at %s, which is not built on %s as the restack needs: rebase it onto %s, push it, and run wo sync --continue", r.branch, gitname.Short(head), gitname.Short(rs.Onto), gitname.Short(rs.Onto)))
			return step, true, err
		}
		step, err = r.record(ctx, r.st.PushedSHA, head, rs.Onto)
		return step, true, err
	case head != r.st.PushedSHA:
		step, err = r.k.leave(ctx, r.doc, r.step, fmt.Sprintf("%s was pushed to by someone else (it is at %s, wo pushed %s): wo leaves it and the PRs above it; rebuild it on %s yourself and run wo sync --continue, or reset it to %s",
			r.branch, gitname.Short(head), gitname.Short(r.st.PushedSHA), r.parentBranch, gitname.Short(r.st.PushedSHA)))
		return step, true, err
	}
	return RestackStep{}, false, nil
}

// unchanged says whether the branch stays as it is: built on the parent's
// tip already, or on a base that moved on (a push to it, or a merge commit
// of the branch under it) without touching this PR's files, which its PR
// still shows alone; unless asked (--onto-base). A parent the base does not
// contain (a squash-merged or rebuilt branch under it) always means a
// rebuild.
func (r *restacking) unchanged() (bool, error) {
	if r.parentTip.String() == r.oldParent {
		r.step.Outcome = "unchanged"
		return true, nil
	}
	onBase, err := r.repo.Descends(r.parentTip, plumbing.NewHash(r.oldParent))
	if err != nil {
		return false, err
	}
	if r.parentBranch != r.base || !onBase || r.o.OntoBase {
		return false, nil
	}
	touched, err := r.repo.Overlap(plumbing.NewHash(r.oldParent), r.parentTip, plumbing.NewHash(r.head))
	if err != nil {
		return false, err
	}
	if len(touched) == 0 {
		r.step.Outcome, r.step.Reason = "unchanged", fmt.Sprintf("%s moved, but not in this PR's files: not rebuilt (wo sync --onto-base rebuilds it)", r.base)
		return true, nil
	}
	r.step.Reason = fmt.Sprintf("%s moved in this PR's files (%s)", r.base, strings.Join(touched, ", "))
	return false, nil
}

// rebuild makes the branch its own change on top of the parent's tip and
// pushes it; a conflict blocks the task and stops the restack.
func (r *restacking) rebuild(ctx context.Context) (RestackStep, error) {
	k, step := r.k, r.step
	author, err := r.repo.Identity(k.e.Getenv)
	if err != nil {
		return step, err
	}
	title := workorder.String(r.doc, "work_order.inputs.pr_title")
	if title == "" {
		title = workorder.String(r.doc, "title")
	}
	rb, err := r.repo.Rebuild(gitops.RebuildOptions{Head: plumbing.NewHash(r.head), OldParent: plumbing.NewHash(r.oldParent), NewParent: r.parentTip,
		Message: title, Author: author, When: k.e.Now()})
	if err != nil {
		return step, err
	}
	if len(rb.Conflicts) > 0 {
		step.Outcome, step.Conflicts = "conflict", rb.Conflicts
		reason := fmt.Sprintf("restacking %s onto %s (%s): %s changed there too; rebase it yourself (git rebase --onto %s %s %s), settle them, push it, then run wo sync --continue",
			r.branch, r.parentBranch, gitname.Short(r.parentTip.String()), strings.Join(rb.Conflicts, ", "), r.parentTip, r.oldParent, r.branch)
		step.Reason = reason
		err := k.e.EditState(ctx, r.key, workorder.StatusBlocked, reason, func(s *workorder.State) {
			s.Restack = &workorder.Restack{At: workorder.Timestamp(k.e.Now()), Outcome: "conflict", From: r.head, Onto: r.parentTip.String(), Conflicts: rb.Conflicts, Reason: reason}
		})
		if err != nil {
			return step, err
		}
		return step, &RestackError{Reason: reason}
	}
	if rb.Unchanged {
		r.step.Outcome = "unchanged"
		err := k.e.EditState(ctx, r.key, "", "", func(s *workorder.State) { s.StackParent, s.StackBase = r.parentTip.String(), r.parentBranch })
		if err != nil {
			return r.step, err
		}
		err = r.retarget(ctx)
		return r.step, err
	}
	return r.push(ctx, rb.Hash)
}

// push sends the rebuilt commit through the push gate the push action
// uses, and records it.
func (r *restacking) push(ctx context.Context, rebuilt plumbing.Hash) (RestackStep, error) {
	k := r.k
	// The intent first: a run killed after the push finds it and records
	// the push instead of rebuilding (a second rebuild is another commit).
	if err := k.e.EditState(ctx, r.key, "", "", func(s *workorder.State) {
		s.Restack = &workorder.Restack{At: workorder.Timestamp(k.e.Now()), Outcome: "pushing", From: r.head, To: rebuilt.String(), Onto: r.parentTip.String()}
	}); err != nil {
		return r.step, err
	}
	k.fault("restack:after_intent")
	local, _, err := r.repo.BranchHash(r.branch)
	if err != nil {
		return r.step, err
	}
	if err := r.repo.SetBranch(r.branch, rebuilt, local); err != nil {
		return r.step, err
	}
	// The push gate: the rebuilt commit's change against its new parent
	// must be the branch's own paths, and the remote must still be at the
	// head that was rebuilt (the lease).
	task, err := workorder.Parse(r.doc)
	if err != nil {
		return r.step, err
	}
	gate := action.RestackGate(task, r.key, r.branch, rebuilt, r.parentTip, plumbing.NewHash(r.head),
		gitops.PushOptions{Remote: workorder.String(r.doc, "work_order.context.remote"), Token: github.Token(k.e.Getenv), GitHubAPI: k.e.GitHubAPI, Timeout: k.e.GitTimeout, Stall: k.e.GitStall, ExpectURL: r.st.PushedTo}, func(point string) { k.fault("restack:" + point) })
	_, err = action.PushThroughGate(ctx, r.repo, gate)
	var nff *gitops.NonFastForwardError
	var refused *action.RestackRefusedError
	switch {
	case errors.As(err, &nff):
		return k.leave(ctx, r.doc, r.step, fmt.Sprintf("%s moved on the remote while wo rebuilt it: wo leaves it and the PRs above it; run wo sync again", r.branch))
	case errors.As(err, &refused):
		return k.refuse(ctx, r.repo, r.doc, r.step, local, rebuilt, refused)
	case err != nil:
		return r.step, err
	}
	k.fault("restack:after_push")
	return r.record(ctx, r.head, rebuilt.String(), r.parentTip.String())
}

// record records a restacked branch, retargets its PR and sends the task
// back to its review wait: the reviewer sees a new head, as after a fix
// push. The step it returns names the base the PR targets after it.
func (r *restacking) record(ctx context.Context, from, to, onto string) (RestackStep, error) {
	k, key, step := r.k, r.key, r.step
	now := workorder.Timestamp(k.e.Now())
	if err := k.e.EditState(ctx, key, "", "", func(s *workorder.State) {
		s.PushedSHA, s.CommitSHA, s.PushedAt = to, to, now
		s.StackParent, s.StackBase = onto, r.parentBranch
		s.Restack = &workorder.Restack{At: now, Outcome: "restacked", From: from, To: to, Onto: onto}
	}); err != nil {
		return step, err
	}
	if err := r.retarget(ctx); err != nil {
		return step, err
	}
	step.Outcome, step.Head, step.Base = "restacked", to, r.step.Base
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
