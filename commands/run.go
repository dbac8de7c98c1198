package commands

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/wo-runner/wo/agent"
	"github.com/wo-runner/wo/procedure"
	"github.com/wo-runner/wo/procedure/action"
	"github.com/wo-runner/wo/procedure/ghevent"
	"github.com/wo-runner/wo/procedure/stack"
	"github.com/wo-runner/wo/store"
	"github.com/wo-runner/wo/termtext"
	"github.com/wo-runner/wo/workorder"
)

// faultHook is set only in test builds (-tags wofault): it lets the
// integration tests crash a real wo process at a named point.
var faultHook func(point string)

func newRunCommand(f *Factory) *cli.Command { return runCommand(f, runRun) }

// runOptions are what wo run is asked: one task, or an epic's children.
type runOptions struct {
	Store StoreConfig
	JSON  bool // NDJSON events on stdout, then a one-line envelope
	// Task is the one task to run: its key, the step range and the
	// repository.
	Task   procedure.RunOptions
	DryRun bool
	// Wide shows an epic's table whole, however wide the terminal.
	Wide bool
	// Epic runs the children of this epic instead of one task.
	Epic     string
	Parallel int
	// Wait for children other runners hold (--wait, or CI=true), at most
	// WaitTimeout for each.
	Wait        bool
	WaitTimeout time.Duration
	// GitHubEvent is an event payload file (--github-event, or
	// $GITHUB_EVENT_PATH for the events wo resumes on) and its name.
	GitHubEvent     string
	GitHubEventName string
	// ContinueEpic runs the event's task's epic after the event, so that
	// a merge starts the tasks that waited for it.
	ContinueEpic bool
	Engine       engineOptions
	// ProgressEvery is how often a wait's plain line is printed when
	// stderr is no terminal (WO_PROGRESS_INTERVAL); 0 shows no wait.
	ProgressEvery time.Duration
}

// engineOptions are the flags that tune the step engine; a command that
// has none of them leaves them zero.
type engineOptions struct {
	Agent         string
	MaxIterations int
	GitHubAPI     string
	ReviewWait    time.Duration
	NoReviewWait  bool // --review-wait 0: look once, never wait
	// Reviewers are the logins to wait for (--reviewer); ResolveThreads
	// resolves the threads a fix addressed (--resolve-threads).
	Reviewers      []string
	ResolveThreads bool
	PollInterval   time.Duration
	AgentTimeout   time.Duration
	GitTimeout     time.Duration
	GitStall       time.Duration
	// AgentEnv are the names --agent-env passes to the agent.
	AgentEnv []string
	// The agent's login, caps and sandbox (--agent-login,
	// --max-agent-rounds, --max-agent-cost, --rerun-agent,
	// --agent-sandbox, --agent-writable, --agent-allow-port).
	AgentLogin     bool
	MaxAgentRounds int
	MaxAgentCost   float64
	RerunAgent     bool
	DiscardCommits bool
	AgentSandbox   string
	AgentWritable  []string
	AgentReadable  []string
	AgentPorts     []int
	AgentHosts     []string
}

func runCommand(f *Factory, run func(context.Context, *Factory, *runOptions) (result, error)) *cli.Command {
	return &cli.Command{
		Name:      "run",
		Usage:     "execute a work order from where it stopped",
		ArgsUsage: "KEY",
		Description: `Loads the task, takes its lease (exit 4 if another runner holds it), waits for
nothing: a blocked_by task that is not closed stops the run at once (exit 3,
nothing changed). Then it runs each step from current_step + 1, writing
work_order.state back after every step. Kill it at any moment and run it
again: every step looks at the repository before acting, so a rerun never
makes a second branch, commit or push.

--epic KEY runs an epic's children in dependency waves. Several runners may
run one epic at once: a child another runner holds is reported as running
elsewhere (never exit 4); with --wait (the default when CI=true) the runner
waits for it and goes on with its dependents, so one round of runners
finishes the epic.

--dry-run prints the plan with every template rendered and changes nothing.
--json prints one JSON event per step on stdout (NDJSON), then the envelope.`,
		Flags: append(storeFlags(),
			&cli.BoolFlag{Name: "dry-run", Usage: "print what would be done; change nothing"},
			wideFlag(),
			&cli.StringFlag{Name: "epic", Usage: "run the children of epic `KEY` in dependency waves"},
			&cli.IntFlag{Name: "parallel", Value: 1, Usage: "with --epic: run up to `N` tasks at a time"},
			&cli.BoolFlag{Name: "wait", Usage: "with --epic: wait for children other runners hold, then go on with their dependents", DefaultText: "on when CI=true"},
			&cli.DurationFlag{Name: "wait-timeout", Value: 30 * time.Minute, Usage: "with --epic --wait: stop waiting for another runner after this `DURATION`"},
			&cli.IntFlag{Name: "from-step", Usage: "start at step `N` instead of after current_step"},
			&cli.IntFlag{Name: "until-step", Usage: "stop after step `N`"},
			&cli.StringFlag{Name: "repo", Usage: "the repository's main checkout `PATH`", DefaultText: "context.repo_path"},
			&cli.StringFlag{Name: "agent", Usage: "the agent that fixes review comments: `NAME` of one wo knows (" + strings.Join(agent.Names(), ", ") + "), or a command line (run in the worktree, prompt on stdin); see docs/agents.md"},
			&cli.BoolFlag{Name: "agent-login", Usage: "let a named agent use your own login: its config folder (such as ~/.claude), never a copy; without it only its API key variables log it in"},
			&cli.IntFlag{Name: "max-agent-rounds", Usage: "stop (exit 3) once the agent has fixed `N` rounds for this task", DefaultText: "the loop's own bound"},
			&cli.Float64Flag{Name: "max-agent-cost", Usage: "stop (exit 3) once the agent's runs for this task cost `USD` dollars, as the agent reports it", DefaultText: "no cap"},
			&cli.BoolFlag{Name: "discard-commits", Usage: "let a step run again write its files over commits on the branch that changed them (a review fix, a person's commit), and push that; without it such a step stops (exit 3) and names them"},
			&cli.BoolFlag{Name: "rerun-agent", Usage: "ask the agent again about comments it answered with no change"},
			&cli.StringFlag{Name: "agent-sandbox", Usage: "`on` or off: confine the agent (it may write only its worktree, its own folder and the build caches, connect only to its API's port, and not reach wo)", DefaultText: "on where the kernel has Landlock"},
			&cli.StringSliceFlag{Name: "agent-writable", Usage: "also let the sandboxed agent write folder `DIR` (repeat; WO_AGENT_WRITABLE is :-separated)"},
			&cli.StringSliceFlag{Name: "agent-readable", Usage: "also show the boxed agent folder `DIR`, read-only (repeat; WO_AGENT_READABLE is :-separated)", DefaultText: "the system's folders, toolchains on PATH, the repository's .git"},
			&cli.StringSliceFlag{Name: "agent-allow-host", Usage: "also let the boxed agent reach `HOST` (or HOST:PORT; 443 when none) through wo's proxy (repeat): an LLM gateway, a package registry", DefaultText: "its model's API hosts"},
			&cli.IntSliceFlag{Name: "agent-allow-port", Usage: "where the kernel gives no box (Landlock alone): also let the agent connect to TCP `PORT` on any host (repeat)", DefaultText: "443 only"},
			&cli.IntFlag{Name: "max-iterations", Usage: "bound on review-fix iterations when a step sets none", DefaultText: "5"},
			&cli.StringFlag{Name: "github-api", Usage: "GitHub API base `URL` (GitHub Enterprise: https://HOST/api/v3/)"},
			&cli.DurationFlag{Name: "review-wait", Usage: "wait this long for a review instead of the step's duration_minutes; with none by then the run stops (exit 3) and the next run waits again; 0 looks once and stops until a review event resumes the run", DefaultText: "the step's duration_minutes"},
			&cli.BoolFlag{Name: "continue-epic", Usage: "with --github-event: then run the epic of the event's task, so that a merge starts what waited for it"},
			&cli.StringSliceFlag{Name: "reviewer", Usage: "wait for a review by this `LOGIN`, and count only its comments and writers' (repeat for several)", DefaultText: "context.reviewers, else the review bots wo knows that show up"},
			&cli.BoolFlag{Name: "resolve-threads", Usage: "resolve the review threads a fix addressed", DefaultText: "context.resolve_threads"},
			&cli.StringFlag{Name: "github-event", Usage: "resume the work order a GitHub event payload `FILE` names", DefaultText: "$GITHUB_EVENT_PATH for pull_request_review, pull_request_review_comment, pull_request and issue_comment events"},
			&cli.DurationFlag{Name: "poll-interval", Usage: "how often to poll GitHub while waiting", DefaultText: "30s"},
			&cli.StringSliceFlag{Name: "agent-env", Usage: "also pass the environment variable `NAME` to the agent (repeat, or comma-separate in WO_AGENT_ENV; the agent gets only PATH, LANG, LC_*, TERM, TMPDIR, a temporary HOME, WO_TASK_KEY, WO_WORKTREE, WO_PROMPT_FILE and these)"},
			&cli.DurationFlag{Name: "agent-timeout", Value: 30 * time.Minute, Usage: "stop an agent run (and its child processes) after this `DURATION`"},
			&cli.DurationFlag{Name: "git-timeout", Value: action.DefaultGitTimeout, Usage: "give up on a git push that takes longer than this `DURATION`"},
			&cli.DurationFlag{Name: "git-stall", Value: action.DefaultGitStall, Usage: "give up on a git remote that sends and takes no byte for this `DURATION` (a slow transfer that moves is never cut off)"},
		),
		Action: f.action(func(c *cli.Context) (result, error) {
			opts, err := runOptionsFrom(c, f)
			if err != nil {
				return result{}, err
			}
			return run(c.Context, f, opts)
		}),
	}
}

// runOptionsFrom reads the flags.
func runOptionsFrom(c *cli.Context, f *Factory) (*runOptions, error) {
	o := &runOptions{
		Store: f.storeConfig(c), JSON: c.Bool("json") && c.String("jq") == "", DryRun: c.Bool("dry-run"), Wide: c.Bool("wide"),
		Task: procedure.RunOptions{FromStep: c.Int("from-step"), UntilStep: c.Int("until-step"), RepoPath: c.String("repo")},
		Epic: c.String("epic"), Parallel: c.Int("parallel"), Wait: epicWait(c, f), WaitTimeout: c.Duration("wait-timeout"),
		Engine: engineOptionsFrom(c),
	}
	every, err := progressEvery(f)
	if err != nil {
		return nil, err
	}
	o.ProgressEvery = every
	if !c.IsSet("agent-writable") {
		o.Engine.AgentWritable = writableDirs([]string{f.Getenv("WO_AGENT_WRITABLE")})
	}
	if !c.IsSet("agent-readable") {
		o.Engine.AgentReadable = writableDirs([]string{f.Getenv("WO_AGENT_READABLE")})
	}
	if err := checkRunOptions(o); err != nil {
		return nil, err
	}
	if err := readRunTarget(c, f, o); err != nil {
		return nil, err
	}
	return o, nil
}

// checkRunOptions refuses a value no run can use: a negative time or
// count, a reviewer's name GitHub would not give, an unknown sandbox
// setting, a port or folder the agent's sandbox cannot take, an agent
// command or environment name wo cannot use.
func checkRunOptions(o *runOptions) error {
	for name, d := range map[string]time.Duration{"review-wait": o.Engine.ReviewWait, "poll-interval": o.Engine.PollInterval,
		"agent-timeout": o.Engine.AgentTimeout, "git-timeout": o.Engine.GitTimeout, "git-stall": o.Engine.GitStall, "wait-timeout": o.WaitTimeout} {
		if d < 0 {
			return usagef(fmt.Sprintf("--%s %s: a time cannot be negative", name, d))
		}
	}
	if o.Engine.MaxIterations < 0 || o.Parallel < 0 {
		return usagef("--max-iterations and --parallel cannot be negative")
	}
	for _, r := range o.Engine.Reviewers {
		if strings.TrimSpace(r) == "" || strings.ContainsAny(r, " \t\n/@") {
			return usagef(fmt.Sprintf("--reviewer %q: name the reviewer as GitHub does (coderabbitai[bot], alice)", r))
		}
	}
	switch o.Engine.AgentSandbox {
	case "", action.SandboxOn, action.SandboxOff:
	default:
		return usagef(fmt.Sprintf("--agent-sandbox %q: give on or off", o.Engine.AgentSandbox))
	}
	if o.Engine.MaxAgentRounds < 0 || o.Engine.MaxAgentCost < 0 {
		return usagef("--max-agent-rounds and --max-agent-cost cannot be negative")
	}
	for _, p := range o.Engine.AgentPorts {
		if p < 1 || p > 65535 {
			return usagef(fmt.Sprintf("--agent-allow-port %d: give a TCP port, 1 to 65535", p))
		}
	}
	for _, d := range o.Engine.AgentWritable {
		if !filepath.IsAbs(d) || filepath.Clean(d) == "/" {
			return usagef(fmt.Sprintf("--agent-writable %q: give an absolute folder other than /", d))
		}
	}
	for _, d := range o.Engine.AgentReadable {
		if !filepath.IsAbs(d) || filepath.Clean(d) == "/" {
			return usagef(fmt.Sprintf("--agent-readable %q: give an absolute folder other than / (the box shows the system's folders already)", d))
		}
	}
	for _, h := range o.Engine.AgentHosts {
		if err := action.CheckAgentHost(h); err != nil {
			return usagef(err.Error())
		}
	}
	if o.Engine.Agent != "" {
		if _, err := agent.Parse(o.Engine.Agent); err != nil {
			return usagef("--agent: " + err.Error())
		}
	}
	for _, name := range o.Engine.AgentEnv {
		if err := action.CheckAgentEnv(name); err != nil {
			return usagef(err.Error())
		}
	}
	return nil
}

// readRunTarget reads what the run is for: the work order a GitHub event
// names, an epic, or one task KEY, each alone.
func readRunTarget(c *cli.Context, f *Factory, o *runOptions) error {
	o.GitHubEvent, o.GitHubEventName = githubEventOf(c, f)
	o.ContinueEpic = c.Bool("continue-epic")
	if o.ContinueEpic && o.GitHubEvent == "" {
		return usagef("--continue-epic goes with --github-event (or GITHUB_EVENT_PATH in a workflow run for a pull request event)")
	}
	if o.GitHubEvent != "" {
		if c.Args().Len() > 0 || o.DryRun || o.Task.FromStep > 0 || o.Task.UntilStep > 0 {
			return usagef("--github-event finds its work order from the event: give no task KEY, --dry-run or step range")
		}
		return nil
	}
	if o.Epic != "" {
		if c.Args().Len() > 0 {
			return usagef("give either a task KEY or --epic KEY, not both")
		}
		if o.DryRun || o.Task.FromStep > 0 || o.Task.UntilStep > 0 {
			return usagef("--dry-run, --from-step and --until-step work on one task, not with --epic")
		}
		return nil
	}
	key, err := oneArg(c, "task KEY")
	if err != nil {
		return err
	}
	o.Task.Key = key
	return nil
}

// engineOptionsFrom reads the engine's flags; those the command lacks
// read as zero.
func engineOptionsFrom(c *cli.Context) engineOptions {
	return engineOptions{
		Agent: c.String("agent"), MaxIterations: c.Int("max-iterations"), GitHubAPI: c.String("github-api"),
		ReviewWait: c.Duration("review-wait"), PollInterval: c.Duration("poll-interval"),
		NoReviewWait: c.IsSet("review-wait") && c.Duration("review-wait") == 0,
		Reviewers:    c.StringSlice("reviewer"), ResolveThreads: c.Bool("resolve-threads"),
		AgentTimeout: c.Duration("agent-timeout"), GitTimeout: c.Duration("git-timeout"), GitStall: c.Duration("git-stall"),
		AgentEnv:   c.StringSlice("agent-env"),
		AgentLogin: c.Bool("agent-login"), MaxAgentRounds: c.Int("max-agent-rounds"), MaxAgentCost: c.Float64("max-agent-cost"),
		RerunAgent: c.Bool("rerun-agent"), DiscardCommits: c.Bool("discard-commits"), AgentSandbox: c.String("agent-sandbox"), AgentPorts: c.IntSlice("agent-allow-port"),
		AgentWritable: writableDirs(c.StringSlice("agent-writable")), AgentReadable: writableDirs(c.StringSlice("agent-readable")),
		AgentHosts: c.StringSlice("agent-allow-host"),
	}
}

// writableDirs reads --agent-writable: repeated, and each value a
// :-separated list as WO_AGENT_WRITABLE is (a path may hold commas).
func writableDirs(values []string) []string {
	var out []string
	for _, v := range values {
		for _, d := range filepath.SplitList(v) {
			if d = strings.TrimSpace(d); d != "" {
				out = append(out, d)
			}
		}
	}
	return out
}

func runRun(ctx context.Context, f *Factory, o *runOptions) (result, error) {
	if o.GitHubEvent != "" {
		return runOnGitHubEvent(ctx, f, o)
	}
	if o.Epic != "" {
		return runEpic(ctx, f, o)
	}
	var res any
	var human func(io.Writer) error
	err := f.useStore(ctx, o.Store, func(s store.Store) error {
		eng := f.engine(s, o.Engine)
		if err := checkStepRange(ctx, eng, o.Task); err != nil {
			return err
		}
		if o.DryRun {
			// A plan that a run could not start is still shown, and the
			// dry run fails as the run would (exit 2).
			plan, err := eng.Plan(ctx, o.Task)
			if plan != nil {
				res, human = plan, func(w io.Writer) error { return writePlan(w, plan) }
			}
			return err
		}
		progress := newProgress(f, o)
		eng.Events = progress.event
		out, err := eng.Run(ctx, o.Task)
		progress.stop()
		if out != nil {
			res = out
			human = func(w io.Writer) error { return writeRunResult(w, out) }
		}
		return err
	})
	return result{data: res, human: human, compact: o.JSON, always: o.DryRun}, err
}

// runEpic runs an epic's children in waves and reports each one.
func runEpic(ctx context.Context, f *Factory, o *runOptions) (result, error) {
	var out *procedure.EpicResult
	err := f.useStore(ctx, o.Store, func(s store.Store) error {
		eng := f.engine(s, o.Engine)
		progress := newProgress(f, o)
		progress.withKeys = true
		eng.Events = progress.event
		if o.Wait {
			eng.EpicWait = o.WaitTimeout
		}
		var err error
		out, err = eng.RunEpic(ctx, o.Epic, o.Parallel, procedure.RunOptions{RepoPath: o.Task.RepoPath})
		progress.stop()
		return err
	})
	if out == nil {
		return result{}, err
	}
	return result{data: out, compact: o.JSON, always: true, human: func(w io.Writer) error { return writeEpicResult(w, out, f.textWidth(o.Wide)) }}, err
}

// githubEventOf is the event payload to resume on: --github-event FILE
// (its name from GITHUB_EVENT_NAME), else $GITHUB_EVENT_PATH when the
// workflow runs for an event wo resumes on.
func githubEventOf(c *cli.Context, f *Factory) (path, name string) {
	name = f.Getenv("GITHUB_EVENT_NAME")
	if p := c.String("github-event"); p != "" {
		return p, name
	}
	if p := f.Getenv("GITHUB_EVENT_PATH"); p != "" && slices.Contains(ghevent.ResumeEvents, name) && c.Args().Len() == 0 && c.String("epic") == "" {
		return p, name
	}
	return "", ""
}

// runOnGitHubEvent resumes the work order a GitHub event is about.
func runOnGitHubEvent(ctx context.Context, f *Factory, o *runOptions) (result, error) {
	if o.GitHubEventName == "" {
		return result{}, usagef("--github-event needs the event's name in GITHUB_EVENT_NAME (as GitHub Actions sets it)")
	}
	data, err := readBounded(o.GitHubEvent, ghevent.MaxEventSize)
	if err != nil {
		return result{}, err
	}
	ev, err := ghevent.ParseGitHubEvent(o.GitHubEventName, data)
	if err != nil {
		return result{}, err
	}
	var out *ghevent.EventResult
	err = f.useStore(ctx, o.Store, func(s store.Store) error {
		eng := f.engine(s, o.Engine)
		progress := newProgress(f, o)
		eng.Events = progress.event
		var err error
		out, err = ghevent.OnGitHubEvent(ctx, eng, ev, procedure.RunOptions{RepoPath: o.Task.RepoPath})
		if err != nil || !o.ContinueEpic || out.Key == "" {
			progress.stop()
			return err
		}
		doc, err := s.Get(ctx, out.Key)
		if epic := workorder.String(doc, "parent_key"); err == nil && epic != "" {
			progress.withKeys = true
			if o.Wait {
				eng.EpicWait = o.WaitTimeout
			}
			out.Epic, err = eng.RunEpic(ctx, epic, max(o.Parallel, 1), procedure.RunOptions{RepoPath: o.Task.RepoPath})
		}
		progress.stop()
		return err
	})
	if out == nil {
		return result{}, err
	}
	return result{data: out, compact: o.JSON, always: true, human: func(w io.Writer) error {
		var err error
		switch {
		case out.Action == "ignored" && ev.SHA != "":
			_, err = fmt.Fprintf(w, "%s of %s in %s: %s\n", ev.Name, ev.SHA, termtext.Line(ev.Repo), termtext.Line(out.Reason))
		case out.Action == "ignored":
			_, err = fmt.Fprintf(w, "%s #%d of %s: %s\n", ev.Name, ev.PR, termtext.Line(ev.Repo), termtext.Line(out.Reason))
		case out.Sync != nil:
			_, err = fmt.Fprintf(w, "%s: pull request #%d is %s; task %s\n", out.Key, ev.PR, out.Sync.PRState, out.Sync.Status)
		case out.Run != nil:
			err = writeRunResult(w, out.Run)
		}
		if err == nil && out.Epic != nil {
			err = writeEpicResult(w, out.Epic, f.textWidth(o.Wide))
		}
		return err
	}}, err
}

// readBounded reads a file of at most limit bytes.
func readBounded(path string, limit int64) ([]byte, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, usagef(fmt.Sprintf("cannot read the event payload: %v", err))
	}
	defer fh.Close()
	data, err := io.ReadAll(io.LimitReader(fh, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, &ghevent.EventError{Msg: fmt.Sprintf("the event payload %s is larger than %d bytes", path, limit)}
	}
	return data, nil
}

// epicWait reports whether an epic run waits for children other runners
// hold: --wait, or by default in CI, where several jobs run one epic.
func epicWait(c *cli.Context, f *Factory) bool {
	if c.IsSet("wait") {
		return c.Bool("wait")
	}
	return f.Getenv("CI") == "true"
}

// writeEpicResult prints an epic run's table within width (0: no limit):
// a task a line, its key without the start it shares with the epic's when
// the table is narrowed, and the reason wrapped rather than cut.
func writeEpicResult(w io.Writer, r *procedure.EpicResult, width int) error {
	t := &termtext.Table{Columns: []termtext.Column{{Header: "WAVE"}, {Header: "KEY", Give: 2, Min: 12}, {Header: "OUTCOME"},
		{Header: "STATUS", Drop: 1}, {Header: "REASON", Give: 3, Min: 24, Wrap: true}}}
	for _, task := range r.Tasks {
		t.Rows = append(t.Rows, []string{strconv.Itoa(task.Wave), task.Key, string(task.Outcome), orDash(string(task.Status)), orDash(task.Reason)})
		t.Columns[1].Short = append(t.Columns[1].Short, shortKey(r.Epic, task.Key))
	}
	return writeTable(w, t, width)
}

// engine builds the step engine from the engine options and environment.
func (f *Factory) engine(s store.Store, o engineOptions) *procedure.Engine {
	e := &procedure.Engine{
		Store:     s,
		Getenv:    f.Getenv,
		GitHubAPI: o.GitHubAPI,
		Secrets:   f.secrets(),
		Fault:     faultHook,
		Settings: action.Settings{
			Agent:             o.Agent,
			AgentTimeout:      o.AgentTimeout,
			AgentEnv:          o.AgentEnv,
			AgentLogin:        o.AgentLogin,
			MaxAgentRounds:    o.MaxAgentRounds,
			MaxAgentCost:      o.MaxAgentCost,
			RerunAgent:        o.RerunAgent,
			DiscardCommits:    o.DiscardCommits,
			Sandbox:           o.AgentSandbox,
			AgentWritable:     o.AgentWritable,
			AgentReadable:     o.AgentReadable,
			AgentPorts:        o.AgentPorts,
			AgentHosts:        o.AgentHosts,
			GitTimeout:        o.GitTimeout,
			GitStall:          o.GitStall,
			ReviewWait:        o.ReviewWait,
			NoReviewWait:      o.NoReviewWait,
			PollInterval:      o.PollInterval,
			Reviewers:         o.Reviewers,
			ResolveThreads:    o.ResolveThreads,
			MaxLoopIterations: o.MaxIterations,
		},
	}
	stack.New(e) // the stack tables of an epic, kept as its pull requests open
	return e
}

func writePlan(w io.Writer, p *procedure.Plan) error {
	pr := &printer{w: w}
	pr.line("Plan for %s (status %s), from step %d — dry run, nothing will change:", p.Key, p.Status, p.FromStep)
	if p.WaitsFor != "" {
		pr.line("  would not start: %s", p.WaitsFor)
	}
	if p.LeaseHeld != "" {
		pr.line("  would not start: the lease is held by %s", p.LeaseHeld)
	}
	for _, s := range p.Steps {
		pr.line("  %2d %s", s.Step, s.Action)
		pr.line("       would: %s", s.Would)
		switch {
		case s.TemplateError != "":
			pr.line("       command: cannot render: %s", s.TemplateError)
		case s.Command != "":
			pr.line("       command: %s", firstLine(s.Command))
		}
	}
	if len(p.Steps) == 0 {
		pr.line("  nothing to do: every step is complete")
	}
	for _, h := range p.RollbackHints {
		pr.line("  to roll back: %s", h)
	}
	return pr.err
}

func writeRunResult(w io.Writer, r *procedure.Result) error {
	gh := ""
	if r.GitHub != nil {
		gh = fmt.Sprintf("; GitHub: %d request(s), %d answered 304 (free)", r.GitHub.Requests, r.GitHub.NotModified)
		if c := r.GitHub; c.GraphQLCost+c.GraphQLMutations > 0 {
			gh += fmt.Sprintf(", %d GraphQL point(s), %d mutation(s)", c.GraphQLCost, c.GraphQLMutations)
		}
	}
	_, err := fmt.Fprintf(w, "%s: status %s, step %d/%d done%s\n", termtext.Line(r.Key), termtext.Line(string(r.Status)), r.CurrentStep, r.Steps, gh)
	return err
}
