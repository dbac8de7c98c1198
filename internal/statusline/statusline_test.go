package statusline

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
)

// A clock two hours east of UTC, so that a test shows the conversion.
var east = time.FixedZone("EET", 2*3600)

// now is 10:04:12 in that zone, on 2 March 2026.
var now = time.Date(2026, 3, 2, 10, 4, 12, 0, east)

// A review wait says which step waits, for whom, since when, until when
// and when it looks next, in that order.
func TestTextOfAReviewWait(t *testing.T) {
	t.Parallel()
	w := Wait{Label: "5/9 wait_for_review", For: "coderabbitai[bot] to review 1a2b3c4 on pull request #1",
		Since: now.Add(-130 * time.Second), Until: now.Add(22*time.Minute + 50*time.Second).UTC(), NextLook: now.Add(20 * time.Second)}
	want := "5/9 wait_for_review · waiting 2m10s for coderabbitai[bot] to review 1a2b3c4 on pull request #1 · until 10:27:02 (22m50s left) · next look in 20s"
	if got := w.Text(now); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

// An agent's wait has no next look, and its last line comes last.
func TestTextOfAnAgentWait(t *testing.T) {
	t.Parallel()
	w := Wait{Label: "7/11 conditional_loop", For: "agent claude", Last: "  Looking at calc.go \n",
		Since: now.Add(-185 * time.Second), Until: now.Add(26*time.Minute + 55*time.Second)}
	want := "7/11 conditional_loop · waiting 3m05s for agent claude · until 10:31:07 (26m55s left) · last: Looking at calc.go"
	if got := w.Text(now); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

// What a wait does not know, it does not say.
func TestTextLeavesOutWhatIsNotKnown(t *testing.T) {
	t.Parallel()
	if got, want := (Wait{For: "agent codex", Last: " \t "}).Text(now), "waiting for agent codex"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// A reviewer's login, the step's label and an agent's output come from
// outside: none of their control characters reaches the terminal, and the
// agent's line is cut, since a log has no width to cut it.
func TestTextEscapesWhatComesFromOutside(t *testing.T) {
	t.Parallel()
	w := Wait{Label: "1/2 x\x1b[2J", For: "evil\x1b]52;c;cGF5bG9hZA==\x07bot", Last: "done\r\x1b[1A\u202eevil" + strings.Repeat("y", 400)}
	got := w.Text(now)
	if strings.ContainsAny(got, "\x1b\r\x07\u202e") {
		t.Errorf("a control character reached the line: %q", got)
	}
	for _, want := range []string{`1/2 x\x1b[2J`, `evil\x1b]52;c;cGF5bG9hZA==\x07bot`, `last: done\r\x1b[1A\u202eevil`, "y […]"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q lacks %q", got, want)
		}
	}
	if n := len(got[strings.Index(got, "last: ")+len("last: "):]); n > maxLast+len(" […]") {
		t.Errorf("the agent's line is %d bytes, want at most %d", n, maxLast)
	}
}

func TestDuration(t *testing.T) {
	t.Parallel()
	for d, want := range map[time.Duration]string{
		-5 * time.Second:                      "0s",
		0:                                     "0s",
		499 * time.Millisecond:                "0s",
		500 * time.Millisecond:                "1s",
		45 * time.Second:                      "45s",
		59 * time.Second:                      "59s",
		59*time.Second + 600*time.Millisecond: "1m00s",
		time.Minute:                           "1m00s",
		2*time.Minute + 5*time.Second:         "2m05s",
		59*time.Minute + 59*time.Second:       "59m59s",
		time.Hour:                             "1h00m",
		time.Hour + 2*time.Minute + 59*time.Second: "1h02m",
		26 * time.Hour: "26h00m",
	} {
		if got := Duration(d); got != want {
			t.Errorf("Duration(%s) = %q, want %q", d, got, want)
		}
	}
}

// A deadline on another day says the day; on the same day, only the time.
func TestClock(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		t    time.Time
		want string
	}{
		{now.Add(25 * time.Minute).UTC(), "10:29:12"},
		{time.Date(2026, 3, 2, 22, 30, 0, 0, time.UTC), "Mar 3 00:30:00"}, // the next day in now's zone
		{time.Date(2026, 4, 2, 9, 0, 0, 0, east), "Apr 2 09:00:00"},
		{time.Date(2027, 3, 2, 9, 0, 0, 0, east), "Mar 2 09:00:00"},
		{time.Date(2026, 3, 1, 23, 59, 59, 0, east), "Mar 1 23:59:59"},
	} {
		if got := Clock(c.t, now); got != c.want {
			t.Errorf("Clock(%s) = %q, want %q", c.t, got, c.want)
		}
	}
}

// The next look is counted in whole seconds, up: "in 0s" would be a look
// that did not happen.
func TestNextLook(t *testing.T) {
	t.Parallel()
	for d, want := range map[time.Duration]string{
		-time.Second:                   "looking now",
		0:                              "looking now",
		time.Nanosecond:                "next look in 1s",
		time.Second:                    "next look in 1s",
		time.Second + time.Millisecond: "next look in 2s",
		20 * time.Second:               "next look in 20s",
		90 * time.Second:               "next look in 1m30s",
	} {
		if got := nextLook(d); got != want {
			t.Errorf("nextLook(%s) = %q, want %q", d, got, want)
		}
	}
}

// A line is cut to the terminal's width less one column, by the cells its
// characters take.
func TestFit(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		s     string
		width int
		want  string
	}{
		{"waiting for coderabbitai[bot]", 0, "waiting for coderabbitai[bot]"},
		{"waiting for coderabbitai[bot]", -1, "waiting for coderabbitai[bot]"},
		{"12345", 6, "12345"},
		{"123456", 6, "1234…"},
		{"界界界界", 6, "界界…"},
		{"界界", 5, "界界"},
		{"a界界", 5, "a界…"},
	} {
		got := Fit(c.s, c.width)
		if got != c.want {
			t.Errorf("Fit(%q, %d) = %q, want %q", c.s, c.width, got, c.want)
		}
		if c.width > 0 && ansi.StringWidth(got) >= c.width {
			t.Errorf("Fit(%q, %d) takes %d columns", c.s, c.width, ansi.StringWidth(got))
		}
	}
}

// Each Show replaces the line before; Clear takes it away once; the
// width is asked at each redraw, so a resized window is followed.
func TestLineRedrawsInPlace(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	width := 8
	l := NewLine(&out, func() int { return width })
	l.Clear()
	if out.Len() != 0 || l.Shown() {
		t.Fatalf("Clear with nothing shown wrote %q", out.String())
	}
	l.Show("waiting 1s")
	width = 12
	l.Show("waiting 2s")
	if !l.Shown() {
		t.Error("a shown line says it is not")
	}
	l.Clear()
	l.Clear()
	if l.Shown() {
		t.Error("a cleared line says it is shown")
	}
	want := "\r\x1b[2Kwaitin…" + "\r\x1b[2Kwaiting 2s" + "\r\x1b[2K"
	if out.String() != want {
		t.Errorf("wrote %q, want %q", out.String(), want)
	}
}
