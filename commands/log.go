package commands

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/wo-runner/wo/store"
	"github.com/wo-runner/wo/termtext"
	"github.com/wo-runner/wo/workorder"
)

func newLogCommand(f *Factory) *cli.Command { return logCommand(f, runLog) }

// logOptions are what wo log is asked.
type logOptions struct {
	Store   StoreConfig
	Key     string
	Verbose bool
	Wide    bool // every value whole, whatever the width
}

func logCommand(f *Factory, run func(context.Context, *Factory, *logOptions) (result, error)) *cli.Command {
	return &cli.Command{
		Name:      "log",
		Usage:     "show a task's activity timeline",
		ArgsUsage: "KEY",
		Description: `Prints the task's persephone_logs entries, oldest first, one line each:
time, step, action, outcome, duration and a note (each step run, failure,
wait, reset and creation). --verbose prints every detail of each entry and
the runner that wrote it; --json the entries as stored.

The timeline fits the terminal ($COLUMNS, else the terminal's width, else
80): the note is cut (…), and --verbose wraps the details instead; --wide
prints every line whole.`,
		Flags: append(storeFlags(),
			&cli.BoolFlag{Name: "verbose", Usage: "every detail of each entry, and the runner that wrote it"},
			wideFlag(),
		),
		Action: f.action(func(c *cli.Context) (result, error) {
			opts, err := logOptionsFrom(c, f)
			if err != nil {
				return result{}, err
			}
			return run(c.Context, f, opts)
		}),
	}
}

// logOptionsFrom reads the flags.
func logOptionsFrom(c *cli.Context, f *Factory) (*logOptions, error) {
	key, err := oneArg(c, "task KEY")
	if err != nil {
		return nil, err
	}
	return &logOptions{Store: f.storeConfig(c), Key: key, Verbose: c.Bool("verbose"), Wide: c.Bool("wide")}, nil
}

func runLog(ctx context.Context, f *Factory, o *logOptions) (result, error) {
	var entries []store.LogEntry
	err := f.useStore(ctx, readOnly(o.Store), func(s store.Store) error {
		_, missing := s.Get(ctx, o.Key)
		if missing != nil && !store.IsNotFound(missing) {
			return missing
		}
		var err error
		if entries, err = s.Logs(ctx, o.Key); err != nil {
			return err
		}
		if missing != nil && len(entries) == 0 {
			return missing // no such task, and never was one
		}
		return nil // a deleted task's history outlives it
	})
	if err != nil {
		return result{}, err
	}
	if entries == nil {
		entries = []store.LogEntry{}
	}
	write := writeLog
	if o.Verbose {
		write = writeLogVerbose
	}
	width := f.textWidth(o.Wide)
	return result{data: entries, human: func(w io.Writer) error { return write(w, entries, width) }}, nil
}

// stepOutcomes name what a step's log entry says happened to it.
var stepOutcomes = map[string]string{
	"step_started":           "started",
	"step_completed":         "ok",
	"step_failed":            "failed",
	"step_retries_exhausted": "gave up",
	"step_interrupted":       "interrupted",
	"run_waiting":            "waiting",
	"approval_requested":     "approval required",
}

// noteKeys are the details that say in words what happened, the first
// present one is the entry's note.
var noteKeys = []string{"note", "error", "reason", "message", "status"}

// logLine is one entry of the compact timeline.
type logLine struct {
	step, action, outcome, duration, note string
}

func compactEntry(e store.LogEntry) logLine {
	d := e.Details
	l := logLine{step: "-", action: e.Action, outcome: "-", duration: "-"}
	shown := map[string]bool{"repo": true} // the same on every line: under --verbose
	if v, ok := d["step"]; ok {
		l.step = plainValue(v)
		shown["step"] = true
	}
	if outcome, ok := stepOutcomes[e.Action]; ok {
		if a, ok := d["action"].(string); ok && a != "" {
			l.action = a
			shown["action"] = true
		}
		l.outcome = outcome
	}
	if o, ok := d["outcome"].(string); ok && o != "" {
		l.outcome = o
		shown["outcome"] = true
	}
	switch e.Action {
	case "step_failed":
		if n, ok := workorder.AsInt(d["attempt"]); ok {
			l.outcome = fmt.Sprintf("failed (attempt %d)", n)
			shown["attempt"] = true
		}
	case "step_retries_exhausted":
		if n, ok := workorder.AsInt(d["attempts"]); ok {
			l.outcome = fmt.Sprintf("gave up after %d", n)
			shown["attempts"] = true
		}
	case "run_finished":
		if st, ok := d["status"].(string); ok && st != "" {
			l.outcome = st // the task's status after the run
			shown["status"] = true
		}
	case "approval_requested":
		shown["plan"] = true // many lines: under --verbose
	case "agent_finished":
		// Its output is long: under --verbose. The line says who ran, how
		// it ended, what it said and what it cost.
		for _, k := range []string{"stdout", "stderr", "work_log", "exit_code", "signal", "stopped_by", "failure", "tokens", "turns", "cost_usd", "agent", "message", "error"} {
			shown[k] = true
		}
		l.note = agentLogNote(d)
	}
	if ms, ok := workorder.AsInt(d["duration_ms"]); ok {
		l.duration = formatDuration(time.Duration(ms) * time.Millisecond)
		shown["duration_ms"] = true
	}
	if l.note == "" {
		l.note = noteOf(d, shown)
	}
	return l
}

// noteOf is a log line's note: the first of noteKeys the details hold
// that the line does not show already, else every detail not shown.
func noteOf(d map[string]any, shown map[string]bool) string {
	for _, k := range noteKeys {
		if v, ok := d[k]; ok && !shown[k] && v != nil && plainValue(v) != "" {
			if note := clipRunes(termtext.Line(plainValue(v)), 100); note != "" {
				return note
			}
			shown[k] = true
			break
		}
	}
	rest := map[string]any{}
	for k, v := range d {
		if !shown[k] {
			rest[k] = v
		}
	}
	return details(rest)
}

// agentLogNote is an agent run's line: the agent, its failure, its cost,
// how it ended (its exit status, or who stopped it) and its words.
func agentLogNote(d map[string]any) string {
	agent, _ := d["agent"].(string)
	parts := []string{cmp.Or(agent, "agent")}
	if f, _ := d["failure"].(string); f != "" {
		parts = append(parts, f)
	}
	if c := number(d["cost_usd"]); c > 0 {
		parts = append(parts, fmt.Sprintf("$%.4f", c))
	}
	if n, ok := workorder.AsInt(d["tokens"]); ok && n > 0 {
		parts = append(parts, fmt.Sprintf("%d tokens", n))
	}
	if n, ok := workorder.AsInt(d["exit_code"]); ok && n != 0 {
		parts = append(parts, fmt.Sprintf("exit %d", n))
	}
	if by, _ := d["stopped_by"].(string); by != "" {
		parts = append(parts, "stopped by "+by)
	}
	note := strings.Join(parts, ", ")
	for _, k := range []string{"error", "message"} {
		if v, _ := d[k].(string); v != "" {
			note += ": " + v
			break
		}
	}
	return clipRunes(termtext.Line(note), 100)
}

// formatDuration is short: 45ms, 1.2s, 2m5s.
func formatDuration(d time.Duration) string {
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	default:
		return d.Round(time.Second).String()
	}
}

func clipRunes(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-3]) + "..."
	}
	return s
}

// writeLog prints the compact timeline: one line per entry, within width
// (0: no limit), the note cut.
func writeLog(w io.Writer, entries []store.LogEntry, width int) error {
	if len(entries) == 0 {
		_, err := fmt.Fprintln(w, "no activity")
		return err
	}
	t := &termtext.Table{Columns: []termtext.Column{{Header: "TIME"}, {Header: "STEP"}, {Header: "ACTION"}, {Header: "OUTCOME"},
		{Header: "DURATION", Drop: 1}, {Header: "NOTE", Give: 1, Min: 20}}}
	for _, e := range entries {
		l := compactEntry(e)
		t.Rows = append(t.Rows, []string{e.CreatedAt.Format(logTime), l.step, l.action, l.outcome, l.duration, l.note})
	}
	return writeTable(w, t, width)
}

// logTime is how the timeline writes a time.
const logTime = "2006-01-02 15:04:05Z07:00"

// writeLogVerbose prints every detail of each entry and who wrote it; the
// details wrap to the width (0: no limit).
func writeLogVerbose(w io.Writer, entries []store.LogEntry, width int) error {
	if len(entries) == 0 {
		_, err := fmt.Fprintln(w, "no activity")
		return err
	}
	t := &termtext.Table{Columns: []termtext.Column{{Header: "TIME"}, {Header: "ACTION"}, {Header: "BY", Give: 1, Min: 12},
		{Header: "DETAILS", Give: 2, Min: 30, Wrap: true}}}
	for _, e := range entries {
		t.Rows = append(t.Rows, []string{e.CreatedAt.Format(logTime), e.Action, e.SessionKey, details(e.Details)})
	}
	return writeTable(w, t, width)
}

// writeTable writes a table within width, and which columns it left out.
func writeTable(w io.Writer, t *termtext.Table, width int) error {
	text, hidden := t.Render(width)
	var b strings.Builder
	b.WriteString(text)
	writeHidden(&b, hidden, width)
	_, err := io.WriteString(w, b.String())
	return err
}

// details prints a log entry's details as key=value, the step first.
func details(d map[string]any) string {
	keys := make([]string, 0, len(d))
	for k := range d {
		if k == "stdout" || k == "stderr" {
			continue
		}
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i] == "step" || keys[j] == "step" {
			return keys[i] == "step"
		}
		return keys[i] < keys[j]
	})
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		v := plainValue(d[k])
		if d[k] == nil || v == "" {
			continue
		}
		// Details hold review comments and agent output: escape, then cut.
		v = termtext.Line(v)
		if r := []rune(v); len(r) > 120 {
			v = string(r[:117]) + "..."
		}
		parts = append(parts, termtext.Line(k)+"="+v)
	}
	return strings.Join(parts, " ")
}
