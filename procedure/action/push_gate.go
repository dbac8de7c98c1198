package action

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/wo-runner/wo/github"
	"github.com/wo-runner/wo/gitops"
	"github.com/wo-runner/wo/internal/gitname"
	"github.com/wo-runner/wo/workorder"
)

// The push gate: the one way wo pushes a work branch. An agent (or a
// process it left behind) can write the task's record, the branch and the
// object store; none of them says what the remote has. So every push asks
// the remote where the branch is, checks every commit from there to the
// commit it pushes (each commit against its parent) with the fix policy,
// reads every object it checks or sends through a verifying reader, and
// pushes exactly that commit with a lease on the tip it checked from: a
// remote that moved since refuses the push. A refusal pushes nothing.
//
// Where the range starts:
//   - a review fix: the remote's tip; the fix must be a line on top of it
//   - the push step, remote branch absent (the first push): where the
//     branch's commits join what the remote has (any of its branches);
//     they may carry the work order's own files (its manifest), which is
//     what checkout_files and commit put there
//   - the push step, remote branch present: the remote's tip, for a line
//     on top of it; a rewrite only of wo's own last push, checked from
//     where it joins what the remote has
//   - a restack: the new parent the branch was rebuilt on, with the
//     remote's tip the head that was rebuilt.

// GateKind is which push goes through the gate.
type GateKind int

const (
	// GateFix is a review fix: a line of commits on the remote's tip.
	GateFix GateKind = iota
	// GateStep is the push step, first or again.
	GateStep
	// GateRestack is a branch rebuilt on a new parent.
	GateRestack
)

// PushGate is one push of a work branch through the gate.
type PushGate struct {
	Kind     GateKind
	Key      string
	Worktree string // for the refusal's advice
	Branch   string
	Policy   fixPolicy
	// To is the commit checked, and the only one that may be pushed: the
	// push fails when the local branch is elsewhere by then.
	To plumbing.Hash
	// Base is the base branch: fetched when a first push finds none of
	// the remote's commits here.
	Base string
	// Onto is the commit a restack built To on: the range starts there.
	Onto plumbing.Hash
	// Replace is the remote tip a rewrite may replace (wo's own last push,
	// a restack's head); zero: none.
	Replace plumbing.Hash
	// Secrets are what a change may not add: wo's token as the run
	// redacts it, the user's credentials, known kinds of secret (zero:
	// not checked).
	Secrets secrets
	// MayDiscard lets a rewrite of wo's own push drop what the remote
	// holds (--discard-commits).
	MayDiscard bool
	// Push says where and how: remote, credentials, time limit, ExpectURL.
	Push gitops.PushOptions
	// Fault is a test's point between the check and the push.
	Fault func(point string)
	// fix is the fix gate's own check of a review fix (GateFix).
	fix func(from, to string) error
}

// PushThroughGate checks and pushes one branch as described above; a
// refusal is a *FixRefusedError and nothing is pushed.
func PushThroughGate(ctx context.Context, repo *gitops.Repo, g PushGate) (gitops.PushResult, error) {
	view, err := repo.ReadRemote(ctx, gitops.RemoteOptions{Remote: g.Push.Remote, Branch: g.Branch, Token: g.Push.Token, GitHubAPI: g.Push.GitHubAPI, Timeout: g.Push.Timeout, Stall: g.Push.Stall, ExpectURL: g.Push.ExpectURL})
	if err != nil {
		return gitops.PushResult{}, err
	}
	from, own, err := g.rangeStart(ctx, repo, view)
	var notLine *gitops.NotALineError
	if errors.As(err, &notLine) {
		return gitops.PushResult{}, g.refusal(view.Tip, gitops.Refusal{Path: "refs/heads/" + g.Branch, Reason: "it does not join the remote's history in a line: " + notLine.Error()})
	}
	if err != nil {
		return gitops.PushResult{}, err
	}
	if err := g.check(repo, from, own); err != nil {
		return gitops.PushResult{}, err
	}
	if g.Fault != nil {
		g.Fault("gate_checked")
	}
	opts := g.Push
	opts.Branch, opts.Expect, opts.Lease, opts.Leased = g.Branch, g.To, view.Tip, true
	res, err := repo.Push(ctx, opts)
	var nff *gitops.NonFastForwardError
	if errors.As(err, &nff) {
		at := "absent"
		if view.Exists {
			at = "at " + gitname.Short(view.Tip.String())
		}
		return res, fmt.Errorf("%w (it was %s when wo checked the push, and moved since: nothing was pushed)", err, at)
	}
	return res, err
}

// rangeStart is the commit the check starts from (To when there is
// nothing to check), and whether the range is the work order's own change
// (its manifest's files may be in it), not a change made after it.
func (g PushGate) rangeStart(ctx context.Context, repo *gitops.Repo, view gitops.RemoteView) (plumbing.Hash, bool, error) {
	moved := &gitops.NonFastForwardError{Branch: g.Branch, Remote: view.URL}
	switch {
	case g.Kind == GateRestack:
		if !view.Exists || view.Tip != g.Replace {
			return plumbing.ZeroHash, false, moved
		}
		return g.Onto, true, nil
	case !view.Exists:
		base, err := repo.LineBase(g.To, view.Tips)
		var notLine *gitops.NotALineError
		if errors.As(err, &notLine) && notLine.Root && g.Base != "" {
			// None of the remote's commits is here (its base moved on
			// since this clone): fetch the base, then look again.
			o := gitops.RemoteOptions{Remote: g.Push.Remote, Branch: g.Base, Token: g.Push.Token, GitHubAPI: g.Push.GitHubAPI, Timeout: g.Push.Timeout, Stall: g.Push.Stall}
			if _, ferr := repo.FetchBranch(ctx, o); ferr != nil {
				return plumbing.ZeroHash, false, ferr
			}
			base, err = repo.LineBase(g.To, view.Tips)
		}
		return base, g.Kind == GateStep, err
	case g.Kind == GateFix || view.Tip == g.To:
		return view.Tip, false, nil
	}
	on, err := repo.Descends(g.To, view.Tip)
	switch {
	case err != nil:
		return plumbing.ZeroHash, false, err
	case on:
		return view.Tip, false, nil
	case view.Tip != g.Replace:
		return plumbing.ZeroHash, false, moved
	}
	// A rewrite of wo's own push. It never goes back to an older commit,
	// or to a tree that drops what the remote holds, unless the run was
	// told to (--discard-commits): a pushed review fix stays.
	if !g.MayDiscard {
		undone, err := repo.Undone(view.Tip, g.To, maxFixCommits)
		if err != nil {
			return plumbing.ZeroHash, false, err
		}
		if len(undone) > 0 {
			var named []string
			for i, c := range undone {
				if i == 5 {
					named = append(named, fmt.Sprintf("and %d more", len(undone)-5))
					break
				}
				named = append(named, fmt.Sprintf("%s of %s", c.Path, gitname.Short(c.Commit.String())))
			}
			return plumbing.ZeroHash, false, &WaitingError{Key: g.Key, Reason: fmt.Sprintf(
				"the push of %s would replace the remote branch at %s (wo's last push) with %s, which takes back what its commits changed (%s); nothing was pushed. Look at the branch (git log %s..%s), or push it anyway with wo run %s --discard-commits",
				g.Branch, gitname.Short(view.Tip.String()), gitname.Short(g.To.String()), strings.Join(named, ", "), gitname.Short(g.To.String()), gitname.Short(view.Tip.String()), g.Key)}
		}
	}
	// Every commit the remote lacks is checked.
	base, err := repo.LineBase(g.To, view.Tips)
	return base, false, err
}

// check runs the fix policy over from..To.
func (g PushGate) check(repo *gitops.Repo, from plumbing.Hash, own bool) error {
	if from == g.To {
		return nil
	}
	if g.Kind == GateFix {
		return g.fix(from.String(), g.To.String())
	}
	changes, err := repo.LineChanges(from, g.To, maxFixCommits)
	var notLine *gitops.NotALineError
	var unsafe *gitops.UnsafeTreeError
	switch {
	case errors.As(err, &notLine):
		return g.refusal(from, gitops.Refusal{Path: "refs/heads/" + g.Branch, Reason: "not a line of commits: " + notLine.Error()})
	case errors.As(err, &unsafe):
		return g.refusal(from, gitops.Refusal{Path: unsafe.Path, Reason: unsafe.Reason})
	case err != nil:
		return err
	}
	var refused []gitops.Refusal
	seen := map[string]bool{}
	for _, c := range changes {
		if seen[c.Path] {
			continue
		}
		why := g.allows(c, own)
		if why == "" {
			if why, err = secretIn(repo, c, g.Secrets); err != nil {
				return err
			}
		}
		if why != "" {
			seen[c.Path] = true
			refused = append(refused, gitops.Refusal{Path: c.Path, Reason: why + " (commit " + gitname.Short(c.Commit.String()) + ")"})
		}
	}
	if len(refused) > 0 {
		return g.refusal(from, refused...)
	}
	return nil
}

// allows says why a change must not be pushed, or "": the fix policy, but
// in the work order's own change a file its manifest names is its own.
func (g PushGate) allows(c gitops.PathChange, own bool) string {
	if own && g.Policy.files[c.Path] && c.Mode != filemode.Submodule {
		return ""
	}
	return g.Policy.check(c)
}

// refusal is a FixRefusedError for this push, bounded as the fix gate's.
func (g PushGate) refusal(from plumbing.Hash, refused ...gitops.Refusal) error {
	e := &FixRefusedError{Key: g.Key, Worktree: g.Worktree, Branch: g.Branch, From: from.String()}
	for _, r := range refused {
		if len(e.Refused) < maxRefusalsListed {
			e.Refused = append(e.Refused, r)
		} else {
			e.More++
		}
	}
	if g.Kind == GateRestack {
		return &RestackRefusedError{FixRefusedError: e}
	}
	return e
}

// RestackRefusedError is a restacked branch the gate refused: its
// rebuilt commit changes paths that are not the branch's own.
type RestackRefusedError struct{ *FixRefusedError }

func (e *RestackRefusedError) Error() string {
	return fmt.Sprintf("restacking %s was refused, nothing was pushed: %d path(s) of the rebuilt commit are not the branch's own: %s; look at the branch (its objects, git fsck, and work_order.state.stack_parent), then run wo sync again",
		e.Branch, len(e.Refused)+e.More, gitops.ListRefusals(e.Refused, e.More))
}

func (e *RestackRefusedError) Unwrap() error { return e.FixRefusedError }

// fixPolicyOf is the fix policy of a work order.
func fixPolicyOf(t *workorder.Task) fixPolicy {
	in, ctx := t.WorkOrder.Inputs, t.WorkOrder.Context
	p := fixPolicy{files: map[string]bool{}, patterns: stringOrList(ctx["fix_paths"]), executable: stringOrList(ctx["fix_executable"]), maxSize: gitops.DefaultMaxFileSize}
	for _, f := range append(stringList(in["file_manifest"]), stringList(in["delete_manifest"])...) {
		p.files[f] = true
	}
	if n, ok := workorder.AsInt(ctx["fix_max_file_bytes"]); ok && n > 0 {
		p.maxSize = n
	}
	return p
}

// RestackGate is the gate of a restack's push: the rebuilt commit to on
// onto, replacing head, the branch's commit the remote must still be at.
func RestackGate(t *workorder.Task, key, branch string, to, onto, head plumbing.Hash, push gitops.PushOptions, fault func(string)) PushGate {
	return PushGate{Kind: GateRestack, Key: key, Branch: branch, Policy: fixPolicyOf(t), To: to, Onto: onto, Replace: head, Push: push, Fault: fault}
}

// stepGate is the gate of a push a step makes: the fix push, or the push
// step's.
func stepGate(sc *StepContext, kind GateKind, to plumbing.Hash) (PushGate, error) {
	branch, err := sc.Branch()
	if err != nil {
		return PushGate{}, err
	}
	w, err := sc.Worktree()
	if err != nil {
		return PushGate{}, err
	}
	g := PushGate{Kind: kind, Key: sc.Key(), Worktree: w.Path, Branch: branch, Base: sc.BaseBranch(), Policy: newFixPolicy(sc), To: to, Fault: sc.Fault,
		Push: gitops.PushOptions{Remote: sc.Remote(), Token: github.Token(sc.Getenv), GitHubAPI: sc.GitHubAPI(), Timeout: sc.Settings().GitTimeout, Stall: sc.Settings().GitStall, ExpectURL: sc.State().PushedTo}}
	if last := sc.State().PushedSHA; plumbing.IsHash(last) {
		g.Replace = plumbing.NewHash(last)
	}
	g.MayDiscard, g.Secrets = sc.Settings().DiscardCommits, secretsOf(sc)
	return g, nil
}
