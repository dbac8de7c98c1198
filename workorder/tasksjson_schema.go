package workorder

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"math/big"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// The JSON Schema of a team's tasks.json, as its authors publish it; a copy
// lives in fixtures/ beside the other example files.
//
//go:embed tasks-json.schema.json
var tasksJSONSchemaText []byte

var tasksJSONSchema = sync.OnceValues(func() (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(string(tasksJSONSchemaText)))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	// created_at is read as a time, so "date-time" is a rule, not a hint.
	c.AssertFormat()
	const url = "team-tasks-schema.json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	return c.Compile(url)
})

var schemaPrinter = message.NewPrinter(language.English)

// schemaProblems validates a decoded tasks.json (numbers as json.Number)
// against the schema and lists every violation at its field path.
func schemaProblems(v any) ([]Problem, error) {
	sch, err := tasksJSONSchema()
	if err != nil {
		return nil, fmt.Errorf("the tasks.json schema does not compile: %w", err)
	}
	err = sch.Validate(v)
	if err == nil {
		return nil, nil
	}
	verr, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return nil, err
	}
	var probs []Problem
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		probs = append(probs, violation(v, e.InstanceLocation, e.ErrorKind)...)
	}
	walk(verr)
	sort.SliceStable(probs, func(i, j int) bool { return probs[i].Path < probs[j].Path })
	return probs, nil
}

// violation words one schema error for someone who edits the file.
func violation(doc any, loc []string, k jsonschema.ErrorKind) []Problem {
	at := func(extra ...string) string { return readablePath(doc, append(append([]string{}, loc...), extra...)) }
	one := func(format string, args ...any) []Problem {
		return []Problem{{Path: at(), Message: fmt.Sprintf(format, args...), Severity: SeverityError}}
	}
	switch k := k.(type) {
	case *kind.Required:
		var out []Problem
		for _, m := range k.Missing {
			out = append(out, Problem{Path: at(m), Message: "required", Severity: SeverityError})
		}
		return out
	case *kind.AdditionalProperties:
		var out []Problem
		for _, p := range k.Properties {
			out = append(out, Problem{Path: at(p), Message: "is not a field of tasks.json", Severity: SeverityError})
		}
		return out
	case *kind.Type:
		return one("must be %s, not %s", strings.Join(k.Want, " or "), k.Got)
	case *kind.Enum:
		want := make([]string, len(k.Want))
		for i, w := range k.Want {
			want[i] = jsonText(w)
		}
		return one("%s is not one of %s", jsonText(k.Got), strings.Join(want, ", "))
	case *kind.MaxLength:
		return one("is %d characters long; at most %d are allowed", k.Got, k.Want)
	case *kind.MinLength:
		return one("is %d characters long; at least %d are needed", k.Got, k.Want)
	case *kind.Minimum:
		return one("is %s; it must be at least %s", ratText(k.Got), ratText(k.Want))
	case *kind.Maximum:
		return one("is %s; it must be at most %s", ratText(k.Got), ratText(k.Want))
	case *kind.MaxItems:
		return one("has %d items; at most %d are allowed", k.Got, k.Want)
	case *kind.Pattern:
		return one("%q does not match the pattern %s", k.Got, k.Want)
	case *kind.Format:
		return one("%s is not a %s: %v", jsonText(k.Got), k.Want, k.Err)
	default:
		return one("%s", k.LocalizedString(schemaPrinter))
	}
}

var plainName = regexp.MustCompile(`^[A-Za-z0-9_\-]+$`)

// readablePath turns a JSON pointer's tokens into tasks.IMPL-001.deps[0]:
// array positions in brackets, names that would confuse in quotes.
func readablePath(doc any, tokens []string) string {
	var b strings.Builder
	cur := doc
	for _, t := range tokens {
		switch c := cur.(type) {
		case []any:
			b.WriteString("[" + t + "]")
			if i, err := strconv.Atoi(t); err == nil && i >= 0 && i < len(c) {
				cur = c[i]
			} else {
				cur = nil
			}
			continue
		case map[string]any:
			cur = c[t]
		default:
			cur = nil
		}
		switch {
		case !plainName.MatchString(t):
			b.WriteString("[" + strconv.Quote(t) + "]")
		case b.Len() > 0:
			b.WriteString("." + t)
		default:
			b.WriteString(t)
		}
	}
	if b.Len() == 0 {
		return "(top level)"
	}
	return b.String()
}

func ratText(r *big.Rat) string {
	f, _ := r.Float64()
	return strconv.FormatFloat(f, 'g', -1, 64)
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// TasksJSONSchema is the JSON Schema of a team's tasks.json, as published.
func TasksJSONSchema() []byte { return slices.Clone(tasksJSONSchemaText) }
