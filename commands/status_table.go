package commands

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/mattn/go-isatty"

	"github.com/wo-runner/wo/procedure"
	"github.com/wo-runner/wo/termtext"
	"github.com/wo-runner/wo/workorder"
)

// useColour is true on a terminal unless NO_COLOR is set.
func useColour(f *Factory) bool {
	if f.Getenv("NO_COLOR") != "" {
		return false
	}
	file, ok := f.Stdout.(*os.File)
	return ok && isatty.IsTerminal(file.Fd())
}

var statusColour = map[workorder.Status]string{workorder.StatusClosed: "32", workorder.StatusInReview: "36",
	workorder.StatusInProgress: "33", workorder.StatusBlocked: "31", workorder.StatusOpen: "37"}

// textView is how a human view is drawn: within width columns (0: no
// limit, --wide) and coloured or not.
type textView struct {
	width  int
	colour bool
	now    time.Time // what the ages in it count from
}

// The columns of the status table that a narrow terminal leaves out, the
// first to go highest; the least useful at a glance go first.
const (
	dropPR = iota + 1
	dropRunner
	dropThreads
	dropEstimate
	dropFixRounds
	dropComments
	dropUpdated
)

// tableStatus is the default format: one row a task, coloured when the
// view is, within its width, and below it one task's review or an epic's
// totals.
func tableStatus(rows []StatusRow, v textView) string {
	var b strings.Builder
	epic := "" // the key whose start the children's keys leave out
	if len(rows) > 1 {
		epic = rows[0].Key
	}
	held := false
	for _, r := range rows {
		held = held || r.HeldBy != ""
	}
	t := &termtext.Table{Columns: []termtext.Column{
		{Header: "KEY", Give: 4, Min: 16},
		{Header: "STATUS"},
		{Header: "STEP"},
		// The next step is cut only when every column that may go went:
		// "create_branch (interrupted)" cut says neither.
		{Header: "NEXT", Give: 1, Min: 30},
	}}
	if held {
		t.Columns = append(t.Columns, termtext.Column{Header: "RUNNER", Give: 2, Min: 16, Drop: dropRunner})
	}
	t.Columns = append(t.Columns, []termtext.Column{
		{Header: "PR", Drop: dropPR},
		{Header: "FIX ROUNDS", Drop: dropFixRounds},
		{Header: "COMMENTS", Drop: dropComments},
		{Header: "OPEN THREADS", Drop: dropThreads},
	}...)
	// One task's table is one row: what it waits for, a list, is said
	// below it, and its title wraps rather than lose its end.
	oneTask := len(rows) == 1
	if !oneTask {
		t.Columns = append(t.Columns, termtext.Column{Header: "WAITS FOR", Give: 3, Min: 12})
	}
	t.Columns = append(t.Columns, []termtext.Column{
		{Header: "UPDATED", Drop: dropUpdated},
		{Header: "ESTIMATE", Drop: dropEstimate},
		{Header: "TITLE", Give: 5, Min: 20, Wrap: oneTask},
	}...)
	key, waits := &t.Columns[0], (*termtext.Column)(nil)
	if !oneTask {
		waits = &t.Columns[len(t.Columns)-4]
	}
	if v.colour {
		t.Columns[1].Style = func(row int, cell string) string {
			if row < 0 {
				return "\033[39m" + cell + "\033[0m"
			}
			return "\033[" + statusColour[rows[row].Status] + "m" + cell + "\033[0m"
		}
	}
	for _, r := range rows {
		row := []string{r.Key, string(r.Status), stepText(r), orDash(nextText(r))}
		if held {
			row = append(row, orDash(r.HeldBy))
		}
		row = append(row, prText(r), strconv.Itoa(r.ReviewIterations), strconv.Itoa(r.OpenComments), threadsCell(r.Review))
		if !oneTask {
			row = append(row, orDash(strings.Join(r.WaitingFor, ", ")))
			shortWaits := make([]string, len(r.WaitingFor))
			for j, w := range r.WaitingFor {
				shortWaits[j] = shortKey(epic, w)
			}
			waits.Short = append(waits.Short, orDash(strings.Join(shortWaits, ", ")))
		}
		t.Rows = append(t.Rows, append(row, age(r.UpdatedAt, v.now), estimateCell(r.Estimate), r.Title))
		key.Short = append(key.Short, shortKey(epic, r.Key))
	}
	if epic != "" {
		// The epic's own key, which the reader just typed, is cut to the
		// width of its children's short keys rather than widen them all.
		widest := 0
		for _, k := range key.Short[1:] {
			widest = max(widest, termtext.Width(termtext.Line(k)))
		}
		key.Short[0] = termtext.Fit(termtext.Line(epic), max(widest, 12))
	}
	text, hidden := t.Render(v.width)
	b.WriteString(text)
	writeHidden(&b, hidden, v.width)
	below := b.Len()
	if oneTask {
		if w := rows[0].WaitingFor; len(w) > 0 {
			b.WriteString(termtext.Line("waits for: "+strings.Join(w, ", ")) + "\n")
		}
		writeReviewOutcome(&printer{w: &b}, rows[0].Review)
		if u := rows[0].Agent; u != nil {
			b.WriteString("agent: " + agentUsageText(*u) + "\n")
		}
	}
	if len(rows) > 1 {
		b.WriteString(progressLine(rows[1:], v.width) + "\n")
		if line := paceLine(rows[1:]); line != "" {
			b.WriteString(line + "\n")
		}
		if line := githubStackLine(rows); line != "" {
			b.WriteString(line + "\n")
		}
		if l := rows[0].Land; l != nil {
			b.WriteString(termtext.Line(landLine(l)) + "\n")
		}
		for _, r := range rows[1:] {
			if r.Stack != "" && r.Stack != "merged" {
				b.WriteString(termtext.Line(fmt.Sprintf("stack: %s %s", r.Key, r.Stack)) + "\n")
			}
		}
		if total, n := agentTotal(rows[1:]); n > 0 {
			b.WriteString(fmt.Sprintf("agent: %s, over %d task(s)\n", agentUsageText(total), n))
		}
		if rows[0].ReviewEstimate != "" {
			b.WriteString("review estimate: " + termtext.Line(rows[0].ReviewEstimate) + "\n")
		}
	}
	out := b.String()
	return out[:below] + wrapLines(out[below:], v.width)
}

// wrapLines breaks each line of text that is wider than width (0: no
// limit) at its spaces, the lines it continues on indented two more.
func wrapLines(text string, width int) string {
	if width <= 0 {
		return text
	}
	var b strings.Builder
	for _, line := range strings.SplitAfter(text, "\n") {
		body := strings.TrimSuffix(line, "\n")
		if termtext.Width(body) <= width {
			b.WriteString(line)
			continue
		}
		indent := body[:len(body)-len(strings.TrimLeft(body, " "))] + "  "
		parts := termtext.Wrap(body, width)
		b.WriteString(parts[0] + "\n")
		for _, p := range termtext.Wrap(strings.Join(parts[1:], " "), max(width-len(indent), 1)) {
			b.WriteString(indent + p + "\n")
		}
	}
	return b.String()
}

// writeHidden says which columns a table left out to fit the width, and
// how to see them.
func writeHidden(w io.StringWriter, hidden []string, width int) {
	if len(hidden) == 0 {
		return
	}
	note := fmt.Sprintf("(left out at %d columns: %s; --wide shows every column)", width, strings.Join(hidden, ", "))
	for _, line := range termtext.Wrap(note, width) {
		w.WriteString(line + "\n")
	}
}

// shortKey is a key without the start it shares with the epic's key, up
// to a separator, when that start is more than the common "task_":
// task_hermes_review_pipeline_01_foundation under
// task_hermes_review_pipeline reads …_01_foundation. The table uses it
// only when the full keys do not fit.
func shortKey(epic, key string) string {
	n := 0
	for n < len(epic) && n < len(key) && epic[n] == key[n] {
		n++
	}
	if n < len(epic) || n == len(key) || !strings.ContainsRune(keySeparators, rune(key[n])) {
		n = strings.LastIndexAny(key[:n], keySeparators)
	}
	if n <= len("task_") {
		return key
	}
	return "…" + key[n:]
}

// keySeparators end the words of a key.
const keySeparators = "_-. "

// paceLine says when an epic's reviewer is rate limited: its run opens no
// more pull requests until then.
func paceLine(children []StatusRow) string {
	until, by := "", ""
	for _, r := range children {
		if r.LimitedUntil > until {
			until, by = r.LimitedUntil, r.Key
		}
	}
	if until == "" {
		return ""
	}
	opened := 0
	for _, r := range children {
		if r.PRNumber == 0 && r.Status != workorder.StatusClosed {
			opened++
		}
	}
	return termtext.Line(fmt.Sprintf("reviewer rate limited until %s (%s): wo run --epic opens none of the %d pull request(s) left until then", until, by, opened))
}

// estimateCell is an estimate in a table: the time and how sure it is,
// "~7 min (low)"; what it rests on is wo show's to say.
func estimateCell(e *procedure.Estimate) string {
	switch {
	case e == nil:
		return "-"
	case !e.Known:
		return "unknown"
	case e.Confidence != "":
		return "~" + roughDuration(e.Remaining) + " (" + e.Confidence + ")"
	default:
		return "~" + roughDuration(e.Remaining)
	}
}

// roughDuration is a duration as a person estimates one: 45 s, 7 min,
// 2 h 5 min, 3 d 4 h.
func roughDuration(d time.Duration) string {
	s := int64(d.Round(time.Second) / time.Second)
	switch {
	case s < 60:
		return fmt.Sprintf("%d s", s)
	case s < 3600-30:
		return fmt.Sprintf("%d min", (s+30)/60)
	case s < 86400-30:
		m := (s + 30) / 60
		return strings.TrimSuffix(fmt.Sprintf("%d h %d min", m/60, m%60), " 0 min")
	default:
		h := (s + 1800) / 3600
		return strings.TrimSuffix(fmt.Sprintf("%d d %d h", h/24, h%24), " 0 h")
	}
}

func nextText(r StatusRow) string {
	if r.Steps > 0 && r.Step == r.Steps {
		return "done"
	}
	if r.Phase == workorder.PhaseInterrupted {
		return r.NextAction + " (interrupted)"
	}
	return r.NextAction
}

func prText(r StatusRow) string {
	if r.PRNumber == 0 {
		return "-"
	}
	return fmt.Sprintf("#%d", r.PRNumber)
}

// age says how long before now an RFC 3339 time was, roughly.
func age(ts string, now time.Time) string {
	t, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		return "-"
	}
	if now.IsZero() {
		now = time.Now()
	}
	d := now.Sub(t)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds ago", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh ago", int(d.Hours()))
	default:
		return fmt.Sprintf("%dd ago", int(d.Hours()/24))
	}
}

// agentUsageText is what an agent's runs did and cost, for a person.
func agentUsageText(u workorder.AgentUsage) string {
	s := fmt.Sprintf("%d run(s), %d fix round(s)", u.Runs, u.Rounds)
	if u.CostUSD > 0 {
		s += fmt.Sprintf(", $%.2f", u.CostUSD)
	}
	if u.Tokens > 0 {
		s += fmt.Sprintf(", %d tokens", u.Tokens)
	}
	if l := u.Last; l != nil {
		last := l.Outcome
		if l.Failure != "" {
			last += " (" + l.Failure + ")"
		}
		s += termtext.Line(fmt.Sprintf("; last: %s %s", l.Agent, last))
		if l.Message != "" {
			s += ": " + termtext.Cut(termtext.Line(l.Message), 80)
		}
	}
	return s
}

// agentTotal adds up the agent's runs over tasks; n is how many tasks ran
// one.
func agentTotal(rows []StatusRow) (total workorder.AgentUsage, n int) {
	for _, r := range rows {
		if u := r.Agent; u != nil {
			total.Runs += u.Runs
			total.Rounds += u.Rounds
			total.CostUSD += u.CostUSD
			total.Tokens += u.Tokens
			n++
		}
	}
	return total, n
}

// githubStackLine says which of GitHub's stacks the epic's pull requests
// are in, and where: "GitHub stack 7: #1 1/6, #2 2/6, …"; a repository
// without GitHub's stacks says so once it was asked.
func githubStackLine(rows []StatusRow) string {
	byStack := map[int][]string{}
	var order []int
	for _, r := range rows[1:] {
		if s := r.GitHubStack; s != nil {
			if _, ok := byStack[s.Number]; !ok {
				order = append(order, s.Number)
			}
			byStack[s.Number] = append(byStack[s.Number], fmt.Sprintf("#%d %d/%d", r.PRNumber, s.Position, s.Size))
		}
	}
	var parts []string
	for _, n := range order {
		parts = append(parts, fmt.Sprintf("GitHub stack %d: %s", n, strings.Join(byStack[n], ", ")))
	}
	rec := rows[0].GitHubStacks
	switch {
	case len(parts) > 0 && len(order) > 1:
		return "consecutive stacks (GitHub takes 100 pull requests a stack): " + strings.Join(parts, "; ")
	case len(parts) > 0:
		return parts[0]
	case rec != nil && !rec.Enabled:
		return "GitHub stacks: not on this repository (its pull requests are chained by their bases)"
	case rec != nil && len(rec.Stacks) > 0:
		return fmt.Sprintf("GitHub stack %s: wo status --refresh reads where each pull request stands", joinInts(rec.Stacks))
	}
	return ""
}

// landLine says where the epic's last wo land stands.
func landLine(l *workorder.Land) string {
	merged := fmt.Sprintf("%d merged", len(l.Merged))
	switch {
	case l.Finished != "":
		return fmt.Sprintf("land: finished %s, %s (%s)", l.Finished, merged, l.Method)
	case l.Stopped != "":
		return fmt.Sprintf("land: stopped, %s: %s", merged, l.Stopped)
	case l.Pending != nil:
		return fmt.Sprintf("land: waiting for GitHub to merge #%d (asked %s), %s; wo land goes on waiting", l.Pending.PR, l.Pending.At, merged)
	}
	return fmt.Sprintf("land: started %s, %s", l.Started, merged)
}
