package ghstandin

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/wo-runner/wo/internal/gittest"
)

const stackRepo = "acme/stacked"

// stackFixture is a stand-in under GitHub's OpenAPI contract with a
// remote of five branches: s1 on main, s2 on s1, s3 on s2, s4 on s3 (each
// adding its own file fN.txt) and solo on main; and a pull request for
// each, #1–#4 (sN into its base, titled TN, described BODY-N) and #5 (solo
// into main). Any contract violation fails the test.
type stackFixture struct {
	t      *testing.T
	s      *Server
	origin string
}

func newStackFixture(t *testing.T, configure func(*Server)) *stackFixture {
	t.Helper()
	dir := t.TempDir()
	work := filepath.Join(dir, "work")
	run := func(args ...string) {
		t.Helper()
		gittest.Run(t, dir, append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
	}
	commit := func(branch, file string) {
		t.Helper()
		if err := writeFile(filepath.Join(work, file), "the change of "+branch+"\n"); err != nil {
			t.Fatal(err)
		}
		run("-C", work, "add", file)
		run("-C", work, "commit", "-q", "-m", "the change of "+branch)
	}
	run("init", "-q", "-b", "main", "work")
	commit("main", "README")
	for i, b := range []string{"s1", "s2", "s3", "s4"} {
		run("-C", work, "checkout", "-q", "-b", b)
		commit(b, fmt.Sprintf("f%d.txt", i+1))
	}
	run("-C", work, "checkout", "-q", "-b", "solo", "main")
	commit("solo", "solo.txt")
	run("clone", "-q", "--bare", work, "origin.git")

	c, err := LoadContract(filepath.Join("..", "testdata", "openapi", "github-subset.json"))
	if err != nil {
		t.Fatal(err)
	}
	s := New("t0ken")
	s.Contract = c
	s.Remotes[stackRepo] = filepath.Join(dir, "origin.git")
	s.Stacks = true
	if configure != nil {
		configure(s)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.Close()
		for _, v := range s.Violations() {
			t.Errorf("OpenAPI contract violation: %v", v)
		}
	})
	f := &stackFixture{t: t, s: s, origin: filepath.Join(dir, "origin.git")}
	for i, base := range []string{"main", "s1", "s2", "s3"} {
		f.want(http.StatusCreated, "POST", "/pulls", map[string]any{"title": fmt.Sprintf("T%d", i+1),
			"body": fmt.Sprintf("BODY-%d", i+1), "head": fmt.Sprintf("s%d", i+1), "base": base})
	}
	f.want(http.StatusCreated, "POST", "/pulls", map[string]any{"title": "Solo", "body": "BODY-solo", "head": "solo", "base": "main"})
	return f
}

func writeFile(path, content string) error { return os.WriteFile(path, []byte(content), 0o644) }

// do sends a request to /repos/acme/stacked+path (a path from / is sent
// as is) and returns the status and the decoded JSON answer.
func (f *stackFixture) do(method, path string, body any) (int, any) {
	f.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	if !strings.HasPrefix(path, "/repos/") {
		path = "/repos/" + stackRepo + path
	}
	req, _ := http.NewRequest(method, strings.TrimSuffix(f.s.URL, "/")+path, rd)
	req.Header.Set("Authorization", "Bearer t0ken")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var out any
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &out); err != nil {
			f.t.Fatalf("%s %s: the answer is not JSON: %v\n%s", method, path, err, raw)
		}
	}
	return res.StatusCode, out
}

// want is do, failing the test at once on another status.
func (f *stackFixture) want(status int, method, path string, body any) any {
	f.t.Helper()
	got, out := f.do(method, path, body)
	if got != status {
		f.t.Fatalf("%s %s %v: %d %v, want %d", method, path, body, got, out, status)
	}
	return out
}

// field digs a value out of decoded JSON: field(v, "stack", "base", "ref").
func field(v any, keys ...any) any {
	for _, k := range keys {
		switch k := k.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			a, _ := v.([]any)
			if k >= len(a) {
				return nil
			}
			v = a[k]
		}
	}
	return v
}

// numbers are the pull request numbers of a stack answer.
func numbers(stack any) []int {
	var out []int
	for _, p := range field(stack, "pull_requests").([]any) {
		out = append(out, int(field(p, "number").(float64)))
	}
	return out
}

// invalid asserts a 422 Validation Error from a stack operation whose
// error message says want.
func (f *stackFixture) invalid(path string, prs []int, want string) {
	f.t.Helper()
	out := f.want(http.StatusUnprocessableEntity, "POST", path, map[string]any{"pull_requests": prs})
	msg, _ := field(out, "errors", 0, "message").(string)
	if field(out, "errors", 0, "resource") != "PullRequestStack" || field(out, "errors", 0, "code") != "custom" || !strings.Contains(msg, want) {
		f.t.Errorf("POST %s %v: %v, want an error saying %q", path, prs, out, want)
	}
}

func (f *stackFixture) tip(branch string) string {
	f.t.Helper()
	r, err := git.PlainOpen(f.origin)
	if err != nil {
		f.t.Fatal(err)
	}
	ref, err := r.Reference(plumbing.NewBranchReferenceName(branch), true)
	if err != nil {
		f.t.Fatal(err)
	}
	return ref.Hash().String()
}

func TestStacksAreCreatedGrownListedAndDissolved(t *testing.T) {
	f := newStackFixture(t, nil)
	f.invalid("/stacks", []int{2, 1}, "#1's base ref main is not pull request #2's head ref s2")
	f.invalid("/stacks", []int{1, 99}, "#99 does not exist")
	f.invalid("/stacks", []int{1, 1}, "#1 is listed more than once")
	f.invalid("/stacks", []int{5, 2}, "#2's base ref s1 is not pull request #5's head ref solo")

	st := f.want(http.StatusCreated, "POST", "/stacks", map[string]any{"pull_requests": []int{1, 2}})
	if fmt.Sprint(numbers(st)) != "[1 2]" || field(st, "number") != 1.0 || field(st, "base", "ref") != "main" || field(st, "open") != true {
		t.Errorf("the stack made: %v", st)
	}
	if field(st, "pull_requests", 1, "title") != "T2" || field(st, "pull_requests", 1, "base", "ref") != "s1" ||
		field(st, "pull_requests", 0, "user", "login") != "wo-bot" {
		t.Errorf("the stack's pull requests: %v", field(st, "pull_requests"))
	}
	f.invalid("/stacks", []int{2, 3}, "#2 is already part of a stack")
	f.want(http.StatusNotFound, "GET", "/stacks/2", nil)
	f.want(http.StatusNotFound, "POST", "/stacks/2/add", map[string]any{"pull_requests": []int{3}})
	f.invalid("/stacks/1/add", []int{4}, "#4's base ref s3 is not pull request #2's head ref s2")
	f.invalid("/stacks/1/add", []int{3, 5}, "#5's base ref main is not pull request #3's head ref s3")
	if got := f.s.Stack(stackRepo, 1); fmt.Sprint(got) != "[1 2]" {
		t.Errorf("a refused add changed the stack: %v", got)
	}
	st = f.want(http.StatusOK, "POST", "/stacks/1/add", map[string]any{"pull_requests": []int{3, 4}})
	if fmt.Sprint(numbers(st)) != "[1 2 3 4]" {
		t.Errorf("after the add: %v", numbers(st))
	}
	if got := numbers(f.want(http.StatusOK, "GET", "/stacks/1", nil)); fmt.Sprint(got) != "[1 2 3 4]" {
		t.Errorf("GET the stack: %v", got)
	}

	list := f.want(http.StatusOK, "GET", "/stacks", nil).([]any)
	if len(list) != 1 || fmt.Sprint(numbers(list[0])) != "[1 2 3 4]" || field(list[0], "pull_requests", 2, "head", "sha") != f.tip("s3") {
		t.Errorf("the list: %v", list)
	}
	if got := f.want(http.StatusOK, "GET", "/stacks?pull_request=3", nil).([]any); len(got) != 1 {
		t.Errorf("the stack of #3: %v", got)
	}
	if got := f.want(http.StatusOK, "GET", "/stacks?pull_request=5", nil).([]any); len(got) != 0 {
		t.Errorf("the stack of #5, in none: %v", got)
	}

	// Every pull request answer carries its stack, or null.
	p3 := f.want(http.StatusOK, "GET", "/pulls/3", nil)
	want := map[string]any{"id": field(st, "id"), "number": 1.0, "size": 4.0, "position": 3.0,
		"base": map[string]any{"ref": "main", "sha": f.tip("main")}}
	if fmt.Sprint(field(p3, "stack")) != fmt.Sprint(want) {
		t.Errorf("#3's stack: %v, want %v", field(p3, "stack"), want)
	}
	if p5 := f.want(http.StatusOK, "GET", "/pulls/5", nil).(map[string]any); p5["stack"] != nil {
		t.Errorf("#5's stack: %v, want null", p5["stack"])
	} else if _, ok := p5["stack"]; !ok {
		t.Error("#5 has no stack property; GitHub answers null")
	}
	for _, p := range f.want(http.StatusOK, "GET", "/pulls?state=all", nil).([]any) {
		n, pos := field(p, "number"), field(p, "stack", "position")
		if (n == 5.0) != (pos == nil) || (pos != nil && pos != n) {
			t.Errorf("#%v in the list: stack %v", n, field(p, "stack"))
		}
	}
	patched := f.want(http.StatusOK, "PATCH", "/pulls/1", map[string]any{"title": "T1 again"})
	if field(patched, "stack", "position") != 1.0 {
		t.Errorf("PATCH's answer: stack %v", field(patched, "stack"))
	}

	// Unstacking removes every unmerged pull request: the stack is gone.
	if code, out := f.do("POST", "/stacks/1/unstack", nil); code != http.StatusNoContent || out != nil {
		t.Errorf("unstack: %d %v, want 204 and no body", code, out)
	}
	f.want(http.StatusNotFound, "GET", "/stacks/1", nil)
	if got := f.want(http.StatusOK, "GET", "/stacks", nil).([]any); len(got) != 0 {
		t.Errorf("a dissolved stack is listed: %v", got)
	}
	if f.s.Stack(stackRepo, 1) != nil || f.s.StacksOf(stackRepo) != nil {
		t.Errorf("after unstack: %v %v", f.s.Stack(stackRepo, 1), f.s.StacksOf(stackRepo))
	}
	if p3 := f.want(http.StatusOK, "GET", "/pulls/3", nil); field(p3, "stack") != nil {
		t.Errorf("#3 after unstack: stack %v", field(p3, "stack"))
	}
	// Stack numbers count on.
	if st := f.want(http.StatusCreated, "POST", "/stacks", map[string]any{"pull_requests": []int{2, 3}}); field(st, "number") != 2.0 {
		t.Errorf("the next stack's number: %v", field(st, "number"))
	}
	if got := f.s.StacksOf(stackRepo); fmt.Sprint(got) != "[[2 3]]" {
		t.Errorf("StacksOf: %v", got)
	}
	// A closed pull request cannot be stacked.
	f.want(http.StatusOK, "PATCH", "/pulls/5", map[string]any{"state": "closed"})
	f.invalid("/stacks/2/add", []int{5}, "#5 is not open")
}

// Without stacked pull requests enabled, GitHub answers every stack
// operation 404; the asynchronous merge works all the same.
func TestStacksOffAnswerNotFound(t *testing.T) {
	f := newStackFixture(t, func(s *Server) { s.Stacks = false })
	for _, c := range []struct {
		method, path string
		body         any
	}{
		{"GET", "/stacks", nil},
		{"POST", "/stacks", map[string]any{"pull_requests": []int{1, 2}}},
		{"GET", "/stacks/1", nil},
		{"POST", "/stacks/1/add", map[string]any{"pull_requests": []int{3}}},
		{"POST", "/stacks/1/unstack", nil},
	} {
		out := f.want(http.StatusNotFound, c.method, c.path, c.body)
		if field(out, "message") != "Not Found" || field(out, "status") != "404" || field(out, "documentation_url") == nil {
			t.Errorf("%s %s: %v, want GitHub's basic-error", c.method, c.path, out)
		}
	}
	if f.s.StacksOf(stackRepo) != nil {
		t.Errorf("stacks made: %v", f.s.StacksOf(stackRepo))
	}
	uuid := f.requestMerge(5, http.StatusAccepted, map[string]any{"merge_method": "squash"})
	if status, _ := f.result(5, uuid); status != "merged" {
		t.Errorf("merge-async without stacks: %s", status)
	}
}

// requestMerge sends PUT …/merge-async and returns the uuid of the answer.
func (f *stackFixture) requestMerge(n, status int, body any) string {
	f.t.Helper()
	out := f.want(status, "PUT", fmt.Sprintf("/pulls/%d/merge-async", n), body)
	uuid, _ := field(out, "details", "uuid").(string)
	return uuid
}

// result waits for the asynchronous merge uuid of #n to end and returns
// its status and message (or sha).
func (f *stackFixture) result(n int, uuid string) (string, string) {
	f.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		out := f.want(http.StatusOK, "GET", fmt.Sprintf("/pulls/%d/merge-async/%s", n, uuid), nil)
		status := field(out, "status").(string)
		if status != "pending" || time.Now().After(deadline) {
			if status == "merged" {
				return status, field(out, "details", "sha").(string)
			}
			msg, _ := field(out, "details", "message").(string)
			return status, msg
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// due makes the asynchronous merges asked for run now, for a test that
// sets MergeDelay long so as to act before they run, whatever the load.
func (f *stackFixture) due() {
	f.s.mu.Lock()
	defer f.s.mu.Unlock()
	for _, a := range f.s.asyncOrder {
		a.due = time.Now()
	}
}

// commitOf reads a commit of the remote: its message and first parent.
func (f *stackFixture) commitOf(sha string) (msg, parent string, files []string) {
	f.t.Helper()
	r, err := git.PlainOpen(f.origin)
	if err != nil {
		f.t.Fatal(err)
	}
	c, err := r.CommitObject(plumbing.NewHash(sha))
	if err != nil {
		f.t.Fatal(err)
	}
	tree, _ := c.Tree()
	for _, e := range tree.Entries {
		files = append(files, e.Name)
	}
	if len(c.ParentHashes) > 0 {
		parent = c.ParentHashes[0].String()
	}
	return c.Message, parent, files
}

// The asynchronous merge of the third pull request of a stack merges the
// first three, bottom up, each with its own squash commit on the stack's
// base: the requested one with the title and message asked for, the
// others with GitHub's default (the title alone, as the repository is
// set to), and the fourth is retargeted to the base.
func TestMergeAsyncMergesTheStackUpToTheRequestedPullRequest(t *testing.T) {
	f := newStackFixture(t, func(s *Server) { s.SquashMessageFromBody, s.MergeDelay = false, time.Hour })
	f.want(http.StatusCreated, "POST", "/stacks", map[string]any{"pull_requests": []int{1, 2, 3, 4}})
	mainBefore, head3 := f.tip("main"), f.tip("s3")
	out := f.want(http.StatusAccepted, "PUT", "/pulls/3/merge-async",
		map[string]any{"merge_method": "squash", "commit_title": "Three in one", "commit_message": "The first three.", "merge_action": "direct_merge"})
	uuid, _ := field(out, "details", "uuid").(string)
	if field(out, "status") != "pending" || len(uuid) != 36 || field(out, "details", "expected_head_sha") != head3 ||
		field(out, "details", "merge_method") != "squash" || field(out, "details", "merge_action") != "direct_merge" {
		t.Errorf("the 202: %v", out)
	}
	// A second request while the first is pending: 409 with its uuid.
	again := f.want(http.StatusConflict, "PUT", "/pulls/3/merge-async", map[string]any{"merge_method": "merge"})
	if field(again, "status") != "pending" || field(again, "details", "uuid") != uuid || field(again, "details", "merge_method") != "squash" {
		t.Errorf("the 409: %v", again)
	}
	if recs := f.s.MergeRecords(stackRepo); len(recs) != 0 {
		t.Errorf("merged before its time: %+v", recs)
	}
	f.due()
	status, sha := f.result(3, uuid)
	if status != "merged" || sha != f.tip("main") {
		t.Fatalf("the result: %s %s; main is at %s", status, sha, f.tip("main"))
	}

	recs := f.s.MergeRecords(stackRepo)
	wantMsgs := []string{"T1 (#1)", "T2 (#2)", "Three in one\n\nThe first three."}
	if len(recs) != 3 {
		t.Fatalf("merges: %+v, want #1, #2, #3", recs)
	}
	parent := mainBefore
	for i, rec := range recs {
		if rec.Number != i+1 || rec.Method != MergeSquash || !rec.Async || rec.Message != wantMsgs[i] {
			t.Errorf("merge %d: %+v, want #%d squashed as %q", i, rec, i+1, wantMsgs[i])
		}
		msg, p, files := f.commitOf(rec.SHA)
		if p != parent || strings.TrimSuffix(msg, "\n") != wantMsgs[i] || strings.Contains(msg, "BODY") {
			t.Errorf("#%d's commit: parent %s (want %s), message %q", i+1, p, parent, msg)
		}
		if want := fmt.Sprintf("f%d.txt", i+1); !strings.Contains(fmt.Sprint(files), want) {
			t.Errorf("#%d's commit holds %v, not %s", i+1, files, want)
		}
		parent = rec.SHA
	}
	if _, _, files := f.commitOf(f.tip("main")); strings.Contains(fmt.Sprint(files), "f4.txt") {
		t.Errorf("#4 was merged too: %v", files)
	}
	for n := 1; n <= 3; n++ {
		p := f.want(http.StatusOK, "GET", fmt.Sprintf("/pulls/%d", n), nil)
		if field(p, "merged") != true || field(p, "state") != "closed" || field(p, "merge_commit_sha") != recs[n-1].SHA {
			t.Errorf("#%d after the merge: merged %v, state %v, merge_commit_sha %v", n, field(p, "merged"), field(p, "state"), field(p, "merge_commit_sha"))
		}
	}
	p4 := f.want(http.StatusOK, "GET", "/pulls/4", nil)
	if field(p4, "state") != "open" || field(p4, "base", "ref") != "main" || field(p4, "stack", "position") != 4.0 {
		t.Errorf("#4 after the merge: state %v, base %v, stack %v", field(p4, "state"), field(p4, "base", "ref"), field(p4, "stack"))
	}
	st := f.want(http.StatusOK, "GET", "/stacks/1", nil)
	if field(st, "open") != true || field(st, "pull_requests", 0, "merged_at") == nil || field(st, "pull_requests", 3, "merged_at") != nil {
		t.Errorf("the stack after the merge: %v", st)
	}

	// Asked again: 200, already merged, and nothing is merged twice.
	done := f.want(http.StatusOK, "PUT", "/pulls/3/merge-async", nil)
	if field(done, "status") != "merged" || field(done, "details", "sha") != recs[2].SHA {
		t.Errorf("merge-async of a merged pull request: %v", done)
	}
	f.requestMerge(2, http.StatusOK, nil)
	if len(f.s.MergeRecords(stackRepo)) != 3 {
		t.Errorf("merged twice: %+v", f.s.MergeRecords(stackRepo))
	}
	f.want(http.StatusNotFound, "GET", "/pulls/3/merge-async/not-a-uuid", nil)
	f.want(http.StatusNotFound, "GET", "/pulls/2/merge-async/"+uuid, nil)

	// The last one merges alone, with GitHub's default message.
	uuid = f.requestMerge(4, http.StatusAccepted, map[string]any{"merge_method": "squash"})
	f.due()
	status, sha = f.result(4, uuid)
	recs = f.s.MergeRecords(stackRepo)
	if status != "merged" || len(recs) != 4 || recs[3].Number != 4 || recs[3].SHA != sha || recs[3].Message != "T4 (#4)" {
		t.Errorf("merging #4: %s, %+v", status, recs)
	}
	if st := f.want(http.StatusOK, "GET", "/stacks/1", nil); field(st, "open") != false || fmt.Sprint(numbers(st)) != "[1 2 3 4]" {
		t.Errorf("a stack all merged: %v", st)
	}
	// Merged pull requests stay in their stack: there is nothing to unstack.
	f.want(http.StatusUnprocessableEntity, "POST", "/stacks/1/unstack", nil)
}

// By default a squash's message is the title and the pull request's
// description (GitHub's "Pull request title and description" setting).
func TestSquashMessageFromTheDescription(t *testing.T) {
	f := newStackFixture(t, nil)
	f.s.SetPRBody(stackRepo, 5, "Why solo.")
	status, _ := f.result(5, f.requestMerge(5, http.StatusAccepted, map[string]any{"merge_method": "squash"}))
	recs := f.s.MergeRecords(stackRepo)
	if status != "merged" || len(recs) != 1 || recs[0].Message != "Solo (#5)\n\nWhy solo." {
		t.Errorf("%s %+v", status, recs)
	}
}

// An asynchronous merge whose head is not the one expected fails, as
// GitHub cancels it; so does one a rule refuses, with the rule's words.
func TestMergeAsyncFailsOnAModifiedHeadAndOnARule(t *testing.T) {
	f := newStackFixture(t, nil)
	status, msg := f.result(5, f.requestMerge(5, http.StatusAccepted, map[string]any{"sha": strings.Repeat("0", 40)}))
	if status != "failed" || msg != "Head branch was modified. Review and try the merge again." {
		t.Errorf("a stale sha: %s %q", status, msg)
	}

	const rule = "Required status check \"ci\" is expected."
	f.s.RefuseMerge(stackRepo, 5, rule)
	if status, msg := f.result(5, f.requestMerge(5, http.StatusAccepted, nil)); status != "failed" || msg != rule {
		t.Errorf("a refused merge: %s %q", status, msg)
	}
	if _, out := f.do("PUT", "/pulls/5/merge", nil); field(out, "message") != rule {
		t.Errorf("a refused legacy merge: %v", out)
	}
	f.want(http.StatusMethodNotAllowed, "PUT", "/pulls/5/merge", nil)

	// A rule on the bottom of a stack stops the whole stacked merge.
	f.want(http.StatusCreated, "POST", "/stacks", map[string]any{"pull_requests": []int{1, 2}})
	f.s.RefuseMerge(stackRepo, 1, rule)
	if status, msg := f.result(2, f.requestMerge(2, http.StatusAccepted, nil)); status != "failed" || msg != rule {
		t.Errorf("a stacked merge over a refused one: %s %q", status, msg)
	}
	if recs := f.s.MergeRecords(stackRepo); len(recs) != 0 {
		t.Errorf("merged despite the failures: %+v", recs)
	}
	if _, err := f.s.MergeAs(stackRepo, 2, MergeCommit, false); err == nil || err.Error() != rule {
		t.Errorf("MergeAs over a refused one: %v", err)
	}

	f.s.RefuseMerge(stackRepo, 1, "")
	f.s.RefuseMerge(stackRepo, 5, "")
	if status, _ := f.result(2, f.requestMerge(2, http.StatusAccepted, nil)); status != "merged" {
		t.Errorf("after the rule is lifted: %s", status)
	}
	f.want(http.StatusOK, "PUT", "/pulls/5/merge", nil)
	if recs := f.s.MergeRecords(stackRepo); len(recs) != 3 {
		t.Errorf("merges: %+v, want #1, #2 and #5", recs)
	}
}

// A closed or draft pull request is refused at once with 400.
func TestMergeAsyncRefusesAClosedOrDraftPullRequest(t *testing.T) {
	f := newStackFixture(t, nil)
	f.want(http.StatusOK, "PATCH", "/pulls/5", map[string]any{"state": "closed"})
	out := f.want(http.StatusBadRequest, "PUT", "/pulls/5/merge-async", map[string]any{"merge_method": "merge"})
	if field(out, "status") != "failed" || field(out, "details", "message") != "Pull request is closed." {
		t.Errorf("a closed one: %v", out)
	}
	f.want(http.StatusOK, "PATCH", "/pulls/5", map[string]any{"state": "open"})
	draft := f.want(http.StatusCreated, "POST", "/pulls", map[string]any{"title": "D", "head": "s2", "base": "main", "draft": true})
	n := int(field(draft, "number").(float64))
	if field(draft, "draft") != true {
		t.Errorf("a draft is answered as %v", field(draft, "draft"))
	}
	out = f.want(http.StatusBadRequest, "PUT", fmt.Sprintf("/pulls/%d/merge-async", n), nil)
	if field(out, "details", "message") != "Pull request is still a draft." {
		t.Errorf("a draft: %v", out)
	}
	f.want(http.StatusMethodNotAllowed, "PUT", fmt.Sprintf("/pulls/%d/merge", n), nil)
	f.s.SetDraft(stackRepo, n, false)
	if status, _ := f.result(n, f.requestMerge(n, http.StatusAccepted, nil)); status != "merged" {
		t.Errorf("ready for review, the merge: %s", status)
	}
}

// Unstacking leaves the pull requests that wait for a merge; a stack of
// nothing else answers 422.
func TestUnstackLeavesThePullRequestsQueuedForMerge(t *testing.T) {
	f := newStackFixture(t, func(s *Server) { s.MergeDelay = time.Hour })
	f.want(http.StatusCreated, "POST", "/stacks", map[string]any{"pull_requests": []int{1, 2, 3}})
	f.requestMerge(2, http.StatusAccepted, map[string]any{"merge_method": "rebase"})
	st := f.want(http.StatusOK, "POST", "/stacks/1/unstack", nil)
	if fmt.Sprint(numbers(st)) != "[1 2]" {
		t.Errorf("after unstack: %v, want #1 and #2 (queued)", numbers(st))
	}
	out := f.want(http.StatusUnprocessableEntity, "POST", "/stacks/1/unstack", nil)
	if field(out, "message") == nil || field(out, "documentation_url") == nil {
		t.Errorf("unstacking the locked: %v", out)
	}
	if p3 := f.want(http.StatusOK, "GET", "/pulls/3", nil); field(p3, "stack") != nil {
		t.Errorf("#3 is still stacked: %v", field(p3, "stack"))
	}
	// Once merged, the two stay in the stack, which is no longer open.
	f.due()
	deadline := time.Now().Add(10 * time.Second)
	for len(f.s.MergeRecords(stackRepo)) < 2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	st = f.want(http.StatusOK, "GET", "/stacks/1", nil)
	if fmt.Sprint(numbers(st)) != "[1 2]" || field(st, "open") != false || len(f.s.MergeRecords(stackRepo)) != 2 {
		t.Errorf("after the merge: %v; merges %+v", st, f.s.MergeRecords(stackRepo))
	}
}

// The legacy merge refuses a stacked pull request and merges another.
func TestLegacyMergeRefusesAStackedPullRequest(t *testing.T) {
	f := newStackFixture(t, nil)
	f.want(http.StatusCreated, "POST", "/stacks", map[string]any{"pull_requests": []int{1, 2}})
	out := f.want(http.StatusMethodNotAllowed, "PUT", "/pulls/1/merge", map[string]any{"merge_method": "squash"})
	if !strings.Contains(fmt.Sprint(field(out, "message")), "merge-async") {
		t.Errorf("a stacked one: %v", out)
	}
	out = f.want(http.StatusConflict, "PUT", "/pulls/5/merge", map[string]any{"sha": strings.Repeat("1", 40)})
	if field(out, "message") != "Head branch was modified. Review and try the merge again." {
		t.Errorf("a stale sha: %v", out)
	}
	head := f.tip("solo")
	out = f.want(http.StatusOK, "PUT", "/pulls/5/merge", map[string]any{"sha": head, "merge_method": "merge", "commit_title": "Solo in"})
	if field(out, "merged") != true || field(out, "sha") != f.tip("main") || field(out, "message") != "Pull Request successfully merged" {
		t.Errorf("the merge: %v", out)
	}
	recs := f.s.MergeRecords(stackRepo)
	if len(recs) != 1 || recs[0].Number != 5 || recs[0].Async || recs[0].Method != MergeCommit || recs[0].Message != "Solo in" {
		t.Errorf("merges: %+v", recs)
	}
	if _, parent2, _ := f.commitOf(f.tip("main")); parent2 == "" {
		t.Error("no merge commit")
	}
	out = f.want(http.StatusMethodNotAllowed, "PUT", "/pulls/5/merge", nil)
	if field(out, "message") != "Pull Request is not mergeable" {
		t.Errorf("merged again: %v", out)
	}
}

// A person merging a stacked pull request in GitHub's web interface
// merges it with those under it, as the asynchronous merge does.
func TestMergeAsMergesAStackFromTheBottom(t *testing.T) {
	f := newStackFixture(t, nil)
	if _, err := f.s.StackAs(stackRepo, 1, 3); err == nil {
		t.Error("StackAs stacked #3 on #1")
	}
	if n, err := f.s.StackAs(stackRepo, 1, 2, 3); err != nil || n != 1 {
		t.Fatalf("StackAs: %d %v", n, err)
	}
	tip, err := f.s.MergeAs(stackRepo, 2, MergeRebase, true)
	if err != nil {
		t.Fatal(err)
	}
	recs := f.s.MergeRecords(stackRepo)
	if tip != f.tip("main") || len(recs) != 2 || recs[0].Number != 1 || recs[1].Number != 2 || recs[1].SHA != tip || recs[0].Async {
		t.Errorf("MergeAs of #2: %s, %+v", tip, recs)
	}
	if msg, _, _ := f.commitOf(tip); msg != "the change of s2\n" {
		t.Errorf("a rebase keeps the branch's messages: %q", msg)
	}
	p3 := f.want(http.StatusOK, "GET", "/pulls/3", nil)
	if field(p3, "state") != "open" || field(p3, "base", "ref") != "main" {
		t.Errorf("#3 after: %v on %v", field(p3, "state"), field(p3, "base", "ref"))
	}
	if fmt.Sprint(f.s.Stack(stackRepo, 1)) != "[1 2 3]" {
		t.Errorf("the stack after: %v", f.s.Stack(stackRepo, 1))
	}
}

// A push between the request and the merge cancels the merge, as GitHub
// documents; a closed pull request under the one asked for in its stack
// fails the stacked merge and merges nothing.
func TestMergeAsyncFailsOnAPushMeanwhileAndOnAClosedOneUnder(t *testing.T) {
	f := newStackFixture(t, func(s *Server) { s.MergeDelay = time.Hour })
	uuid := f.requestMerge(5, http.StatusAccepted, nil)
	r, err := git.PlainOpen(f.origin)
	if err != nil {
		t.Fatal(err)
	}
	moved := plumbing.NewHashReference(plumbing.NewBranchReferenceName("solo"), plumbing.NewHash(f.tip("s1")))
	if err := r.Storer.SetReference(moved); err != nil {
		t.Fatal(err)
	}
	f.due()
	if status, msg := f.result(5, uuid); status != "failed" || msg != "Head branch was modified. Review and try the merge again." {
		t.Errorf("pushed meanwhile: %s %q", status, msg)
	}

	f.want(http.StatusCreated, "POST", "/stacks", map[string]any{"pull_requests": []int{1, 2, 3}})
	f.want(http.StatusOK, "PATCH", "/pulls/1", map[string]any{"state": "closed"})
	uuid = f.requestMerge(2, http.StatusAccepted, map[string]any{"merge_method": "squash"})
	f.due()
	if status, msg := f.result(2, uuid); status != "failed" || msg != "Pull request #1 is closed." {
		t.Errorf("over a closed one: %s %q", status, msg)
	}
	if recs := f.s.MergeRecords(stackRepo); len(recs) != 0 {
		t.Errorf("merged: %+v", recs)
	}
}
