package ghstandin

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"time"
)

// Merging through the API, as GitHub's OpenAPI description has it.
//
// The asynchronous merge (PUT …/pulls/N/merge-async) checks only the pull
// request's state at once and answers with a UUID; the merge runs in the
// background (after Server.MergeDelay here) and its result is read with
// GET …/pulls/N/merge-async/UUID. It is the one way to merge a stacked
// pull request: every unmerged pull request of the stack from the bottom
// up to N is merged, all or none. It works for a pull request in no stack
// too. The stand-in has no merge queue: merge_action merge_queue merges
// directly, as direct_merge does.
//
// The legacy merge (PUT …/pulls/N/merge) merges at once and refuses a
// stacked pull request.

var (
	reMergeAsync       = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/pulls/(\d+)/merge-async$`)
	reMergeAsyncResult = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/pulls/(\d+)/merge-async/([^/]+)$`)
	reMerge            = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/pulls/(\d+)/merge$`)
)

// What GitHub says, word for word where its description gives the words.
const (
	msgHeadModified  = "Head branch was modified. Review and try the merge again."
	msgNotMergeable  = "Pull Request is not mergeable"
	msgStackedLegacy = "Pull request is part of a stack and must be merged with the merge-async API"
	msgConflict      = "Merge conflict: the pull request could not be merged."
)

// asyncMerge is one asynchronous merge request and, once run, its result.
type asyncMerge struct {
	uuid, repo     string
	number         int
	method, action string // as asked ("default" when not given)
	expected       string // the head the merge needs
	title, message *string
	due            time.Time
	covers         []int  // the pull requests it will merge: locked until it ends
	status         string // pending, merged, failed
	msg, sha       string
}

func newUUID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// mergeBody is the body of both merge operations; it may be absent or
// null.
type mergeBody struct {
	CommitTitle   *string `json:"commit_title"`
	CommitMessage *string `json:"commit_message"`
	SHA           *string `json:"sha"`
	MergeMethod   *string `json:"merge_method"`
	MergeAction   *string `json:"merge_action"`
}

func readMergeBody(r *http.Request) (mergeBody, error) {
	var in *mergeBody
	b, _ := io.ReadAll(r.Body)
	if len(bytes.TrimSpace(b)) > 0 {
		if err := json.Unmarshal(b, &in); err != nil {
			return mergeBody{}, err
		}
	}
	if in == nil {
		return mergeBody{}, nil
	}
	if in.MergeMethod != nil {
		switch *in.MergeMethod {
		case MergeCommit, MergeSquash, MergeRebase:
		default:
			return mergeBody{}, fmt.Errorf("merge_method %q: merge, squash or rebase", *in.MergeMethod)
		}
	}
	if in.MergeAction != nil {
		switch *in.MergeAction {
		case "default", "direct_merge", "merge_queue":
		default:
			return mergeBody{}, fmt.Errorf("merge_action %q: default, direct_merge or merge_queue", *in.MergeAction)
		}
	}
	return *in, nil
}

// handleMerges answers the merge operations; ok is false for a path that
// is not one.
func (s *Server) handleMerges(w http.ResponseWriter, r *http.Request, path string) (int, bool) {
	var m []string
	switch {
	case reMergeAsync.MatchString(path) && r.Method == http.MethodPut:
		m = reMergeAsync.FindStringSubmatch(path)
	case reMergeAsyncResult.MatchString(path) && r.Method == http.MethodGet:
		m = reMergeAsyncResult.FindStringSubmatch(path)
	case reMerge.MatchString(path) && r.Method == http.MethodPut:
		m = reMerge.FindStringSubmatch(path)
	default:
		return 0, false
	}
	repo := m[1] + "/" + m[2]
	p := s.find(repo, m[3])
	if p == nil {
		return s.errorJSON(w, http.StatusNotFound, "Not Found"), true
	}
	switch {
	case reMergeAsyncResult.MatchString(path):
		for _, a := range s.asyncOrder {
			if a.uuid == m[4] && a.repo == repo && a.number == p.Number {
				return s.reply(w, r, http.StatusOK, a.resultJSON("")), true
			}
		}
		return s.errorJSON(w, http.StatusNotFound, "Not Found"), true
	case reMergeAsync.MatchString(path):
		return s.mergeAsync(w, r, repo, p), true
	}
	return s.mergeLegacy(w, r, repo, p), true
}

// resultJSON is a pull-request-merge-async-result; msg replaces the
// message of a pending one.
func (a *asyncMerge) resultJSON(msg string) map[string]any {
	switch a.status {
	case "merged":
		return map[string]any{"status": "merged", "details": map[string]any{"message": a.msg, "sha": a.sha}}
	case "failed":
		return map[string]any{"status": "failed", "details": map[string]any{"message": a.msg}}
	}
	if msg == "" {
		msg = "Merge request is in progress."
	}
	return map[string]any{"status": "pending", "details": map[string]any{"message": msg, "uuid": a.uuid,
		"merge_method": a.method, "merge_action": a.action, "expected_head_sha": a.expected}}
}

// mergeAsync answers PUT …/merge-async.
func (s *Server) mergeAsync(w http.ResponseWriter, r *http.Request, repo string, p *pr) int {
	in, err := readMergeBody(r)
	if err != nil {
		return s.errorJSON(w, http.StatusUnprocessableEntity, "Validation Failed: "+err.Error())
	}
	failed := func(msg string) int {
		return s.reply(w, r, http.StatusBadRequest, map[string]any{"status": "failed", "details": map[string]any{"message": msg}})
	}
	switch {
	case p.Merged:
		return s.reply(w, r, http.StatusOK, map[string]any{"status": "merged",
			"details": map[string]any{"message": "Pull request is already merged.", "sha": p.mergeSHA}})
	case p.State != "open":
		return failed("Pull request is closed.")
	case p.Draft:
		return failed("Pull request is still a draft.")
	}
	for _, a := range s.asyncOrder {
		if a.repo == repo && a.number == p.Number && a.status == "pending" {
			return s.reply(w, r, http.StatusConflict, a.resultJSON("A merge request already exists for this pull request."))
		}
	}
	a := &asyncMerge{uuid: newUUID(), repo: repo, number: p.Number, method: "default", action: "default",
		expected: s.prHead(repo, p), title: in.CommitTitle, message: in.CommitMessage,
		due: time.Now().Add(s.MergeDelay), status: "pending"}
	if in.MergeMethod != nil {
		a.method = *in.MergeMethod
	}
	if in.MergeAction != nil {
		a.action = *in.MergeAction
	}
	if in.SHA != nil {
		a.expected = *in.SHA
	}
	a.covers = []int{p.Number}
	if st := s.stackOf(repo, p.Number); st != nil {
		a.covers = nil
		for _, n := range st.prs {
			if q := s.findN(repo, n); q != nil && !q.Merged {
				a.covers = append(a.covers, n)
			}
			if n == p.Number {
				break
			}
		}
	}
	s.asyncOrder = append(s.asyncOrder, a)
	return s.reply(w, r, http.StatusAccepted, a.resultJSON("Merge request enqueued."))
}

// runMerges runs the asynchronous merges that are due, oldest first.
func (s *Server) runMerges() {
	now := time.Now()
	for _, a := range s.asyncOrder {
		if a.status != "pending" || now.Before(a.due) {
			continue
		}
		s.runMerge(a)
	}
}

func (s *Server) runMerge(a *asyncMerge) {
	fail := func(msg string) { a.status, a.msg = "failed", msg }
	p := s.findN(a.repo, a.number)
	switch {
	case p == nil:
		fail("Not Found")
		return
	case p.Merged: // merged meanwhile, by a merge of a pull request above it in its stack
		a.status, a.msg, a.sha = "merged", "Pull request was merged.", p.mergeSHA
		return
	case p.State != "open":
		fail("Pull request is closed.")
		return
	case s.prHead(a.repo, p) != a.expected:
		fail(msgHeadModified)
		return
	}
	method := a.method
	if method == "default" {
		method = MergeCommit // the API's default merge method
	}
	tip, err := s.mergeUpTo(a.repo, p, mergeOpts{method: method, title: a.title, message: a.message, async: true})
	var refused mergeRefused
	switch {
	case errors.As(err, &refused):
		fail(refused.reason)
	case errors.Is(err, errNotMergeable):
		fail(msgConflict)
	case err != nil:
		fail("The merge failed: " + err.Error())
	default:
		a.status, a.msg, a.sha = "merged", "Pull request was merged.", tip
	}
}

// mergeLegacy answers PUT …/merge: at once, and never for a stacked pull
// request.
func (s *Server) mergeLegacy(w http.ResponseWriter, r *http.Request, repo string, p *pr) int {
	in, err := readMergeBody(r)
	if err != nil {
		return s.errorJSON(w, http.StatusUnprocessableEntity, "Validation Failed: "+err.Error())
	}
	switch {
	case p.State != "open" || p.Draft:
		return s.errorJSON(w, http.StatusMethodNotAllowed, msgNotMergeable)
	case s.stackOf(repo, p.Number) != nil:
		return s.errorJSON(w, http.StatusMethodNotAllowed, msgStackedLegacy)
	case in.SHA != nil && *in.SHA != s.prHead(repo, p):
		return s.errorJSON(w, http.StatusConflict, msgHeadModified)
	}
	method := MergeCommit
	if in.MergeMethod != nil {
		method = *in.MergeMethod
	}
	tip, err := s.mergeUpTo(repo, p, mergeOpts{method: method, title: in.CommitTitle, message: in.CommitMessage})
	var refused mergeRefused
	switch {
	case errors.As(err, &refused):
		return s.errorJSON(w, http.StatusMethodNotAllowed, refused.reason)
	case err != nil:
		return s.errorJSON(w, http.StatusMethodNotAllowed, msgNotMergeable)
	}
	return s.reply(w, r, http.StatusOK, map[string]any{"sha": tip, "merged": true, "message": "Pull Request successfully merged"})
}
