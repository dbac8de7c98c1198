package integration

import (
	"bytes"
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/creack/pty"

	"github.com/wo-runner/wo/integration/ghstandin"
)

// waitLimit bounds each wait of these tests on wo: generous, since the
// machine may be busy; none of them sleeps a set time.
const waitLimit = 2 * time.Minute

// heldReview is the seed's task with a reviewer that approves once the
// test lets it, and the environment of a run that waits up to five
// minutes for it, looking each second.
func heldReview(t *testing.T) (*fixture, *ghstandin.Server, []string) {
	t.Helper()
	f := newFixture(t, 5)
	gh, env := withGitHub(t, f)
	gh.ReviewRounds = nil // it approves
	gh.HoldReviews(true)  // until the test has seen what it looks for
	f.importTask(f.seedTask("task_wait"))
	return f, gh, append(env, "WO_REVIEW_WAIT=5m", "WO_POLL_INTERVAL=1s")
}

// output collects what a process writes, for a test to poll.
type output struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (o *output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.Write(p)
}

func (o *output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}

// finish lets the review go and waits for the run to end.
func finish(t *testing.T, gh *ghstandin.Server, cmd *exec.Cmd) woResult {
	t.Helper()
	gh.HoldReviews(false)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return result(cmd, err, "", "")
	case <-time.After(waitLimit):
		cmd.Process.Kill()
		t.Fatalf("the run did not end within %s of the review", waitLimit)
	}
	return woResult{}
}

// frames are the status lines a terminal was shown: what each redraw
// (a carriage return and an erase of the line) drew.
func frames(screen string) []string {
	var out []string
	for _, part := range strings.Split(screen, "\r\x1b[2K") {
		if line, _, _ := strings.Cut(part, "\r\n"); strings.TrimSpace(line) != "" && strings.Contains(line, "waiting") {
			out = append(out, line)
		}
	}
	return out
}

// distinct counts the different lines among lines.
func distinct(lines []string) int {
	seen := map[string]bool{}
	for _, l := range lines {
		seen[l] = true
	}
	return len(seen)
}

// On a terminal a run waiting for its review shows one status line,
// redrawn in place as the seconds pass, that names the reviewer, the
// deadline and the next look, cut to the window's width; it is gone when
// the run ends.
func TestAWaitShowsOnATerminalAsOneLineRedrawn(t *testing.T) {
	t.Parallel()
	f, gh, env := heldReview(t)
	cmd := f.cmd(env, "run", "task_wait", "--reviewer", "coderabbitai[bot]")
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 24, Cols: 100})
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	defer tty.Close()
	screen := &output{}
	read := make(chan struct{})
	go func() { defer close(read); io.Copy(screen, tty) }() // until the run closes the terminal
	waitFor(t, "three redraws of the status line naming the reviewer", waitLimit, func() bool {
		return distinct(frames(screen.String())) >= 3
	})
	r := finish(t, gh, cmd)
	select {
	case <-read:
	case <-time.After(waitLimit):
		t.Fatal("the terminal was not closed after the run")
	}
	if r.code != 0 {
		t.Fatalf("exit %d\n%q", r.code, screen.String())
	}
	shown := frames(screen.String())
	t.Logf("%d redraws, %d different; the first: %q", len(shown), distinct(shown), shown[0])
	for _, l := range shown {
		if !strings.HasPrefix(l, "7/11 wait_for_review · waiting ") || !strings.Contains(l, " for coderabbitai[bot] to review ") {
			t.Errorf("a status line does not say the step and the reviewer: %q", l)
		}
		if w := ansi.StringWidth(l); w > 99 || !strings.HasSuffix(l, "…") {
			t.Errorf("a status line takes %d columns of 100, cut or not: %q", w, l)
		}
		if strings.ContainsAny(l, "\n\x1b") {
			t.Errorf("a status line holds a control character: %q", l)
		}
	}
	// The line was cleared before what followed: the step's own line
	// starts a line of its own.
	if !strings.Contains(screen.String(), "\r\x1b[2K  7/11 wait_for_review  ok") {
		t.Errorf("the step's line is not printed over a cleared status line:\n%q", screen.String())
	}
}

// In a log (no terminal) the wait is a plain line when it begins and then
// one each WO_PROGRESS_INTERVAL, with no escape sequence.
func TestAWaitShowsInALogAsAPlainLineEachInterval(t *testing.T) {
	t.Parallel()
	f, gh, env := heldReview(t)
	cmd := f.cmd(append(env, "WO_PROGRESS_INTERVAL=300ms"), "run", "task_wait", "--reviewer", "coderabbitai[bot]")
	stdout, stderr := &output{}, &output{}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitLines := func() []string {
		var out []string
		for _, l := range strings.Split(stderr.String(), "\n") {
			if strings.HasPrefix(l, "  7/11 wait_for_review · waiting ") {
				out = append(out, l)
			}
		}
		return out
	}
	waitFor(t, "three lines of the wait", waitLimit, func() bool { return len(waitLines()) >= 3 })
	if r := finish(t, gh, cmd); r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, stderr.String())
	}
	lines := waitLines()
	t.Logf("%d lines, the first: %q", len(lines), lines[0])
	for _, l := range lines {
		if !strings.Contains(l, " for coderabbitai[bot] to review ") || !strings.Contains(l, " on pull request #1 · until ") || !strings.Contains(l, "left) · ") {
			t.Errorf("a line does not say whom, until when and the next look: %q", l)
		}
	}
	if strings.ContainsAny(stderr.String(), "\r\x1b") {
		t.Errorf("stderr holds a terminal's escape sequence:\n%q", stderr.String())
	}
}

// With --json stdout holds the JSON lines alone (an event per step, the
// envelope last) and no wait; stderr nothing.
func TestAWaitShowsNothingInJSON(t *testing.T) {
	t.Parallel()
	f, gh, env := heldReview(t)
	cmd := f.cmd(append(env, "WO_PROGRESS_INTERVAL=100ms"), "run", "task_wait", "--reviewer", "coderabbitai[bot]", "--json")
	stdout, stderr := &output{}, &output{}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The run is waiting once it has polled the reviews a few times.
	waitFor(t, "the run to poll the reviews three times", waitLimit, func() bool {
		n := 0
		for _, r := range gh.Requests() {
			if strings.HasSuffix(r.Path, "/pulls/1/reviews") {
				n++
			}
		}
		return n >= 3
	})
	if r := finish(t, gh, cmd); r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, stdout.String(), stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	for i, l := range lines {
		var v map[string]any
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatalf("stdout line %d is not JSON: %q", i+1, l)
		}
		if v["event"] == "step_waiting" || strings.Contains(l, "waiting for") {
			t.Errorf("stdout line %d shows the wait: %q", i+1, l)
		}
	}
	var env2 struct {
		Success bool
		Command string
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &env2); err != nil || !env2.Success || env2.Command != "run" {
		t.Errorf("the last line is not the run's envelope: %q", lines[len(lines)-1])
	}
	if stderr.String() != "" {
		t.Errorf("stderr with --json: %q", stderr.String())
	}
}
