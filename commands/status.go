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
	"time"

	"github.com/urfave/cli/v2"

	"github.com/wo-runner/wo/intake"
	"github.com/wo-runner/wo/internal/cores"
	"github.com/wo-runner/wo/internal/gitname"
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
	// Wide shows every column and cell whole, whatever the width.
	Wide bool
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
few seconds until Ctrl-C. --refresh first reads the PRs on GitHub (wo sync).

Without a KEY, wo status names the store's epics to give it (exit 2).

The table fits the terminal: its width is $COLUMNS, else the terminal's,
else 80. When its rows are too wide, columns with nothing in them are left
out, then as many as needed of UPDATED, COMMENTS, FIX ROUNDS, ESTIMATE,
OPEN THREADS, RUNNER and PR, and a line below the table names them; then
an epic's children show their keys without the start they share with the
epic's (…_01_foundation), and long cells are cut with …: the title first,
then the key, WAITS FOR, the runner and the next step. One task's table
wraps what it waits for and its title instead. --wide shows every column
and every value whole. ESTIMATE is the time left and how sure it is
(~7 min (low)); wo show says what it rests on.`,
		Flags: append(storeFlags(),
			&cli.StringFlag{Name: "epic", Usage: "the epic `KEY` (the same as giving it as the argument)"},
			&cli.StringFlag{Name: "format", Value: "table", Usage: "table, markdown, mermaid or dot"},
			&cli.BoolFlag{Name: "all-edges", Usage: "with --format mermaid or dot: draw every dependency, also those a longer path implies"},
			&cli.BoolFlag{Name: "watch", Usage: "redraw every few seconds"},
			&cli.DurationFlag{Name: "interval", Value: 3 * time.Second, Usage: "with --watch: how often"},
			&cli.BoolFlag{Name: "refresh", Usage: "first read the pull requests on GitHub, as wo sync does"},
			&cli.StringFlag{Name: "github-api", Usage: "GitHub API base `URL`"},
			wideFlag(),
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
	if key == "" && c.Args().Present() {
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
		Refresh: c.Bool("refresh"), GitHubAPI: c.String("github-api"), Wide: c.Bool("wide")}, nil
}

func runStatus(ctx context.Context, f *Factory, o *statusOptions) (result, error) {
	if o.Key == "" {
		return result{}, whichTask(ctx, f, o.Store)
	}
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
			io.WriteString(f.Stdout, renderString(f.view(o.Wide), o.Format, o.AllEdges, rows))
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
		_, err := io.WriteString(w, renderString(f.view(o.Wide), o.Format, o.AllEdges, rows))
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
	// GitHubStack is where its pull request stands in one of GitHub's own
	// stacks, as GitHub's stack object said when wo last read it.
	GitHubStack *workorder.PRStack `json:"github_stack,omitempty"`
	// GitHubStacks is, for an epic, whether its repository has GitHub's
	// stacks and the stacks wo made of it; Land its last wo land.
	GitHubStacks *workorder.GitHubStacks `json:"github_stacks,omitempty"`
	Land         *workorder.Land         `json:"land,omitempty"`
	// Agent is what the agent's runs for the task did and cost.
	Agent *workorder.AgentUsage `json:"agent,omitempty"`
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
	st, _ := workorder.StateOf(d) // a state this wo cannot read shows as not started
	r.GitHubStack, r.GitHubStacks, r.Land = st.PRStack, st.GitHubStacks, st.Land
	wo, ok := d["work_order"].(map[string]any)
	if !ok {
		return r
	}
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
	r.Agent = st.AgentUsage
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
		r.Stack = fmt.Sprintf("restacked at %s onto %s", gitname.Short(rs.To), orDash(st.StackBase))
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

// renderString draws the rows in one --format; each format has its own
// file: status_table.go, status_markdown.go, status_mermaid.go and
// status_dot.go (the last two draw the dependency graph of
// status_graph.go). Only the table is for a terminal: the others are
// read by programs that want every value whole.
func renderString(v textView, format string, allEdges bool, rows []StatusRow) string {
	switch format {
	case "markdown":
		return markdownStatus(rows)
	case "mermaid":
		return mermaidStatus(rows, allEdges)
	case "dot":
		return dotStatus(rows, allEdges)
	}
	return tableStatus(rows, v)
}

// stepText is the STEP cell of the table and of Markdown: done/all.
func stepText(r StatusRow) string {
	if r.Steps == 0 {
		return "-"
	}
	return fmt.Sprintf("%d/%d", r.Step, r.Steps)
}

// progressLine counts the children: done, in review, running, blocked,
// not started; with a bar of done and in-review work, above the counts
// when both do not fit the width (0: no limit).
func progressLine(children []StatusRow, width int) string {
	n := map[workorder.Status]int{}
	for _, r := range children {
		n[r.Status]++
	}
	total := len(children)
	const barWidth = 30
	done := n[workorder.StatusClosed] * barWidth / max(total, 1)
	review := n[workorder.StatusInReview] * barWidth / max(total, 1)
	bar := strings.Repeat("█", done) + strings.Repeat("▓", review) + strings.Repeat("░", barWidth-done-review)
	counts := fmt.Sprintf("%d tasks: %d done · %d in review · %d running · %d blocked · %d not started",
		total, n[workorder.StatusClosed], n[workorder.StatusInReview], n[workorder.StatusInProgress],
		n[workorder.StatusBlocked], n[workorder.StatusOpen])
	if line := "[" + bar + "] " + counts; width <= 0 || termtext.Width(line) <= width {
		return line
	}
	return "[" + bar + "]\n" + counts
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

// appendFile adds the Markdown to $GITHUB_STEP_SUMMARY.
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

// whichTask is wo status without a key: a usage mistake, whose message says
// what to give and where to find one — the store's epics, which is what
// wo status shows best, else wo list.
func whichTask(ctx context.Context, f *Factory, cfg StoreConfig) error {
	const need = "give the KEY of a task or an epic"
	var docs []workorder.Document
	err := f.useStore(ctx, readOnly(cfg), func(s store.Store) error {
		var err error
		docs, err = s.List(ctx, store.Filter{})
		return err
	})
	var missing *store.MissingError
	if err != nil && !errors.As(err, &missing) {
		return usagef(need + "; wo list shows the tasks of the store")
	}
	if len(docs) == 0 {
		return usagef(need + "; this store has no tasks yet: wo import FILE, wo create or wo split adds some")
	}
	children := map[string]int{}
	for _, d := range docs {
		if p := workorder.String(d, "parent_key"); p != "" {
			children[p]++
		}
	}
	var epics []string
	for _, d := range docs {
		k := workorder.Key(d)
		if children[k] == 0 && workorder.String(d, "type") != "epic" {
			continue
		}
		e := fmt.Sprintf("%s (%d task(s)", k, children[k])
		if title := workorder.String(d, "title"); title != "" {
			e += ": " + termtext.Clip(title, 60)
		}
		epics = append(epics, e+")")
	}
	if len(epics) == 0 {
		return usagef(fmt.Sprintf("%s; wo list shows the %d task(s) of this store", need, len(docs)))
	}
	return usagef(fmt.Sprintf("%s, such as an epic of this store: %s; wo list shows every task", need, joinKeys(epics, 5)))
}
