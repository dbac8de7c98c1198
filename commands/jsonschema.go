package commands

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/invopop/jsonschema"
	validator "github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/wo-runner/wo/procedure"
	"github.com/wo-runner/wo/procedure/action"
	"github.com/wo-runner/wo/procedure/ghevent"
	"github.com/wo-runner/wo/procedure/stack"
	"github.com/wo-runner/wo/procedure/undo"
	"github.com/wo-runner/wo/store"
	"github.com/wo-runner/wo/workorder"
)

// The shape of each command's --json data, as a JSON Schema generated from
// the Go types the command marshals. docs/json/ publishes them, wo help
// json prints them, and the tests check every command's real output
// against them, so a changed type changes its documented shape.

// dataShape is one form a command's data takes; a command with modes (wo
// run, its dry run, an epic) has one per mode.
type dataShape struct {
	// When says in which case the data has this shape.
	When string
	Type any
}

// dataShapes lists, by command, the shapes of its data. A failed command's
// data is null unless a shape says otherwise.
var dataShapes = map[string][]dataShape{
	"init":     {{"", initData{}}},
	"create":   {{"the task was created (or existed for the source event)", createData{}}, {"a task from parameters failed validation", createRefused{}}},
	"import":   {{"", importData{}}},
	"export":   {{"default: the tasks, as wo import reads them", []workorder.Task{}}, {"--format tasks-json", workorder.TasksFile{}}},
	"show":     {{"", showData{}}},
	"list":     {{"", []TaskRow{}}},
	"validate": {{"", []workorder.Report{}}},
	"run":      {{"a run", procedure.Result{}}, {"--dry-run: the plan", procedure.Plan{}}, {"--epic", procedure.EpicResult{}}, {"--github-event", ghevent.EventResult{}}},
	"reset":    {{"", resetOutcome{}}},
	"delete":   {{"", deleteOutcome{}}},
	"undo":     {{"a task", undo.Result{}}, {"--epic", undo.EpicResult{}}},
	"log":      {{"", []store.LogEntry{}}},
	"status":   {{"", []StatusRow{}}},
	"sync":     {{"", []stack.SyncResult{}}},
	"land":     {{"", stack.LandResult{}}},
	"event":    {{"", eventData{}}},
	"split":    {{"default", splitData{}}, {"--emit-matrix", splitMatrix{}}},
	"prompt":   {{"", action.PromptView{}}},
	"approve":  {{"", procedure.Result{}}},
	"revise":   {{"", procedure.Result{}}},
	"cancel":   {{"", procedure.Result{}}},
}

// JSONCommands are the commands with --json data, in order.
func JSONCommands() []string {
	names := make([]string, 0, len(dataShapes))
	for n := range dataShapes {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// documentTypes are the typed views of stored documents and everything
// they hold: a document carries fields wo does not read (a Persephone task
// has more), and what it must have is wo validate's to say, not the Go
// type's. Their objects allow other properties and require only
// documentRequired.
var documentTypes = sync.OnceValue(func() map[string]bool {
	out := map[string]bool{}
	for t := range structsOf(reflect.TypeFor[workorder.Task]()) {
		out[qualifiedName(t)] = true
	}
	return out
})

// documentRequired are the fields no document is without.
var documentRequired = map[string][]string{
	qualifiedName(reflect.TypeFor[workorder.Task]()): {"_key"},
	qualifiedName(reflect.TypeFor[workorder.Step]()): {"step", "action"},
}

// marshalledExtras are the fields a type's MarshalJSON adds to its struct's.
var marshalledExtras = map[reflect.Type][]reflect.StructField{
	reflect.TypeFor[workorder.Problem](): {{Name: "Step", Type: reflect.TypeFor[int](), Tag: `json:"step,omitempty"`}},
}

// schemaBase is where the published schemas live; a schema's $id is its
// file there, and their references to each other are relative.
const schemaBase = "https://github.com/wo-runner/wo/docs/json/"

// EventsSchemaName is the published schema of the progress events that wo
// run --json prints, one a line, before its envelope.
const EventsSchemaName = "run-events.schema.json"

func reflector() *jsonschema.Reflector {
	return &jsonschema.Reflector{
		Anonymous:        true,
		AdditionalFields: func(t reflect.Type) []reflect.StructField { return marshalledExtras[t] },
		Namer:            qualifiedName,
		Mapper:           mapType,
	}
}

// EnvelopeSchema is the JSON Schema of the --json envelope of the command,
// with the shapes of its data; false when the command prints no envelope.
func EnvelopeSchema(command string) ([]byte, bool) {
	shapes, ok := dataShapes[command]
	if !ok {
		return nil, false
	}
	r := reflector()
	defs := jsonschema.Definitions{}
	data := &jsonschema.Schema{AnyOf: []*jsonschema.Schema{{Type: "null", Description: "the command failed before it had data"}}}
	roots := []reflect.Type{reflect.TypeFor[Envelope]()}
	for _, s := range shapes {
		roots = append(roots, reflect.TypeOf(s.Type))
		one := r.Reflect(s.Type)
		maps.Copy(defs, one.Definitions)
		one.Definitions, one.Version = nil, ""
		if len(shapes) > 1 {
			one.Description = s.When
		}
		data.AnyOf = append(data.AnyOf, one)
	}
	env := r.Reflect(Envelope{})
	maps.Copy(defs, env.Definitions)
	envDef := defs[qualifiedName(reflect.TypeFor[Envelope]())]
	envDef.Properties.Set("data", data)
	envDef.Properties.Set("command", &jsonschema.Schema{Const: command})
	return published(command+".schema.json", "wo "+command+" --json",
		"The envelope that wo "+command+" --json prints on stdout.", env.Ref, defs, roots), true
}

// EventsSchema is the JSON Schema of one progress event of wo run --json.
func EventsSchema() []byte {
	s := reflector().Reflect(procedure.Event{})
	return published(EventsSchemaName, "wo run --json: a progress event",
		"One line of the progress events that wo run --json prints before its envelope.", s.Ref, s.Definitions,
		[]reflect.Type{reflect.TypeFor[procedure.Event]()})
}

// published is the text of a schema as docs/json holds it.
func published(name, title, description, ref string, defs jsonschema.Definitions, roots []reflect.Type) []byte {
	allowNull(defs, roots...)
	for name, d := range defs {
		if !documentTypes()[name] {
			continue
		}
		// A stored document writes what is not yet known as null, and
		// Persephone's tools do too.
		d.AdditionalProperties, d.Required = jsonschema.TrueSchema, documentRequired[name]
		for p := d.Properties.Oldest(); p != nil; p = p.Next() {
			if len(p.Value.AnyOf) == 0 {
				p.Value = &jsonschema.Schema{AnyOf: []*jsonschema.Schema{p.Value, {Type: "null"}}}
			}
		}
	}
	for t := range structsOf(roots...) {
		if d := defs[qualifiedName(t)]; d != nil {
			d.Required = slices.DeleteFunc(d.Required, func(name string) bool { return slices.Contains(maybeAbsent(t), name) })
		}
	}
	s := &jsonschema.Schema{Version: jsonschema.Version, ID: jsonschema.ID(schemaBase + name), Title: title,
		Description: description, Ref: ref, Definitions: defs}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		panic(fmt.Sprintf("the schema %s: %v", name, err)) // a type wo defines that JSON cannot hold
	}
	return append(b, '\n')
}

// qualifiedName names a definition by its package and type, as two
// packages have types of one name.
func qualifiedName(t reflect.Type) string {
	pkg := t.PkgPath()
	if i := strings.LastIndex(pkg, "/"); i >= 0 {
		pkg = pkg[i+1:]
	}
	if pkg == "" {
		return t.Name()
	}
	return pkg + "." + t.Name()
}

// TasksJSONSchemaName is the published file of the team tasks.json schema
// (wo export --format tasks-json), beside the commands' schemas.
const TasksJSONSchemaName = "tasks-json.schema.json"

// mapType gives the schemas of types whose JSON is not their struct's: a
// tasks.json file is written as it was imported, and its schema is its
// authors'.
func mapType(t reflect.Type) *jsonschema.Schema {
	if t == reflect.TypeFor[workorder.TasksFile]() {
		return &jsonschema.Schema{Ref: TasksJSONSchemaName, Description: "a team's tasks.json, as its authors' schema describes it"}
	}
	return nil
}

// allowNull lets each property that Go writes as null when empty (a nil
// pointer, slice or map without omitempty) be null.
func allowNull(defs jsonschema.Definitions, roots ...reflect.Type) {
	for t, fields := range nullFields(roots) {
		d := defs[qualifiedName(t)]
		if d == nil || d.Properties == nil {
			continue
		}
		for _, name := range fields {
			if p, ok := d.Properties.Get(name); ok && p.Type != "null" {
				d.Properties.Set(name, &jsonschema.Schema{AnyOf: []*jsonschema.Schema{p, {Type: "null"}}})
			}
		}
	}
}

// nullFields finds, in the structs the roots reach, the JSON names of the
// fields that encoding/json can write as null.
func nullFields(roots []reflect.Type) map[reflect.Type][]string {
	out := map[reflect.Type][]string{}
	for t := range structsOf(roots...) {
		for _, f := range jsonFields(t) {
			name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			switch f.Type.Kind() {
			case reflect.Pointer, reflect.Slice, reflect.Map: // an interface's schema takes null already
				if !slices.Contains(strings.Split(opts, ","), "omitempty") {
					out[t] = append(out[t], cmp.Or(name, f.Name))
				}
			}
		}
	}
	return out
}

// structsOf yields the struct types the roots reach through their JSON
// fields, including those a JSONSchemaProperty method stands in.
func structsOf(roots ...reflect.Type) iter.Seq[reflect.Type] {
	return func(yield func(reflect.Type) bool) {
		seen := map[reflect.Type]bool{}
		var walk func(t reflect.Type) bool
		walk = func(t reflect.Type) bool {
			for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
				t = t.Elem()
			}
			if t.Kind() != reflect.Struct || seen[t] {
				return true
			}
			seen[t] = true
			if !yield(t) {
				return false
			}
			alias, _ := reflect.New(t).Interface().(interface{ JSONSchemaProperty(string) any })
			for _, f := range jsonFields(t) {
				if !walk(f.Type) {
					return false
				}
				name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
				if a := alias; a != nil && a.JSONSchemaProperty(name) != nil && !walk(reflect.TypeOf(a.JSONSchemaProperty(name))) {
					return false
				}
			}
			return true
		}
		for _, r := range roots {
			if !walk(r) {
				return
			}
		}
	}
}

// maybeAbsent are the JSON names of the fields a struct takes from an
// embedded pointer, which are not written when it is nil.
func maybeAbsent(t reflect.Type) []string {
	var out []string
	for _, f := range jsonFields(t) {
		if len(f.Index) > 1 && t.Field(f.Index[0]).Type.Kind() == reflect.Pointer {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			out = append(out, cmp.Or(name, f.Name))
		}
	}
	return out
}

// jsonFields are the fields of a struct that encoding/json writes under
// their own name.
func jsonFields(t reflect.Type) []reflect.StructField {
	var out []reflect.StructField
	for _, f := range reflect.VisibleFields(t) {
		if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); f.IsExported() && name != "-" && !f.Anonymous {
			out = append(out, f)
		}
	}
	return out
}

// CheckOutput checks what a wo command printed on stdout with --json
// against the published schemas: each line of progress events (wo run),
// then one envelope, of the command the envelope names. Tests run it on
// every --json output they see; a tool that reads wo's output can too.
func CheckOutput(stdout []byte) error {
	schemas, err := compiledSchemas()
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(stdout))
	dec.UseNumber()
	var values []any
	for {
		var v any
		if err := dec.Decode(&v); err == io.EOF {
			break
		} else if err != nil {
			return fmt.Errorf("stdout is not JSON: %w", err)
		}
		values = append(values, v)
	}
	if len(values) == 0 {
		return errors.New("nothing on stdout")
	}
	last, _ := values[len(values)-1].(map[string]any)
	command, _ := last["command"].(string)
	envelope, known := schemas[command+".schema.json"]
	switch {
	case command == "":
		return errors.New("the last value on stdout is not an envelope: it names no command")
	case !known && last["data"] != nil:
		return fmt.Errorf("wo %s has data but no published schema", command)
	case !known:
		return nil // a usage error before any command: no data to check
	}
	for i, v := range values[:len(values)-1] {
		if err := schemas[EventsSchemaName].Validate(v); err != nil {
			return fmt.Errorf("wo %s --json: value %d on stdout is not a progress event: %w", command, i+1, err)
		}
	}
	if err := envelope.Validate(last); err != nil {
		return fmt.Errorf("wo %s --json: the envelope does not match %s.schema.json: %w", command, command, err)
	}
	return nil
}

// PublishedSchemas are the texts of docs/json/, by file name: each
// command's envelope, wo run's events and the tasks.json of wo export.
func PublishedSchemas() map[string][]byte {
	texts := map[string][]byte{EventsSchemaName: EventsSchema(), TasksJSONSchemaName: workorder.TasksJSONSchema()}
	for _, c := range JSONCommands() {
		texts[c+".schema.json"], _ = EnvelopeSchema(c)
	}
	return texts
}

// compiledSchemas are the published schemas, by file name, ready to
// validate with.
var compiledSchemas = sync.OnceValues(func() (map[string]*validator.Schema, error) {
	texts := PublishedSchemas()
	c := validator.NewCompiler()
	for name, text := range texts {
		doc, err := validator.UnmarshalJSON(bytes.NewReader(text))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if err := c.AddResource(schemaBase+name, doc); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	out := map[string]*validator.Schema{}
	for name := range texts {
		s, err := c.Compile(schemaBase + name)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		out[name] = s
	}
	return out, nil
})
