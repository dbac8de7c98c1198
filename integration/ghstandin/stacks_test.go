package ghstandin

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
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
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
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
// operation 404.
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
}
