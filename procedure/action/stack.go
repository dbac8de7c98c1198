package action

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/wo-runner/wo/github"
	"github.com/wo-runner/wo/termtext"
	"github.com/wo-runner/wo/workorder"
)

// The stack section of a pull request's description: every pull request
// of the epic in order, with its number and link once it is open, the
// reader's own marked, and what it depends on, so that a reviewer sees
// the stack on GitHub as gh-stack, spr and Graphite users expect. wo owns
// only the text between the two markers; everything around them is the
// author's and is kept byte for byte.
const (
	StackBegin = "<!-- wo:stack -->"
	StackEnd   = "<!-- /wo:stack -->"
)

// StackEntry is one pull request of an epic's stack.
type StackEntry struct {
	Key      string
	Title    string
	Repo     string
	PRNumber int
	PRURL    string
	// PRState is merged or closed once wo sync saw it so, open once the
	// pull request is recorded, empty before it opens.
	PRState string
	// DependsOn are the entries it depends on directly: its blockers
	// without those that another of its blockers already depends on.
	DependsOn []string
}

// Stack is an epic's pull requests in the order to review them.
type Stack []StackEntry

// StackOf orders the children of an epic that open a pull request:
// blockers first, and among the tasks that are free at the same time the
// lowest key first, which is the order wo split numbers its parts in (in
// stacked mode each part is blocked by the one before it, so this is the
// stack itself). edges are the store's blocked_by edges (may be nil).
func StackOf(children []workorder.Document, edges map[string][]string) Stack {
	byKey := map[string]workorder.Document{}
	keys := map[string]bool{}
	for _, d := range children {
		if opensPR(d) {
			byKey[workorder.Key(d)] = d
			keys[workorder.Key(d)] = true
		}
	}
	deps := workorder.NewGraph(children, edges).Within(keys)
	order := reviewOrder(keys, deps)
	out := make(Stack, 0, len(order))
	for _, k := range order {
		d := byKey[k]
		st, _ := workorder.StateOf(d)
		e := StackEntry{Key: k, Title: workorder.String(d, "title"), Repo: workorder.String(d, "work_order.context.repo"),
			PRNumber: st.PRNumber, PRState: st.PRState, DependsOn: directDeps(k, deps)}
		if st.PRURL != nil {
			e.PRURL = *st.PRURL
		}
		if e.PRState == "" && e.PRNumber > 0 {
			e.PRState = github.PROpen
		}
		out = append(out, e)
	}
	return out
}

// opensPR reports whether a task's procedure has a step that opens a pull
// request.
func opensPR(d workorder.Document) bool {
	steps, _ := workorder.Get(d, "work_order.procedure").([]any)
	for _, s := range steps {
		m, _ := s.(map[string]any)
		name, _ := m["action"].(string)
		if a, _ := defaultActions.Lookup(name); a.MayMake(FactPullRequest) {
			return true
		}
	}
	return false
}

// reviewOrder is a topological order of keys, the lowest free key first;
// keys left in a cycle (which validation reports) follow in key order.
func reviewOrder(keys map[string]bool, deps map[string][]string) []string {
	waiting := map[string]int{}
	unblocks := map[string][]string{}
	for k := range keys {
		waiting[k] = len(deps[k])
		for _, b := range deps[k] {
			unblocks[b] = append(unblocks[b], k)
		}
	}
	var free, out []string
	for k := range keys {
		if waiting[k] == 0 {
			free = append(free, k)
		}
	}
	for len(free) > 0 {
		sort.Strings(free)
		k := free[0]
		free = free[1:]
		out = append(out, k)
		for _, w := range unblocks[k] {
			if waiting[w]--; waiting[w] == 0 {
				free = append(free, w)
			}
		}
	}
	if len(out) < len(keys) {
		var rest []string
		for k := range keys {
			if !slices.Contains(out, k) {
				rest = append(rest, k)
			}
		}
		sort.Strings(rest)
		out = append(out, rest...)
	}
	return out
}

// directDeps are key's blockers without those another blocker already
// depends on: in a stack, only the part just below.
func directDeps(key string, deps map[string][]string) []string {
	reaches := func(from, to string) bool {
		seen := map[string]bool{}
		todo := slices.Clone(deps[from])
		for len(todo) > 0 {
			k := todo[len(todo)-1]
			todo = todo[:len(todo)-1]
			if k == to {
				return true
			}
			if !seen[k] {
				seen[k] = true
				todo = append(todo, deps[k]...)
			}
		}
		return false
	}
	var out []string
	for _, b := range deps[key] {
		implied := false
		for _, other := range deps[key] {
			if other != b && reaches(other, b) {
				implied = true
				break
			}
		}
		if !implied {
			out = append(out, b)
		}
	}
	sort.Strings(out)
	return out
}

// Section is the marked stack section for current's pull request, or ""
// when current is not part of a stack of two or more. It depends on no
// number of current's own (a pull request knows its number), so that the
// section written when the pull request opens stays current.
func (s Stack) Section(current string) string {
	at := slices.IndexFunc(s, func(e StackEntry) bool { return e.Key == current })
	if at < 0 || len(s) < 2 {
		return ""
	}
	index := map[string]int{}
	for i, e := range s {
		index[e.Key] = i
	}
	// The reader's own PR is never named by number, which it may not have
	// yet when its description is first written.
	ref := func(key string) string {
		e := s[index[key]]
		if key == current {
			return "this pull request"
		}
		if e.PRNumber > 0 {
			return fmt.Sprintf("#%d", e.PRNumber)
		}
		return fmt.Sprintf("part %d", index[key]+1)
	}
	var b strings.Builder
	b.WriteString(StackBegin + "\n")
	fmt.Fprintf(&b, "### Stack: part %d of %d\n\n", at+1, len(s))
	if deps := s[at].DependsOn; len(deps) > 0 {
		var words []string
		for _, d := range deps {
			e := s[index[d]]
			switch {
			case e.PRState == workorder.PRStateMerged:
				words = append(words, ref(d)+" (merged)")
			case e.PRNumber == 0:
				words = append(words, ref(d)+" (not opened yet)")
			default:
				words = append(words, ref(d))
			}
		}
		fmt.Fprintf(&b, "Depends on %s: review and merge that first.\n\n", strings.Join(words, ", "))
	} else {
		b.WriteString("Depends on no other pull request of the stack.\n\n")
	}
	b.WriteString("| | Part | Pull request | Title | Depends on | State |\n|---|---|---|---|---|---|\n")
	for i, e := range s {
		mark, pr, state := "", "not opened yet", "-"
		switch {
		case e.Key == current:
			mark, pr = "→", "**this pull request**"
		case e.PRNumber > 0:
			pr = prRef(e, s[at].Repo)
		}
		switch {
		case e.PRState != "":
			state = e.PRState
		case e.Key == current:
			state = github.PROpen
		}
		var on []string
		for _, d := range e.DependsOn {
			on = append(on, ref(d))
		}
		part := fmt.Sprintf("%d of %d", i+1, len(s))
		if e.Key == current {
			part = "**" + part + "**"
		}
		dep := strings.Join(on, ", ")
		if dep == "" {
			dep = "-"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", mark, part, pr, termtext.MarkdownCell(e.Title), dep, termtext.MarkdownCell(state))
	}
	b.WriteString("\n<sub>wo keeps this section up to date as the stack changes (`wo sync`); text outside it is left as it is.</sub>\n")
	b.WriteString(StackEnd)
	return b.String()
}

// BrokenStackSectionError says a description has the section's start
// marker without its end, so wo cannot tell its text from the author's.
type BrokenStackSectionError struct{}

func (BrokenStackSectionError) Error() string {
	return "the description has " + StackBegin + " without " + StackEnd + " after it: put the end marker back after the stack table, or remove the start marker, and run wo sync"
}

// SpliceStack puts section into body: in place of the text between the
// markers when they are there, else appended after a blank line. Text
// outside the markers is kept byte for byte. changed is false when the
// section there says the same (line endings aside: GitHub's editor turns a
// description's newlines into CRLF).
func SpliceStack(body, section string) (out string, changed bool, err error) {
	if section == "" {
		return body, false, nil
	}
	i := strings.Index(body, StackBegin)
	if i < 0 {
		if body == "" {
			return section, true, nil
		}
		return body + "\n\n" + section, true, nil
	}
	j := strings.Index(body[i:], StackEnd)
	if j < 0 {
		return body, false, BrokenStackSectionError{}
	}
	end := i + j + len(StackEnd)
	// The section is what lies between the end marker and the start
	// marker nearest it: a start marker earlier (an author quoting it)
	// is the author's text.
	i += strings.LastIndex(body[i:i+j], StackBegin)
	if strings.ReplaceAll(body[i:end], "\r\n", "\n") == section {
		return body, false, nil
	}
	return body[:i] + section + body[end:], true, nil
}

// StripStack is body without wo's stack section (a merge commit's message
// is the pull request's own summary, not the table of its stack), with the
// blank lines around it closed up. A start marker without an end is left:
// what follows it is the author's.
func StripStack(body string) string {
	from := 0
	for {
		j := strings.Index(body[from:], StackEnd)
		if j < 0 {
			return strings.TrimSpace(body)
		}
		j += from
		i := strings.LastIndex(body[:j], StackBegin)
		if i < 0 {
			from = j + len(StackEnd) // an end marker with no section: the author's text
			continue
		}
		head := strings.TrimRight(body[:i], " \t\r\n")
		body = head + "\n\n" + strings.TrimLeft(body[j+len(StackEnd):], " \t\r\n")
		from = len(head)
	}
}

// prRef names e's pull request as GitHub links it by itself: #N in the
// repository of the description, owner/name#N in another. The recorded
// URL is not used: it is document text, and a link to it could send every
// reader of the stack to another site.
func prRef(e StackEntry, here string) string {
	if e.Repo != here && repoName.MatchString(e.Repo) {
		return fmt.Sprintf("%s#%d", e.Repo, e.PRNumber)
	}
	return fmt.Sprintf("#%d", e.PRNumber)
}

var repoName = regexp.MustCompile(`^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$`)

// StackUpdate is what a refresh did to one pull request's description.
type StackUpdate struct {
	Key    string `json:"key"`
	PR     int    `json:"pr_number"`
	Result string `json:"result"` // updated, unchanged, skipped
	Reason string `json:"reason,omitempty"`
}

// The results of a StackUpdate.
const (
	StackUpdated   = "updated"
	StackUnchanged = "unchanged"
	StackSkipped   = "skipped"
)

// StackSummary says in a few words what a refresh did.
func StackSummary(ups []StackUpdate) string {
	n := map[string]int{}
	for _, u := range ups {
		n[u.Result]++
	}
	s := fmt.Sprintf("stack tables: %d updated, %d unchanged", n[StackUpdated], n[StackUnchanged])
	if n[StackSkipped] > 0 {
		s += fmt.Sprintf(", %d skipped", n[StackSkipped])
	}
	return s
}
