package ghstandin

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// Merge methods, as GitHub's merge button and API name them.
const (
	MergeCommit = "merge"
	MergeSquash = "squash"
	MergeRebase = "rebase"
)

// MergeAs merges a pull request the way a person on GitHub would, in the
// bare repository behind repo: a merge commit (two parents), a squash (one
// new commit on the base holding the whole change: git cannot tell it
// equals the branch's commits) or a rebase (the branch's commits copied
// onto the base). With deleteHead, the head branch is deleted as GitHub's
// "Automatically delete head branches" setting (or the merged PR's
// "Delete branch" button) does, and, as GitHub does then, the open pull
// requests based on it are retargeted to the merged one's base. A branch
// deleted any other way (a push, the refs API: DeleteBranch) closes them
// instead, and they cannot be reopened (GitHub's documentation on the
// automatic deletion of branches; cli/cli#14223 shows the API case).
//
// A pull request in a stack is merged as GitHub's merge button merges it:
// with every unmerged pull request under it, from the bottom up, into the
// stack's base, all or none (as the asynchronous merge does); the stack's
// open pull requests above it are retargeted to the stack's base. A merge
// refused by RefuseMerge fails with its reason. Commit messages are
// GitHub's defaults (defaultMessage). It returns the base's new tip.
func (s *Server) MergeAs(repo string, number int, method string, deleteHead bool) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.find(repo, strconv.Itoa(number))
	if p == nil || p.State != "open" {
		return "", fmt.Errorf("pull request #%d is not open", number)
	}
	return s.mergeUpTo(repo, p, mergeOpts{method: method, deleteHead: deleteHead})
}

// MergeRecord is one pull request merged by the stand-in, as a test
// reads it back (MergeRecords): every merge is recorded once, so that a
// test can tell that nothing was merged twice.
type MergeRecord struct {
	Number int
	// Method is merge, squash or rebase; "" for Merge, which marks a pull
	// request merged without touching the repository.
	Method string
	// SHA is the base's tip right after this pull request's merge: the
	// merge or squash commit, or the last commit a rebase copied.
	SHA string
	// Message is the merge or squash commit's message without git's final
	// newline; "" for a rebase, which keeps the branch's own messages.
	Message string
	// Async is true for a merge through the asynchronous merge API
	// (PUT …/merge-async), false for the legacy API, MergeAs and Merge.
	Async bool
}

// MergeRecords returns every pull request merge done in repo, in order.
func (s *Server) MergeRecords(repo string) []MergeRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]MergeRecord(nil), s.merges[repo]...)
}

// RefuseMerge makes every merge of a pull request fail with reason, as a
// repository rule or branch protection that GitHub checks at merge time
// refuses it (a required check that has not passed, a review missing …):
// an asynchronous merge's result is failed with reason as its message, the
// legacy merge answers 405 with reason, MergeAs returns it as an error. A
// stacked merge that would take the pull request along fails too.
// RefuseMerge(repo, number, "") lifts the refusal.
func (s *Server) RefuseMerge(repo string, number int, reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.refusals == nil {
		s.refusals = map[string]string{}
	}
	key := repo + "#" + strconv.Itoa(number)
	if reason == "" {
		delete(s.refusals, key)
	} else {
		s.refusals[key] = reason
	}
}

// SetPRBody sets a pull request's description, as its author editing it
// on GitHub would.
func (s *Server) SetPRBody(repo string, number int, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.find(repo, strconv.Itoa(number)); p != nil {
		p.Body, p.UpdatedAt = body, time.Now().UTC()
	}
}

// SetDraft marks a pull request a draft or ready for review, as its
// author would on GitHub. GitHub merges no draft.
func (s *Server) SetDraft(repo string, number int, draft bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.find(repo, strconv.Itoa(number)); p != nil {
		p.Draft, p.UpdatedAt = draft, time.Now().UTC()
	}
}

// mergeOpts is how a merge was asked for. title and message are the
// commit_title and commit_message of the API, for the requested pull
// request only; nil takes GitHub's default.
type mergeOpts struct {
	method         string
	title, message *string
	async          bool
	deleteHead     bool
}

// mergeRefused is a merge GitHub refuses before git is asked: a rule
// (RefuseMerge), a closed pull request under the one asked for in its
// stack.
type mergeRefused struct{ reason string }

func (e mergeRefused) Error() string { return e.reason }

// errNotMergeable is a merge that git cannot do: a conflict, no common
// history.
var errNotMergeable = errors.New("not mergeable")

// mergeUpTo merges p, and when p is in a stack every unmerged pull request
// under it from the bottom up, into the stack's base (p's own base
// otherwise), each with its own commit: every commit is written first and
// the base moves once, so that a failure merges nothing.
func (s *Server) mergeUpTo(repo string, p *pr, o mergeOpts) (string, error) {
	switch o.method {
	case MergeCommit, MergeSquash, MergeRebase:
	default:
		return "", fmt.Errorf("merge method %q: merge, squash or rebase", o.method)
	}
	chain, target, st := s.mergeChain(repo, p)
	if err := s.refuseMerge(repo, chain); err != nil {
		return "", err
	}
	r, err := git.PlainOpen(s.Remotes[repo])
	if err != nil {
		return "", err
	}
	baseRef, err := r.Reference(plumbing.NewBranchReferenceName(target), true)
	if err != nil {
		return "", fmt.Errorf("base %s: %w", target, err)
	}
	var steps []mergeStep
	tip := baseRef.Hash()
	for _, q := range chain {
		headRef, err := r.Reference(plumbing.NewBranchReferenceName(q.Head), true)
		if err != nil {
			return "", fmt.Errorf("head %s: %w", q.Head, err)
		}
		// The change is the pull request's own: from the head of the one
		// under it in the stack (merged or not), else from its base.
		from := plumbing.ZeroHash
		if below := s.below(repo, st, q); below != nil {
			from = plumbing.NewHash(s.prHead(repo, below))
		} else if ref, err := r.Reference(plumbing.NewBranchReferenceName(q.Base), true); err == nil {
			from = ref.Hash()
		} else {
			return "", fmt.Errorf("base %s: %w", q.Base, err)
		}
		message := s.mergeMessage(q, o.method, nil, nil)
		if q == p {
			message = s.mergeMessage(q, o.method, o.title, o.message)
		}
		if o.method == MergeRebase {
			message = ""
		}
		next, err := mergeOne(r, q.Number, from, headRef.Hash(), tip, o.method, message)
		if err != nil {
			return "", err
		}
		tip = next
		steps = append(steps, mergeStep{p: q, head: headRef.Hash(), tip: next, message: message, headBranch: headRef.Name()})
	}
	store := r.Storer
	if err := store.SetReference(plumbing.NewHashReference(baseRef.Name(), tip)); err != nil {
		return "", err
	}
	if err := s.afterMerge(repo, st, steps, o, target, store); err != nil {
		return "", err
	}
	return tip.String(), nil
}

// mergeChain is what merging p merges: p alone into its base, or, when p
// is in a stack, every unmerged pull request of the stack from the bottom
// up to p, into the stack's base.
func (s *Server) mergeChain(repo string, p *pr) (chain []*pr, target string, st *stack) {
	chain, target = []*pr{p}, p.Base
	st = s.stackOf(repo, p.Number)
	if st != nil {
		chain, target = nil, st.base
		for _, n := range st.prs {
			q := s.findN(repo, n)
			if q != nil && !q.Merged {
				chain = append(chain, q)
			}
			if n == p.Number {
				break
			}
		}
	}
	return chain, target, st
}

// refuseMerge is GitHub's refusal of a merge before git is asked: a
// closed pull request in the chain, a rule a test set (RefuseMerge).
func (s *Server) refuseMerge(repo string, chain []*pr) error {
	for _, q := range chain {
		if q.State != "open" {
			return mergeRefused{fmt.Sprintf("Pull request #%d is closed.", q.Number)}
		}
		if reason := s.refusals[repo+"#"+strconv.Itoa(q.Number)]; reason != "" {
			return mergeRefused{reason}
		}
	}
	return nil
}

// mergeStep is one pull request of a merge: its head, the base's commit
// after it, and the commit message written.
type mergeStep struct {
	p          *pr
	head, tip  plumbing.Hash
	message    string
	headBranch plumbing.ReferenceName
}

// afterMerge is what GitHub does once the base moved: the pull requests
// are closed as merged and recorded, the stack's open ones above (and, as
// their heads are deleted, the ones on those heads) retargeted.
func (s *Server) afterMerge(repo string, st *stack, steps []mergeStep, o mergeOpts, target string, store storer.Storer) error {
	now := time.Now().UTC()
	if s.merges == nil {
		s.merges = map[string][]MergeRecord{}
	}
	for _, x := range steps {
		q := x.p
		q.State, q.Merged, q.UpdatedAt, q.mergeSHA = "closed", true, now, x.tip.String()
		q.headSeen = x.head.String() // the head it was merged at, should the branch go
		s.merges[repo] = append(s.merges[repo], MergeRecord{Number: q.Number, Method: o.method, SHA: x.tip.String(), Message: x.message, Async: o.async})
	}
	if st != nil {
		// GitHub retargets the stack's open pull requests above the merged
		// ones to the stack's base.
		for _, n := range st.prs {
			if q := s.findN(repo, n); q != nil && q.State == "open" && q.Base != st.base {
				q.Base, q.UpdatedAt = st.base, now
			}
		}
	}
	if o.deleteHead {
		for _, x := range steps {
			if err := store.RemoveReference(x.headBranch); err != nil {
				return err
			}
			for _, q := range s.prs[repo] {
				if q.State == "open" && q.Base == x.p.Head {
					q.Base, q.UpdatedAt = target, now
				}
			}
		}
	}
	return nil
}

// mergeMessage is the commit message GitHub writes for a merge or squash
// of p: the title (commit_title, else GitHub's default) and, after a blank
// line, the detail (commit_message, else GitHub's default). GitHub's
// defaults: "Merge pull request #N from HEAD" and no detail for a merge
// commit; "TITLE (#N)" for a squash, with the pull request's description
// as detail when SquashMessageFromBody (the repository's "Pull request
// title and description" setting) and none otherwise.
func (s *Server) mergeMessage(p *pr, method string, title, detail *string) string {
	t, d := fmt.Sprintf("Merge pull request #%d from %s", p.Number, p.Head), ""
	if method == MergeSquash {
		t = fmt.Sprintf("%s (#%d)", p.Title, p.Number)
		if s.SquashMessageFromBody {
			d = p.Body
		}
	}
	if title != nil {
		t = *title
	}
	if detail != nil {
		d = *detail
	}
	if d == "" {
		return t
	}
	return t + "\n\n" + d
}

// mergeOne writes the commit(s) that merge the change from the merge base
// of from and head to head onto onto, and returns the new tip; nothing
// moves a branch.
func mergeOne(r *git.Repository, number int, from, headHash, onto plumbing.Hash, method, message string) (plumbing.Hash, error) {
	fromC, err := r.CommitObject(from)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	head, err := r.CommitObject(headHash)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	base, err := r.CommitObject(onto)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	bases, err := fromC.MergeBase(head)
	if err != nil || len(bases) == 0 {
		return plumbing.ZeroHash, fmt.Errorf("pull request #%d: no common history with its base: %w", number, errNotMergeable)
	}
	st := r.Storer
	sig := object.Signature{Name: "GitHub", Email: "noreply@github.example", When: time.Now()}
	switch method {
	case MergeCommit, MergeSquash:
		tree, err := applyChange(r, bases[0], head, base)
		if err != nil {
			return plumbing.ZeroHash, fmt.Errorf("pull request #%d is not mergeable: %w: %w", number, err, errNotMergeable)
		}
		c := &object.Commit{Author: sig, Committer: sig, TreeHash: tree, ParentHashes: []plumbing.Hash{base.Hash}, Message: message + "\n"}
		if method == MergeCommit {
			c.ParentHashes = append(c.ParentHashes, head.Hash)
		}
		return writeCommit(st, c)
	}
	var chain []*object.Commit
	for c := head; c.Hash != bases[0].Hash; {
		chain = append([]*object.Commit{c}, chain...)
		if c.NumParents() == 0 {
			break
		}
		if c, err = c.Parent(0); err != nil {
			return plumbing.ZeroHash, err
		}
	}
	tip := base.Hash
	for _, c := range chain {
		onto, err := r.CommitObject(tip)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		parent, err := c.Parent(0)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		tree, err := applyChange(r, parent, c, onto)
		if err != nil {
			return plumbing.ZeroHash, fmt.Errorf("pull request #%d cannot be rebased: %w: %w", number, err, errNotMergeable)
		}
		copied := &object.Commit{Author: c.Author, Committer: sig, Message: c.Message, TreeHash: tree, ParentHashes: []plumbing.Hash{tip}}
		if tip, err = writeCommit(st, copied); err != nil {
			return plumbing.ZeroHash, err
		}
	}
	return tip, nil
}

// DeleteBranch deletes a branch of the bare repository behind repo, as a
// person deleting it by hand or through the API does: GitHub then closes
// the open pull requests based on it (they cannot be reopened).
func (s *Server) DeleteBranch(repo, branch string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := git.PlainOpen(s.Remotes[repo])
	if err != nil {
		return err
	}
	return r.Storer.RemoveReference(plumbing.NewBranchReferenceName(branch))
}

// applyChange is the tree of onto with the change from one commit to
// another applied, path by path; a path that onto changed differently is
// a conflict.
func applyChange(r *git.Repository, from, to, onto *object.Commit) (plumbing.Hash, error) {
	files := func(c *object.Commit) (map[string]object.TreeEntry, error) {
		t, err := c.Tree()
		if err != nil {
			return nil, err
		}
		out := map[string]object.TreeEntry{}
		err = t.Files().ForEach(func(f *object.File) error {
			out[f.Name] = object.TreeEntry{Name: f.Name, Mode: f.Mode, Hash: f.Hash}
			return nil
		})
		return out, err
	}
	a, err := files(from)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	b, err := files(to)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	out, err := files(onto)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	same := func(x, y object.TreeEntry, okX, okY bool) bool { return okX == okY && (!okX || x.Hash == y.Hash) }
	paths := map[string]bool{}
	for p := range a {
		paths[p] = true
	}
	for p := range b {
		paths[p] = true
	}
	var conflicts []string
	base := map[string]object.TreeEntry{}
	for p, e := range out {
		base[p] = e
	}
	for p := range paths {
		x, inA := a[p]
		y, inB := b[p]
		if same(x, y, inA, inB) {
			continue
		}
		z, inOnto := base[p]
		if !same(z, x, inOnto, inA) && !same(z, y, inOnto, inB) {
			conflicts = append(conflicts, p)
			continue
		}
		if inB {
			out[p] = y
		} else {
			delete(out, p)
		}
	}
	if len(conflicts) > 0 {
		sort.Strings(conflicts)
		return plumbing.ZeroHash, fmt.Errorf("conflicts in %v", conflicts)
	}
	return writeTree(r.Storer, out)
}

// writeTree writes the nested trees of a flat path → entry map.
func writeTree(st storer.EncodedObjectStorer, files map[string]object.TreeEntry) (plumbing.Hash, error) {
	type dir struct {
		entries []object.TreeEntry
		subdirs map[string]*dir
	}
	root := &dir{subdirs: map[string]*dir{}}
	for p, e := range files {
		d := root
		parts := splitAll(p)
		for _, name := range parts[:len(parts)-1] {
			next, ok := d.subdirs[name]
			if !ok {
				next = &dir{subdirs: map[string]*dir{}}
				d.subdirs[name] = next
			}
			d = next
		}
		e.Name = parts[len(parts)-1]
		d.entries = append(d.entries, e)
	}
	var write func(d *dir) (plumbing.Hash, error)
	write = func(d *dir) (plumbing.Hash, error) {
		entries := append([]object.TreeEntry(nil), d.entries...)
		for name, sub := range d.subdirs {
			h, err := write(sub)
			if err != nil {
				return plumbing.ZeroHash, err
			}
			entries = append(entries, object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: h})
		}
		key := func(e object.TreeEntry) string {
			if e.Mode == filemode.Dir {
				return e.Name + "/"
			}
			return e.Name
		}
		sort.Slice(entries, func(i, j int) bool { return key(entries[i]) < key(entries[j]) })
		obj := st.NewEncodedObject()
		if err := (&object.Tree{Entries: entries}).Encode(obj); err != nil {
			return plumbing.ZeroHash, err
		}
		return st.SetEncodedObject(obj)
	}
	return write(root)
}

func splitAll(p string) []string {
	var out []string
	start := 0
	for i := 0; i < len(p); i++ {
		if p[i] == '/' {
			out = append(out, p[start:i])
			start = i + 1
		}
	}
	return append(out, p[start:])
}

func writeCommit(st storer.EncodedObjectStorer, c *object.Commit) (plumbing.Hash, error) {
	obj := st.NewEncodedObject()
	if err := c.Encode(obj); err != nil {
		return plumbing.ZeroHash, err
	}
	return st.SetEncodedObject(obj)
}
