package commands

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/wo-runner/wo/internal/statusline"
	"github.com/wo-runner/wo/procedure"
	"github.com/wo-runner/wo/termtext"
)

// progressEveryEnv sets how often a wait's plain line is printed when
// stderr is no terminal (a CI log, a file); 0 shows no wait at all.
const progressEveryEnv = "WO_PROGRESS_INTERVAL"

// defaultProgressEvery is a line a minute: a 25-minute review wait is 25
// lines in a CI log, enough to see it is alive and what it waits for.
const defaultProgressEvery = time.Minute

// leastProgressEvery is the shortest interval WO_PROGRESS_INTERVAL takes:
// a shorter one (1ns, or 1ms typed for 1m) ticks without rest and fills
// the log with a line each tick.
const leastProgressEvery = 100 * time.Millisecond

// progressEvery reads WO_PROGRESS_INTERVAL.
func progressEvery(f *Factory) (time.Duration, error) {
	v := strings.TrimSpace(f.Getenv(progressEveryEnv))
	if v == "" {
		return defaultProgressEvery, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 || (d > 0 && d < leastProgressEvery) {
		return 0, usagef(fmt.Sprintf("%s=%q: give a duration such as 1m or 30s (at least %s), or 0 to show no waits", progressEveryEnv, v, leastProgressEvery))
	}
	return d, nil
}

// progress prints engine events: a line per step on stderr; on a
// terminal, a status line redrawn each second that says what a step waits
// for (or how long it has run); elsewhere a wait's plain line every
// progressEvery. With --json it prints each event but the waits as NDJSON
// on stdout, and nothing on stderr.
type progress struct {
	f        *Factory
	withKeys bool // several tasks at once: prefix lines with the key
	json     bool
	tty      bool
	every    time.Duration // a wait's plain line; 0: no wait is shown
	now      func() time.Time
	line     *statusline.Line // on a terminal
	mu       sync.Mutex
	current  string // the step that runs, with !withKeys
	started  time.Time
	count    string // how far it is (step_progress)
	waits    map[string]*shownWait
	ticker   *time.Ticker
	done     chan struct{}
	stopped  sync.WaitGroup
}

// shownWait is a step's wait as last reported, and when its plain line
// was last printed.
type shownWait struct {
	statusline.Wait
	key     string
	printed time.Time
}

func newProgress(f *Factory, o *runOptions) *progress {
	p := &progress{f: f, json: o.JSON, every: o.ProgressEvery, now: time.Now, waits: map[string]*shownWait{}, done: make(chan struct{})}
	if p.json {
		return p
	}
	var tick time.Duration
	if file, ok := f.Stderr.(*os.File); ok && term.IsTerminal(int(file.Fd())) && f.Getenv("TERM") != "dumb" {
		// A dumb terminal cannot clear a line: it gets the plain lines.
		p.tty, tick = true, time.Second
		p.line = statusline.NewLine(f.Stderr, func() int {
			w, _, err := term.GetSize(int(file.Fd()))
			if err != nil {
				return 0
			}
			return w
		})
	} else if p.every > 0 {
		tick = min(p.every, time.Second)
	}
	if tick > 0 {
		p.ticker = time.NewTicker(tick)
		p.stopped.Add(1)
		go p.tick()
	}
	return p
}

func (p *progress) tick() {
	defer p.stopped.Done()
	for {
		select {
		case <-p.done:
			return
		case <-p.ticker.C:
			p.mu.Lock()
			if p.tty {
				p.redraw()
			} else {
				p.printWaits(false)
			}
			p.mu.Unlock()
		}
	}
}

// stop ends the ticks and takes the status line away, before the result
// is printed.
func (p *progress) stop() {
	if p.ticker != nil {
		p.ticker.Stop()
		close(p.done)
		p.stopped.Wait()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.line != nil {
		p.line.Clear()
	}
}

// redraw shows on the status line what a step waits for, else the step
// that runs and for how long.
func (p *progress) redraw() {
	now := p.now()
	if w := p.firstWait(); w != nil {
		text := w.Text(now)
		if n := len(p.waits); n > 1 {
			text = fmt.Sprintf("(%d waiting) %s", n, text)
		}
		p.line.Show(text)
		return
	}
	if p.current != "" {
		p.line.Show(fmt.Sprintf("  %s … %s%s", p.current, now.Sub(p.started).Round(time.Second), p.count))
	}
}

// firstWait is the wait the status line shows: the task's, or of several
// the one whose key comes first.
func (p *progress) firstWait() *shownWait {
	var first *shownWait
	for _, w := range p.waits {
		if first == nil || w.key < first.key {
			first = w
		}
	}
	return first
}

// printWaits prints each wait's plain line that is due: one every
// p.every, or any not printed yet.
func (p *progress) printWaits(onlyNew bool) {
	now := p.now()
	keys := make([]string, 0, len(p.waits))
	for k := range p.waits {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		w := p.waits[k]
		if w.printed.IsZero() || (!onlyNew && now.Sub(w.printed) >= p.every) {
			fmt.Fprintf(p.f.Stderr, "  %s\n", w.Text(now))
			w.printed = now
		}
	}
}

// println prints a line of its own, the status line taken away first (the
// next tick draws it again).
func (p *progress) println(format string, args ...any) {
	if p.line != nil {
		p.line.Clear()
	}
	fmt.Fprintf(p.f.Stderr, format+"\n", args...)
}

// wait keeps what a step waits for, shown from the next tick (a new one
// at once); nil ends the task's wait.
func (p *progress) wait(ev procedure.Event, label string) {
	if ev.Wait == nil || p.every == 0 {
		delete(p.waits, ev.Key)
		return
	}
	secrets := p.f.secrets()
	w, known := p.waits[ev.Key]
	if !known {
		w = &shownWait{key: ev.Key}
		p.waits[ev.Key] = w
	}
	w.Wait = statusline.Wait{Label: label, For: secrets.String(ev.Wait.For), Last: secrets.String(ev.Wait.Last),
		Since: ev.Wait.Since, Until: ev.Wait.Until, NextLook: ev.Wait.NextLook}
	switch {
	case known:
	case p.tty:
		p.redraw()
	default:
		p.printWaits(true)
	}
}

func (p *progress) event(ev procedure.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	secrets := p.f.secrets()
	ev.Error, ev.Note = secrets.String(ev.Error), secrets.String(ev.Note)
	if p.json {
		if ev.Type != "step_waiting" { // for a person watching: --json shows no wait
			b, _ := json.Marshal(ev)
			fmt.Fprintln(p.f.Stdout, string(b))
		}
		return
	}
	label := p.escapeAndLabel(&ev)
	switch ev.Type {
	case "run_started":
		p.println("%s: running from step %d of %d", ev.Key, ev.Step, ev.Steps)
	case "step_started":
		if !p.withKeys {
			p.current, p.started, p.count = label, p.now(), ""
		}
	case "step_progress":
		if !p.withKeys {
			p.count = fmt.Sprintf(" %d/%d", ev.Done, ev.Total)
		}
		if p.tty && len(p.waits) == 0 {
			p.redraw()
		}
	case "step_waiting":
		p.wait(ev, label)
	case "step_note":
		p.println("  %s: %s", label, ev.Note)
	case "step_retry":
		p.println("  step %d %s: %s; retrying in %s", ev.Step, ev.Action, ev.Error, ev.Duration.Round(time.Millisecond))
	case "step_finished":
		p.current = ""
		p.println("  %s  ok  %s  %s", label, ev.Duration.Round(time.Millisecond), ev.Note)
	case "step_failed":
		p.current = ""
		p.println("  step %d %s  %s", ev.Step, ev.Action, strings.ToUpper(ev.Outcome))
	case "run_waiting":
		p.current = ""
		p.println("  step %d %s  waiting", ev.Step, ev.Action)
	case "task_elsewhere":
		p.println("%s: another runner holds it; waiting for it to finish", ev.Key)
	case "run_finished":
		p.println("%s: %s", ev.Key, ev.Outcome)
	case "log_failed", "warning":
		p.println("warning: %s", ev.Error) // it says what was not written
	}
}

// escapeAndLabel escapes what the event carries from documents, servers
// and review comments before it reaches the terminal, forgets the task's
// wait when the event ends it, and returns the step's label.
func (p *progress) escapeAndLabel(ev *procedure.Event) string {
	ev.Key, ev.Action, ev.Note, ev.Error = termtext.Line(ev.Key), termtext.Line(ev.Action), termtext.Line(ev.Note), termtext.Line(ev.Error)
	ev.Outcome = termtext.Line(ev.Outcome)
	switch ev.Type {
	case "step_finished", "step_failed", "run_waiting", "run_finished":
		delete(p.waits, ev.Key)
	}
	label := fmt.Sprintf("%d/%d %s", ev.Step, ev.Steps, ev.Action)
	if p.withKeys {
		label = ev.Key + " " + label
	}
	return label
}
