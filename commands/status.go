package commands

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/urfave/cli/v2"

	"github.com/wo-runner/wo/intake"
	"github.com/wo-runner/wo/internal/cores"
	"github.com/wo-runner/wo/procedure"
	"github.com/wo-runner/wo/store"
	"github.com/wo-runner/wo/termtext"
	"github.com/wo-runner/wo/workorder"
)

func newStatusCommand(f *Factory) *cli.Command { return statusCommand(f, runStatus) }

// statusOptions are what wo status is asked.
type statusOptions struct {
	Store  StoreConfig
	Key    string // the task or epic, as the argument or --epic
	Format string // table, markdown, mermaid or dot
	// AllEdges draws every dependency; without it the graph formats draw
	// only those no longer path implies (the transitive reduction).
	AllEdges bool
	// Watch redraws every Interval until the context ends.
	Watch    bool
	Interval time.Duration
	// Refresh first reads the pull requests on GitHub at GitHubAPI, as wo
	// sync does.
	Refresh   bool
	GitHubAPI string
}

func statusCommand(f *Factory, run func(context.Context, *Factory, *statusOptions) (result, error)) *cli.Command {
	return &cli.Command{
		Name:      "status",
		Usage:     "show where a task, or an epic and all its children, stands",
		ArgsUsage: "KEY | --epic KEY",
		Description: `For a task: its status, step n/m and the next step's action, PR, review
iterations, open comments and unresolved review threads at the last check
(for one task, each thread and the reviewers' verdicts below the table),
blockers not yet done, and the age of its last update. For an epic (or any task with children): the same
for every child, read in one query, with totals and a progress bar.

--format table (default; coloured on a terminal unless NO_COLOR is set),
markdown (also appended to $GITHUB_STEP_SUMMARY when that is set), mermaid
or dot: the dependency graph, coloured by status, each task marked running,
waiting (for a blocker) or blocked; an arrow that a longer path already
implies is left out unless --all-edges. --json gives the rows. --watch redraws every
few seconds until Ctrl-C. --refresh first reads the PRs on GitHub (wo sync).`,
		Flags: append(storeFlags(),
			&cli.StringFlag{Name: "epic", Usage: "the epic `KEY` (the same as giving it as the argument)"},
			&cli.StringFlag{Name: "format", Value: "table", Usage: "table, markdown, mermaid or dot"},
			&cli.BoolFlag{Name: "all-edges", Usage: "with --format mermaid or dot: draw every dependency, also those a longer path implies"},
			&cli.BoolFlag{Name: "watch", Usage: "redraw every few seconds"},
			&cli.DurationFlag{Name: "interval", Value: 3 * time.Second, Usage: "with --watch: how often"},
			&cli.BoolFlag{Name: "refresh", Usage: "first read the pull requests on GitHub, as wo sync does"},
			&cli.StringFlag{Name: "github-api", EnvVars: []string{"GITHUB_API_URL"}, Usage: "GitHub API base `URL`"},
		),
		Action: f.action(func(c *cli.Context) (result, error) {
			opts, err := statusOptionsFrom(c, f)
			if err != nil {
				return result{}, err
			}
			return run(c.Context, f, opts)
		}),
	}
}

// statusOptionsFrom reads the flags.
func statusOptionsFrom(c *cli.Context, f *Factory) (*statusOptions, error) {
	key := c.String("epic")
	if key == "" {
		var err error
		if key, err = oneArg(c, "task KEY"); err != nil {
			return nil, err
		}
	}
	format := c.String("format")
	switch format {
	case "table", "markdown", "mermaid", "dot":
	default:
		return nil, usagef(fmt.Sprintf("--format %q: use table, markdown, mermaid or dot", format))
	}
	if err := oneOutput(c, "format", "table"); err != nil {
		return nil, err
	}
	if c.Bool("watch") && (c.Bool("json") || c.String("jq") != "") {
		return nil, usagef("--watch redraws the table on the terminal and --json prints one envelope: give one of them")
	}
	return &statusOptions{Store: f.storeConfig(c), Key: key, Format: format, AllEdges: c.Bool("all-edges"), Watch: c.Bool("watch"), Interval: c.Duration("interval"),
		Refresh: c.Bool("refresh"), GitHubAPI: c.String("github-api")}, nil
}

func runStatus(ctx context.Context, f *Factory, o *statusOptions) (result, error) {
	var rows []StatusRow
	cfg := readOnly(o.Store)
	if o.Refresh {
		cfg = o.Store // wo sync writes what it reads from GitHub
	}
	err := f.useStore(ctx, cfg, func(s store.Store) error {
		for {
			if o.Refresh {
				if _, err := syncTree(ctx, f, s, o.Key, o.GitHubAPI); err != nil {
					return err
				}
			}
			var err error
			if rows, err = loadStatus(ctx, s, o.Key); err != nil {
				return err
			}
			if !o.Watch {
				return nil
			}
			fmt.Fprint(f.Stdout, "\033[H\033[2J")
			renderStatus(f, o.Format, o.AllEdges, rows)
			fmt.Fprintf(f.Stdout, "\n(every %s; Ctrl-C to stop)\n", o.Interval)
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(o.Interval):
			}
		}
	})
	if err != nil {
		return result{}, err
	}
	if o.Format == "markdown" {
		if path := f.Getenv("GITHUB_STEP_SUMMARY"); path != "" {
			if err := appendFile(path, markdownStatus(rows)); err != nil {
				return result{}, fmt.Errorf("appending to $GITHUB_STEP_SUMMARY (%s): %w", path, err)
			}
		}
	}
	return result{data: rows, human: func(w io.Writer) error {
		if o.Watch {
			return nil // already drawn
		}
		_, err := io.WriteString(w, renderString(f, o.Format, o.AllEdges, rows))
		return err
	}}, nil
}

// loadStatus reads the task and its children: two reads, whatever the
// number of children.
func loadStatus(ctx context.Context, s store.Store, key string) ([]StatusRow, error) {
	// The task with its children, the timeline's formation events and the
	// step history behind the estimates are independent reads: at once.
	var doc map[string]any
	var children []map[string]any
	var events map[string]*FormationEvent
	var est *procedure.Estimator
	var docErr, childErr, eventErr, estErr error
	var wg sync.WaitGroup
	wg.Add(3)
	go func() {
		defer wg.Done()
		if doc, docErr = s.Get(ctx, key); docErr == nil {
			children, childErr = store.ListSummaries(ctx, s, store.Filter{ParentKey: key})
		}
	}()
	var kinds map[string]*FormationEvent
	go func() {
		defer wg.Done()
		kinds, eventErr = formationEvents(ctx, s)
	}()
	go func() {
		defer wg.Done()
		est, estErr = procedure.NewEstimator(ctx, s)
	}()
	wg.Wait()
	if err := errors.Join(docErr, childErr, eventErr, estErr); err != nil {
		return nil, err
	}
	docs := append([]map[string]any{doc}, children...)
	byKey := make(map[string]map[string]any, len(docs))
	for _, d := range docs {
		byKey[workorder.Key(d)] = d
	}
	graph := workorder.NewGraph(docs, nil)
	now := time.Now()
	events = map[string]*FormationEvent{}
	for k, ev := range kinds {
		if _, shown := byKey[k]; shown {
			events[k] = ev
		}
	}
	// Each row reads only its document and the shared, unchanging graph,
	// history and events: the rows of a big epic are built on every core.
	rows := make([]StatusRow, len(docs))
	cores.Each(len(docs), func(i int) {
		d := docs[i]
		row := statusRow(d, byKey, graph, now)
		row.LastEvent = events[row.Key]
		if ev := row.LastEvent; ev != nil && ev.Kind == intake.EventClarify && row.Status == workorder.StatusOpen {
			row.WaitingFor = append(row.WaitingFor, "an answer to: "+termtext.Clip(ev.Message, 60))
		}
		if row.Steps > 0 && row.Status != workorder.StatusClosed && row.Status != workorder.StatusInReview {
			e := est.Remaining(d)
			row.Estimate = &e
		}
		rows[i] = row
	})
	var total procedure.Estimate
	total.Known = true
	counted := 0
	for i, row := range rows {
		if e := row.Estimate; e != nil {
			if i > 0 {
				counted++
				if !e.Known {
					total = *e
				} else if total.Known {
					total.Remaining += e.Remaining
				}
			}
		}
	}
	if counted > 0 && rows[0].Estimate == nil {
		if total.Known {
			total.Seconds = int64(total.Remaining.Seconds())
			total.Basis = fmt.Sprintf("sum of %d children's estimates, run one after another", counted)
		}
		rows[0].Estimate = &total
	}
	return rows, nil
}

// StatusRow is one task in wo status.
type StatusRow struct {
	Key              string           `json:"key"`
	Title            string           `json:"title"`
	Type             string           `json:"type"`
	Status           workorder.Status `json:"status"`
	Phase            workorder.Phase  `json:"phase,omitempty"`
	Step             int              `json:"current_step"`
	Steps            int              `json:"steps"`
	NextAction       string           `json:"next_action,omitempty"`
	PRNumber         int              `json:"pr_number,omitempty"`
	PRURL            string           `json:"pr_url,omitempty"`
	ReviewIterations int              `json:"review_iterations"`
	OpenComments     int              `json:"open_comments"`
	BlockedBy        []string         `json:"blocked_by,omitempty"`
	WaitingFor       []string         `json:"waiting_for,omitempty"`
	// HeldBy is the runner working on the task now (its live lease).
	HeldBy string `json:"held_by,omitempty"`
	// LastEvent is the latest formation event (a question, progress).
	LastEvent *FormationEvent `json:"last_event,omitempty"`
	UpdatedAt string          `json:"updated_at,omitempty"`
	// Review is where the review stood at the last check: open threads
	// and verdicts (from the task's state).
	Review *ReviewOutcome `json:"review,omitempty"`
	// Estimate is the time the remaining steps should take, from the
	// durations of past steps; for an epic, the sum over its children.
	Estimate *procedure.Estimate `json:"estimate,omitempty"`
	// LimitedUntil is when the task's rate-limited reviewer takes a
	// request again, while that is ahead: an epic run opens no more pull
	// requests until then.
	LimitedUntil string `json:"reviewer_limited_until,omitempty"`
	// Stack is, for a PR of a stack, what the last wo sync did to it:
	// merged, restacked at <sha> onto <branch>, blocked by a conflict in
	// <files>, left (someone else pushed).
	Stack string `json:"stack,omitempty"`
	// ReviewEstimate is, for an epic wo split made, how long its review
	// takes at the reviewer's rate (split --reviews-per-hour).
	ReviewEstimate string `json:"review_estimate,omitempty"`
}

// statusRow reads what status shows of a task: its status, its typed
// work_order.state, what it waits for (tasks, by the one dependency graph,
// and people), and who runs it now.
func statusRow(d map[string]any, known map[string]map[string]any, graph *workorder.Graph, now time.Time) StatusRow {
	r := StatusRow{Key: workorder.Key(d), Title: workorder.String(d, "title"), Type: workorder.String(d, "type"),
		Status: workorder.StatusOf(d), UpdatedAt: workorder.String(d, "updated_at")}
	for _, b := range graph.BlockersOf(r.Key) {
		r.BlockedBy = append(r.BlockedBy, b)
		if dep, ok := known[b]; !ok || !workorder.BlockerSatisfied(d, dep) {
			r.WaitingFor = append(r.WaitingFor, b)
		}
	}
	if hours := number(workorder.Get(d, "split.estimated_hours")); hours > 0 {
		reviews, rate := number(workorder.Get(d, "split.estimated_reviews")), number(workorder.Get(d, "split.reviews_per_hour"))
		r.ReviewEstimate = fmt.Sprintf("about %.0f reviews at %.4g an hour: %.1f hours of the reviewer's time", reviews, rate, hours)
	}
	wo, ok := d["work_order"].(map[string]any)
	if !ok {
		return r
	}
	st, _ := workorder.StateOf(d) // a state this wo cannot read shows as not started
	steps, _ := wo["procedure"].([]any)
	r.Steps = len(steps)
	r.Phase, r.Step = st.Phase, st.CurrentStep
	if r.Step < len(steps) {
		if step, ok := steps[r.Step].(map[string]any); ok {
			r.NextAction, _ = step["action"].(string)
		}
	}
	r.PRNumber, r.ReviewIterations, r.OpenComments = st.PRNumber, st.ReviewIterations, len(st.ReviewComments)
	r.Review = reviewOutcomeOf(st)
	if st.PRURL != nil {
		r.PRURL = *st.PRURL
	}
	if r.PRNumber == 0 && r.PRURL != "" {
		r.PRNumber = prNumberOf(r.PRURL)
	}
	if st.Phase == workorder.PhaseWaitingForReview && st.ReviewWaitingSince != "" {
		r.WaitingFor = append(r.WaitingFor, "a review since "+st.ReviewWaitingSince)
	} else if who := phaseWaitsFor[st.Phase]; who != "" && r.Status != workorder.StatusClosed {
		r.WaitingFor = append(r.WaitingFor, who)
	}
	if until, err := time.Parse(time.RFC3339Nano, st.ReviewNotBefore); err == nil && until.After(now) {
		r.WaitingFor = append(r.WaitingFor, "the reviewer's rate limit until "+until.UTC().Format(time.RFC3339))
		r.LimitedUntil = until.UTC().Format(time.RFC3339)
	}
	switch rs := st.Restack; {
	case st.PRState == workorder.PRStateMerged:
		r.Stack = "merged"
	case rs == nil:
	case rs.Outcome == "restacked":
		r.Stack = fmt.Sprintf("restacked at %s onto %s", shortSHA(rs.To), orDash(st.StackBase))
	case rs.Outcome == "conflict":
		r.Stack = "blocked by a conflict in " + strings.Join(rs.Conflicts, ", ")
	case rs.Outcome == "left":
		r.Stack = "left as it is: someone else pushed to it"
	case rs.Outcome == "pushing":
		r.Stack = "restack interrupted: wo sync finishes it"
	}
	if st.Skipped != nil && r.Status == workorder.StatusOpen {
		r.WaitingFor = append(r.WaitingFor, "skipped: "+st.Skipped.Reason)
	}
	if l := st.Lease; l != nil && l.ExpiresAt.After(now) {
		r.HeldBy = l.Holder
	}
	return r
}

// FormationEvent is a question or progress a planner put on the timeline.
type FormationEvent struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
	At      string `json:"at"`
}

// formationEvents reads the latest formation event of each task, in one
// query per kind whatever the number of tasks.
func formationEvents(ctx context.Context, s store.Store) (map[string]*FormationEvent, error) {
	out := map[string]*FormationEvent{}
	latest := map[string]time.Time{}
	for _, kind := range intake.EventKinds {
		logs, err := s.LogsByAction(ctx, kind, 500)
		if err != nil {
			return nil, err
		}
		for _, l := range logs {
			if !l.CreatedAt.After(latest[l.TaskKey]) {
				continue
			}
			msg, _ := l.Details["message"].(string)
			latest[l.TaskKey] = l.CreatedAt
			out[l.TaskKey] = &FormationEvent{Kind: kind, Message: msg, At: workorder.Timestamp(l.CreatedAt)}
		}
	}
	return out, nil
}

// phaseWaitsFor says who a task in each phase waits for, when it is not
// another task.
var phaseWaitsFor = map[workorder.Phase]string{
	workorder.PhaseNeedsFix:         "a fix of the review comments",
	workorder.PhaseNeedsAgent:       "an agent command",
	workorder.PhaseNeedsReview:      "a review of the agent's deliverable",
	workorder.PhaseAwaitingApproval: "approval",
	workorder.PhaseFormation:        "revision",
	workorder.PhaseFailed:           "a fix of the failed step",
}

// prNumberOf reads the number at the end of a pull request URL
// (…/pull/12), 0 when there is none.
func prNumberOf(url string) int {
	i := strings.LastIndex(url, "/pull/")
	if i < 0 {
		return 0
	}
	n, err := strconv.Atoi(strings.TrimRight(url[i+len("/pull/"):], "/"))
	if err != nil || n <= 0 {
		return 0
	}
	return n
}

func intOf(v any) int {
	n, _ := workorder.AsInt(v)
	return int(n)
}

func renderStatus(f *Factory, format string, allEdges bool, rows []StatusRow) {
	io.WriteString(f.Stdout, renderString(f, format, allEdges, rows))
}

func renderString(f *Factory, format string, allEdges bool, rows []StatusRow) string {
	switch format {
	case "markdown":
		return markdownStatus(rows)
	case "mermaid":
		return mermaidStatus(rows, allEdges)
	case "dot":
		return dotStatus(rows, allEdges)
	}
	return tableStatus(rows, useColour(f))
}

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
		if rows[0].ReviewEstimate != "" {
			b.WriteString("review estimate: " + termtext.Line(rows[0].ReviewEstimate) + "\n")
		}
	}
	return b.String()
}

// number reads a JSON number as the store gives it (json.Number) or as Go
// built it; anything else is 0.
func number(v any) float64 {
	switch n := v.(type) {
	case float64:
		return n
	case int:
		return float64(n)
	case json.Number:
		f, _ := n.Float64()
		return f
	}
	return 0
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

func stepText(r StatusRow) string {
	if r.Steps == 0 {
		return "-"
	}
	return fmt.Sprintf("%d/%d", r.Step, r.Steps)
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

// progressLine counts the children: done, in review, running, blocked,
// not started; with a bar of done and in-review work.
func progressLine(children []StatusRow) string {
	n := map[workorder.Status]int{}
	for _, r := range children {
		n[r.Status]++
	}
	total := len(children)
	const width = 30
	done := n[workorder.StatusClosed] * width / max(total, 1)
	review := n[workorder.StatusInReview] * width / max(total, 1)
	bar := strings.Repeat("█", done) + strings.Repeat("▓", review) + strings.Repeat("░", width-done-review)
	return fmt.Sprintf("[%s] %d tasks: %d done · %d in review · %d running · %d blocked · %d not started",
		bar, total, n[workorder.StatusClosed], n[workorder.StatusInReview], n[workorder.StatusInProgress],
		n[workorder.StatusBlocked], n[workorder.StatusOpen])
}

func markdownStatus(rows []StatusRow) string {
	var b strings.Builder
	if len(rows) > 0 {
		fmt.Fprintf(&b, "### %s — %s\n\n", mdEscape(rows[0].Key), mdEscape(rows[0].Title))
	}
	b.WriteString("| Task | Status | Step | PR | Fix rounds | Open comments | Waits for |\n|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		pr := "—"
		if safeLink(r.PRURL) {
			pr = fmt.Sprintf("[#%d](%s)", r.PRNumber, r.PRURL)
		} else if r.PRNumber > 0 {
			pr = fmt.Sprintf("#%d", r.PRNumber)
		}
		fmt.Fprintf(&b, "| %s %s | %s | %s | %s | %d | %d | %s |\n", mdCode(r.Key), mdEscape(r.Title), mdEscape(string(r.Status)), stepText(r), pr,
			r.ReviewIterations, r.OpenComments, mdEscape(orDash(strings.Join(r.WaitingFor, ", "))))
	}
	if len(rows) > 1 {
		fmt.Fprintf(&b, "\n%s\n", progressLine(rows[1:]))
	}
	return b.String()
}

// mdEscape makes untrusted text one inert Markdown table cell.
func mdEscape(s string) string { return termtext.MarkdownCell(s) }

// mdCode is a key as inline code, or escaped text when it holds a backtick.
func mdCode(s string) string {
	if s == "" || strings.ContainsAny(s, "`\r\n|") {
		return mdEscape(s)
	}
	return "`" + termtext.Line(s) + "`"
}

// safeLink is a URL that may become a Markdown link.
func safeLink(u string) bool { return termtext.MarkdownLinkable(u) }

// graphRows are the children when there are any, else the task itself.
func graphRows(rows []StatusRow) []StatusRow {
	if len(rows) > 1 {
		return rows[1:]
	}
	return rows
}

// graphEdge is a dependency: From must be done before To.
type graphEdge struct{ From, To string }

// graphEdges are the dependencies among rows, in row and blocker order:
// every one with all, else the transitive reduction, without an edge that
// a longer path from the same blocker already implies.
func graphEdges(rows []StatusRow, all bool) []graphEdge {
	blockers := map[string][]string{}
	for _, r := range rows {
		blockers[r.Key] = r.BlockedBy
	}
	// ancestors[k]: every task k depends on, directly or not.
	ancestors := map[string]map[string]bool{}
	var visit func(k string, onPath map[string]bool) map[string]bool
	visit = func(k string, onPath map[string]bool) map[string]bool {
		if a, ok := ancestors[k]; ok {
			return a
		}
		a := map[string]bool{}
		if onPath[k] {
			return a // a cycle (refused on import): stop here
		}
		onPath[k] = true
		for _, b := range blockers[k] {
			a[b] = true
			for x := range visit(b, onPath) {
				a[x] = true
			}
		}
		delete(onPath, k)
		ancestors[k] = a
		return a
	}
	var edges []graphEdge
	for _, r := range rows {
		for _, d := range r.BlockedBy {
			implied := false
			for _, other := range r.BlockedBy {
				if other != d && visit(other, map[string]bool{})[d] {
					implied = true
					break
				}
			}
			if all || !implied {
				edges = append(edges, graphEdge{From: d, To: r.Key})
			}
		}
	}
	return edges
}

// graphMark says whether a task is being run, waits for a blocker, or is
// blocked ("" for none of these).
func graphMark(r StatusRow) string {
	switch {
	case r.HeldBy != "":
		return "running"
	case r.Status == workorder.StatusBlocked:
		return "blocked"
	case len(r.WaitingFor) > 0:
		return "waiting"
	}
	return ""
}

func graphLabelStatus(r StatusRow) string {
	if m := graphMark(r); m != "" && m != string(r.Status) {
		return string(r.Status) + ", " + m
	}
	return string(r.Status)
}

var mermaidMarks = map[string]string{"running": "stroke:#06c,stroke-width:3px", "waiting": "stroke-dasharray:4 3",
	"blocked": "stroke:#c00,stroke-width:2px"}

func mermaidStatus(rows []StatusRow, allEdges bool) string {
	var b strings.Builder
	b.WriteString("graph TD\n")
	nodes := graphRows(rows)
	for _, r := range nodes {
		fmt.Fprintf(&b, "  %s[\"%s<br/>%s\"]:::%s\n", mermaidID(r.Key), mermaidText(r.Title), mermaidText(graphLabelStatus(r)), mermaidID(string(r.Status)))
	}
	for _, e := range graphEdges(nodes, allEdges) {
		fmt.Fprintf(&b, "  %s --> %s\n", mermaidID(e.From), mermaidID(e.To))
	}
	used := map[string]bool{}
	for _, r := range nodes {
		if m := graphMark(r); m != "" {
			fmt.Fprintf(&b, "  class %s mark_%s\n", mermaidID(r.Key), m)
			used[m] = true
		}
	}
	b.WriteString("  classDef closed fill:#cfc\n  classDef in_review fill:#cef\n  classDef in_progress fill:#ffc\n  classDef blocked fill:#fcc\n  classDef open fill:#eee\n")
	for _, m := range []string{"running", "waiting", "blocked"} {
		if used[m] {
			fmt.Fprintf(&b, "  classDef mark_%s %s\n", m, mermaidMarks[m])
		}
	}
	return b.String()
}

// mermaidID is a key as a Mermaid node id: kept when it is plain letters,
// digits and _-, else a stable id made from its bytes, so that no key can
// end the statement or start another one.
func mermaidID(s string) string {
	plain := s != ""
	for _, r := range s {
		if !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			plain = false
			break
		}
	}
	if plain {
		return s
	}
	return fmt.Sprintf("id_%x", s)
}

// mermaidText is untrusted text inside a quoted Mermaid label: one line,
// with the characters Mermaid and its HTML labels read as entity codes.
func mermaidText(s string) string {
	s = termtext.Line(strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(s))
	return strings.NewReplacer("#", "#35;", `"`, "#quot;", "<", "#lt;", ">", "#gt;", "&", "#amp;",
		"`", "#96;", "[", "#91;", "]", "#93;", "{", "#123;", "}", "#125;", "|", "#124;", ";", "#59;").Replace(s)
}

// dotString is untrusted text as a quoted Graphviz string: quotes and
// backslashes escaped (a backslash would start \l, \N and friends), one
// line.
func dotString(s string) string { return `"` + dotInner(s) + `"` }

func dotInner(s string) string {
	s = termtext.Line(strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(s))
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s)
}

func dotStatus(rows []StatusRow, allEdges bool) string {
	colours := map[workorder.Status]string{workorder.StatusClosed: "palegreen", workorder.StatusInReview: "lightblue",
		workorder.StatusInProgress: "lightyellow", workorder.StatusBlocked: "pink", workorder.StatusOpen: "white"}
	marks := map[string]string{"running": `, style="filled,bold", penwidth=3, color=blue`,
		"waiting": `, style="filled,dashed"`, "blocked": `, penwidth=2, color=red`}
	var b strings.Builder
	b.WriteString("digraph epic {\n  rankdir=LR;\n  node [shape=box, style=filled];\n")
	nodes := graphRows(rows)
	for _, r := range nodes {
		fill := colours[r.Status]
		if fill == "" {
			fill = "white"
		}
		label := dotInner(r.Key) + `\n` + dotInner(r.Title) + `\n` + dotInner(graphLabelStatus(r))
		fmt.Fprintf(&b, "  %s [label=\"%s\", fillcolor=%s%s];\n", dotString(r.Key), label, fill, marks[graphMark(r)])
	}
	for _, e := range graphEdges(nodes, allEdges) {
		fmt.Fprintf(&b, "  %s -> %s;\n", dotString(e.From), dotString(e.To))
	}
	b.WriteString("}\n")
	return b.String()
}

func appendFile(path, text string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.WriteString(f, text); err != nil {
		f.Close()
		return err
	}
	return f.Close()
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
