package workorder

import (
	"bytes"
	"fmt"
	"os"
	"path"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

var fuzzOptions = Options{
	Actions:    []string{"create_worktree", "create_branch", "checkout_files", "commit", "push", "create_pr", "wait_for_review", "check_review", "conditional_loop", "cleanup_worktree", "update_task", "agent"},
	Conditions: []string{"review_comments_exist"},
	LaterNames: []string{"pr_number", "commit_sha"},
}

// FuzzDecodeValidate feeds arbitrary bytes to the document decoder and
// every decoded document to the validator and the typed parser.
func FuzzDecodeValidate(f *testing.F) {
	if data, err := os.ReadFile("../fixtures/hermes-review.json"); err == nil {
		f.Add(data)
	}
	for _, s := range []string{
		`{"_key": "task_a", "title": "A", "status": "open"}`,
		`[{"_key": "a", "a": 1, "a": 2}]`,
		`[{"_key": "a", "work_order": {"version": "1.0", "procedure": [{"step": 1, "action": "commit", "command": "git commit -m <title>"}], "state": {"current_step": 0}}}]`,
		"[{\"title\": \"\xff\"}]",
		`[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]`,
		`{"_key": "a", "n": 1e400, "m": -0.0, "s": "\u0000\ud800"}`,
		`{} {}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		// A slow input crashes the worker, which saves it as a failure:
		// the fuzzer itself has no time limit per input.
		watchdog := time.AfterFunc(10*time.Second, func() {
			panic(fmt.Sprintf("decoding and validating took over 10s: %d bytes: %.200q", len(data), data))
		})
		defer watchdog.Stop()
		docs, err := DecodeDocuments("fuzz", data)
		if err != nil {
			// A refusal names the problem briefly, whatever the input.
			if n := len(err.Error()); n > 1200 {
				t.Fatalf("error message of %d bytes", n)
			}
			return
		}
		if !utf8.Valid(data) {
			t.Fatalf("accepted invalid UTF-8")
		}
		for _, d := range docs {
			if k, ok := d["_key"].(string); ok && len(k) > MaxKeyLength {
				t.Fatalf("accepted a key of %d bytes", len(k))
			}
			Validate(d, fuzzOptions)
			Parse(d)
			NewScope(d)
		}
		// What was accepted round-trips exactly through wo's own encoding,
		// as wo export | wo import - needs.
		var buf bytes.Buffer
		if err := Encode(&buf, docs); err != nil {
			t.Fatalf("encoding accepted documents: %v", err)
		}
		again, err := DecodeDocuments("again", buf.Bytes())
		if err != nil {
			t.Fatalf("re-decoding what was accepted: %v\n%s", err, buf.Bytes())
		}
		if !reflect.DeepEqual(docs, again) {
			t.Fatalf("round trip changed the documents:\n%#v\n%#v", docs, again)
		}
	})
}

// FuzzRender renders arbitrary templates over values that themselves
// look like placeholders.
func FuzzRender(f *testing.F) {
	for _, s := range [][2]string{
		{"git commit -m <title>", "fix"},
		{"<a> <b> <missing> <c", "<b>"},
		{"echo <a> > out < in", "$(rm -rf ~)"},
		{strings.Repeat("<x>", 100), "\x1b]52;c;eA==\x07"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, tmpl, value string) {
		doc := Document{"_key": "task_a", "title": value, "work_order": map[string]any{
			"inputs": map[string]any{"a": value, "b": "<a>", "list": []any{value, "x"}}}}
		out, err := NewScope(doc).Render(tmpl)
		if err != nil {
			if n := len(err.Error()); n > 2000 {
				t.Fatalf("error message of %d bytes", n)
			}
			return
		}
		// One pass only: a value that looks like a placeholder is not
		// expanded again, so <b> renders as the text <a>.
		if strings.Contains(tmpl, "<b>") && !strings.Contains(out, "<a>") {
			t.Fatalf("<b> was expanded twice: %q -> %q", tmpl, out)
		}
		if !strings.ContainsRune(tmpl, '<') && out != tmpl {
			t.Fatalf("a template without placeholders changed: %q -> %q", tmpl, out)
		}
	})
}

// FuzzCheckRelativePath checks that every manifest path the validator
// accepts stays inside the repository and out of .git.
func FuzzCheckRelativePath(f *testing.F) {
	for _, s := range []string{"a/b.go", "../x", "a/../../x", "/etc/passwd", "C:x", ".git/config", "a/.git/hooks/x", "a//b", "./a", "a\\..\\b", "a\x00b", "..", "a/.", ".", ".GIT/config", "a/.Git/hooks/x", "git~1/config", ".git./x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		if CheckRelativePath(p) != nil {
			return
		}
		const root = "/repo"
		joined := path.Join(root, p)
		if joined != root && !strings.HasPrefix(joined, root+"/") {
			t.Fatalf("%q accepted but leads to %s", p, joined)
		}
		for _, part := range strings.Split(p, "/") {
			if part == ".." || strings.EqualFold(part, ".git") || part == "" || part == "." {
				t.Fatalf("%q accepted with the component %q", p, part)
			}
		}
		if strings.ContainsAny(p, "\x00\\") || path.IsAbs(p) {
			t.Fatalf("%q accepted", p)
		}
	})
}
