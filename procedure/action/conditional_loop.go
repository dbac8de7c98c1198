package action

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/wo-runner/wo/github"
	"github.com/wo-runner/wo/gitops"
	"github.com/wo-runner/wo/internal/gitname"
	"github.com/wo-runner/wo/reviewer"
	"github.com/wo-runner/wo/workorder"
)

// ConditionalLoop goes back to loop_to while its condition holds, running
// fix_action each time: through the agent command when one is configured,
// else by waiting for a person to change the worktree.
type ConditionalLoop struct{}

func newConditionalLoop() Action { return ConditionalLoop{} }

// loopParams are a conditional_loop step's own fields.
type loopParams struct {
	Condition     string `json:"condition"`      // what must hold to go round again
	LoopTo        int    `json:"loop_to"`        // the earlier step to go back to
	FixAction     string `json:"fix_action"`     // what the fix is asked to do
	MaxIterations int    `json:"max_iterations"` // else the engine's bound
}

// Advise requires what the loop cannot run without: its condition and the
// step it goes back to.
func (ConditionalLoop) Advise(_ workorder.Document, path string, s workorder.Step) []workorder.Problem {
	var out []workorder.Problem
	p := paramsOf[loopParams](s)
	if p.Condition == "" {
		out = append(out, workorder.Problem{Path: path + ".condition", Severity: workorder.SeverityError,
			Message: "required for conditional_loop: one of " + strings.Join(conditions, ", ")})
	}
	if p.LoopTo == 0 {
		out = append(out, workorder.Problem{Path: path + ".loop_to", Severity: workorder.SeverityError,
			Message: "required for conditional_loop: the earlier step to go back to"})
	}
	return out
}

// Run evaluates the condition and fixes, commits and pushes when it holds.
func (ConditionalLoop) Run(ctx context.Context, sc *StepContext) (Outcome, error) {
	p := paramsOf[loopParams](sc.Step)
	if p.Condition != "review_comments_exist" {
		return Outcome{}, fmt.Errorf("unknown condition %q", p.Condition)
	}
	st := sc.State()
	comments := st.ReviewComments
	if len(comments) == 0 {
		return Outcome{Note: "no review comments to address: leaving the loop"}, nil
	}
	stepKey := strconv.Itoa(sc.Step.Step)
	iterations := st.LoopIterations[stepKey]
	bound := loopBound(sc)
	if iterations >= bound {
		reason := fmt.Sprintf("the review loop reached its bound of %d iteration(s) with %d comment(s) still open; fix them by hand, then wo reset %s --to-step %d and wo run %s",
			bound, len(comments), sc.Key(), sc.Step.Step-1, sc.Key())
		return Outcome{Status: workorder.StatusBlocked, BlockReason: reason, State: sc.withPhase(workorder.PhaseNeedsFix)},
			&WaitingError{Key: sc.Key(), Reason: reason}
	}
	n := iterations + 1
	repo, err := sc.Repo()
	if err != nil {
		return Outcome{}, err
	}
	from, to, made, out, err := fixToPush(ctx, sc, repo, st, n)
	if err != nil {
		return out, err
	}
	if to != st.PushedSHA {
		if out, err := pushTheFix(ctx, sc, to); err != nil {
			return out, err
		}
	}
	answered, err := answerThreads(ctx, sc, repo, from, to, st.ReviewThreads)
	if err != nil {
		return Outcome{}, err
	}
	after := sc.State()
	after.PushedSHA, after.CommitSHA, after.FixPushed = to, to, nil
	after.ReviewIterations++
	if after.LoopIterations == nil {
		after.LoopIterations = map[string]int{}
	}
	after.LoopIterations[stepKey] = n
	after.ReviewComments, after.Phase, after.FixRequested = []workorder.ReviewComment{}, workorder.PhaseRunning, false
	// The comments handled are behind the watermark now.
	after.ReviewWatermark = after.ReviewSeen
	// A pass of the loop is complete once its fix is pushed: a commit it
	// made is one it pushed.
	note, facts := fmt.Sprintf("fixed %d review comment(s) in %s (iteration %d); back to step %d", len(comments), gitname.Short(to), n, p.LoopTo),
		[]Fact{{Kind: FactCommit, SHA: to}, {Kind: FactPushed, SHA: to}} // the branch is create_branch's or push's to prove
	if !made {
		facts = nil
		note = fmt.Sprintf("addressed %d review comment(s) with %s, a commit wo did not create in this pass (iteration %d); back to step %d", len(comments), gitname.Short(to), n, p.LoopTo)
	}
	if answered != "" {
		note += "; " + answered
	}
	return Outcome{
		Note:   note,
		Facts:  facts,
		State:  &after,
		JumpTo: p.LoopTo,
	}, nil
}

// fixToPush is the pass's fix, from the commit pushed before it to the
// one to push (to), picking up where a killed pass stopped, else made now
// (fixAndCommit, pass n) and recorded before it is pushed. made says wo
// itself created the commit in this pass: only then do the step's facts
// claim it (undo takes them as proof that the commit is wo's). A commit
// the state names (document text), or one a person made in the worktree,
// is pushed but not claimed.
func fixToPush(ctx context.Context, sc *StepContext, repo *gitops.Repo, st workorder.State, n int) (from, to string, made bool, out Outcome, err error) {
	from = st.PushedSHA
	switch fp := st.FixPushed; {
	case fp != nil && fp.To == st.PushedSHA:
		// A pass killed after its push was recorded: only the replies are
		// left (answerThreads finds those already posted).
		return fp.From, fp.To, false, Outcome{}, nil
	case fp != nil && fp.From == st.PushedSHA:
		// A pass killed between its commit and the record of its push:
		// push that commit again (a no-op when it landed) rather than run
		// the agent a second time.
		return from, fp.To, false, Outcome{}, nil
	}
	fixed, created, waiting, err := fixAndCommit(ctx, sc, repo, st.ReviewComments, n)
	if err != nil {
		if refused := (*FixRefusedError)(nil); errors.As(err, &refused) {
			// The next run takes the worktree as the person leaves it.
			rec := sc.State()
			rec.FixRequested, rec.Phase = true, workorder.PhaseNeedsFix
			if cerr := sc.Checkpoint(ctx, rec); cerr != nil {
				return "", "", false, Outcome{}, fmt.Errorf("%w (and recording it failed: %v)", err, cerr)
			}
		}
		return "", "", false, waiting, err
	}
	rec := sc.State()
	rec.FixPushed = &workorder.FixPush{From: from, To: fixed}
	if err := sc.Checkpoint(ctx, rec); err != nil {
		return "", "", false, Outcome{}, err
	}
	sc.Fault("after_commit")
	return from, fixed, created, Outcome{}, nil
}

// pushTheFix pushes commit to and records it. A push while the reviewer
// is still at the head it is reviewing aborts that review (CodeRabbit:
// "Review failed: the head commit changed"): it waits for it, within a
// review wait, else stops and pushes on the next run (the fix is
// recorded).
func pushTheFix(ctx context.Context, sc *StepContext, to string) (Outcome, error) {
	if out, err := waitWhileReviewing(ctx, sc); err != nil {
		return out, err
	}
	if err := pushFix(ctx, sc, to); err != nil {
		return Outcome{}, err
	}
	pushed := sc.State()
	pushed.PushedSHA, pushed.CommitSHA, pushed.PushedAt = to, to, workorder.Timestamp(sc.Now())
	return Outcome{}, sc.Checkpoint(ctx, pushed)
}

// fixAndCommit gets the fix and commits what is not committed yet: first
// the reviewers' suggestions, applied by wo itself; then, for what is
// left, the agent's changes, else a person's. It returns the fix commit
// and whether wo (or the agent it ran in this pass) created it, not a
// person, or the outcome of waiting for a person.
func fixAndCommit(ctx context.Context, sc *StepContext, repo *gitops.Repo, comments []workorder.ReviewComment, n int) (string, bool, Outcome, error) {
	st := sc.State()
	w, author, err := fixWorktree(ctx, sc, repo)
	if err != nil {
		return "", false, Outcome{}, err
	}
	// The suggestions first: exact, and no agent needed for them.
	sugg, err := applySuggestions(repo, w, st.PushedSHA, st.ReviewThreads)
	if err != nil {
		return "", false, Outcome{}, err
	}
	ours := map[string]bool{st.PushedSHA: true} // commits wo made in this pass build on these
	suggested, err := commitSuggestions(sc, repo, w, author, n, len(sugg.threads), ours)
	if err != nil {
		return "", false, Outcome{}, err
	}
	comments, threads := withoutThreads(comments, st.ReviewThreads, sugg.threads)
	if len(comments) == 0 {
		head, _, err := w.Head()
		if err != nil {
			return "", false, Outcome{}, err
		}
		if head.String() != st.PushedSHA {
			return head.String(), suggested, Outcome{}, nil
		}
	}
	asked := commentsKey(st)
	by := fixerOf(sc, st, asked)
	// An agent wo runs in this pass works for wo: a commit it makes on
	// top of what wo pushed (or of wo's suggestions) is wo's too; a
	// person's is not.
	ran, agentFrom, out, err := getFix(ctx, sc, st, w, by, fixAsk{comments: comments, threads: threads, notes: sugg.left, suggested: len(sugg.threads), asked: asked})
	if err != nil {
		return "", false, out, err
	}
	head, res, err := commitFix(sc, repo, w, author, n)
	if err != nil {
		return "", false, Outcome{}, err
	}
	if !res.Created && head.String() == st.PushedSHA {
		if by == byAgent {
			if err := recordAgentRun(ctx, sc, *ran, AgentNoChange, asked); err != nil {
				return "", false, Outcome{}, err
			}
		}
		reason := noFixReason(sc.Key(), st, by, ran, w.Path, len(comments))
		return "", false, Outcome{Status: workorder.StatusBlocked, BlockReason: reason, State: sc.withPhase(workorder.PhaseNeedsFix)}, &WaitingError{Key: sc.Key(), Reason: reason}
	}
	if ran != nil {
		if err := recordAgentRun(ctx, sc, *ran, AgentFixed, asked); err != nil {
			return "", false, Outcome{}, err
		}
	}
	byAgent := sc.Settings().Agent != "" && ours[agentFrom.String()] && head != agentFrom && res.Hash == head
	bySuggestions := suggested && !res.Created && head.String() != st.PushedSHA && ours[head.String()]
	return res.Hash.String(), res.Created || byAgent || bySuggestions, Outcome{}, nil
}

// commitFix commits pass n's fix: what the agent or a person changed,
// staged or not, or committed already, is the fix, so the rest is staged
// and what the index holds beyond HEAD committed (nothing, when it was all
// committed). It returns HEAD before the commit, and the commit.
func commitFix(sc *StepContext, repo *gitops.Repo, w *gitops.Worktree, author gitops.Signature, n int) (plumbing.Hash, gitops.CommitResult, error) {
	if err := stageFix(sc, repo, w); err != nil {
		return plumbing.ZeroHash, gitops.CommitResult{}, err
	}
	head, _, err := w.Head()
	if err != nil {
		return plumbing.ZeroHash, gitops.CommitResult{}, err
	}
	res, err := w.Commit(fmt.Sprintf("Fix review comments (iteration %d)", n), author, sc.Now())
	return head, res, err
}

// fixWorktree is the task's worktree, made again at the branch when it
// is gone since the review (a restack sent the task back to its review
// wait after its cleanup), and the author of the commits made in it.
func fixWorktree(ctx context.Context, sc *StepContext, repo *gitops.Repo) (*gitops.Worktree, gitops.Signature, error) {
	w, err := sc.Worktree()
	if err != nil {
		return nil, gitops.Signature{}, err
	}
	if !w.Complete() {
		if err := remakeWorktree(ctx, sc, repo, w); err != nil {
			return nil, gitops.Signature{}, fmt.Errorf("worktree %s is gone and could not be made again at the branch (%v): the fixes need it; wo reset %s --to-step 0 to start over", w.Path, err, sc.Key())
		}
	}
	author, err := repo.Identity(sc.Getenv)
	return w, author, err
}

// commitSuggestions commits the suggestions wo applied (applied of them),
// and notes the commit in ours; it reports whether it made one.
func commitSuggestions(sc *StepContext, repo *gitops.Repo, w *gitops.Worktree, author gitops.Signature, n, applied int, ours map[string]bool) (bool, error) {
	if applied == 0 {
		return false, nil
	}
	if err := stageFix(sc, repo, w); err != nil {
		return false, err
	}
	res, err := w.Commit(fmt.Sprintf("Apply review suggestions (iteration %d)", n), author, sc.Now())
	if err != nil {
		return false, err
	}
	if res.Created {
		ours[res.Hash.String()] = true
	}
	return res.Created, nil
}

// fixAsk is what is left to fix after the suggestions: the comments and
// threads, wo's notes on the suggestions it could not apply, how many it
// applied, and the key of the comments asked about (commentsKey).
type fixAsk struct {
	comments  []workorder.ReviewComment
	threads   []workorder.ReviewThread
	notes     []string
	suggested int
	asked     string
}

// getFix has the fixer by make the fix in the worktree: it runs the
// agent (its run, and the head it started from, are returned), or takes
// what a person changed; the first time a person is asked, it blocks the
// task with the comments to address. st is the state the pass began with.
func getFix(ctx context.Context, sc *StepContext, st workorder.State, w *gitops.Worktree, by fixer, ask fixAsk) (*AgentRun, plumbing.Hash, Outcome, error) {
	switch by {
	case byAgent:
		if err := agentCapped(sc); err != nil {
			return nil, plumbing.ZeroHash, Outcome{Status: workorder.StatusBlocked, BlockReason: err.Error(), State: sc.withPhase(workorder.PhaseNeedsFix)}, err
		}
		from, _, err := w.Head()
		if err != nil {
			return nil, plumbing.ZeroHash, Outcome{}, err
		}
		prompt := fixPrompt(sc.Doc(), paramsOf[loopParams](sc.Step).FixAction, ask.comments, ask.threads, w.Path, ask.notes)
		res, err := runAgentOnce(ctx, sc, w.Path, prompt)
		if err != nil {
			sc.Log(ctx, "agent_finished", howItEnded(res, map[string]any{"step": sc.Step.Step, "agent": res.Agent, "outcome": "stopped",
				"duration_ms": res.Duration.Milliseconds(), "stdout": trim(res.Stdout, maxKept), "stderr": trim(res.Stderr, maxKept), "error": err.Error()}))
			return nil, plumbing.ZeroHash, Outcome{}, err
		}
		if err := agentFailure(ctx, sc, res, ask.asked); err != nil {
			return nil, plumbing.ZeroHash, Outcome{}, err
		}
		return &res, from, Outcome{}, nil
	case byPersonAfterRefusal:
		sc.Say("taking the worktree as it is now: the last fix was refused, and the agent is not run again (--rerun-agent runs it)")
	case byPersonAfterNoChange:
		sc.Say(fmt.Sprintf("not asking the agent again: it changed nothing for these comments before (%s); --rerun-agent asks it again", st.AgentUsage.Last.Message))
	case byPerson:
		// Asked for once; a change already in the worktree is the fix.
		pending, err := worktreePending(w, st.PushedSHA)
		if err != nil {
			return nil, plumbing.ZeroHash, Outcome{}, err
		}
		if !st.FixRequested && !pending {
			reason := fmt.Sprintf("%d review comment(s) to address in %s, then run wo run %s: %s", len(ask.comments), w.Path, sc.Key(), summarizeComments(ask.comments))
			if ask.suggested > 0 {
				reason = fmt.Sprintf("%d suggestion(s) applied and committed; ", ask.suggested) + reason
			}
			after := sc.State()
			after.Phase, after.FixRequested = workorder.PhaseNeedsFix, true
			return nil, plumbing.ZeroHash, Outcome{Status: workorder.StatusBlocked, BlockReason: reason, State: &after}, &WaitingError{Key: sc.Key(), Reason: reason}
		}
	}
	return nil, plumbing.ZeroHash, Outcome{}, nil
}

// noFixReason says why task key waits when the fixer by changed nothing
// for the count comments in the worktree at path; st is the state the
// pass began with.
func noFixReason(key string, st workorder.State, by fixer, ran *AgentRun, path string, count int) string {
	switch by {
	case byAgent:
		return fmt.Sprintf("agent %s changed nothing for the %d review comment(s); it said: %q. Change the files in %s yourself and run wo run %s, or ask it again with wo run %s --rerun-agent",
			ran.Agent, count, cmp.Or(ran.Report.Message, "nothing"), path, key, key)
	case byPersonAfterRefusal:
		return fmt.Sprintf("the last fix was refused, and the worktree %s has no changes now for the %d review comment(s): change the files yourself and run wo run %s, or run the agent again: wo run %s --rerun-agent",
			path, count, key, key)
	case byPersonAfterNoChange:
		u := st.AgentUsage
		return fmt.Sprintf("agent %s changed nothing for the %d review comment(s) before (it said: %q), and the worktree %s has no changes: change the files yourself and run wo run %s, or ask it again with wo run %s --rerun-agent",
			u.Last.Agent, count, u.Last.Message, path, key, key)
	}
	return fmt.Sprintf("the worktree %s has no changes yet for the %d review comment(s): change the files, then run wo run %s", path, count, key)
}

// worktreePending reports whether the worktree holds a change since the
// last push: files changed or new (as git status shows them), or commits
// on the branch. Such a change is a person's fix, already made.
func worktreePending(w *gitops.Worktree, pushed string) (bool, error) {
	head, _, err := w.Head()
	if err != nil {
		return false, err
	}
	if head.String() != pushed {
		return true, nil
	}
	changed, err := w.Changes()
	return len(changed) > 0, err
}

// fixer is who makes a pass's fix.
type fixer int

const (
	byAgent               fixer = iota // the agent, run now
	byPerson                           // a person: no agent is configured
	byPersonAfterRefusal               // the person's correction of a fix the gate refused
	byPersonAfterNoChange              // a person: the agent changed nothing for these comments before
)

// fixerOf decides who makes the fix of the comments asked about. After a
// refusal the person's correction is the fix, and an agent that changed
// nothing is not asked the same again, unless --rerun-agent.
func fixerOf(sc *StepContext, st workorder.State, asked string) fixer {
	s := sc.Settings()
	switch {
	case s.Agent == "":
		return byPerson
	case s.RerunAgent:
		return byAgent
	case st.FixRequested:
		return byPersonAfterRefusal
	case st.AgentUsage != nil && st.AgentUsage.Last != nil && st.AgentUsage.Last.Outcome == AgentNoChange && st.AgentUsage.Last.Comments == asked:
		return byPersonAfterNoChange
	}
	return byAgent
}

// remakeWorktree makes the work order's worktree again, on its branch at
// the branch's commit.
func remakeWorktree(ctx context.Context, sc *StepContext, repo *gitops.Repo, w *gitops.Worktree) error {
	branch, err := sc.Branch()
	if err != nil {
		return err
	}
	tip, ok, err := repo.BranchHash(branch)
	if err != nil {
		return err
	}
	if !ok || tip.String() != sc.State().PushedSHA {
		return fmt.Errorf("branch %s is not at the pushed commit %s", branch, gitname.Short(sc.State().PushedSHA))
	}
	w.Owner = sc.Key()
	if err := w.Create(ctx, tip, nil); err != nil {
		return err
	}
	_, err = w.SwitchBranch(branch)
	return err
}

// withoutThreads are the comments and threads left once the threads done
// (their suggestions applied) are taken out.
func withoutThreads(comments []workorder.ReviewComment, threads []workorder.ReviewThread, done []string) ([]workorder.ReviewComment, []workorder.ReviewThread) {
	if len(done) == 0 {
		return comments, threads
	}
	gone := map[int64]bool{}
	var keep []workorder.ReviewThread
	for _, t := range threads {
		if slices.Contains(done, t.ID) {
			if len(t.Comments) > 0 {
				gone[t.Comments[0].ID] = true
			}
			continue
		}
		keep = append(keep, t)
	}
	var left []workorder.ReviewComment
	for _, c := range comments {
		if c.ID != 0 && c.Section == "" && gone[c.ID] {
			continue
		}
		left = append(left, c)
	}
	return left, keep
}

// AddressedMarker marks wo's reply in a review thread for one fix commit,
// so that a rerun finds it and never replies twice.
func AddressedMarker(sha string) string { return "<!-- wo:addressed " + sha + " -->" }

// addressedThreads are the threads that count whose lines the fix (from
// before to after) touched.
func addressedThreads(repo *gitops.Repo, before, after string, threads []workorder.ReviewThread) []workorder.ReviewThread {
	addressed := addressedBy(repo, before, after)
	var todo []workorder.ReviewThread
	for _, t := range threads {
		if t.Counted && !t.Deleted && addressed(t.Path, t.StartLine, t.Line) {
			todo = append(todo, t)
		}
	}
	return todo
}

// threadsNow are pull request n's review threads as GitHub has them now,
// by ID.
func threadsNow(ctx context.Context, client *github.Client, n int) (map[string]github.ReviewThread, error) {
	now, err := client.ReviewThreads(ctx, n)
	if err != nil {
		return nil, err
	}
	current := map[string]github.ReviewThread{}
	for _, t := range now.Threads {
		current[t.ID] = t
	}
	return current, nil
}

// answerThreads replies "Addressed in <sha>" in each counted thread whose
// lines the fix touched (once: a rerun finds its reply by the marker), and
// resolves those threads when context.resolve_threads (or
// --resolve-threads) asks. It reads the threads afresh, since a rerun's
// state predates its replies.
func answerThreads(ctx context.Context, sc *StepContext, repo *gitops.Repo, before, after string, threads []workorder.ReviewThread) (string, error) {
	todo := addressedThreads(repo, before, after, threads)
	if len(todo) == 0 {
		return "", nil
	}
	client, err := sc.GitHub()
	if err != nil {
		return "", err
	}
	current, err := threadsNow(ctx, client, sc.PRNumber())
	if err != nil {
		return "", err
	}
	me, err := client.Login(ctx)
	if err != nil {
		return "", err
	}
	marker := AddressedMarker(after)
	body := fmt.Sprintf("Addressed in %s.\n\n%s", gitname.Short(after), marker)
	// wo's reply is a comment of wo's carrying the marker: anyone may
	// quote the marker, and must not stop wo from replying.
	repliedIn := func(t github.ThreadComment) bool {
		return github.SameLogin(t.Author, me) && strings.Contains(t.Body, marker)
	}
	resolve := resolveThreads(sc)
	replied, resolved := 0, 0
	for _, t := range todo {
		cur, ok := current[t.ID]
		if !ok || len(cur.Comments) == 0 {
			continue // gone: deleted on GitHub
		}
		if !slices.ContainsFunc(cur.Comments, repliedIn) {
			if err := client.ReplyToThread(ctx, t.ID, body); err != nil {
				return "", err
			}
			replied++
			sc.Fault("after_reply")
		}
		// wo resolves only what an awaited reviewer opened: a writer's
		// thread is theirs to resolve.
		if resolve && !cur.Resolved && opensAwaited(sc, cur.Comments[0].Author) {
			if err := client.ResolveThread(ctx, t.ID); err != nil {
				return "", err
			}
			resolved++
			sc.Fault("after_resolve")
		}
	}
	out := fmt.Sprintf("replied in %d review thread(s)", replied)
	if resolve {
		out += fmt.Sprintf(", resolved %d", resolved)
	}
	return out, nil
}

// addressNear is how many lines around a thread's line a fix must touch
// to count as addressing it: the context GitHub shows around a comment.
const addressNear = 3

// maxAddressedBlob bounds the files compared line by line; a larger one
// that changed counts as touched throughout.
const maxAddressedBlob = 4 << 20

// addressedBy reports whether the fix from before to after touched the
// lines a thread is on, or those around them (numbered as in before, the
// head the review saw). A thread with no current line (outdated) or a commit that cannot be
// read is not addressed: wo claims only what it can show.
func addressedBy(repo *gitops.Repo, before, after string) func(path string, start, line int) bool {
	type version struct {
		text    string
		hash    plumbing.Hash
		present bool
		large   bool // not read: compared by hash alone
	}
	read := func(sha, path string) (version, bool) {
		c, err := repo.Commit(plumbing.NewHash(sha))
		if err != nil {
			return version{}, false
		}
		f, err := c.File(path)
		if err != nil {
			return version{}, true
		}
		v := version{hash: f.Hash, present: true, large: f.Size > maxAddressedBlob}
		if !v.large {
			if v.text, err = f.Contents(); err != nil {
				return version{}, false
			}
		}
		return v, true
	}
	return func(path string, start, line int) bool {
		if line <= 0 {
			return false
		}
		if start <= 0 || start > line {
			start = line
		}
		old, okA := read(before, path)
		cur, okB := read(after, path)
		switch {
		case !okA || !okB || !old.present || !cur.present:
			// A file gone may be renamed whole, its lines untouched: wo
			// cannot tell that from a fix and claims nothing.
			return false
		case old.hash == cur.hash:
			return false
		case old.large || cur.large:
			return true
		}
		// A change of whitespace only (indentation, blank lines) addresses
		// nothing: the lines are compared without it.
		touched := significantTouched(old.text, cur.text)
		// A comment on lines start..line is addressed by a change among
		// them or within addressNear of either end.
		mid := (start + line) / 2
		return touched.Near(mid, (line-start+1)/2+addressNear)
	}
}

// significantTouched are the lines of before (numbered as in before) that
// the change to after touched in more than whitespace: blank lines are
// left out and each line's spacing is collapsed before the comparison.
func significantTouched(before, after string) gitops.TouchedLines {
	b, numbers := significantLines(before)
	a, _ := significantLines(after)
	var out gitops.TouchedLines
	for _, i := range gitops.LinesTouched(b, a) {
		switch {
		case len(numbers) == 0:
			out = append(out, 1)
		case i < 1:
			out = append(out, numbers[0])
		case i > len(numbers):
			out = append(out, numbers[len(numbers)-1])
		default:
			out = append(out, numbers[i-1])
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// significantLines is text without blank lines and with each line's
// whitespace collapsed, and the line number each kept line had.
func significantLines(text string) (string, []int) {
	var b strings.Builder
	var numbers []int
	for i, l := range strings.Split(text, "\n") {
		f := strings.Fields(l)
		if len(f) == 0 {
			continue
		}
		b.WriteString(strings.Join(f, " "))
		b.WriteByte('\n')
		numbers = append(numbers, i+1)
	}
	return b.String(), numbers
}

// opensAwaited reports whether login is an awaited reviewer: named ones,
// or, when none is named, a review bot wo knows.
func opensAwaited(sc *StepContext, login string) bool {
	names := awaitedReviewers(sc)
	if len(names) == 0 {
		return reviewer.Known(login)
	}
	return slices.ContainsFunc(names, func(n string) bool { return reviewer.For(n).Is(login) })
}

// waitWhileReviewing waits, before a fix is pushed, until no awaited
// reviewer says it is still reviewing the pushed head.
func waitWhileReviewing(ctx context.Context, sc *StepContext) (Outcome, error) {
	if sc.PRNumber() == 0 {
		return Outcome{}, nil // no pull request: nobody reviews
	}
	client, n, me, err := prContext(ctx, sc)
	if err != nil {
		return Outcome{}, err
	}
	head := sc.State().PushedSHA
	deadline := sc.Now().Add(reviewWaitFor(sc))
	for {
		s := reviewer.Signals{Head: head, Now: sc.Now()}
		if s.Comments, err = client.IssueComments(ctx, n); err != nil {
			return Outcome{}, err
		}
		if s.Statuses, err = headStatuses(ctx, client, head); err != nil {
			return Outcome{}, err
		}
		var busy []string
		for _, p := range audienceOf(sc, me, s).Awaited {
			if p.Read(s).Kind == reviewer.InProgress {
				busy = append(busy, p.Login())
			}
		}
		if len(busy) == 0 {
			return Outcome{}, nil
		}
		if sc.Now().After(deadline) {
			reason := fmt.Sprintf("review in progress: %s is still reviewing %s, and a push now would abort that review; the fix is committed and wo pushes it on the next run: wo run %s",
				strings.Join(busy, ", "), gitname.Short(head), sc.Key())
			return Outcome{State: sc.withPhase(workorder.PhaseWaitingForReview)}, &WaitingError{Key: sc.Key(), Reason: reason}
		}
		sc.Say(fmt.Sprintf("%s is still reviewing %s: waiting to push the fix", strings.Join(busy, ", "), gitname.Short(head)))
		if err := SleepCtx(ctx, min(sc.Settings().PollInterval, deadline.Sub(sc.Now())+time.Millisecond)); err != nil {
			return Outcome{}, err
		}
	}
}

// Plan says what the loop would do now.
func (ConditionalLoop) Plan(sc *StepContext) string {
	who := "wait for a person to fix them"
	if sc.Settings().Agent != "" {
		who = "run the agent: " + agentCallText(sc)
	}
	p := paramsOf[loopParams](sc.Step)
	return fmt.Sprintf("if %s: %s, commit, push and go back to step %d (at most %d times)", p.Condition, who, p.LoopTo, loopBound(sc))
}

func summarizeComments(comments []workorder.ReviewComment) string {
	parts := make([]string, 0, len(comments))
	for i, c := range comments {
		if i == 5 {
			parts = append(parts, fmt.Sprintf("and %d more", len(comments)-5))
			break
		}
		where := c.Path
		if c.Line > 0 {
			where = fmt.Sprintf("%s:%d", c.Path, c.Line)
		}
		body := c.Body
		if len(body) > 80 {
			body = body[:77] + "..."
		}
		if where != "" {
			parts = append(parts, fmt.Sprintf("%s (%s)", body, where))
		} else {
			parts = append(parts, body)
		}
	}
	return strings.Join(parts, "; ")
}

// loopBound is the step's max_iterations, else the engine's default.
func loopBound(sc *StepContext) int {
	if n := paramsOf[loopParams](sc.Step).MaxIterations; n > 0 {
		return n
	}
	return sc.Settings().MaxLoopIterations
}
