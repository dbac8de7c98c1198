package commands

import (
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mattn/go-isatty"

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

// tableStatus is the default format: one row a task, coloured when colour
// is true, and below it one task's review or an epic's totals.
func tableStatus(rows []StatusRow, colour bool) string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	line := termtext.Line
	header := "STATUS"
	if colour {
		// tabwriter counts the escape codes as width: give the header the
		// same invisible bytes as the coloured cells so the columns line up.
		header = fmt.Sprintf("\033[39m%-11s\033[0m", "STATUS")
	}
	held := false
	for _, r := range rows {
		held = held || r.HeldBy != ""
	}
	runner := func(r StatusRow) string {
		if !held {
			return ""
		}
		return line(orDash(r.HeldBy)) + "\t"
	}
	runnerHeader := ""
	if held {
		runnerHeader = "RUNNER\t"
	}
	fmt.Fprintf(tw, "KEY\t%s\tSTEP\tNEXT\t%sPR\tFIX ROUNDS\tCOMMENTS\tOPEN THREADS\tWAITS FOR\tUPDATED\tESTIMATE\tTITLE\n", header, runnerHeader)
	for _, r := range rows {
		status := line(string(r.Status))
		if colour {
			status = fmt.Sprintf("\033[%sm%-11s\033[0m", statusColour[r.Status], status)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\n", line(r.Key), status, stepText(r), line(orDash(nextText(r))),
			runner(r), prText(r), r.ReviewIterations, r.OpenComments, threadsCell(r.Review), line(orDash(strings.Join(r.WaitingFor, ","))), age(r.UpdatedAt), line(estimateText(r)), line(r.Title))
	}
	tw.Flush() // into a strings.Builder, which cannot fail
	if len(rows) == 1 {
		writeReviewOutcome(&printer{w: &b}, rows[0].Review)
		if u := rows[0].Agent; u != nil {
			b.WriteString("agent: " + agentUsageText(*u) + "\n")
		}
	}
	if len(rows) > 1 {
		b.WriteString(progressLine(rows[1:]) + "\n")
		if line := paceLine(rows[1:]); line != "" {
			b.WriteString(line + "\n")
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
	return b.String()
}

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

func estimateText(r StatusRow) string {
	switch {
	case r.Estimate == nil:
		return "-"
	case !r.Estimate.Known:
		return "no estimate yet"
	default:
		return fmt.Sprintf("~%s (%s)", r.Estimate.Remaining.Round(time.Second), r.Estimate.Basis)
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

// age says how long ago an RFC 3339 time was, roughly.
func age(ts string) string {
	t, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		return "-"
	}
	d := time.Since(t)
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
