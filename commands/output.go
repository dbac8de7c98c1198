package commands

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/itchyny/gojq"
	"github.com/urfave/cli/v2"

	"github.com/wo-runner/wo/termtext"
	"github.com/wo-runner/wo/workorder"
)

// Envelope is the one shape of --json output, as Persephone's CLI prints.
type Envelope struct {
	Success  bool             `json:"success"`
	Command  string           `json:"command"`
	Data     any              `json:"data"`
	Error    *EnvelopeError   `json:"error"`
	Metadata EnvelopeMetadata `json:"metadata"`
}

// EnvelopeMetadata says which wo answered, when, how long it took and with
// which exit code.
type EnvelopeMetadata struct {
	WoVersion string `json:"wo_version"`
	// Timestamp is when the command ended, in RFC 3339 UTC.
	Timestamp  string `json:"timestamp"`
	DurationMS int64  `json:"duration_ms"`
	ExitCode   int    `json:"exit_code"`
	// Store names the store the command used (never with a password).
	Store string `json:"store,omitempty"`
}

// EnvelopeError is the error part of the envelope.
type EnvelopeError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Details any    `json:"details,omitempty"`
}

// result is what a command hands back for printing: the data for --json and
// a function that writes the human view.
type result struct {
	data  any
	human func(w io.Writer) error
	// compact prints the --json envelope on one line, after NDJSON events.
	compact bool
	// always prints the human view even when the command failed (an epic
	// run's table says which task failed).
	always bool
}

// output is the form a command prints its outcome in.
type output struct {
	json bool
	// jq filters the envelope (--jq), which implies json.
	jq *gojq.Code
}

// printResult writes the command's outcome to stdout (data) and stderr
// (errors), once, in the requested form.
func printResult(f *Factory, name string, out output, started time.Time, storeName string, res result, err error) int {
	exit, code := classify(err)
	if out.json || out.jq != nil {
		return printEnvelope(f, name, out, started, storeName, res, err)
	}
	if err != nil {
		if res.always && res.human != nil {
			res.human(f.Stdout)
		}
		prog := strings.TrimSpace("wo " + name)
		fmt.Fprintf(f.Stderr, "%s: %s\n", prog, termtext.Block(clipLines(err.Error())))
		if code == "USAGE" {
			fmt.Fprintf(f.Stderr, "Run '%s --help' for usage.\n", prog)
		}
		return exit
	}
	if res.human != nil {
		if werr := res.human(f.Stdout); werr != nil {
			fmt.Fprintln(f.Stderr, "wo: writing output:", werr)
			return ExitFailed
		}
	}
	return exit
}

// printEnvelope writes the result as the JSON envelope (or what --jq
// makes of it) and returns the exit code.
func printEnvelope(f *Factory, name string, out output, started time.Time, storeName string, res result, err error) int {
	exit, code := classify(err)
	env := Envelope{
		Success: err == nil,
		Command: cmp.Or(name, "wo"),
		Data:    res.data,
		Metadata: EnvelopeMetadata{
			WoVersion:  versionString(),
			Timestamp:  workorder.Timestamp(time.Now()),
			DurationMS: time.Since(started).Milliseconds(),
			ExitCode:   exit,
			Store:      storeName,
		},
	}
	if err != nil {
		env.Error = &EnvelopeError{Code: code, Message: clipLines(err.Error()), Details: errorDetails(err)}
	}
	var werr error
	if out.jq != nil {
		if jqErr := printJQ(f.Stdout, out.jq, env); jqErr != nil {
			fmt.Fprintf(f.Stderr, "wo %s: --jq: %s\n", name, termtext.Line(jqErr.Error()))
			return cmp.Or(exit, ExitInvalid)
		}
		if err != nil {
			fmt.Fprintf(f.Stderr, "wo %s: %s\n", name, termtext.Block(clipLines(err.Error())))
		}
		return exit
	}
	if res.compact {
		var b []byte
		if b, werr = json.Marshal(env); werr == nil {
			_, werr = fmt.Fprintln(f.Stdout, string(b))
		}
	} else {
		werr = workorder.Encode(f.Stdout, env)
	}
	if werr != nil {
		fmt.Fprintln(f.Stderr, "wo: writing output:", werr)
		return ExitFailed
	}
	return exit
}

// maxMessageLine bounds each line of an error message: messages quote
// untrusted values, and one of megabytes must not be echoed whole.
const maxMessageLine = 2000

func clipLines(msg string) string {
	if len(msg) <= maxMessageLine {
		return msg
	}
	lines := strings.Split(msg, "\n")
	for i, l := range lines {
		lines[i] = termtext.Clip(l, maxMessageLine)
	}
	return strings.Join(lines, "\n")
}

// errorDetails gives machine-readable details for errors that have them.
func errorDetails(err error) any {
	if inv, ok := asInvalid(err); ok {
		return inv.Reports
	}
	var notHere *cannotRunHereError
	if errors.As(err, &notHere) {
		return notHere.Reports
	}
	if se, ok := asSyntax(err); ok {
		return map[string]any{"source": se.Source, "line": se.Line, "column": se.Column}
	}
	return nil
}

func asInvalid(err error) (*workorder.InvalidError, bool) {
	var inv *workorder.InvalidError
	ok := errors.As(err, &inv)
	return inv, ok
}

func asSyntax(err error) (*workorder.SyntaxError, bool) {
	var se *workorder.SyntaxError
	ok := errors.As(err, &se)
	return se, ok
}

// parseJQ compiles a --jq expression, or says why it is not one.
func parseJQ(expr string) (*gojq.Code, error) {
	if expr == "" {
		return nil, nil
	}
	q, err := gojq.Parse(expr)
	if err != nil {
		return nil, usagef(fmt.Sprintf("--jq %q: %v", expr, err))
	}
	code, err := gojq.Compile(q)
	if err != nil {
		return nil, usagef(fmt.Sprintf("--jq %q: %v", expr, err))
	}
	return code, nil
}

// printJQ prints what a jq expression makes of the envelope, one result a
// line: strings as they are, other values as indented JSON (as gh --jq).
func printJQ(w io.Writer, code *gojq.Code, env Envelope) error {
	b, err := json.Marshal(env)
	if err != nil {
		return err
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	iter := code.Run(v)
	for {
		x, ok := iter.Next()
		if !ok {
			return nil
		}
		if err, isErr := x.(error); isErr {
			var halt *gojq.HaltError
			if errors.As(err, &halt) && halt.Value() == nil {
				return nil
			}
			return err
		}
		if s, isString := x.(string); isString {
			fmt.Fprintln(w, s)
			continue
		}
		if err := workorder.Encode(w, x); err != nil {
			return err
		}
	}
}

// oneOutput refuses a --format that is not the plain one together with
// --json or --jq: each asks for the whole of stdout, and quietly printing
// one of them would leave the user wondering where the other went.
func oneOutput(c *cli.Context, flag, plain string) error {
	v := c.String(flag)
	if v == plain || !c.Bool("json") && c.String("jq") == "" {
		return nil
	}
	other := "--json"
	if !c.Bool("json") {
		other = "--jq"
	}
	return usagef(fmt.Sprintf("--%s %s and %s both ask for the output: give one of them", flag, v, other))
}
