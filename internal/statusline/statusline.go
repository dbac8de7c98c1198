// Package statusline says what wo waits for while it waits: one line on a
// terminal that each redraw replaces, or the same words as a plain line
// for a log.
//
// What a wait names comes from outside (a reviewer's login, an agent's
// output): Text escapes every part of it for the terminal, and Fit cuts
// the line to the terminal's width by the cells each character takes.
package statusline

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/wo-runner/wo/termtext"
)

// Wait is one wait as a person watching the run sees it.
type Wait struct {
	// Label says which step waits: "5/9 wait_for_review".
	Label string
	// For is what the step waits for ("coderabbitai[bot] to review
	// 1a2b3c4 on pull request #1", "agent claude"); Last is the latest
	// line of what it runs (an agent's output).
	For, Last string
	Since     time.Time // when the wait began
	Until     time.Time // its deadline; zero: none
	NextLook  time.Time // when it looks again; zero: it does not poll
}

// maxLast bounds the agent's line, which only a terminal's width would
// cut otherwise: in a log it is one line of many.
const maxLast = 160

// Text is the wait's line at now, each part from outside escaped:
//
//	5/9 wait_for_review · waiting 2m10s for coderabbitai[bot] to review 1a2b3c4 on pull request #1 · until 10:29:12 (22m50s left) · next look in 20s
//
// Clock times are in now's location. What the wait is for and how long
// it has waited come first, the agent's line last, where a narrow
// terminal cuts first.
func (w Wait) Text(now time.Time) string {
	var parts []string
	if w.Label != "" {
		parts = append(parts, termtext.Line(w.Label))
	}
	waiting := "waiting for "
	if !w.Since.IsZero() {
		waiting = "waiting " + Duration(now.Sub(w.Since)) + " for "
	}
	parts = append(parts, waiting+termtext.Line(w.For))
	if !w.Until.IsZero() {
		parts = append(parts, fmt.Sprintf("until %s (%s left)", Clock(w.Until, now), Duration(w.Until.Sub(now))))
	}
	if !w.NextLook.IsZero() {
		parts = append(parts, nextLook(w.NextLook.Sub(now)))
	}
	if last := strings.TrimSpace(w.Last); last != "" {
		parts = append(parts, "last: "+termtext.Cut(termtext.Line(last), maxLast))
	}
	return strings.Join(parts, " · ")
}

// Duration is d for a person, to the second under an hour: 45s, 2m05s,
// 1h02m; never negative (a deadline passed is 0s left).
func Duration(d time.Duration) string {
	d = max(d, 0).Round(time.Second)
	if d < time.Minute {
		return fmt.Sprintf("%ds", d/time.Second)
	}
	if d < time.Hour {
		return fmt.Sprintf("%dm%02ds", d/time.Minute, d%time.Minute/time.Second)
	}
	return fmt.Sprintf("%dh%02dm", d/time.Hour, d%time.Hour/time.Minute)
}

// Clock is t as the clock says it in now's location: 10:29:12 on now's
// day, with the date on another.
func Clock(t, now time.Time) string {
	t = t.In(now.Location())
	if y, m, d := t.Date(); y == now.Year() && m == now.Month() && d == now.Day() {
		return t.Format("15:04:05")
	}
	return t.Format("Jan 2 15:04:05")
}

// nextLook says when the wait looks again, to the next whole second.
func nextLook(d time.Duration) string {
	if d <= 0 {
		return "looking now"
	}
	return "next look in " + Duration((d + time.Second - 1).Truncate(time.Second))
}

// Fit cuts s to a terminal width columns wide, by the cells each
// character takes (two for a wide one), marking the cut with "…". The
// last column stays free: a line that fills it makes some terminals wrap,
// and the next redraw would then start a line too low. A width of 0 or
// less (unknown) cuts nothing.
func Fit(s string, width int) string {
	if width <= 0 {
		return s
	}
	return ansi.Truncate(s, width-1, "…")
}

// Line is a status line on a terminal: each Show replaces what the one
// before drew, and Clear takes it away before other output is printed.
type Line struct {
	out   io.Writer
	width func() int
	shown bool
}

// NewLine is a status line on out, a terminal whose width (in columns;
// 0 when unknown) width tells at each redraw, so that a resized window
// is followed.
func NewLine(out io.Writer, width func() int) *Line {
	return &Line{out: out, width: width}
}

// erase takes the cursor to the line's start and clears the line.
func erase() string { return string(rune(ansi.CR)) + ansi.EraseEntireLine }

// Show draws text, already escaped, in place of the line shown, cut to the
// terminal's width.
func (l *Line) Show(text string) {
	io.WriteString(l.out, erase()+Fit(text, l.width()))
	l.shown = true
}

// Clear takes the line away, if one is shown, leaving the cursor at the
// start of the empty line for what is printed next.
func (l *Line) Clear() {
	if l.shown {
		io.WriteString(l.out, erase())
		l.shown = false
	}
}

// Shown reports whether a line is on the screen.
func (l *Line) Shown() bool { return l.shown }
