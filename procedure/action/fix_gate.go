package action

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/wo-runner/wo/github"
	"github.com/wo-runner/wo/gitops"
	"github.com/wo-runner/wo/internal/gitname"
	"github.com/wo-runner/wo/internal/leaks"
	"github.com/wo-runner/wo/workorder"
)

// The fix gate: what a review fix (an agent's, or a person's that wo
// picks up from the worktree) may push. wo pushes into the repository
// itself, where CI runs with its secrets, so before every push after a fix
// it checks the whole range from the last push to the branch: a line of
// commits on the work branch, each path inside the work order's files
// (inputs.file_manifest, inputs.delete_manifest) or context.fix_paths,
// nothing under .github/, no .gitmodules, no gitlink, no file over the
// size limit (context.fix_max_file_bytes, 10 MiB by default), whatever a
// file system takes for those names (workorder.IsAliasOf); agents'
// settings and policy files (namedOnly) and new symbolic links only when
// the manifest names them, and no link out of the worktree. Staging the
// fix applies the same rules before a blob is written. When anything is
// refused nothing is pushed, and the task is blocked with the list.

// maxFixCommits bounds the commits one fix may add on top of the last
// push; maxRefusalsListed bounds the paths a refusal lists (the rest are
// counted).
const (
	maxFixCommits     = 100
	maxRefusalsListed = 50
)

// FixRefusedError is a fix that wo did not push, and what a person must
// look at before it can go on.
type FixRefusedError struct {
	Key      string
	Worktree string
	Branch   string
	From     string // the last push; the fix starts there
	Refused  []gitops.Refusal
	More     int  // refusals not listed
	Staged   bool // refused while staging: nothing was committed
}

// TellsNextStep: the message ends with the way to go on.
func (e *FixRefusedError) TellsNextStep() {}

func (e *FixRefusedError) Error() string {
	what := "the fix was not pushed"
	if e.Staged {
		what = "the fix was not committed or pushed"
	}
	from := gitname.Short(e.From)
	takeOut := fmt.Sprintf("take those paths out (for a file that was there at the last push, git -C %s checkout %s -- PATH; for a new one, delete it)", e.Worktree, from)
	if !e.Staged {
		takeOut = fmt.Sprintf("take those paths out of the commits (git -C %s reset -q --soft %s keeps their changes uncommitted; then, for a file that was there at the last push, git -C %s checkout %s -- PATH; for a new one, delete it)", e.Worktree, from, e.Worktree, from)
	}
	ways := []string{takeOut, fmt.Sprintf("or drop everything since the last push (git -C %s reset --hard %s)", e.Worktree, from)}
	if own := allowable(e.Refused); len(own) > 0 {
		quoted, _ := json.Marshal(own)
		ways = append(ways, "or, to push "+strings.Join(own, ", ")+" as this task's own, add them to context.fix_paths: "+string(quoted))
	}
	return fmt.Sprintf("%s: %d path(s) in worktree %s are not wo's to push: %s. To go on, %s; then run wo run %s: it takes the worktree as you leave it and does not run the agent again (--rerun-agent does)",
		what, len(e.Refused)+e.More, e.Worktree, gitops.ListRefusals(e.Refused, e.More), strings.Join(ways, ", "), e.Key)
}

// outsideTheTask is the reason of a path a fix may not change only
// because the task does not name it: context.fix_paths can allow it.
const outsideTheTask = "outside inputs.file_manifest and context.fix_paths"

// allowable are the refused paths that context.fix_paths would allow.
func allowable(refused []gitops.Refusal) []string {
	var out []string
	for _, r := range refused {
		if strings.HasPrefix(r.Reason, outsideTheTask) {
			out = append(out, r.Path)
		}
	}
	return out
}

// fixPolicy says which paths a fix may change.
type fixPolicy struct {
	files      map[string]bool // the manifest and the delete manifest
	patterns   []string        // context.fix_paths
	executable []string        // context.fix_executable
	maxSize    int64
}

func newFixPolicy(sc *StepContext) fixPolicy { return fixPolicyOf(sc.Task()) }

// refuse says why a fix must not change path, or "" when it may: never
// .github/, .gitmodules or .git in any spelling; a settings or policy file
// (namedOnly) only when the manifest names it; else a path of the
// manifest or of context.fix_paths.
func (p fixPolicy) refuse(path string) string {
	if why := protectedRefusal(path); why != "" {
		return why
	}
	if p.files[path] {
		return ""
	}
	if why := namedOnlyRefusal(path); why != "" {
		return why
	}
	for _, pat := range p.patterns {
		if ok, _ := doublestar.Match(pat, path); ok {
			return ""
		}
	}
	return outsideTheTask
}

// check says why a commit's change must not be pushed, or "".
func (p fixPolicy) check(c gitops.PathChange) string {
	if !c.Deleted {
		switch c.Mode {
		case filemode.Submodule:
			return "a gitlink (a submodule's commit): never pushed after a review"
		case filemode.Regular, filemode.Executable, filemode.Symlink, filemode.Deprecated:
		default:
			return fmt.Sprintf("an entry of mode %o, which git does not check out as a file", uint32(c.Mode))
		}
		if c.Size > p.maxSize {
			return fmt.Sprintf("%s, over the limit of %s for one file", byteSize(c.Size), byteSize(p.maxSize))
		}
		if why := p.executableRefusal(c); why != "" {
			return why
		}
	}
	return p.refuse(c.Path)
}

// mayExecute reports whether context.fix_executable lets a fix make path
// executable.
func (p fixPolicy) mayExecute(path string) bool {
	for _, pat := range p.executable {
		if ok, _ := doublestar.Match(pat, path); ok {
			return true
		}
	}
	return false
}

// executableRefusal says why a change may not leave its file executable:
// a fix that makes a file executable (a new one, or one that was not)
// changes what runs in CI, not just what the code says; only
// context.fix_executable lets it.
func (p fixPolicy) executableRefusal(c gitops.PathChange) string {
	if c.Mode != filemode.Executable || c.BeforeMode == filemode.Executable || p.mayExecute(c.Path) {
		return ""
	}
	was := "a new file"
	if !c.Before.IsZero() {
		was = fmt.Sprintf("it was %o", uint32(c.BeforeMode))
	}
	return fmt.Sprintf("it makes the file executable (mode 100755; %s): a fix may change a file's text, not whether it runs; list the path in context.fix_executable to allow it", was)
}

// commitLinkRefusal says why the link that change c leaves must not be
// pushed (see linkRefusal): its target in c's commit, and whether the last
// push (from) had a link at the path.
func (p fixPolicy) commitLinkRefusal(repo *gitops.Repo, from plumbing.Hash, c gitops.PathChange) (string, error) {
	target, _, err := repo.LinkTarget(c.Commit, c.Path)
	if err != nil {
		return "", err
	}
	_, existed, err := repo.LinkTarget(from, c.Path)
	if err != nil {
		return "", err
	}
	isLink := func(path string) bool {
		_, ok, err := repo.LinkTarget(c.Commit, path)
		return ok || err != nil // what cannot be read is taken for a link
	}
	return p.linkRefusal(c.Path, target, existed, isLink), nil
}

// secretIn says why a change must not be pushed because what it leaves
// holds a secret wo knows (its GitHub token, in any form it sends it): an
// agent that reached the token (unconfined, where no sandbox stops it)
// and wrote it into its fix must not publish it. redact masks the secrets
// in a text; a blob it changes holds one.
func secretIn(repo *gitops.Repo, c gitops.PathChange, s secrets) (string, error) {
	if c.Deleted || c.Blob.IsZero() || c.Mode == filemode.Submodule || (s.redact == nil && s.leaks == nil) {
		return "", nil
	}
	b, err := repo.ReadBlob(c.Blob)
	if err != nil {
		return "", err
	}
	if text := string(b); s.redact != nil && s.redact(text) != text {
		return "it holds wo's GitHub token: never pushed (take the token out; if an agent wrote it there, treat the token as exposed and replace it)", nil
	}
	if s.leaks == nil {
		return "", nil
	}
	var before []byte
	if !c.Before.IsZero() {
		if before, err = repo.ReadBlob(c.Before); err != nil {
			return "", err
		}
	}
	found := s.leaks.Scan(b, leaks.Added(before, b))
	if len(found) == 0 {
		return "", nil
	}
	where := fmt.Sprintf("line %d", found[0].Line)
	if len(found) > 1 {
		where += fmt.Sprintf(" and %d more line(s)", len(found)-1)
	}
	return fmt.Sprintf("it adds a secret, %s, at %s: never pushed (take it out; if an agent wrote it there, treat that secret as exposed and replace it)", found[0].Kind, where), nil
}

// secrets are what the gates look for in what a push adds: the forms of
// wo's token the run redacts, and the scanner of secrets (wo's token in
// every encoding, the user's credential files, gitleaks' kinds).
type secrets struct {
	redact func(string) string
	leaks  *leaks.Scanner
}

// secretsOf are the secrets a run's gates look for. The credential files
// are the ones in wo's own HOME: those an agent could have read.
func secretsOf(sc *StepContext) secrets {
	return secrets{redact: sc.Redact, leaks: leaks.New(github.Token(sc.Getenv), sc.Getenv("HOME"))}
}

// byteSize writes n bytes for a person.
func byteSize(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// stageFix stages what the agent or a person changed in the worktree, with
// the ignore files and the fix policy; a refusal stages nothing.
func stageFix(sc *StepContext, repo *gitops.Repo, w *gitops.Worktree) error {
	branch, err := sc.Branch()
	if err != nil {
		return err
	}
	refusal := &FixRefusedError{Key: sc.Key(), Worktree: w.Path, Branch: branch, From: sc.State().PushedSHA, Staged: true}
	// wo commits on HEAD: never onto a branch the agent switched to.
	if why, _, err := headRefusal(w, branch); err != nil || why != "" {
		if err != nil {
			return err
		}
		refusal.Refused = []gitops.Refusal{{Path: "HEAD", Reason: why}}
		return refusal
	}
	// A link is new unless the last push had it (HEAD when no push is
	// recorded); a commit that cannot be read proves no link was there.
	base := plumbing.NewHash(refusal.From)
	if !plumbing.IsHash(refusal.From) {
		if base, _, err = w.Head(); err != nil {
			return err
		}
	}
	p := newFixPolicy(sc)
	refuseLink := func(path, target string) string {
		_, existed, _ := repo.LinkTarget(base, path)
		// The worktree as it will be committed: its links are the tree's.
		isLink := func(rel string) bool {
			fi, err := os.Lstat(filepath.Join(w.Path, filepath.FromSlash(rel)))
			return err == nil && fi.Mode()&os.ModeSymlink != 0
		}
		return p.linkRefusal(path, target, existed, isLink)
	}
	// A file the fix made executable keeps its mode (its text is staged),
	// unless context.fix_executable lets it: said, not pushed.
	var kept []string
	_, err = w.Stage(gitops.StageOptions{MaxFileSize: p.maxSize, ExcludesFile: repo.ExcludesFile(sc.Getenv), Refuse: p.refuse, RefuseLink: refuseLink,
		MayExecute: p.mayExecute, ModeKept: func(path string) { kept = append(kept, path) }})
	if len(kept) > 0 {
		sc.Warn("the fix made %s executable: committed without the executable bit (list the path in context.fix_executable to allow it)", strings.Join(kept, ", "))
	}
	var refused *gitops.StageRefusedError
	if errors.As(err, &refused) {
		refusal.Refused, refusal.More = refused.Refused, refused.More
		return refusal
	}
	return err
}

// headRefusal says why a fix may not be committed or pushed from the
// worktree's HEAD ("" when it may), and where HEAD is.
func headRefusal(w *gitops.Worktree, branch string) (string, plumbing.Hash, error) {
	head, on, err := w.Head()
	if err != nil {
		return "", head, err
	}
	if on == branch {
		return "", head, nil
	}
	where := "a detached HEAD at " + gitname.Short(head.String())
	if on != "" {
		where = "branch " + on
	}
	return fmt.Sprintf("the worktree is on %s, not the work branch %s: put it back with git -C %s switch %s", where, branch, w.Path, branch), head, nil
}

// pushFix pushes the fix commit (to) through the push gate, which checks
// it from the remote's tip, not from the last push the state records
// (which the agent can rewrite): a line on top of that tip, so that a fix
// can never replace what was pushed before.
func pushFix(ctx context.Context, sc *StepContext, to string) error {
	_, err := branchPush(ctx, sc, GateFix, plumbing.NewHash(to))
	if err != nil {
		var refused *FixRefusedError
		if errors.As(err, &refused) {
			sc.Log(ctx, "fix_refused", map[string]any{"step": sc.Step.Step, "from": refused.From, "to": to,
				"refused": refused.Refused, "more": refused.More})
			// The next run starts the fix over (a new pass, or the
			// person's cleaned-up worktree), never pushes this one.
			rec := sc.State()
			rec.FixPushed, rec.FixRequested, rec.Phase = nil, true, workorder.PhaseNeedsFix
			if cerr := sc.Checkpoint(ctx, rec); cerr != nil {
				return fmt.Errorf("%w (and recording it failed: %v)", err, cerr)
			}
		}
	}
	// A process the agent left behind (outside its process group) could
	// move the branch after the check: the push sent the checked commit
	// or nothing.
	return err
}

// checkFix is the gate: a FixRefusedError when the fix may not be pushed.
func checkFix(sc *StepContext, repo *gitops.Repo, from, to string) error {
	w, err := sc.Worktree()
	if err != nil {
		return err
	}
	branch, err := sc.Branch()
	if err != nil {
		return err
	}
	refused := &FixRefusedError{Key: sc.Key(), Worktree: w.Path, Branch: branch, From: from}
	deny := refused.deny
	if !plumbing.IsHash(from) {
		return fmt.Errorf("task %s: no push is recorded to check the fix against (state.pushed_sha is %q): wo reset %s --to-step %d, then wo run %s",
			sc.Key(), from, sc.Key(), paramsOf[loopParams](sc.Step).LoopTo-1, sc.Key())
	}
	why, _, err := headRefusal(w, branch)
	if err != nil {
		return err
	}
	tip, exists, err := repo.BranchHash(branch)
	if err != nil {
		return err
	}
	switch {
	case why != "":
		deny("HEAD", why)
	case !exists || tip.String() != to:
		deny("refs/heads/"+branch, fmt.Sprintf("the branch moved after the fix was committed (%s, not %s)", gitname.Short(tip.String()), gitname.Short(to)))
	}
	if len(refused.Refused) > 0 {
		return refused
	}
	changes, err := repo.LineChanges(plumbing.NewHash(from), tip, maxFixCommits)
	var notLine *gitops.NotALineError
	var unsafe *gitops.UnsafeTreeError
	switch {
	case errors.As(err, &notLine):
		deny("refs/heads/"+branch, "its history was rewritten or merged: "+notLine.Error()+"; a fix goes on top of the last push, and wo never force-pushes after a review")
		return refused
	case errors.As(err, &unsafe):
		deny(unsafe.Path, unsafe.Reason)
		return refused
	case err != nil:
		return err
	}
	p, seen, known := newFixPolicy(sc), map[string]bool{}, secretsOf(sc)
	for _, c := range changes {
		if seen[c.Path] {
			continue
		}
		why, err := p.changeRefusal(repo, plumbing.NewHash(from), c, known)
		if err != nil {
			return err
		}
		if why != "" {
			seen[c.Path] = true
			deny(c.Path, why+" (commit "+gitname.Short(c.Commit.String())+")")
		}
	}
	if len(refused.Refused) > 0 {
		return refused
	}
	return nil
}

// deny adds a refusal, listing at most maxRefusalsListed and counting the
// rest.
func (e *FixRefusedError) deny(path, why string) {
	if len(e.Refused) < maxRefusalsListed {
		e.Refused = append(e.Refused, gitops.Refusal{Path: path, Reason: why})
	} else {
		e.More++
	}
}

// changeRefusal is why the fix's change c may not be pushed: the policy's
// rules for paths, a link that leads where the fix may not reach (from is
// the last push), or a secret in its content; "" when it may be.
func (p fixPolicy) changeRefusal(repo *gitops.Repo, from plumbing.Hash, c gitops.PathChange, known secrets) (string, error) {
	if why := p.check(c); why != "" {
		return why, nil
	}
	if c.Mode == filemode.Symlink && !c.Deleted {
		if why, err := p.commitLinkRefusal(repo, from, c); why != "" || err != nil {
			return why, err
		}
	}
	return secretIn(repo, c, known)
}
