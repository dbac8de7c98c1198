package undo

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/wo-runner/wo/github"
	"github.com/wo-runner/wo/gitops"
	"github.com/wo-runner/wo/internal/gitname"
	"github.com/wo-runner/wo/procedure/action"
	"github.com/wo-runner/wo/store"
	"github.com/wo-runner/wo/workorder"
)

// Provenance is what this task's own runs wrote in the activity log when
// they finished a step that makes something: the commits wo made and
// pushed, the branches it switched to and pushed, the worktrees it
// created, the pull requests it opened or took up. The state says the same
// things, but the state is document text that anyone who can write the
// document can write (wo import takes it as given); the log is appended
// by wo's runs only, and no document carries it. So undo takes a thing as
// wo's only when the log says so.
type Provenance struct {
	// Commits and Pushed are the first 12 hex digits of the commits the
	// commit step and the review loop made, and those the push step and
	// the review loop pushed.
	Commits []string
	Pushed  []string
	// Branches maps each branch a step switched to (FactBranch) onto the
	// commit (12 hex digits) it found the branch at, "" for a branch only
	// pushed.
	Branches map[string]string
	// Adopted maps the branches wo found existing (FactAdopted; and
	// started from, or found checked out in a worktree already there) onto
	// the commit (12 hex digits) it found them at: wo did not make them,
	// so they are never wo's to delete.
	Adopted map[string]string
	// Worktrees are the paths of the worktrees wo created (FactWorktree).
	Worktrees []string
	// PRs are the numbers of the pull requests wo opened or took
	// up.
	PRs []int
	// StartedActions are the actions whose steps this task's runs started
	// (step_started), finished or not: a step killed after its side
	// effect and before its write-back may have made something.
	StartedActions map[string]bool
}

// ProvenanceOf reads the step_completed entries of a task's activity log,
// oldest first: the facts each finished step recorded. Entries of another
// task, and entries that are not a finished step, say nothing. An entry
// written before steps recorded facts is read by the legacy reader
// (action.LegacyFacts), so that a task run by an older wo keeps its undo.
func ProvenanceOf(key string, entries []store.LogEntry) Provenance {
	return provenanceOf(action.DefaultActions(), key, entries)
}

// provenanceOf reads the log with the table's actions: a fact counts only
// when the action that logged it may make such things (action.Spec.Makes).
func provenanceOf(t action.Actions, key string, entries []store.LogEntry) Provenance {
	p := Provenance{Branches: map[string]string{}, Adopted: map[string]string{}, StartedActions: map[string]bool{}}
	for _, e := range entries {
		if e.Action == "step_started" && e.TaskKey == key {
			if name, ok := e.Details["action"].(string); ok {
				p.StartedActions[name] = true
			}
		}
		if e.Action != "step_completed" || e.TaskKey != key {
			continue
		}
		facts, ok, err := action.FactsOf(e.Details)
		switch {
		case !ok:
			facts = action.LegacyFacts(e.Details)
		case err != nil:
			// Unreadable facts prove nothing: undo then leaves what
			// it cannot prove wo's, which is the safe side.
			continue
		}
		name, _ := e.Details["action"].(string)
		spec, _ := t.Lookup(name)
		for _, f := range facts {
			if spec.MayMake(f.Kind) {
				p.add(f)
			}
		}
	}
	return p
}

// add takes one fact into the provenance. A fact about a commit that
// names none (at least the 12 hex digits the notes gave) proves nothing:
// an empty sha would be the prefix of every commit.
func (p *Provenance) add(f action.Fact) {
	if f.Kind != action.FactWorktree && f.Kind != action.FactPullRequest && (len(f.SHA) < 12 || strings.Trim(f.SHA, "0123456789abcdef") != "") {
		return
	}
	switch f.Kind {
	case action.FactBranch:
		p.Branches[f.Branch] = gitname.Short(f.SHA)
	case action.FactCommit:
		p.Commits = append(p.Commits, gitname.Short(f.SHA))
	case action.FactPushed:
		if _, ok := p.Branches[f.Branch]; !ok && f.Branch != "" {
			p.Branches[f.Branch] = ""
		}
		p.Pushed = append(p.Pushed, gitname.Short(f.SHA))
	case action.FactWorktree:
		p.Worktrees = append(p.Worktrees, f.Path)
	case action.FactAdopted:
		// Also when the worktree was found already there: the branch in
		// it is someone's all the same, unless an earlier run of this
		// task left it there (a rerun after wo reset).
		if !p.earlier(f.Branch, gitname.Short(f.SHA)) {
			p.Adopted[f.Branch] = gitname.Short(f.SHA)
		}
	case action.FactPullRequest:
		p.PRs = append(p.PRs, f.Number)
	}
}

// earlier reports whether the log so far shows the branch at the commit
// because of this task's runs: a commit they made or pushed, or where a
// step of theirs switched to the branch.
func (p Provenance) earlier(branch, at string) bool {
	return slices.Contains(p.Commits, at) || slices.Contains(p.Pushed, at) || (p.Branches[branch] == at && p.Adopted[branch] == "")
}

// Made reports whether the commit is one wo made or pushed for the task.
func (p Provenance) Made(h plumbing.Hash) bool {
	return p.PushedIt(h) || slices.ContainsFunc(p.Commits, func(c string) bool { return strings.HasPrefix(h.String(), c) })
}

// PushedIt reports whether the push step pushed the commit.
func (p Provenance) PushedIt(h plumbing.Hash) bool {
	return slices.ContainsFunc(p.Pushed, func(c string) bool { return strings.HasPrefix(h.String(), c) })
}

// Started reports whether wo made the branch at the commit: a
// branch wo switched to and has not moved since holds nothing to lose. A
// branch that wo found existing was somebody's before.
func (p Provenance) Started(branch string, h plumbing.Hash) bool {
	at := p.Branches[branch]
	return at != "" && p.Adopted[branch] == "" && strings.HasPrefix(h.String(), at)
}

// Branch reports whether the task's runs switched to or pushed the branch.
func (p Provenance) Branch(branch string) bool {
	_, ok := p.Branches[branch]
	return ok
}

// Is this ours? Every question a part asks before it takes a thing back
// is answered here, from what the task's own log proves (Provenance) and
// what the store's other tasks name; the state alone proves nothing.

// startedPushing reports whether this task's runs pushed, or started a
// step that pushes (one killed after its push and before its write-back
// logged no fact of it).
func (u *undo) startedPushing(ctx context.Context) (bool, error) {
	prov, err := u.provenance(ctx)
	if err != nil {
		return false, err
	}
	if len(prov.Pushed) > 0 {
		return true, nil
	}
	for name := range prov.StartedActions {
		if a, _ := u.ed.Actions().Lookup(name); a.MayMake(action.FactPushed) {
			return true, nil
		}
	}
	return false, nil
}

// procedurePushesBranch reports whether the task's procedure has a step
// that publishes its branch (action.Spec.PushesBranch).
func (u *undo) procedurePushesBranch() bool {
	return slices.ContainsFunc(u.ed.Task().WorkOrder.Procedure, func(s workorder.Step) bool {
		a, _ := u.ed.Actions().Lookup(s.Action)
		return a.PushesBranch
	})
}

// procedureMakes reports whether the task's procedure has a step that may
// make things of the kind.
func (u *undo) procedureMakes(kind action.FactKind) bool {
	return u.ed.Actions().Makes(u.ed.Task().WorkOrder.Procedure, kind)
}

// worktreeOfAnotherTask says which other task records the worktree at path
// as its own, "" when none does.
func (u *undo) worktreeOfAnotherTask(ctx context.Context, path string) (string, error) {
	return u.otherTask(ctx, func(_ *workorder.Task, st workorder.State) bool {
		return st.WorktreePath != nil && samePath(*st.WorktreePath, path)
	})
}

// branch is the task's branch: the one a run recorded, else the one the
// task names.
func (u *undo) branch() string {
	if u.st.Branch != "" {
		return u.st.Branch
	}
	return u.sc.BranchName()
}

// pushedByWo says why the remote branch's tip is wo's to delete, or ""
// when it is not: a commit this task's runs logged pushing, or making (the
// push of a run that stopped before it logged the push).
func (u *undo) pushedByWo(ctx context.Context, tip plumbing.Hash) (string, error) {
	prov, err := u.provenance(ctx)
	switch {
	case err != nil:
		return "", err
	case prov.PushedIt(tip):
		return "the commit wo pushed", nil
	case prov.Made(tip):
		return "a commit wo made; wo had not recorded pushing it (a run stopped before writing it back)", nil
	}
	return "", nil
}

// notPushedByWo says why a remote branch that wo cannot prove it pushed
// stays.
func (u *undo) notPushedByWo(ctx context.Context, branch, remote string, tip plumbing.Hash) (string, error) {
	prov, err := u.provenance(ctx)
	if err != nil {
		return "", err
	}
	if len(prov.Pushed) > 0 {
		return fmt.Sprintf("branch %s on %s is at %s, not %s that wo pushed: someone else pushed since, so wo keeps it; delete it yourself with git push %s --delete %s if it is not needed",
			branch, remote, gitname.Short(tip.String()), strings.Join(prov.Pushed, ", "), remote, branch), nil
	}
	return fmt.Sprintf("branch %s on %s is at %s, which wo did not record making, and wo recorded no push to it: it may be someone else's, so wo keeps it; delete it yourself with git push %s --delete %s if it is not needed",
		branch, remote, gitname.Short(tip.String()), remote, branch), nil
}

// provenance reads this task's activity log once.
func (u *undo) provenance(ctx context.Context) (Provenance, error) {
	if u.prov == nil {
		entries, err := u.eng.Store.Logs(ctx, u.key())
		if err != nil {
			return Provenance{}, err
		}
		p := provenanceOf(u.ed.Actions(), u.key(), entries)
		u.prov = &p
	}
	return *u.prov, nil
}

// foreignBranch says why the task's branch is not provably its own, ""
// when it is. The state is document text: a branch it names is this
// task's only when this task's runs logged switching to it or pushing it,
// and it is not another's (see sharedBranch).
func (u *undo) foreignBranch(ctx context.Context) (string, error) {
	why, err := u.sharedBranch(ctx)
	if err != nil || why != "" {
		return why, err
	}
	prov, err := u.provenance(ctx)
	if err != nil {
		return "", err
	}
	if branch := u.branch(); !prov.Branch(branch) {
		return fmt.Sprintf(keepBranch, branch, "was never switched to or pushed by this task's runs (its activity log has no such step)"), nil
	}
	return "", nil
}

const keepBranch = "branch %s %s, so wo keeps it; if the task made it, delete it yourself"

// sharedBranch says why the task's branch may be somebody else's, ""
// when nothing says so: it must be the branch the task's inputs name, not
// the base or source branch, not a pull request's base, and no other task
// may name it. Read once.
func (u *undo) sharedBranch(ctx context.Context) (string, error) {
	if u.shared != nil {
		return *u.shared, nil
	}
	why, err := u.whyShared(ctx)
	if err != nil {
		return "", err
	}
	u.shared = &why
	return why, nil
}

func (u *undo) whyShared(ctx context.Context) (string, error) {
	branch := u.branch()
	const keep = keepBranch
	if named := u.sc.BranchName(); named != "" && named != branch {
		return fmt.Sprintf(keep, branch, "is not the branch the task names ("+named+")"), nil
	}
	for _, c := range []string{"base_branch", "source_branch"} {
		if u.sc.Context(c) == branch {
			return fmt.Sprintf(keep, branch, "is the task's context."+c), nil
		}
	}
	if u.pr != nil && u.pr.Base == branch {
		return fmt.Sprintf(keep, branch, fmt.Sprintf("is the base of pull request #%d", u.pr.Number)), nil
	}
	other, err := u.otherTask(ctx, func(t *workorder.Task, st workorder.State) bool {
		named, _ := t.WorkOrder.Inputs["branch_name"].(string)
		return (named == branch || st.Branch == branch) && u.sameRepository(t)
	})
	if err != nil || other == "" {
		return "", err
	}
	return fmt.Sprintf(keep, branch, "is named by task "+other+" too"), nil
}

// stackedOn says why the branch must stay because another task builds on
// it, "" when none does: a task whose context.base_branch it is and that
// a run has touched and no undo has reset. On GitHub, deleting the branch
// would close that task's pull request for good (GitHub closes the pull
// requests based on a deleted branch, and they cannot be reopened). Once
// that task is undone, a rerun of this undo takes the branch back, so the
// undo is pending until then.
func (u *undo) stackedOn(ctx context.Context, branch string) (string, error) {
	other, err := u.otherTask(ctx, func(t *workorder.Task, st workorder.State) bool {
		base, _ := t.WorkOrder.Context["base_branch"].(string)
		return base == branch && !pristine(st) && !u.opts.plannedUndone[t.Key] && u.sameRepository(t)
	})
	if err != nil || other == "" {
		return "", err
	}
	u.fixable = true
	instead := "run wo undo " + other + " first"
	if epic := u.ed.Task().ParentKey; epic != "" {
		instead = fmt.Sprintf("undo the stack from the top with wo undo --epic %s, or run wo undo %s first", epic, other)
	}
	return fmt.Sprintf("branch %s is the base of task %s (its context.base_branch), which has not been undone: deleting it would close that task's pull request for good, so wo keeps it; %s, then wo undo %s again",
		branch, other, instead, u.key()), nil
}

// sameRepository reports whether another task may work in this task's
// repository: a branch of the same name in another repository (another
// checkout, another GitHub repository) is not this one's. When either
// side names no repository, it may be the same.
func (u *undo) sameRepository(t *workorder.Task) bool {
	theirPath, _ := t.WorkOrder.Context["repo_path"].(string)
	theirRepo, _ := t.WorkOrder.Context["repo"].(string)
	return maySame(cleanPath(cmp.Or(u.opts.RepoPath, u.sc.Context("repo_path"))), cleanPath(theirPath)) &&
		maySame(u.sc.Context("repo"), theirRepo)
}

// maySame reports whether two names may name the same thing: they are
// equal, or one is not given.
func maySame(a, b string) bool { return a == "" || b == "" || a == b }

func cleanPath(p string) string {
	if p == "" {
		return ""
	}
	return filepath.Clean(p)
}

// otherTask is the key of another task in the store that match says names
// the same thing, "" when none does.
func (u *undo) otherTask(ctx context.Context, match func(*workorder.Task, workorder.State) bool) (string, error) {
	if u.others == nil {
		docs, err := u.eng.Store.List(ctx, store.Filter{})
		if err != nil {
			return "", err
		}
		u.others = []otherWorkOrder{}
		for _, d := range docs {
			if workorder.Key(d) == u.key() {
				continue
			}
			t, err := workorder.Parse(d)
			if err != nil || t.WorkOrder == nil || !workorder.IsWorkOrder(d) {
				continue
			}
			st, _ := workorder.StateOf(d)
			if t.Status == workorder.StatusClosed && st.NeverRan() {
				continue // closed before it ran: it made nothing and will make nothing
			}
			u.others = append(u.others, otherWorkOrder{t, st})
		}
	}
	for _, o := range u.others {
		if match(o.task, o.state) {
			return o.task.Key, nil
		}
	}
	return "", nil
}

// otherWorkOrder is another task's work order and state, as undo's
// checks read them (once per undo).
type otherWorkOrder struct {
	task  *workorder.Task
	state workorder.State
}

// foreignPR says why the recorded pull request is not provably the one
// this task opened, "" when it is: it must come from the task's own
// branch, which must be provably this task's by the rules of the branch
// steps (the state that names both may be another task's, copied), and
// be opened by the login wo runs as.
func (u *undo) foreignPR(ctx context.Context) (string, error) {
	pr := u.pr
	if pr == nil {
		return "", nil // no pull request read (pullRequest first): nothing to judge
	}
	if pr.Head != u.branch() {
		return fmt.Sprintf("pull request #%d is from branch %s, not this task's branch %s: wo did not open it for this task, so wo leaves it", pr.Number, pr.Head, u.branch()), nil
	}
	if why, err := u.foreignBranch(ctx); err != nil || why != "" {
		return fmt.Sprintf("pull request #%d comes from a branch wo cannot prove is this task's, so wo leaves it: %s", pr.Number, why), err
	}
	client, err := u.sc.GitHub()
	if err != nil {
		return "", err
	}
	me, err := client.Login(ctx)
	if err != nil {
		return "", err
	}
	if pr.Author != "" && pr.Author != me {
		return fmt.Sprintf("pull request #%d was opened by %s, not by %s that wo runs as, so wo leaves it", pr.Number, pr.Author, me), nil
	}
	return u.unloggedPR(ctx, client, pr)
}

// unloggedPR says why a pull request this task's activity log does not
// record opening or taking up stays, "" when it is wo's all the same: the
// state's number is document text, and the login wo runs as may be a
// person's too. Only a run that stopped between opening the pull request
// and logging the step leaves one unlogged, and then it is the single
// open pull request from the task's branch into its base.
func (u *undo) unloggedPR(ctx context.Context, client *github.Client, pr *github.PR) (string, error) {
	prov, err := u.provenance(ctx)
	if err != nil || slices.Contains(prov.PRs, pr.Number) || u.prFound != "" {
		return "", err // unrecordedPR proved the one it found
	}
	logged := "records no pull request"
	if len(prov.PRs) > 0 {
		var nums []string
		for _, n := range prov.PRs {
			nums = append(nums, fmt.Sprintf("#%d", n))
		}
		logged = "records only " + strings.Join(nums, ", ")
	}
	why := fmt.Sprintf("this task's activity log %s, not #%d", logged, pr.Number)
	if base := u.sc.BaseBranch(); pr.Base != base {
		return fmt.Sprintf("pull request #%d is into %s, not the task's base %s, and %s: wo did not open it for this task, so wo leaves it", pr.Number, pr.Base, base, why), nil
	}
	prs, err := client.PRsFrom(ctx, pr.Head, pr.Base)
	if err != nil {
		return "", err
	}
	if open := onlyOpen(prs); pr.State == github.PROpen && (open == nil || open.Number != pr.Number) {
		return fmt.Sprintf("%s, and it is not the only open pull request from %s into %s, so wo cannot prove it opened it and leaves it", why, pr.Head, pr.Base), nil
	}
	return "", nil
}

func samePath(a, b string) bool { return filepath.Clean(a) == filepath.Clean(b) }

// worktreeNotMade says why wo cannot prove that this task's run created
// the worktree, "" when it can: wo names the task in the
// worktree's admin files (gitops.OwnerFile), which a document cannot
// write; a worktree made before wo wrote that file counts when this
// task's activity log records creating it at that path.
func (u *undo) worktreeNotMade(ctx context.Context, w *gitops.Worktree) (string, error) {
	owner, marked := w.CreatedFor()
	switch {
	case marked && owner == u.key():
		return "", nil
	case marked:
		return fmt.Sprintf("its admin files %s say task %s created it, not %s, so wo keeps it", w.AdminDir, owner, u.key()), nil
	}
	prov, err := u.provenance(ctx)
	if err != nil || slices.ContainsFunc(prov.Worktrees, func(p string) bool { return samePath(p, w.Path) }) {
		return "", err
	}
	return fmt.Sprintf("wo cannot prove it created it: its admin files %s carry no mark of wo's, and this task's activity log records creating no worktree there; it may be someone else's, so wo keeps it (remove it yourself with git worktree remove if it is not needed)", w.AdminDir), nil
}

// adoptedBranch says why a branch that wo found existing (FactAdopted)
// stays, "" when wo made the branch: it was someone's before wo committed
// on it, and deleting it would take their commits with it. Resetting it
// to where wo found it is left to a person (reset says how, with <start>
// standing for that commit), who knows whether anyone built on wo's part.
func (u *undo) adoptedBranch(ctx context.Context, branch string, tip plumbing.Hash, reset string) (string, error) {
	prov, err := u.provenance(ctx)
	if err != nil {
		return "", err
	}
	start := prov.Adopted[branch]
	if start == "" {
		return "", nil
	}
	added := "wo added nothing to it"
	if !strings.HasPrefix(tip.String(), start) {
		added = fmt.Sprintf("it is at %s now; the commits this task's runs logged making are %s", gitname.Short(tip.String()), cmp.Or(strings.Join(prov.Commits, ", "), "none"))
	}
	return fmt.Sprintf("branch %s was there before this task's runs: wo found it at %s and started the worktree from it, so it is someone else's and wo never deletes it (%s); to take back only wo's part, reset it yourself: %s",
		branch, start, added, strings.ReplaceAll(reset, "<start>", start)), nil
}

// madeByWo reports whether the commit is one this task's runs logged
// making or pushing; with base, also the commit wo started
// the branch at (a branch that has not moved since holds nothing to lose).
func (u *undo) madeByWo(ctx context.Context, branch string, tip plumbing.Hash, base bool) (bool, error) {
	prov, err := u.provenance(ctx)
	if err != nil {
		return false, err
	}
	return prov.Made(tip) || (base && prov.Started(branch, tip)), nil
}
