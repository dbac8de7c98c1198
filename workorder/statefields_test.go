package workorder

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// Every field of State is described once, by its tags: a JSON name, what
// it means, a type the reference can word, and only rules that exist.
func TestEveryStateFieldIsDescribedOnce(t *testing.T) {
	groups, err := describeState(reflect.TypeFor[State]())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	leaves := 0
	for _, g := range groups {
		if g.Title == "" || g.Doc == "" || len(g.Fields) == 0 {
			t.Errorf("group %s: title %q, doc %q, %d fields", g.Name, g.Title, g.Doc, len(g.Fields))
		}
		for _, f := range g.Fields {
			names = append(names, f.Name)
			if f.Doc == "" || f.Type() == "" || strings.Contains(f.Type(), ".") {
				t.Errorf("%s: doc %q, type %q", f.Name, f.Doc, f.Type())
			}
		}
	}
	for _, f := range reflect.VisibleFields(reflect.TypeFor[State]()) {
		if !f.Anonymous {
			leaves++
		}
	}
	if len(names) != leaves {
		t.Errorf("%d fields described, State has %d", len(names), leaves)
	}
	// What a document holds is what is described: a state with every
	// field set marshals to exactly the described names.
	var full State
	v := reflect.ValueOf(&full).Elem()
	for _, f := range reflect.VisibleFields(v.Type()) {
		if !f.Anonymous {
			setNonZero(v.FieldByIndex(f.Index))
		}
	}
	b, _ := json.Marshal(full)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	slices.Sort(names)
	if !slices.Equal(keys, names) {
		t.Errorf("a full state holds %v, the description names %v", keys, names)
	}
}

// setNonZero gives a field a value that JSON does not omit.
func setNonZero(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		v.SetMapIndex(reflect.ValueOf("1"), reflect.Zero(v.Type().Elem()))
	case reflect.String:
		v.SetString("x")
	case reflect.Int, reflect.Int64:
		v.SetInt(1)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Struct:
		setNonZero(v.Field(0))
	}
}

func TestAStateFieldDescribedBadlyIsRefusedNamingIt(t *testing.T) {
	type good struct {
		A int `json:"a" doc:"A."`
	}
	type twoRules struct {
		B int `json:"b" wo:"count,positive" doc:"B."`
	}
	type noDoc struct {
		C int `json:"c"`
	}
	type noName struct {
		D int `doc:"D."`
	}
	type unknownRule struct {
		E int `json:"e" wo:"later,postive" doc:"E."`
	}
	type Good struct {
		A int `json:"a" doc:"A."`
	}
	type Dup struct {
		A int `json:"a" doc:"A again."`
	}
	// Built by reflect: vet rightly refuses to compile a repeated tag.
	dup := reflect.StructOf([]reflect.StructField{
		{Name: "Good", Type: reflect.TypeFor[Good](), Anonymous: true, Tag: `title:"G" doc:"G."`},
		{Name: "Dup", Type: reflect.TypeFor[Dup](), Anonymous: true, Tag: `title:"H" doc:"H."`},
	})
	for _, c := range []struct {
		t    reflect.Type
		want string
	}{
		{reflect.TypeFor[struct {
			good `title:"Good" doc:"Good."`
			X    int `json:"x" doc:"X."`
		}](), "state field X is in no group"},
		{reflect.TypeFor[struct{ good }](), "state group good needs a title and a doc tag"},
		{reflect.TypeFor[struct {
			twoRules `title:"G" doc:"G."`
		}](), "state field b names two rules, count and positive"},
		{reflect.TypeFor[struct {
			noDoc `title:"G" doc:"G."`
		}](), "state field c has no doc tag"},
		{reflect.TypeFor[struct {
			noName `title:"G" doc:"G."`
		}](), "state field D has no JSON name"},
		{reflect.TypeFor[struct {
			unknownRule `title:"G" doc:"G."`
		}](), `state field e: wo tag option "postive" is not later or a rule (count, lease, positive, step, steps, version)`},
		{dup, "state field a is described twice"},
	} {
		_, err := describeState(c.t)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.t, err, c.want)
		}
	}
	if g, err := describeState(reflect.TypeFor[struct {
		good `title:"Good" doc:"Good."`
	}]()); err != nil || len(g) != 1 || g[0].Fields[0].Name != "a" {
		t.Errorf("a well described state: %+v, %v", g, err)
	}
}

func TestStateFieldTypesAndRulesInWords(t *testing.T) {
	byName := map[string]StateField{}
	for _, f := range StateFields() {
		byName[f.Name] = f
	}
	for name, want := range map[string]string{
		"current_step":      "integer",
		"completed_steps":   "array of integers",
		"notes":             "array of strings",
		"pr_url":            "string or null",
		"lease":             "object or null",
		"step_durations_ms": "object of integers",
		"reviewers":         "array of objects",
		"fix_requested":     "boolean",
		"review_watermark":  "object",
		"phase":             "string",
	} {
		if got := byName[name].Type(); got != want {
			t.Errorf("%s is %q, want %q", name, got, want)
		}
	}
	if got := byName["current_step"].Rules(); got != "From 0 (not started) to the last step." {
		t.Errorf("current_step's rule reads %q", got)
	}
	if got := byName["notes"].Rules(); got != "" {
		t.Errorf("notes has no rule, yet reads %q", got)
	}
	if !byName["lease"].Lease || byName["pr_number"].Lease || !byName["pr_number"].Later || byName["pushed_at"].Later {
		t.Error("the lease and later flags are not as the tags say")
	}
}

// A document that is not a work order has no steps to hold its state to:
// its types are checked, its rules are not.
func TestAStateWithoutAProcedureIsCheckedForTypesOnly(t *testing.T) {
	var got []string
	checkState(map[string]any{"current_step": json.Number("7"), "pr_number": json.Number("0"), "lease": "nobody",
		"notes": "not a list"}, -1, func(field, msg string) { got = append(got, field+": "+msg) })
	if want := []string{"notes: must be an array, not a string"}; !slices.Equal(got, want) {
		t.Errorf("problems %v, want %v", got, want)
	}
	got = nil
	checkState(map[string]any{"lease": "nobody"}, 3, func(field, msg string) { got = append(got, field+": "+msg) })
	if want := []string{"lease: must be an object, not a string"}; !slices.Equal(got, want) {
		t.Errorf("problems %v, want %v", got, want)
	}
	// A procedure of no steps is still one: the rules hold.
	got = nil
	checkState(map[string]any{"pr_number": json.Number("0"), "lease": map[string]any{"holder": "r"}}, 0,
		func(field, msg string) { got = append(got, field+": "+msg) })
	slices.Sort(got)
	if want := []string{"lease.expires_at: must be an RFC 3339 time", "pr_number: must be a positive integer, not 0"}; !slices.Equal(got, want) {
		t.Errorf("problems with no steps %v, want %v", got, want)
	}
	// Through Validate: an epic's state, which wo keeps without a work
	// order, is held to its types only.
	epic := Document{"_key": "task_ep", "type": "epic", "title": "The epic", "status": "open",
		"description": "An epic of stacked review pull requests",
		"work_order":  map[string]any{"state": map[string]any{"current_step": json.Number("4"), "pr_number": json.Number("0")}}}
	if r := Validate(epic, Options{}); !r.Valid() {
		t.Errorf("an epic's state was held to steps it has not: %v", r.Errors())
	}
}

func TestForgetClearsAnyField(t *testing.T) {
	s := NewState()
	s.PRNumber, s.Land = 7, &Land{Method: "squash"}
	if unknown := s.Forget("version", "land", "pr_number"); len(unknown) != 0 || s.Version != 0 || s.Land != nil || s.PRNumber != 0 {
		t.Errorf("forgetting the first, the last and a middle field: %+v, unknown %v", s, unknown)
	}
}

// A stored state of the wrong type is named by its path in the document,
// as wo validate names it, never by the Go groups it is decoded into: wo
// sync, land and delete read states they did not validate first.
func TestStateOfNamesAMistypedFieldByItsDocumentPath(t *testing.T) {
	for _, c := range []struct {
		state any
		want  string
	}{
		{map[string]any{"current_step": "x"}, "task task_x: work_order.state.current_step: must be"},
		{map[string]any{"pr_number": []any{1}}, "task task_x: work_order.state.pr_number: must be"},
		{map[string]any{"land": map[string]any{"merged": "yes"}}, "task task_x: work_order.state.land.merged: must be"},
		{"started", "task task_x: work_order.state: must be an object, not a string"},
	} {
		doc := Document{"_key": "task_x", "work_order": map[string]any{"state": c.state}}
		_, err := StateOf(doc)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("StateOf(%v) = %v, want it to start %q", c.state, err, c.want)
			continue
		}
		for _, inner := range []string{"RunState", "PullRequestState", "StackState", "Go struct"} {
			if strings.Contains(err.Error(), inner) {
				t.Errorf("StateOf(%v) = %v: names the Go type %s", c.state, err, inner)
			}
		}
	}
}
