package workorder

import (
	"errors"
	"strings"
	"testing"
)

// decodeError is the message DecodeDocuments gives for in, which must be a
// ShapeError.
func decodeError(t *testing.T, in string) string {
	t.Helper()
	_, err := DecodeDocuments("f.json", []byte(in))
	var se *ShapeError
	if !errors.As(err, &se) {
		t.Fatalf("%.80s: %v, want a ShapeError", in, err)
	}
	return err.Error()
}

func TestDuplicateKeyPathsWriteEveryPlainNameWithADot(t *testing.T) {
	k64 := strings.Repeat("k", 64)
	cases := map[string]string{
		// Each end of each plain range: a..z, A..Z, 0..9 and _.
		`{"az": {"AZ": {"09": {"_": {"x": 1, "x": 2}}}}}`: `f.json: duplicate key "x" in az.AZ.09._: each key may appear once in an object`,
		`{"a-b": {"x": 1, "x": 2}}`:                       `f.json: duplicate key "x" in ["a-b"]: each key may appear once in an object`,
		`{"": {"x": 1, "x": 2}}`:                          `f.json: duplicate key "x" in [""]: each key may appear once in an object`,
		// A key of quoteLimit bytes is still written out; a longer one is quoted and cut.
		`{"` + k64 + `": {"x": 1, "x": 2}}`:                                              `f.json: duplicate key "x" in ` + k64 + `: each key may appear once in an object`,
		`{"` + k64 + `k": {"x": 1, "x": 2}}`:                                             `f.json: duplicate key "x" in ["` + k64 + `"… (65 bytes)]: each key may appear once in an object`,
		`{"` + k64 + `": 1, "` + k64 + `": 2}`:                                           `f.json: duplicate key "` + k64 + `" in the top-level object: each key may appear once in an object`,
		`{"x` + strings.Repeat("é", 40) + `": 1, "x` + strings.Repeat("é", 40) + `": 2}`: `f.json: duplicate key "x` + strings.Repeat("é", 31) + `"… (81 bytes) in the top-level object: each key may appear once in an object`,
	}
	for in, want := range cases {
		if got := decodeError(t, in); got != want {
			t.Errorf("%.80s:\n got  %s\n want %s", in, got, want)
		}
	}
}

func TestAKeyOfExactlyTheMaximumLengthIsAccepted(t *testing.T) {
	key := "task_" + strings.Repeat("a", MaxKeyLength-5)
	if _, err := DecodeDocuments("f.json", []byte(`{"_key": "`+key+`"}`)); err != nil {
		t.Errorf("a %d-byte key: %v", len(key), err)
	}
	if got := decodeError(t, `{"_key": "`+key+`a"}`); !strings.HasPrefix(got, "f.json: _key: 255 bytes long; a task key has at most 254") {
		t.Errorf("a 255-byte key: %s", got)
	}
}
