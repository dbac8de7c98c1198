package procedure

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/wo-runner/wo/github"
	"github.com/wo-runner/wo/store"
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

// maxPRBody is the longest description GitHub accepts.
const maxPRBody = 65536

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
		if a, _ := defaultActions.Lookup(name); a.makes(FactPullRequest) {
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

// engineShared is what an Engine's calls share: GitHub clients by
// repository, so that a second read of a pull request in one process is
// a conditional request, and the lock that makes stack refreshes of one
// process take turns and combine.
type engineShared struct {
	mu      sync.Mutex
	clients map[string]*github.Client
	// asked counts the refreshes asked for, by epic; covered is the count
	// the last finished refresh had read before it began.
	asked, covered map[string]int64
	stack          sync.Mutex
	// deferred holds the epics that a RunEpic of this engine refreshes
	// itself, with whether a pull request opened since its last refresh.
	deferred map[string]bool
}

// StackRefreshEvery is how often, at most, an epic run refreshes the
// stack sections between its waves; it always refreshes once at its end.
const StackRefreshEvery = time.Minute

// deferStack makes the children of epicKey that open a pull request in
// this engine leave the refresh of their siblings' stack sections to the
// epic run, which refreshes between waves and at its end (see RunEpic).
// Refreshed at each create_pr, a stack of n pull requests opening one
// after another would cost n(n-1)/2 description edits, enough to meet
// GitHub's secondary rate limit on a large split; refreshed by the run,
// each open pull request's description is edited about once.
func (e *Engine) deferStack(epicKey string) {
	e.shared.mu.Lock()
	defer e.shared.mu.Unlock()
	if e.shared.deferred == nil {
		e.shared.deferred = map[string]bool{}
	}
	e.shared.deferred[epicKey] = false
}

// stackDeferred says whether epicKey's refresh is the epic run's, noting
// that it has something to refresh.
func (e *Engine) stackDeferred(epicKey string) bool {
	e.shared.mu.Lock()
	defer e.shared.mu.Unlock()
	if _, ok := e.shared.deferred[epicKey]; !ok {
		return false
	}
	e.shared.deferred[epicKey] = true
	return true
}

// refreshDeferred is the epic run's refresh: it refreshes epicKey's stack
// sections when a pull request opened since the last one, and returns the
// warnings of the refresh. last ends the deferral; an interrupted run
// refreshes nothing and says so (wo sync catches the tables up).
func (e *Engine) refreshDeferred(ctx context.Context, epicKey string, last bool) []string {
	e.shared.mu.Lock()
	pending := e.shared.deferred[epicKey]
	if last {
		delete(e.shared.deferred, epicKey)
	} else {
		e.shared.deferred[epicKey] = false
	}
	e.shared.mu.Unlock()
	switch {
	case !pending:
		return nil
	case ctx.Err() != nil:
		return []string{fmt.Sprintf("the stack tables of %s were not refreshed: the run was interrupted; run wo sync %s", epicKey, epicKey)}
	}
	ups, _, err := e.RefreshStack(ctx, epicKey)
	var warnings []string
	for _, u := range ups {
		if u.Result == StackSkipped {
			warnings = append(warnings, fmt.Sprintf("the stack table of %s was not updated: %s", u.Key, u.Reason))
		}
	}
	if err != nil {
		warnings = append(warnings, fmt.Sprintf("%v; run wo sync %s to try again", err, epicKey))
	}
	return warnings
}

// githubFor returns the engine's client for repo, built on first use.
func (e *Engine) githubFor(repo string) (*github.Client, error) {
	e.shared.mu.Lock()
	defer e.shared.mu.Unlock()
	if c := e.shared.clients[repo]; c != nil {
		return c, nil
	}
	c, err := github.New(e.githubConfig(repo))
	if err != nil {
		return nil, err
	}
	if e.shared.clients == nil {
		e.shared.clients = map[string]*github.Client{}
	}
	e.shared.clients[repo] = c
	return c, nil
}

// LoadStack reads an epic's stack from the store.
func (e *Engine) LoadStack(ctx context.Context, epicKey string) (Stack, error) {
	children, err := e.Store.List(ctx, store.Filter{ParentKey: epicKey})
	if err != nil {
		return nil, err
	}
	edges, err := e.edgesOf(ctx, children)
	if err != nil {
		return nil, err
	}
	return StackOf(children, edges), nil
}

// RefreshStack brings the stack section of every open pull request of an
// epic up to date: it reads each description (conditionally, so an
// unchanged one costs no rate limit when this engine read it before) and
// edits only those whose section differs. Merged and closed pull requests
// keep the section they had. GitHub's API offers no conditional edit of a
// description, so an edit a person saves between wo's read and its write
// (a window of one request) is lost; wo sync repeats the refresh. It stops
// at the first GitHub error, returning what it did so far.
//
// Refreshes of one engine take turns, and a refresh asked for while
// another waits is done by that one: it reads the store after both asks,
// so a wave of pull requests opening at once costs about two passes, not
// one per pull request. coalesced is true when another caller's pass
// covered this one.
func (e *Engine) RefreshStack(ctx context.Context, epicKey string) (ups []StackUpdate, coalesced bool, err error) {
	e.defaults()
	sh := &e.shared
	sh.mu.Lock()
	if sh.asked == nil {
		sh.asked, sh.covered = map[string]int64{}, map[string]int64{}
	}
	sh.asked[epicKey]++
	ask := sh.asked[epicKey]
	sh.mu.Unlock()

	sh.stack.Lock()
	defer sh.stack.Unlock()
	sh.mu.Lock()
	covers := sh.asked[epicKey]
	done := sh.covered[epicKey] >= ask
	sh.mu.Unlock()
	if done {
		return nil, true, nil
	}
	ups, err = e.refreshStack(ctx, epicKey)
	if err == nil {
		sh.mu.Lock()
		sh.covered[epicKey] = covers
		sh.mu.Unlock()
	}
	return ups, false, err
}

func (e *Engine) refreshStack(ctx context.Context, epicKey string) ([]StackUpdate, error) {
	stack, err := e.LoadStack(ctx, epicKey)
	if err != nil || len(stack) < 2 {
		return nil, err
	}
	var out []StackUpdate
	for _, en := range stack {
		if en.PRNumber == 0 || en.PRState != github.PROpen {
			continue
		}
		up := StackUpdate{Key: en.Key, PR: en.PRNumber, Result: StackSkipped}
		c, err := e.githubFor(en.Repo)
		if err != nil {
			return out, fmt.Errorf("updating the stack table of %s: %w", en.Key, err)
		}
		pr, body, err := c.PRBody(ctx, en.PRNumber)
		if err != nil {
			return out, fmt.Errorf("updating the stack table of %s: %w", en.Key, err)
		}
		newBody, changed, err := SpliceStack(body, stack.Section(en.Key))
		switch {
		case pr.State != github.PROpen:
			up.Reason = fmt.Sprintf("pull request #%d is %s on GitHub", pr.Number, pr.Lifecycle())
		case err != nil:
			up.Reason = fmt.Sprintf("pull request #%d: %v", pr.Number, err)
		case !changed:
			up.Result = StackUnchanged
		case len(newBody) > maxPRBody:
			up.Reason = fmt.Sprintf("pull request #%d: with the stack table the description would be %d characters, over GitHub's %d; shorten it", pr.Number, len(newBody), maxPRBody)
		default:
			if err := c.EditPRBody(ctx, pr.Number, newBody); err != nil {
				return out, fmt.Errorf("updating the stack table of %s: %w", en.Key, err)
			}
			up.Result = StackUpdated
		}
		out = append(out, up)
	}
	return out, nil
}

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

// StackOfTask is the epic whose stack key belongs to: key itself when it
// has children, else its parent; "" when it is in no epic.
func (e *Engine) StackOfTask(ctx context.Context, key string) (string, error) {
	children, err := e.Store.List(ctx, store.Filter{ParentKey: key})
	if err != nil || len(children) > 0 {
		return key, err
	}
	doc, err := e.Store.Get(ctx, key)
	if err != nil {
		return "", err
	}
	return workorder.String(doc, "parent_key"), nil
}
