package workorder

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"
)

// StateField is one field of work_order.state as its tags on State
// describe it: the one description of the field, which the validator, the
// reference in docs/work-order.md, the templates and the patch builder
// read.
type StateField struct {
	Name  string // the JSON name in work_order.state
	Doc   string // what it means
	Later bool   // templates may name it before it is set
	Lease bool   // owned by the lease, not by patches
	// Rule is what the value must be beyond its type (a key of
	// stateRules), or "".
	Rule  string
	index []int
	typ   reflect.Type
}

// StateGroup is one concern of the state (the run, git, the pull request,
// …) and its fields, in the order State lists them.
type StateGroup struct {
	Name   string // the Go type: RunState
	Title  string // for people: The run
	Doc    string
	Fields []StateField
}

// Type says what JSON the field holds, as the reference words it: an
// integer, an array of strings, a string or null.
func (f StateField) Type() string { return typeWords(f.typ) }

// Rules says in words what a value must be beyond its type, or "".
func (f StateField) Rules() string {
	if f.Rule == "" {
		return ""
	}
	return stateRules[f.Rule].words
}

// stateRule is a check a field's value must pass beyond its type. steps
// is the number of steps of the procedure; report names a path below the
// field's own ("" for the field itself).
type stateRule struct {
	words string
	check func(x any, steps int, report func(sub, format string, args ...any))
}

// stateRules are the rules a field's wo tag can name.
var stateRules = map[string]stateRule{
	"version": {fmt.Sprintf("From 1 to %d, the versions this wo reads; a newer one needs a newer wo.", StateVersion),
		func(x any, _ int, report func(string, string, ...any)) {
			if n, _ := AsInt(x); n < 1 || n > StateVersion {
				report("", "is %d but this wo reads state versions 1..%d: upgrade wo", n, StateVersion)
			}
		}},
	"step": {"From 0 (not started) to the last step.",
		func(x any, steps int, report func(string, string, ...any)) {
			if n, _ := AsInt(x); n < 0 || n > int64(steps) {
				report("", "is %d but must be 0 (not started) to %d (the last step)", n, steps)
			}
		}},
	"steps": {"Each a step of the procedure, listed once.",
		func(x any, steps int, report func(string, string, ...any)) {
			list, _ := x.([]any)
			seen := map[int64]bool{}
			for i, item := range list {
				n, _ := AsInt(item)
				at := fmt.Sprintf("[%d]", i)
				if n < 1 || n > int64(steps) {
					report(at, "is %d but the procedure has steps 1..%d", n, steps)
				}
				if seen[n] {
					report(at, "step %d is listed twice", n)
				}
				seen[n] = true
			}
		}},
	"count": {"Never negative.",
		func(x any, _ int, report func(string, string, ...any)) {
			if n, _ := AsInt(x); n < 0 {
				report("", "must not be negative")
			}
		}},
	"positive": {"A positive integer.",
		func(x any, _ int, report func(string, string, ...any)) {
			if n, _ := AsInt(x); n <= 0 {
				report("", "must be a positive integer, not %d", n)
			}
		}},
	// The lease's own checks stand in for its type's: expires_at is a
	// time, whose decoding error names no field.
	"lease": {"Its holder is a string, its expires_at an RFC 3339 time.",
		func(x any, _ int, report func(string, string, ...any)) {
			m, ok := x.(map[string]any)
			if !ok {
				report("", "must be an object, not %s", jsonKind(x))
				return
			}
			if _, ok := m["holder"].(string); !ok {
				report(".holder", "must be a string")
			}
			if s, _ := m["expires_at"].(string); s == "" {
				report(".expires_at", "must be an RFC 3339 time")
			} else if _, err := time.Parse(time.RFC3339Nano, s); err != nil {
				report(".expires_at", "%q is not an RFC 3339 time", s)
			}
		}},
}

var stateRegistry = sync.OnceValue(func() []StateGroup {
	groups, err := describeState(reflect.TypeFor[State]())
	if err != nil {
		panic("workorder: " + err.Error()) // a test holds State to its tags
	}
	return groups
})

// describeState reads the groups of a state type and the tags of their
// fields, and says what is wrong with them: a field outside a group, one
// without a JSON name or a description, a name used twice, an option or a
// rule nobody knows.
func describeState(t reflect.Type) ([]StateGroup, error) {
	var groups []StateGroup
	seen := map[string]bool{}
	for i := range t.NumField() {
		g := t.Field(i)
		if !g.Anonymous || g.Type.Kind() != reflect.Struct {
			return nil, fmt.Errorf("state field %s is in no group: put it in one of the embedded structs", g.Name)
		}
		group := StateGroup{Name: g.Type.Name(), Title: g.Tag.Get("title"), Doc: g.Tag.Get("doc")}
		if group.Title == "" || group.Doc == "" {
			return nil, fmt.Errorf("state group %s needs a title and a doc tag", group.Name)
		}
		for j := range g.Type.NumField() {
			f, err := describeStateField(g.Type.Field(j), []int{i, j})
			if err != nil {
				return nil, err
			}
			if seen[f.Name] {
				return nil, fmt.Errorf("state field %s is described twice", f.Name)
			}
			seen[f.Name] = true
			group.Fields = append(group.Fields, f)
		}
		groups = append(groups, group)
	}
	return groups, nil
}

func describeStateField(sf reflect.StructField, index []int) (StateField, error) {
	name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
	f := StateField{Name: name, Doc: sf.Tag.Get("doc"), index: index, typ: sf.Type}
	switch {
	case name == "" || name == "-":
		return f, fmt.Errorf("state field %s has no JSON name", sf.Name)
	case f.Doc == "":
		return f, fmt.Errorf("state field %s has no doc tag: say what it means", name)
	}
	for opt := range strings.SplitSeq(sf.Tag.Get("wo"), ",") {
		switch _, rule := stateRules[opt]; {
		case opt == "":
		case opt == "later":
			f.Later = true
		case rule && f.Rule != "":
			return f, fmt.Errorf("state field %s names two rules, %s and %s", name, f.Rule, opt)
		case rule:
			f.Rule = opt
			f.Lease = opt == "lease"
		default:
			return f, fmt.Errorf("state field %s: wo tag option %q is not later or a rule (%s)", name, opt, strings.Join(ruleNames(), ", "))
		}
	}
	return f, nil
}

func ruleNames() []string {
	names := make([]string, 0, len(stateRules))
	for n := range stateRules {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// StateGroups lists the concerns of work_order.state and their fields.
func StateGroups() []StateGroup {
	out := slices.Clone(stateRegistry())
	for i := range out {
		out[i].Fields = slices.Clone(out[i].Fields)
	}
	return out
}

// StateFields lists every field of work_order.state that wo knows.
func StateFields() []StateField {
	var out []StateField
	for _, g := range stateRegistry() {
		out = append(out, g.Fields...)
	}
	return out
}

// LaterStateNames are the state fields that steps record while running;
// command templates may name them before they exist.
func LaterStateNames() []string {
	var out []string
	for _, f := range StateFields() {
		if f.Later {
			out = append(out, f.Name)
		}
	}
	return out
}

// Forget clears the named fields (JSON names), so that a step that
// records them resolves them afresh when it runs again; it reports the
// names that are no field of the state.
func (s *State) Forget(names ...string) (unknown []string) {
	fields := StateFields()
	v := reflect.ValueOf(s).Elem()
	for _, name := range names {
		i := slices.IndexFunc(fields, func(f StateField) bool { return f.Name == name })
		if i < 0 {
			unknown = append(unknown, name)
			continue
		}
		v.FieldByIndex(fields[i].index).SetZero()
	}
	return unknown
}

// checkState reports the known state fields whose value does not fit their
// type (a string where a number belongs, say) or their rule; unknown
// fields are another tool's and are left alone. steps is the number of
// steps of the procedure; with steps < 0 (a document that is not a work
// order) only the types are checked.
func checkState(st map[string]any, steps int, report func(field, msg string)) {
	for _, f := range StateFields() {
		x, ok := st[f.Name]
		if !ok || x == nil {
			continue
		}
		if f.Lease {
			if steps >= 0 {
				f.check(x, steps, report)
			}
			continue
		}
		if !checkStateType(f, x, report) && steps >= 0 && f.Rule != "" {
			f.check(x, steps, report)
		}
	}
}

func (f StateField) check(x any, steps int, report func(field, msg string)) {
	stateRules[f.Rule].check(x, steps, func(sub, format string, args ...any) {
		report(f.Name+sub, fmt.Sprintf(format, args...))
	})
}

// checkStateType reports whether x does not decode into f's type, and
// says how.
func checkStateType(f StateField, x any, report func(field, msg string)) (bad bool) {
	b, err := json.Marshal(x)
	if err != nil {
		report(f.Name, err.Error())
		return true
	}
	err = json.NewDecoder(bytes.NewReader(b)).Decode(reflect.New(f.typ).Interface())
	var ute *json.UnmarshalTypeError
	switch {
	case err == nil:
		return false
	case errors.As(err, &ute) && ute.Field != "":
		report(f.Name+"."+ute.Field, fmt.Sprintf("must be %s, not a JSON %s", describeType(ute.Type), ute.Value))
	case errors.As(err, &ute) && ute.Type != f.typ && (f.typ.Kind() != reflect.Pointer || ute.Type != f.typ.Elem()):
		report(f.Name, fmt.Sprintf("holds a JSON %s where %s belongs", ute.Value, describeType(ute.Type)))
	case errors.As(err, &ute):
		report(f.Name, fmt.Sprintf("must be %s, not %s", describeType(f.typ), jsonKind(x)))
	default:
		report(f.Name, err.Error())
	}
	return true
}

func describeType(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Pointer:
		return describeType(t.Elem()) + " or null"
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Int64, reflect.Int32:
		return "an integer"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return t.String()
}

// typeWords is a Go type as the reference names a JSON type: integer,
// array of strings, string or null.
func typeWords(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Pointer:
		return typeWords(t.Elem()) + " or null"
	case reflect.String:
		return string(KindString)
	case reflect.Int, reflect.Int64:
		return string(KindInteger)
	case reflect.Float64:
		return string(KindNumber)
	case reflect.Bool:
		return string(KindBool)
	case reflect.Slice:
		return "array of " + typeWords(t.Elem()) + "s"
	case reflect.Map:
		return "object of " + typeWords(t.Elem()) + "s"
	}
	return string(KindObject)
}
