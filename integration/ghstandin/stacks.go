package ghstandin

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"time"
)

// Stacked pull requests, as GitHub's REST API has them (the "stacks"
// operations of its OpenAPI description): a stack is an ordered list of
// pull requests of one repository, bottom to top, each based on the head
// of the one under it, the bottom one on the stack's base. Stacks are
// numbered from 1 in each repository. A merged pull request stays in its
// stack; unstacking removes the unmerged ones, and a stack left empty is
// dissolved: it is no longer listed and its number answers 404. The
// stand-in serves them when Server.Stacks is set, as GitHub serves them
// only on a repository with stacked pull requests enabled.

type stack struct {
	id      int64
	number  int
	base    string // the bottom pull request's base when the stack was made
	prs     []int  // bottom to top
	created time.Time
	gone    bool // dissolved
}

var (
	reStacks   = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/stacks$`)
	reStack    = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/stacks/(\d+)$`)
	reStackOp  = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/stacks/(\d+)/(add|unstack)$`)
	reIsStacks = regexp.MustCompile(`^/repos/[^/]+/[^/]+/stacks(/|$)`)
)

const stacksDocs = "https://docs.github.com/rest/pulls/stacks"

// Stack returns the pull request numbers of stack number in repo, bottom
// to top, or nil when there is no such stack or it was dissolved.
func (s *Server) Stack(repo string, number int) []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st := s.stackN(repo, number); st != nil {
		return append([]int(nil), st.prs...)
	}
	return nil
}

// StacksOf returns the pull request numbers of every stack of repo that
// is not dissolved, in the order of the stacks' numbers.
func (s *Server) StacksOf(repo string) [][]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out [][]int
	for _, st := range s.stacks[repo] {
		if !st.gone {
			out = append(out, append([]int(nil), st.prs...))
		}
	}
	return out
}

// StackAs stacks pull requests (bottom to top) as a person would in
// GitHub's web interface or with the gh CLI, whatever Server.Stacks says,
// with the checks of the API, and returns the stack's number.
func (s *Server) StackAs(repo string, numbers ...int) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(numbers) < 2 {
		return 0, fmt.Errorf("a stack holds 2 pull requests or more, not %d", len(numbers))
	}
	if msg := s.stackable(repo, numbers, nil); msg != "" {
		return 0, fmt.Errorf("%s", msg)
	}
	return s.newStack(repo, numbers).number, nil
}

// findN is find by number.
func (s *Server) findN(repo string, n int) *pr { return s.find(repo, strconv.Itoa(n)) }

// stackN is the live stack number of repo.
func (s *Server) stackN(repo string, number int) *stack {
	for _, st := range s.stacks[repo] {
		if st.number == number && !st.gone {
			return st
		}
	}
	return nil
}

// stackOf is the live stack that holds pull request n.
func (s *Server) stackOf(repo string, n int) *stack {
	for _, st := range s.stacks[repo] {
		if st.gone {
			continue
		}
		for _, m := range st.prs {
			if m == n {
				return st
			}
		}
	}
	return nil
}

// below is the pull request under p in st, nil at the bottom or with no
// stack.
func (s *Server) below(repo string, st *stack, p *pr) *pr {
	if st == nil {
		return nil
	}
	for i, n := range st.prs {
		if n == p.Number && i > 0 {
			return s.findN(repo, st.prs[i-1])
		}
	}
	return nil
}

// prHead is a pull request's head commit: its branch's tip, or the last
// head seen when the branch is gone, as GitHub keeps it.
func (s *Server) prHead(repo string, p *pr) string {
	if sha := s.headSHA(repo, p.Head); sha != "" {
		return sha
	}
	return p.headSeen
}

// stackable says what is wrong with stacking numbers (bottom to top) on
// top of the pull request onto (nil for a new stack), "" when nothing is.
func (s *Server) stackable(repo string, numbers []int, onto *pr) string {
	seen := map[int]bool{}
	prev := onto
	for _, n := range numbers {
		p := s.findN(repo, n)
		switch {
		case p == nil:
			return fmt.Sprintf("Pull request #%d does not exist in this repository", n)
		case seen[n]:
			return fmt.Sprintf("Pull request #%d is listed more than once", n)
		case p.State != "open":
			return fmt.Sprintf("Pull request #%d is not open", n)
		case s.stackOf(repo, n) != nil:
			return fmt.Sprintf("Pull request #%d is already part of a stack", n)
		case prev != nil && p.Base != prev.Head:
			return fmt.Sprintf("Pull request #%d's base ref %s is not pull request #%d's head ref %s: pull requests must form a stack, where each PR's base ref is the previous PR's head ref",
				n, p.Base, prev.Number, prev.Head)
		}
		seen[n] = true
		prev = p
	}
	return ""
}

func (s *Server) newStack(repo string, numbers []int) *stack {
	if s.stacks == nil {
		s.stacks = map[string][]*stack{}
	}
	s.nextID++
	st := &stack{id: s.nextID, number: len(s.stacks[repo]) + 1, base: s.findN(repo, numbers[0]).Base,
		prs: append([]int(nil), numbers...), created: time.Now().UTC()}
	s.stacks[repo] = append(s.stacks[repo], st)
	return st
}

// locked reports whether pull request n waits for an asynchronous merge
// (its own or one above it in its stack): it cannot be unstacked.
func (s *Server) locked(repo string, n int) bool {
	for _, m := range s.asyncOrder {
		if m.repo != repo || m.status != "pending" {
			continue
		}
		for _, c := range m.covers {
			if c == n {
				return true
			}
		}
	}
	return false
}

// prStackJSON is a pull-request-stack, the "stack" of a pull request: null
// for one in no stack.
func (s *Server) prStackJSON(repo string, p *pr) any {
	st := s.stackOf(repo, p.Number)
	if st == nil {
		return nil
	}
	pos := 0
	for i, n := range st.prs {
		if n == p.Number {
			pos = i + 1
		}
	}
	return map[string]any{"id": st.id, "number": st.number, "size": len(st.prs), "position": pos,
		"base": map[string]any{"ref": st.base, "sha": s.headSHA(repo, st.base)}}
}

// stackOpen is a stack's "open": whether any of its pull requests is.
func (s *Server) stackOpen(repo string, st *stack) bool {
	for _, n := range st.prs {
		if p := s.findN(repo, n); p != nil && p.State == "open" {
			return true
		}
	}
	return false
}

func (s *Server) stackHeadJSON(repo string, st *stack) map[string]any {
	return map[string]any{"id": st.id, "number": st.number, "node_id": nodeID("PullRequestStack", st.id),
		"url": s.api("repos/%s/stacks/%d", repo, st.number), "base": map[string]any{"ref": st.base},
		"open": s.stackOpen(repo, st), "created_at": stamp(st.created)}
}

// stackMinimalJSON is a pull-request-stack-minimal, as the list has it.
func (s *Server) stackMinimalJSON(repo string, st *stack) map[string]any {
	out := s.stackHeadJSON(repo, st)
	prs := []any{}
	for _, n := range st.prs {
		p := s.findN(repo, n)
		full := s.prSimpleJSON(repo, p)
		prs = append(prs, map[string]any{"number": p.Number, "state": p.State, "draft": p.Draft,
			"merged_at": full["merged_at"], "head": map[string]any{"ref": p.Head, "sha": s.prHead(repo, p)}})
	}
	out["pull_requests"] = prs
	return out
}

// stackJSON is a whole stack, as create, get, add and unstack answer it:
// its pull requests are pull-request-stack-pull-requests.
func (s *Server) stackJSON(repo string, st *stack) map[string]any {
	out := s.stackHeadJSON(repo, st)
	prs := []any{}
	for _, n := range st.prs {
		full := s.prSimpleJSON(repo, s.findN(repo, n))
		side := func(k string) map[string]any {
			x := full[k].(map[string]any)
			rp := x["repo"].(map[string]any)
			return map[string]any{"ref": x["ref"], "sha": x["sha"],
				"repo": map[string]any{"id": rp["id"], "url": rp["url"], "name": rp["name"]}}
		}
		item := map[string]any{"head": side("head"), "base": side("base")}
		for _, k := range []string{"id", "number", "url", "node_id", "title", "state", "merged_at", "draft", "html_url", "user"} {
			item[k] = full[k]
		}
		prs = append(prs, item)
	}
	out["pull_requests"] = prs
	return out
}

// stackInvalid answers 422 as GitHub refuses a stack: a Validation Error
// that names the pull request at fault and why.
func (s *Server) stackInvalid(w http.ResponseWriter, doc, msg string) int {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(http.StatusUnprocessableEntity)
	json.NewEncoder(w).Encode(map[string]any{"message": "Validation Failed", "documentation_url": doc,
		"errors": []any{map[string]any{"resource": "PullRequestStack", "code": "custom", "message": msg}},
		"status": "422"})
	return http.StatusUnprocessableEntity
}

// handleStacks answers the /stacks operations; ok is false for a path
// that is not one.
func (s *Server) handleStacks(w http.ResponseWriter, r *http.Request, path string) (int, bool) {
	if !reIsStacks.MatchString(path) {
		return 0, false
	}
	if !s.Stacks {
		return s.errorJSON(w, http.StatusNotFound, "Not Found"), true
	}
	switch {
	case reStacks.MatchString(path):
		m := reStacks.FindStringSubmatch(path)
		repo := m[1] + "/" + m[2]
		switch r.Method {
		case http.MethodGet:
			return s.listStacks(w, r, repo), true
		case http.MethodPost:
			return s.createStack(w, r, repo), true
		}
	case reStack.MatchString(path) && r.Method == http.MethodGet:
		m := reStack.FindStringSubmatch(path)
		repo := m[1] + "/" + m[2]
		n, _ := strconv.Atoi(m[3])
		if st := s.stackN(repo, n); st != nil {
			return s.reply(w, r, http.StatusOK, s.stackJSON(repo, st)), true
		}
	case reStackOp.MatchString(path) && r.Method == http.MethodPost:
		m := reStackOp.FindStringSubmatch(path)
		repo := m[1] + "/" + m[2]
		n, _ := strconv.Atoi(m[3])
		st := s.stackN(repo, n)
		if st == nil {
			break
		}
		if m[4] == "add" {
			return s.addToStack(w, r, repo, st), true
		}
		return s.unstack(w, r, repo, st), true
	}
	return s.errorJSON(w, http.StatusNotFound, "Not Found"), true
}

// listStacks answers GET /stacks: the live stacks in number order, or the
// one holding ?pull_request=N.
func (s *Server) listStacks(w http.ResponseWriter, r *http.Request, repo string) int {
	only := 0
	if v := r.URL.Query().Get("pull_request"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return s.stackInvalid(w, stacksDocs+"#list-pull-request-stacks", "pull_request must be a pull request number")
		}
		only = n
	}
	items := []map[string]any{}
	for _, st := range s.stacks[repo] {
		if st.gone || (only != 0 && s.stackOf(repo, only) != st) {
			continue
		}
		items = append(items, s.stackMinimalJSON(repo, st))
	}
	return s.page(w, r, items)
}

// readNumbers reads the {"pull_requests": [...]} of create and add.
func readNumbers(r *http.Request) ([]int, bool) {
	var in struct {
		PullRequests []int `json:"pull_requests"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		return nil, false
	}
	return in.PullRequests, true
}

// createStack answers POST /stacks.
func (s *Server) createStack(w http.ResponseWriter, r *http.Request, repo string) int {
	doc := stacksDocs + "#create-a-pull-request-stack"
	numbers, ok := readNumbers(r)
	switch {
	case !ok:
		return s.stackInvalid(w, doc, "The body must be {\"pull_requests\": [numbers]}")
	case len(numbers) < 2 || len(numbers) > 100:
		return s.stackInvalid(w, doc, fmt.Sprintf("A stack holds 2 to 100 pull requests, not %d", len(numbers)))
	}
	if msg := s.stackable(repo, numbers, nil); msg != "" {
		return s.stackInvalid(w, doc, msg)
	}
	return s.reply(w, r, http.StatusCreated, s.stackJSON(repo, s.newStack(repo, numbers)))
}

// addToStack answers POST /stacks/{n}/add: the new pull requests go on
// top, the first based on the current top's head.
func (s *Server) addToStack(w http.ResponseWriter, r *http.Request, repo string, st *stack) int {
	doc := stacksDocs + "#add-pull-requests-to-a-pull-request-stack"
	numbers, ok := readNumbers(r)
	switch {
	case !ok:
		return s.stackInvalid(w, doc, "The body must be {\"pull_requests\": [numbers]}")
	case len(numbers) < 1 || len(numbers) > 100:
		return s.stackInvalid(w, doc, fmt.Sprintf("Add 1 to 100 pull requests, not %d", len(numbers)))
	}
	if msg := s.stackable(repo, numbers, s.findN(repo, st.prs[len(st.prs)-1])); msg != "" {
		return s.stackInvalid(w, doc, msg)
	}
	st.prs = append(st.prs, numbers...)
	return s.reply(w, r, http.StatusOK, s.stackJSON(repo, st))
}

// unstack answers POST /stacks/{n}/unstack: the unmerged pull requests
// leave the stack, but for those waiting for a merge; the stack that is
// left with none is dissolved (204).
func (s *Server) unstack(w http.ResponseWriter, r *http.Request, repo string, st *stack) int {
	var keep []int
	for _, n := range st.prs {
		if p := s.findN(repo, n); (p != nil && p.Merged) || s.locked(repo, n) {
			keep = append(keep, n)
		}
	}
	if len(keep) == len(st.prs) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(http.StatusUnprocessableEntity)
		json.NewEncoder(w).Encode(map[string]any{"message": "Validation Failed",
			"documentation_url": stacksDocs + "#remove-pull-requests-from-a-pull-request-stack",
			"errors": []any{map[string]any{"resource": "PullRequestStack", "code": "custom",
				"message": "Every pull request in the stack is locked and cannot be removed"}},
			"status": "422"})
		return http.StatusUnprocessableEntity
	}
	st.prs = keep
	if len(keep) == 0 {
		st.gone = true
		s.remaining--
		w.WriteHeader(http.StatusNoContent)
		return http.StatusNoContent
	}
	return s.reply(w, r, http.StatusOK, s.stackJSON(repo, st))
}
