package workorder

import (
	"errors"
	"strings"
	"testing"
)

func TestDuplicateKeysAreRefusedWithTheirPath(t *testing.T) {
	cases := map[string]string{
		`{"_key": "task_a", "status": "open", "status": "closed"}`:                  `duplicate key "status" in the top-level object`,
		`[{"_key": "a"}, {"_key": "b", "work_order": {"state": {"x": 1, "x": 2}}}]`: `duplicate key "x" in [1].work_order.state`,
		`[{"_key": "a", "labels": [{"k": 1}, {"k": 1, "k": 2}]}]`:                   `duplicate key "k" in [0].labels[1]`,
		`{"a": {"b c": {"d": 1, "d": 1}}}`:                                          `duplicate key "d" in a["b c"]`,
	}
	for in, want := range cases {
		_, err := DecodeDocuments("stdin", []byte(in))
		var se *ShapeError
		if !errors.As(err, &se) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one containing %q", in, err, want)
		}
	}
	// The same key in sibling objects is fine.
	if _, err := DecodeDocuments("stdin", []byte(`[{"_key": "a"}, {"_key": "b"}]`)); err != nil {
		t.Errorf("sibling objects: %v", err)
	}
}

func TestInvalidUTF8IsRefusedWithItsOffset(t *testing.T) {
	in := []byte("[{\"_key\": \"task_a\",\n \"title\": \"caf\xe9\"}]")
	_, err := DecodeDocuments("tasks.json", in)
	var se *SyntaxError
	if !errors.As(err, &se) || se.Line != 2 || !strings.Contains(err.Error(), "invalid UTF-8 at byte offset 34 (byte 0xe9)") {
		t.Errorf("error %v", err)
	}
}

func TestDeepNestingIsRefusedAtTheLimit(t *testing.T) {
	// 60 KB: a document nested 10,000 levels, within encoding/json's own
	// limit, so only wo's bound stops it.
	deep := `{"_key": "task_a", "x": ` + strings.Repeat(`{"a":`, 10000) + "1" + strings.Repeat("}", 10000) + "}"
	_, err := DecodeDocuments("stdin", []byte(deep))
	if err == nil || !strings.Contains(err.Error(), "nested deeper than 64 levels at x.a.a") {
		t.Fatalf("error %.300v", err)
	}
	if len(err.Error()) > 400 {
		t.Errorf("message of %d bytes", len(err.Error()))
	}
	arrays := "[" + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + "]"
	if _, err := DecodeDocuments("stdin", []byte(arrays)); err == nil || !strings.Contains(err.Error(), "nested deeper than 64 levels at [0][0]") {
		t.Errorf("arrays: %.300v", err)
	}
	ok := `{"_key": "a", "x": ` + strings.Repeat(`{"a":`, 62) + "1" + strings.Repeat("}", 62) + "}"
	if _, err := DecodeDocuments("stdin", []byte(ok)); err != nil {
		t.Errorf("64 levels: %v", err)
	}
}

func TestHugeKeysAndTitlesAreNotEchoed(t *testing.T) {
	huge := strings.Repeat("k", 10<<20)
	for _, doc := range []string{
		`[{"_key": "` + huge + `"}]`,
		`[{"_key": "task_a", "parent_key": "` + huge + `"}]`,
		`[{"_key": "task_a", "work_order": {"dependencies": {"blocked_by": ["` + huge + `"]}}}]`,
		`[{"_key": "task_a", "title": "` + huge + `"}]`,
	} {
		_, err := DecodeDocuments("stdin", []byte(doc))
		if err == nil {
			t.Fatalf("a 10 MB value was accepted")
		}
		if len(err.Error()) > 300 || !strings.Contains(err.Error(), "(10485760 bytes)") {
			t.Errorf("message of %d bytes: %.300s", len(err.Error()), err)
		}
	}
	title := strings.Repeat("é", MaxTitleLength)
	if _, err := DecodeDocuments("stdin", []byte(`{"_key": "a", "title": "`+title+`"}`)); err != nil {
		t.Errorf("a title of %d characters: %v", MaxTitleLength, err)
	}
	if _, err := DecodeDocuments("stdin", []byte(`{"_key": "a", "title": "`+title+`x"}`)); err == nil || !strings.Contains(err.Error(), "title: 257 characters long; a title has at most 256") {
		t.Errorf("a title one too long: %v", err)
	}
}

// How long refusing a document nested 10,000 levels takes (the test above
// checks that it is refused; its time is a figure, not an assertion).
func BenchmarkDecodeRefusesDeepNesting(b *testing.B) {
	deep := []byte(`{"_key": "task_a", "x": ` + strings.Repeat(`{"a":`, 10000) + "1" + strings.Repeat("}", 10000) + "}")
	for b.Loop() {
		if _, err := DecodeDocuments("stdin", deep); err == nil {
			b.Fatal("a document nested 10,000 levels was taken")
		}
	}
}
