// Package workorder is the model of a Persephone task that carries a
// work_order: decoding documents without losing fields, the typed view the
// engine works with, validation, and <placeholder> templates.
//
// A document is kept as a generic JSON object (map[string]any, numbers as
// json.Number) so that fields wo does not know survive every write exactly as
// they were; the typed Task is a read-only view parsed from it.
package workorder

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/wo-runner/wo/termtext"
)

// Limits of what the decoder accepts. Documents come from files, pipes and
// other tools: these bound the work and the memory one of them can cost,
// and keep a hostile value out of error messages.
const (
	// MaxDepth is the deepest nesting of objects and arrays; a work order
	// needs fewer than ten levels.
	MaxDepth = 64
	// MaxKeyLength is the longest _key (and task reference) in bytes:
	// ArangoDB's own limit.
	MaxKeyLength = 254
	// MaxTitleLength is the longest title in characters: GitHub's limit
	// for the pull request titles that titles often become.
	MaxTitleLength = 256
	// quoteLimit bounds how much of an untrusted value a message repeats.
	quoteLimit = 64
)

// Document is a task document as stored: every field, known or not.
type Document = map[string]any

// SyntaxError is malformed JSON input, located by line and column.
type SyntaxError struct {
	Source string // file name or "stdin"
	Line   int
	Column int
	Err    error
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("%s: malformed JSON at line %d, column %d: %v", e.Source, e.Line, e.Column, e.Err)
}

func (e *SyntaxError) Unwrap() error { return e.Err }

// ShapeError is well-formed JSON that is not a document or a list of them.
type ShapeError struct{ msg string }

func (e *ShapeError) Error() string { return e.msg }

// DecodeDocuments reads one JSON object, or a JSON array of objects, from
// data. Numbers stay json.Number so that large integers are not rounded.
// Input that breaks the limits above, has a key twice in one object or is
// not UTF-8 is refused with a message that says where.
func DecodeDocuments(source string, data []byte) ([]Document, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, &ShapeError{fmt.Sprintf("%s: empty input: expected a JSON object or an array of objects", source)}
	}
	var v any
	if err := CheckJSON(source, data); err != nil {
		return nil, err
	}
	if err := decodeStrict(data, &v); err != nil {
		return nil, locate(source, data, err)
	}
	switch t := v.(type) {
	case map[string]any:
		if err := checkFields(source, "", t); err != nil {
			return nil, err
		}
		return []Document{t}, nil
	case []any:
		docs := make([]Document, 0, len(t))
		for i, item := range t {
			obj, ok := item.(map[string]any)
			if !ok {
				return nil, &ShapeError{fmt.Sprintf("%s: element %d is %s, expected a JSON object", source, i, jsonKind(item))}
			}
			if err := checkFields(source, fmt.Sprintf("[%d].", i), obj); err != nil {
				return nil, err
			}
			docs = append(docs, obj)
		}
		return docs, nil
	default:
		return nil, &ShapeError{fmt.Sprintf("%s: top level is %s, expected a JSON object or an array of objects", source, jsonKind(v))}
	}
}

// DecodeDocument reads exactly one JSON object, with DecodeDocuments'
// limits.
func DecodeDocument(source string, data []byte) (Document, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, &ShapeError{fmt.Sprintf("%s: empty input: expected a JSON object", source)}
	}
	if err := CheckJSON(source, data); err != nil {
		return nil, err
	}
	var v any
	if err := decodeStrict(data, &v); err != nil {
		return nil, locate(source, data, err)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, &ShapeError{fmt.Sprintf("%s: top level is %s, expected a JSON object", source, jsonKind(v))}
	}
	if err := checkFields(source, "", obj); err != nil {
		return nil, err
	}
	return obj, nil
}

// CheckJSON refuses what encoding/json would quietly accept or pay dearly
// for: invalid UTF-8 (which it turns into U+FFFD), a key given twice in
// one object (it keeps the last, so two tools could read one document
// differently), and nesting deeper than MaxDepth. Malformed JSON is left
// to the decoder, which locates it.
func CheckJSON(source string, data []byte) error {
	if !utf8.Valid(data) {
		off := invalidUTF8At(data)
		return positioned(source, data, int64(off),
			fmt.Errorf("invalid UTF-8 at byte offset %d (byte 0x%02x): save the file as UTF-8", off, data[off]))
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	c := &jsonChecker{source: source}
	for {
		tok, err := dec.Token()
		if err != nil {
			return nil // the end, or malformed JSON that the decoder locates
		}
		if err := c.token(tok); err != nil {
			return err
		}
	}
}

// jsonChecker follows the objects and arrays a JSON text is in, token
// by token, for CheckJSON.
type jsonChecker struct {
	source string
	stack  []*jsonFrame
}

// jsonFrame is one object or array: the key or index of the value being
// read in it, and an object's keys so far.
type jsonFrame struct {
	object    bool
	expectKey bool
	key       string
	index     int
	keys      map[string]struct{}
}

func (c *jsonChecker) token(tok json.Token) error {
	if len(c.stack) > 0 {
		if top := c.stack[len(c.stack)-1]; top.object && top.expectKey {
			return c.key(top, tok)
		}
	}
	switch d, _ := tok.(json.Delim); d {
	case '{', '[':
		if len(c.stack) == MaxDepth {
			return &ShapeError{fmt.Sprintf("%s: nested deeper than %d levels at %s: a work order needs far fewer",
				c.source, MaxDepth, termtext.Clip(c.path(), 200))}
		}
		c.stack = append(c.stack, &jsonFrame{object: d == '{', expectKey: d == '{', keys: map[string]struct{}{}})
	case ']':
		c.stack = c.stack[:len(c.stack)-1]
		c.valueDone()
	default:
		c.valueDone()
	}
	return nil
}

// key reads a token where object top expects a key: the key, or the
// object's end. A key given twice is refused.
func (c *jsonChecker) key(top *jsonFrame, tok json.Token) error {
	if d, ok := tok.(json.Delim); ok && d == '}' {
		c.stack = c.stack[:len(c.stack)-1]
		c.valueDone()
		return nil
	}
	key, _ := tok.(string)
	if _, dup := top.keys[key]; dup {
		at := termtext.Clip(c.path(), 200)
		if at == "" {
			at = "the top-level object"
		}
		return &ShapeError{fmt.Sprintf("%s: duplicate key %s in %s: each key may appear once in an object",
			c.source, quote(key), at)}
	}
	top.keys[key] = struct{}{}
	top.key, top.expectKey = key, false
	return nil
}

// path is where the checker is, as a document path.
func (c *jsonChecker) path() string {
	var b strings.Builder
	for _, f := range c.stack {
		if f.object {
			if f.expectKey {
				continue
			}
			b.WriteString(pathKey(f.key))
		} else {
			fmt.Fprintf(&b, "[%d]", f.index)
		}
	}
	return strings.TrimPrefix(b.String(), ".")
}

// valueDone moves the enclosing container past one value.
func (c *jsonChecker) valueDone() {
	if len(c.stack) == 0 {
		return
	}
	if top := c.stack[len(c.stack)-1]; top.object {
		top.expectKey = true
	} else {
		top.index++
	}
}

func invalidUTF8At(data []byte) int {
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return len(data)
}

// pathKey writes one object key of a path: .name, or ["odd key"].
func pathKey(k string) string {
	if len(k) > quoteLimit {
		return "[" + quote(k) + "]" // cut short: an untrusted key may be huge
	}
	for _, r := range k {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return "[" + quote(k) + "]"
		}
	}
	if k == "" {
		return `[""]`
	}
	return "." + k
}

// quote repeats an untrusted value in a message: quoted, and cut short.
func quote(s string) string {
	if len(s) <= quoteLimit {
		return fmt.Sprintf("%q", s)
	}
	cut := quoteLimit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%q… (%d bytes)", s[:cut], len(s))
}

// checkFields bounds the fields that messages, keys and titles repeat, so
// that a huge one is refused here, named briefly, instead of being echoed
// by every later message.
func checkFields(source, at string, doc map[string]any) error {
	bad := func(path, msg string) error {
		return &ShapeError{fmt.Sprintf("%s: %s%s: %s", source, at, path, msg)}
	}
	refs := []struct {
		path string
		v    any
	}{{"_key", doc["_key"]}, {"parent_key", doc["parent_key"]}}
	if deps, ok := Lookup(doc, "work_order.dependencies"); ok {
		if m, ok := deps.(map[string]any); ok {
			for _, name := range []string{"blocked_by", "blocks"} {
				list, _ := m[name].([]any)
				for i, x := range list {
					refs = append(refs, struct {
						path string
						v    any
					}{fmt.Sprintf("work_order.dependencies.%s[%d]", name, i), x})
				}
			}
		}
	}
	for _, r := range refs {
		if s, ok := r.v.(string); ok && len(s) > MaxKeyLength {
			return bad(r.path, fmt.Sprintf("%d bytes long; a task key has at most %d: %s", len(s), MaxKeyLength, quote(s)))
		}
	}
	if t, ok := doc["title"].(string); ok {
		if n := utf8.RuneCountInString(t); n > MaxTitleLength {
			return bad("title", fmt.Sprintf("%d characters long; a title has at most %d (put the rest in description): %s", n, MaxTitleLength, quote(t)))
		}
	}
	return nil
}

func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	var extra any
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		if err == nil {
			return &trailingDataError{offset: dec.InputOffset()}
		}
		return err
	}
	return nil
}

type trailingDataError struct{ offset int64 }

func (e *trailingDataError) Error() string { return "unexpected data after the top-level value" }

// positioned is a SyntaxError at a byte offset.
func positioned(source string, data []byte, offset int64, err error) error {
	line, col := lineCol(data, offset)
	return &SyntaxError{Source: source, Line: line, Column: col, Err: err}
}

// locate turns a decoder error into a SyntaxError with line and column.
func locate(source string, data []byte, err error) error {
	var offset int64 = -1
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	var td *trailingDataError
	switch {
	case errors.As(err, &se):
		offset = se.Offset
	case errors.As(err, &te):
		offset = te.Offset
	case errors.As(err, &td):
		offset = td.offset
	case errors.Is(err, io.ErrUnexpectedEOF):
		offset = int64(len(data))
	}
	if offset < 0 {
		return fmt.Errorf("%s: malformed JSON: %w", source, err)
	}
	if offset > int64(len(data)) {
		offset = int64(len(data))
	}
	return positioned(source, data, offset, err)
}

func lineCol(data []byte, offset int64) (line, col int) {
	line, col = 1, 1
	for _, b := range data[:offset] {
		if b == '\n' {
			line++
			col = 1
		} else {
			col++
		}
	}
	return line, col
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number, float64, int, int64:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	default:
		return fmt.Sprintf("%T", v)
	}
}

// Encode writes v as indented JSON without escaping <, > and &, which are
// common in command templates.
func Encode(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// Clone returns a deep copy of a JSON value built from maps and slices.
func Clone(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			out[k] = Clone(x)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = Clone(x)
		}
		return out
	default:
		return v
	}
}

// Lookup returns the value at a dotted path ("work_order.state.current_step").
func Lookup(doc map[string]any, path string) (any, bool) {
	var cur any = doc
	for _, part := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		cur, ok = m[part]
		if !ok {
			return nil, false
		}
	}
	return cur, true
}

// String returns the string at path, or "" when absent or not a string.
func String(doc map[string]any, path string) string {
	v, _ := Lookup(doc, path)
	s, _ := v.(string)
	return s
}

// Key returns the document's _key.
func Key(doc map[string]any) string { return String(doc, "_key") }

// Normalize converts a value built from Go types (structs, typed slices,
// ints) into the generic form a Document holds, so that patches and stored
// documents compare and merge alike.
func Normalize(v any) (any, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(&buf)
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		return nil, err
	}
	return out, nil
}

// AsInt reads an integer from any JSON number representation.
func AsInt(v any) (int64, bool) {
	switch n := v.(type) {
	case json.Number:
		i, err := n.Int64()
		if err != nil {
			f, ferr := n.Float64()
			if ferr != nil || f != float64(int64(f)) {
				return 0, false
			}
			return int64(f), true
		}
		return i, true
	case float64:
		if n != float64(int64(n)) {
			return 0, false
		}
		return int64(n), true
	case int:
		return int64(n), true
	case int64:
		return n, true
	}
	return 0, false
}

// AsFloat reads a number from any JSON number representation.
func AsFloat(v any) (float64, bool) {
	switch n := v.(type) {
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	case float64:
		return n, true
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	}
	return 0, false
}

// AnyList turns a Go slice into a JSON array value; nil becomes an empty
// array, which Persephone's readers expect rather than null.
func AnyList[T any](list []T) []any {
	out := make([]any, len(list))
	for i, x := range list {
		out[i] = x
	}
	return out
}

// AnyMap turns a Go map into a JSON object value.
func AnyMap[V any](m map[string]V) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// Get returns the value at a dotted path, or nil.
func Get(doc map[string]any, path string) any {
	v, _ := Lookup(doc, path)
	return v
}
