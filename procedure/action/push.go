package action

import (
	"context"
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/wo-runner/wo/workorder"
)

// Push pushes the work order's branch to its remote.
type Push struct{}

func newPush() Action { return Push{} }

// Run pushes the branch's commit through the push gate; a remote already
// at the commit is a no-op. A remote branch that moved to commits wo did
// not push is never overwritten; a rewrite of wo's own push goes out with
// a lease on the remote's tip. When a loop or a reset comes back to this
// step, whatever moved the branch since (an agent's leftover process, a
// person) is checked as a fix is.
func (Push) Run(ctx context.Context, sc *StepContext) (Outcome, error) {
	branch, err := sc.Branch()
	if err != nil {
		return Outcome{}, err
	}
	repo, err := sc.Repo()
	if err != nil {
		return Outcome{}, err
	}
	// The commit read here is the one checked, and the one pushed.
	to, exists, err := repo.BranchHash(branch)
	if err != nil {
		return Outcome{}, err
	}
	if !exists {
		return Outcome{}, fmt.Errorf("pushing %s: no local branch %s", branch, branch)
	}
	return branchPush(ctx, sc, GateStep, to)
}

// branchPush pushes the work branch at commit to through the push gate,
// and records the push.
func branchPush(ctx context.Context, sc *StepContext, kind GateKind, to plumbing.Hash) (Outcome, error) {
	repo, err := sc.Repo()
	if err != nil {
		return Outcome{}, err
	}
	g, err := stepGate(sc, kind, to)
	if err != nil {
		return Outcome{}, err
	}
	if kind == GateFix {
		g.fix = func(from, to string) error { return checkFix(sc, repo, from, to) }
	}
	res, err := PushThroughGate(ctx, repo, g)
	if err != nil {
		return Outcome{}, err
	}
	branch := g.Branch
	sc.Fault("after_push")
	note, facts := fmt.Sprintf("pushed %s to %s (%s)", branch, res.RemoteURL, res.Hash.String()[:12]), []Fact{{Kind: FactPushed, Branch: branch, SHA: res.Hash.String()}}
	if res.UpToDate {
		note, facts = fmt.Sprintf("%s already at %s on %s", branch, res.Hash.String()[:12], res.RemoteURL), nil
	}
	if res.Withheld != "" {
		note += "; " + res.Withheld
	}
	st := sc.State()
	if st.PushedSHA != res.Hash.String() || st.PushedAt == "" {
		st.PushedAt = workorder.Timestamp(sc.Now())
	}
	st.PushedSHA = res.Hash.String()
	if st.PushedTo == "" {
		st.PushedTo = res.RemoteURL
	}
	return Outcome{Note: note, Facts: facts, State: &st}, nil
}

// Check makes sure the remote exists.
func (Push) Check(ctx context.Context, sc *StepContext) error {
	repo, err := sc.Repo()
	if err != nil {
		return err
	}
	return repo.HasRemote(sc.Remote())
}

// Plan names the remote.
func (Push) Plan(sc *StepContext) string {
	remote := sc.Remote()
	if remote == "" {
		remote = "origin"
	}
	return fmt.Sprintf("push %s to %s", sc.BranchName(), remote)
}
