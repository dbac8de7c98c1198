package stack

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/wo-runner/wo/github"
	"github.com/wo-runner/wo/procedure/action"
	"github.com/wo-runner/wo/store"
	"github.com/wo-runner/wo/workorder"
)

// GitHub's own stacked pull requests. A stacked epic is a chain of pull
// requests, each based on the head of the one under it; on a repository
// that has GitHub's stacks, wo also makes the chain one GitHub stack, so
// that GitHub shows it as one and merges it as one. wo does not assume the
// feature: the first time the epic's stack is refreshed with a pull request
// open, it asks (the Stacks API answers, or is not found) and keeps the
// answer in the epic's state; without stacks nothing changes.
//
// Each refresh then checks GitHub's stack against the epic's order: pull
// requests opened since are added on top; a stack that no longer matches
// (a retarget, a restack, a person's change on GitHub) is unstacked and
// made again, the only repair GitHub offers. An epic of more than 100 pull
// requests is consecutive stacks of 100.

// syncGitHubStack makes GitHub's stacks of a stacked epic match stack.
// It returns a note for the person when it repaired or could not.
func (k *Keeper) syncGitHubStack(ctx context.Context, epicKey string, stack action.Stack, c *github.Client) (string, error) {
	if enabled, err := k.stacksEnabled(ctx, epicKey, c); err != nil || !enabled {
		return "", err
	}
	doc, err := k.e.Store.Get(ctx, epicKey)
	if err != nil {
		return "", err
	}
	st, err := workorder.StateOf(doc)
	if err != nil {
		return "", err
	}
	rec := st.GitHubStacks
	chain := chainOf(stack)
	var notes []string
	made := slices.Clone(rec.Stacks)
	for i := 0; i*github.MaxStack < len(chain); i++ {
		part := chain[i*github.MaxStack : min(len(chain), (i+1)*github.MaxStack)]
		var known int
		if i < len(made) {
			known = made[i]
		}
		n, note, err := k.syncOneStack(ctx, c, known, part)
		if note != "" {
			notes = append(notes, note)
		}
		if err != nil {
			return strings.Join(notes, "; "), err
		}
		if n == 0 {
			made = made[:min(i, len(made))] // too few pull requests yet to make this one, or GitHub refused
			break
		}
		if i < len(made) {
			made[i] = n
		} else {
			made = append(made, n)
		}
	}
	note := strings.Join(notes, "; ")
	if !slices.Equal(made, rec.Stacks) || note != rec.Note {
		err = k.editEpicState(ctx, epicKey, func(s *workorder.State) {
			if s.GitHubStacks != nil {
				s.GitHubStacks.Stacks, s.GitHubStacks.Note = made, note
			}
		})
	}
	return note, err
}

// stacksEnabled is the epic's recorded answer to whether the repository
// has GitHub's stacks, asking GitHub once when there is none.
func (k *Keeper) stacksEnabled(ctx context.Context, epicKey string, c *github.Client) (bool, error) {
	doc, err := k.e.Store.Get(ctx, epicKey)
	if err != nil {
		return false, err
	}
	st, err := workorder.StateOf(doc)
	if err != nil {
		return false, err
	}
	if st.GitHubStacks != nil {
		return st.GitHubStacks.Enabled, nil
	}
	enabled, err := c.StacksEnabled(ctx)
	if err != nil {
		return false, err
	}
	return enabled, k.editEpicState(ctx, epicKey, func(s *workorder.State) {
		s.GitHubStacks = &workorder.GitHubStacks{Enabled: enabled, CheckedAt: workorder.Timestamp(k.e.Now())}
	})
}

// chainEntry is one pull request of the epic's chain.
type chainEntry struct {
	Number int
	Open   bool
}

// chainOf is the epic's pull requests, bottom first, up to the first part
// that has none yet: the parts above it build on it, so GitHub's stack
// cannot go past it.
func chainOf(stack action.Stack) []chainEntry {
	var out []chainEntry
	for _, en := range stack {
		if en.PRNumber == 0 {
			break
		}
		out = append(out, chainEntry{Number: en.PRNumber, Open: en.PRState == github.PROpen})
	}
	return out
}

// syncOneStack makes one GitHub stack hold part, in order. known is the
// stack wo made for it before (0: none, or not recorded: a run that made
// it and died before writing finds it by its pull requests). It returns
// the stack's number, 0 when part has too few open pull requests to
// make one.
func (k *Keeper) syncOneStack(ctx context.Context, c *github.Client, known int, part []chainEntry) (int, string, error) {
	var have *github.Stack
	var err error
	if known > 0 {
		if have, err = c.GetStack(ctx, known); err != nil {
			return 0, "", err
		}
	}
	open := 0
	for _, p := range part {
		if p.Open {
			open++
		}
	}
	if have == nil && known == 0 && open < 2 {
		return 0, "", nil // one open pull request is no stack yet
	}
	// Not recorded (a run that made it died before writing): wo makes a
	// stack from the lowest open pull request up, so it holds that one.
	for i := 0; have == nil && i < len(part); i++ {
		if part[i].Open {
			if have, err = c.StackOf(ctx, part[i].Number); err != nil {
				return 0, "", err
			}
			break
		}
	}
	if have != nil {
		in := map[int]bool{}
		for _, n := range have.Numbers() {
			in[n] = true
		}
		// What the stack should hold: every pull request it holds, merged
		// or closed ones included, and every open one.
		var want []int
		for _, p := range part {
			if p.Open || in[p.Number] {
				want = append(want, p.Number)
			}
		}
		got := have.Numbers()
		if len(got) > len(want) && slices.Equal(got[:len(want)], want) {
			return have.Number, "", nil // a person stacked more on top: theirs
		}
		if len(got) <= len(want) && slices.Equal(got, want[:len(got)]) {
			if rest := want[len(got):]; len(rest) > 0 {
				if _, err := c.AddToStack(ctx, have.Number, rest); err != nil {
					var refused *github.StackRefusedError
					if !errors.As(err, &refused) {
						return 0, "", err
					}
					return k.remakeStack(ctx, c, have.Number, part, fmt.Sprintf("GitHub would not add %v to stack %d (%s)", rest, have.Number, refused.Reason))
				}
			}
			return have.Number, "", nil
		}
		return k.remakeStack(ctx, c, have.Number, part, fmt.Sprintf("stack %d held %v, not the epic's order %v", have.Number, got, want))
	}
	return k.makeStack(ctx, c, part, "")
}

// remakeStack unstacks stack n and makes the part's stack again.
func (k *Keeper) remakeStack(ctx context.Context, c *github.Client, n int, part []chainEntry, why string) (int, string, error) {
	if err := c.Unstack(ctx, n); err != nil {
		return 0, "", err
	}
	return k.makeStack(ctx, c, part, why)
}

// makeStack makes a stack of the part's open pull requests.
func (k *Keeper) makeStack(ctx context.Context, c *github.Client, part []chainEntry, why string) (int, string, error) {
	var open []int
	for _, p := range part {
		if p.Open {
			open = append(open, p.Number)
		}
	}
	if len(open) < 2 {
		return 0, remade(why, 0), nil
	}
	s, err := c.CreateStack(ctx, open)
	var refused *github.StackRefusedError
	if errors.As(err, &refused) {
		// Not wo's to force: the chain on GitHub is not what the epic
		// says (a person retargeted a pull request); wo sync restacks it.
		return 0, fmt.Sprintf("GitHub would not stack %v: %s; run wo sync to restack the epic", open, refused.Reason), nil
	}
	if err != nil {
		return 0, "", err
	}
	return s.Number, remade(why, s.Number), nil
}

func remade(why string, n int) string {
	switch {
	case why == "":
		return ""
	case n == 0:
		return why + ": unstacked it"
	}
	return fmt.Sprintf("%s: unstacked it and made stack %d", why, n)
}

// editEpicState changes an epic's state. An epic's document has no run
// and so no lease: the write is conditional on the revision read, and a
// conflict reads again.
func (k *Keeper) editEpicState(ctx context.Context, epicKey string, edit func(*workorder.State)) error {
	return store.RetryConflicts(ctx, func() error {
		doc, err := k.e.Store.Get(ctx, epicKey)
		if err != nil {
			return err
		}
		before, err := workorder.StateOf(doc)
		if err != nil {
			return err
		}
		after := before.Clone()
		edit(&after)
		patch := workorder.StatePatch(before, after)
		if patch == nil {
			return nil
		}
		rev, _ := doc["_rev"].(string)
		patch["updated_at"] = workorder.Timestamp(k.e.Now())
		_, err = k.e.Store.Update(ctx, epicKey, rev, patch)
		return err
	})
}

// UnstackEpic takes apart the GitHub stacks that wo made for an epic (wo
// undo --epic): the pull requests stay, as separate ones. It returns what
// it did, a line a stack.
func (k *Keeper) UnstackEpic(ctx context.Context, epicKey string, dryRun bool) ([]string, error) {
	doc, err := k.e.Store.Get(ctx, epicKey)
	if err != nil {
		return nil, err
	}
	st, err := workorder.StateOf(doc)
	if err != nil || st.GitHubStacks == nil || len(st.GitHubStacks.Stacks) == 0 {
		return nil, err
	}
	children, err := k.e.Store.List(ctx, store.Filter{ParentKey: epicKey})
	if err != nil || len(children) == 0 {
		return nil, err
	}
	c, err := k.githubFor(workorder.String(children[0], "work_order.context.repo"))
	if err != nil {
		return nil, err
	}
	ours := map[int]bool{}
	for _, d := range children {
		if ps, _ := workorder.StateOf(d); ps.PRNumber > 0 {
			ours[ps.PRNumber] = true
		}
	}
	var out []string
	for _, n := range st.GitHubStacks.Stacks {
		// Only a stack that holds the epic's pull requests alone is wo's
		// to take apart: one a person added to is theirs now.
		have, err := c.GetStack(ctx, n)
		if err != nil {
			return out, err
		}
		var others []string
		for _, p := range have.Numbers() { // nil: none
			if !ours[p] {
				others = append(others, fmt.Sprintf("#%d", p))
			}
		}
		switch {
		case have == nil:
			out = append(out, fmt.Sprintf("GitHub stack %d is gone already", n))
		case len(others) > 0:
			out = append(out, fmt.Sprintf("left GitHub stack %d: it holds %s too, which the epic did not make", n, strings.Join(others, ", ")))
		case dryRun:
			out = append(out, fmt.Sprintf("would unstack GitHub stack %d", n))
		default:
			if err := c.Unstack(ctx, n); err != nil {
				return out, err
			}
			out = append(out, fmt.Sprintf("unstacked GitHub stack %d", n))
		}
	}
	if dryRun {
		return out, nil
	}
	return out, k.editEpicState(ctx, epicKey, func(s *workorder.State) {
		if s.GitHubStacks != nil {
			s.GitHubStacks.Stacks = nil
		}
	})
}
