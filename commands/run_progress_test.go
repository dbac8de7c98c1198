package commands

import (
	"bytes"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/wo-runner/wo/procedure"
	"github.com/wo-runner/wo/procedure/action"
)

// t0 is the fake clock's start: 10:00:00 UTC.
var t0 = time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)

// reviewWait is wait_for_review's step_waiting event at t0+at.
func reviewWait(at time.Duration) procedure.Event {
	return procedure.Event{Type: "step_waiting", Key: "task_a", Step: 5, Steps: 9, Action: "wait_for_review",
		Wait: &action.Wait{For: "coderabbitai[bot] to review 1a2b3c4d5e6f on pull request #1", Since: t0,
			Until: t0.Add(25 * time.Minute), NextLook: t0.Add(at + 30*time.Second)}}
}

func step(kind string) procedure.Event {
	return procedure.Event{Type: kind, Key: "task_a", Step: 5, Steps: 9, Action: "wait_for_review", Duration: 61 * time.Second}
}

// clock is a fake time for a progress: its ticks read it under the lock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) set(t time.Time) { c.mu.Lock(); c.now = t; c.mu.Unlock() }
func (c *clock) get() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func withClock(p *progress, c *clock) {
	p.mu.Lock()
	p.now = c.get
	p.mu.Unlock()
}

// Without a terminal a wait is a plain line when it begins, then one
// each interval, until its step ends; a report between lines prints
// nothing.
func TestProgressPrintsAWaitEachInterval(t *testing.T) {
	t.Parallel()
	var out, errb bytes.Buffer
	f := NewFactory(strings.NewReader(""), &out, &errb)
	f.Getenv = func(string) string { return "" }
	p := newProgress(f, &runOptions{ProgressEvery: time.Minute})
	c := &clock{now: t0}
	withClock(p, c)
	p.event(step("step_started"))
	p.event(reviewWait(0))
	c.set(t0.Add(30 * time.Second))
	p.event(reviewWait(30 * time.Second))
	p.mu.Lock()
	p.printWaits(false)
	c.set(t0.Add(60 * time.Second))
	p.printWaits(false)
	p.mu.Unlock()
	p.event(step("step_finished"))
	p.mu.Lock()
	c.set(t0.Add(3 * time.Minute))
	p.printWaits(false)
	p.mu.Unlock()
	p.stop()
	want := "  5/9 wait_for_review · waiting 0s for coderabbitai[bot] to review 1a2b3c4d5e6f on pull request #1 · until 10:25:00 (25m00s left) · next look in 30s\n" +
		"  5/9 wait_for_review · waiting 1m00s for coderabbitai[bot] to review 1a2b3c4d5e6f on pull request #1 · until 10:25:00 (24m00s left) · looking now\n" +
		"  5/9 wait_for_review  ok  1m1s  \n"
	if errb.String() != want || out.Len() != 0 {
		t.Errorf("stderr\n%s\nwant\n%s\nstdout %q", errb.String(), want, out.String())
	}
}

// An agent's line and what a wait names are masked and escaped; the
// agent's wait ends with its run, and the next one is new again.
func TestProgressMasksAndEscapesAWait(t *testing.T) {
	t.Parallel()
	var errb bytes.Buffer
	f := NewFactory(strings.NewReader(""), io.Discard, &errb)
	f.Getenv = func(k string) string { return map[string]string{"GITHUB_TOKEN": "ghs_SECRET_123456789"}[k] }
	p := newProgress(f, &runOptions{ProgressEvery: time.Minute})
	withClock(p, &clock{now: t0.Add(5 * time.Second)})
	agent := procedure.Event{Type: "step_waiting", Key: "task_a", Step: 7, Steps: 11, Action: "conditional_loop",
		Wait: &action.Wait{For: "agent claude", Last: "pushing with ghs_SECRET_123456789\x1b]52;c;eA==\x07", Since: t0}}
	p.event(agent)
	p.event(procedure.Event{Type: "step_waiting", Key: "task_a", Step: 7, Steps: 11, Action: "conditional_loop"})
	p.event(agent)
	p.stop()
	got := errb.String()
	want := "  7/11 conditional_loop · waiting 5s for agent claude · last: pushing with [REDACTED]\\x1b]52;c;eA==\\x07\n"
	if got != want+want {
		t.Errorf("stderr\n%q\nwant twice\n%q", got, want)
	}
}

// --json prints every event but the waits, on stdout, and nothing on
// stderr: a wait is for a person watching.
func TestProgressShowsNoWaitInJSON(t *testing.T) {
	t.Parallel()
	var out, errb bytes.Buffer
	f := NewFactory(strings.NewReader(""), &out, &errb)
	f.Getenv = func(string) string { return "" }
	p := newProgress(f, &runOptions{JSON: true, ProgressEvery: time.Millisecond})
	p.event(step("step_started"))
	p.event(reviewWait(0))
	p.event(step("step_finished"))
	p.stop()
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"event":"step_started"`) || !strings.Contains(lines[1], `"event":"step_finished"`) || errb.Len() != 0 {
		t.Errorf("stdout\n%s\nstderr %q", out.String(), errb.String())
	}
}

// WO_PROGRESS_INTERVAL=0 shows no wait; a bad value is a usage error.
func TestProgressInterval(t *testing.T) {
	t.Parallel()
	for v, want := range map[string]time.Duration{"": time.Minute, "0": 0, "250ms": 250 * time.Millisecond, " 5m ": 5 * time.Minute} {
		f := &Factory{Getenv: func(string) string { return v }}
		if got, err := progressEvery(f); err != nil || got != want {
			t.Errorf("WO_PROGRESS_INTERVAL=%q: %s, %v; want %s", v, got, err, want)
		}
	}
	r := runWoEnv(t, map[string]string{"WO_PROGRESS_INTERVAL": "-1s"}, newDB(t), "", "run", "task_a")
	if r.code != ExitInvalid || !strings.Contains(r.stderr, `WO_PROGRESS_INTERVAL="-1s": give a duration such as 1m or 30s (at least 100ms), or 0 to show no waits`) {
		t.Errorf("exit %d\n%s", r.code, r.stderr)
	}
	// An interval of a nanosecond ticked without rest: half a million
	// lines in seven seconds of an agent's run.
	for _, v := range []string{"1ns", "1ms", "99ms"} {
		f := &Factory{Getenv: func(string) string { return v }}
		if got, err := progressEvery(f); err == nil || !strings.Contains(err.Error(), "at least 100ms") {
			t.Errorf("WO_PROGRESS_INTERVAL=%q: %s, %v; want a usage error", v, got, err)
		}
	}
	var errb bytes.Buffer
	f := NewFactory(strings.NewReader(""), io.Discard, &errb)
	f.Getenv = func(string) string { return "" }
	p := newProgress(f, &runOptions{ProgressEvery: 0})
	p.event(reviewWait(0))
	p.mu.Lock()
	p.printWaits(false)
	p.mu.Unlock()
	p.stop()
	if errb.Len() != 0 {
		t.Errorf("with waits off, stderr %q", errb.String())
	}
}

// terminal is a pseudo-terminal cols wide: wo writes to tty, the test
// reads what it drew from the other end.
func terminal(t *testing.T, cols int) (tty *os.File, screen func() string) {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	t.Cleanup(func() { ptmx.Close(); tty.Close() })
	if err := pty.Setsize(ptmx, &pty.Winsize{Rows: 24, Cols: uint16(cols)}); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var drawn bytes.Buffer
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := ptmx.Read(buf)
			mu.Lock()
			drawn.Write(buf[:n])
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	return tty, func() string { mu.Lock(); defer mu.Unlock(); return drawn.String() }
}

// On a terminal the wait is one line, redrawn in place and cut to the
// window's width; it is gone before the run's result is printed.
func TestProgressRedrawsAWaitOnATerminal(t *testing.T) {
	t.Parallel()
	tty, screen := terminal(t, 60)
	f := NewFactory(strings.NewReader(""), io.Discard, tty)
	f.Getenv = func(string) string { return "" }
	p := newProgress(f, &runOptions{ProgressEvery: time.Minute})
	withClock(p, &clock{now: t0})
	p.event(step("step_started"))
	p.event(reviewWait(0))
	p.stop()
	want := "\r\x1b[2K5/9 wait_for_review · waiting 0s for coderabbitai[bot] to …\r\x1b[2K"
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(screen(), want) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := screen(); !strings.Contains(got, want) || strings.Contains(got, "\n") {
		t.Errorf("the terminal shows %q, want the line cut to 59 columns, then cleared, and no new line", got)
	}
}

// TERM=dumb cannot clear a line: a wait there is a plain line.
func TestProgressOnADumbTerminalPrintsPlainLines(t *testing.T) {
	t.Parallel()
	tty, screen := terminal(t, 60)
	f := NewFactory(strings.NewReader(""), io.Discard, tty)
	f.Getenv = func(k string) string { return map[string]string{"TERM": "dumb"}[k] }
	p := newProgress(f, &runOptions{ProgressEvery: time.Minute})
	withClock(p, &clock{now: t0})
	p.event(reviewWait(0))
	p.stop()
	want := "  5/9 wait_for_review · waiting 0s for coderabbitai[bot] to review 1a2b3c4d5e6f on pull request #1 · until 10:25:00"
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(screen(), want) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := screen(); !strings.Contains(got, want) || strings.Contains(got, "\x1b") {
		t.Errorf("the terminal shows %q, want the plain line", got)
	}
}
