package commands

import (
	"bytes"
	"context"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/wo-runner/wo/intake"
	"github.com/wo-runner/wo/procedure"
	"github.com/wo-runner/wo/procedure/action"
	"github.com/wo-runner/wo/procedure/undo"
	"github.com/wo-runner/wo/split"
	"github.com/wo-runner/wo/store"
	"github.com/wo-runner/wo/workorder"
)

// parseOptions runs one command's flag parsing on args, as wo would, and
// captures the options its run function would get instead of running it.
// It returns nil options and the message shown when parsing fails.
func parseOptions[T any](t *testing.T, build func(*Factory, func(context.Context, *Factory, *T) (result, error)) *cli.Command, args ...string) (*T, string) {
	t.Helper()
	return parseOptionsEnv(t, nil, build, args...)
}

// parseOptionsEnv is parseOptions in the environment env, given to the
// Factory's Getenv: the process environment is not read.
func parseOptionsEnv[T any](t *testing.T, env map[string]string, build func(*Factory, func(context.Context, *Factory, *T) (result, error)) *cli.Command, args ...string) (*T, string) {
	t.Helper()
	getenv := map[string]string{"ARANGO_USER": "ci", "ARANGO_PASSWORD": "pw"}
	for k, v := range env {
		getenv[k] = v
	}
	var errb bytes.Buffer
	f := NewFactory(strings.NewReader(""), io.Discard, &errb)
	f.Getenv = func(k string) string { return getenv[k] }
	var got *T
	cmd := build(f, func(_ context.Context, _ *Factory, o *T) (result, error) {
		got = o
		return result{}, nil
	})
	guardUsage(cmd)
	f.bindEnv(cmd)
	afterSetup(cmd)
	app := &cli.App{Name: "wo", Commands: []*cli.Command{cmd}, Writer: io.Discard, ErrWriter: &errb,
		ExitErrHandler: func(*cli.Context, error) {},
		OnUsageError:   func(_ *cli.Context, err error, _ bool) error { return err }}
	if err := runApp(context.Background(), app, permuteArgs(app, append([]string{"wo", cmd.Name}, args...))); err != nil && errb.Len() == 0 {
		errb.WriteString(err.Error())
	}
	return got, errb.String()
}

// sqlite is the store configuration of --store PATH with the test's
// environment.
func sqlite(path string) StoreConfig {
	return StoreConfig{URL: path, Collection: "persephone_tasks", User: "ci", Password: "pw"}
}

func TestCreateFlags(t *testing.T) {
	t.Parallel()
	got, msg := parseOptions(t, createCommand, "--description", "Implement JWT token authentication", "--priority", "P1",
		"--title", "JWT", "--cwd", "/src", "--background-context", "Tokens expire.", "--expected-deliverable", "Handler",
		"--expected-deliverable", "Tests", "--success-criterion", "All tests pass", "--constraint", "Do not touch legacy.py",
		"--relevant-file", "auth.py", "--related-doc", "https://jwt.io", "--source-event-id", "evt-1", "--store", "/tmp/wo.db")
	want := &createOptions{Store: sqlite("/tmp/wo.db"), SourceEvent: "evt-1", FlagsUsed: true, Params: workorder.CreateParams{
		Description: "Implement JWT token authentication", Priority: "P1", Title: "JWT", ClientCWD: "/src",
		BackgroundContext: "Tokens expire.", ExpectedDeliverables: []string{"Handler", "Tests"}, SuccessCriteria: []string{"All tests pass"},
		Constraints: []string{"Do not touch legacy.py"}, RelevantFiles: []string{"auth.py"}, RelatedDocumentation: []string{"https://jwt.io"}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("options\n got %+v\nwant %+v (%s)", got, want, msg)
	}
	got, _ = parseOptions(t, createCommand, "-f", "-", "--params", "")
	if got == nil || got.File != "-" || got.FlagsUsed || got.ParamsFile != "" {
		t.Errorf("-f -: %+v", got)
	}
	got, _ = parseOptions(t, createCommand, "--params", "p.json", "--cwd", "/src")
	if got == nil || got.ParamsFile != "p.json" || got.FlagsUsed || got.Params.ClientCWD != "/src" {
		t.Errorf("--params with --cwd: %+v", got)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "missing task: give -f FILE (or -f - for stdin), --params FILE, or --description TEXT"},
		{[]string{"-f", "a.json", "--description", "Two ways at once"}, "give one of -f FILE, --params FILE, or the --description flags"},
		{[]string{"-f", "a.json", "extra"}, "unexpected arguments: extra"},
	} {
		if got, msg := parseOptions(t, createCommand, tc.args...); got != nil || !strings.Contains(msg, tc.want) {
			t.Errorf("%v: options %+v, message %q", tc.args, got, msg)
		}
	}
}

func TestImportFlags(t *testing.T) {
	t.Parallel()
	got, msg := parseOptions(t, importCommand, "tasks.json", "--format", "tasks-json", "--store", "/tmp/wo.db")
	want := &importOptions{Store: sqlite("/tmp/wo.db"), File: "tasks.json", Format: "tasks-json"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("options\n got %+v\nwant %+v (%s)", got, want, msg)
	}
	if got, _ := parseOptions(t, importCommand, "-"); got == nil || got.File != "-" || got.Format != "documents" {
		t.Errorf("defaults: %+v", got)
	}
	if got, msg := parseOptions(t, importCommand, "a.json", "--format", "yaml"); got != nil || !strings.Contains(msg, `--format "yaml": use documents or tasks-json`) {
		t.Errorf("bad format: %+v %q", got, msg)
	}
	if got, msg := parseOptions(t, importCommand); got != nil || !strings.Contains(msg, "missing FILE (or - for standard input)") {
		t.Errorf("no file: %+v %q", got, msg)
	}
}

func TestSplitFlags(t *testing.T) {
	t.Parallel()
	got, msg := parseOptions(t, splitCommand, "--repo", "/src/big", "--base", "main", "--source", "feature", "--epic-key", "task_e",
		"--key-prefix", "task_p", "--max-lines", "200", "--max-files", "9", "--by", "dir", "--plan", "plan.json", "--mode", "stacked",
		"--github-repo", "acme/big", "--worktree-root", "/wt", "--source-event-id", "push-7", "--dry-run", "--emit-matrix",
		"--store", "/tmp/wo.db", "--split-large=false", "--explain", "--reviews-per-hour", "2.5")
	want := &splitOptions{Store: sqlite("/tmp/wo.db"), PlanFile: "plan.json", DryRun: true, EmitMatrix: true, Explain: "tree",
		Request: intake.SplitRequest{RepoPath: "/src/big", Base: "main", Source: "feature", EpicKey: "task_e", KeyPrefix: "task_p",
			Auto: split.Options{MaxLines: 200, MaxFiles: 9, By: "dir", ReviewsPerHour: 2.5}, Mode: "stacked", GitHubRepo: "acme/big",
			WorktreeRoot: "/wt", SourceEvent: "push-7"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("options\n got %+v\nwant %+v (%s)", got, want, msg)
	}
	got, _ = parseOptions(t, splitCommand, "--base", "main", "--source", "feature")
	defaults := intake.SplitRequest{RepoPath: ".", Base: "main", Source: "feature", Auto: split.Options{MaxLines: 8000, MaxFiles: 150, By: "package", SplitLarge: true, ReviewsPerHour: 5}, Mode: "independent"}
	if got == nil || !reflect.DeepEqual(got.Request, defaults) || got.DryRun || got.EmitMatrix || got.PlanFile != "" {
		t.Errorf("defaults: %+v", got)
	}
	// Stacked mode cuts oversize packages unless told not to.
	got, _ = parseOptions(t, splitCommand, "--base", "main", "--source", "feature", "--mode", "stacked")
	if got == nil || !got.Request.Auto.SplitLarge {
		t.Errorf("stacked mode without --split-large: %+v", got)
	}
	if got, msg := parseOptions(t, splitCommand, "--base", "main"); got != nil || !strings.Contains(msg, "missing required --source") {
		t.Errorf("no source: %+v %q", got, msg)
	}
	if got, msg := parseOptions(t, splitCommand, "--base", "main", "--source", "x", "--reviews-per-hour", "-1"); got != nil || !strings.Contains(msg, "--reviews-per-hour -1: give how many reviews an hour") {
		t.Errorf("a negative rate: %+v %q", got, msg)
	}
	if got, msg := parseOptions(t, splitCommand, "--base", "main", "--source", "x", "extra"); got != nil || !strings.Contains(msg, "wo split takes no arguments") {
		t.Errorf("argument: %+v %q", got, msg)
	}
}

func TestExportFlags(t *testing.T) {
	t.Parallel()
	got, msg := parseOptions(t, exportCommand, "--epic", "task_e", "--format", "tasks-json", "--store", "/tmp/wo.db")
	want := &exportOptions{Store: sqlite("/tmp/wo.db"), Parent: "task_e", Format: "tasks-json"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("options\n got %+v\nwant %+v (%s)", got, want, msg)
	}
	if got, _ := parseOptions(t, exportCommand, "--parent", "task_p"); got == nil || got.Parent != "task_p" || got.Format != "documents" {
		t.Errorf("--parent: %+v", got)
	}
	if got, msg := parseOptions(t, exportCommand, "--format", "tasks-json"); got != nil || !strings.Contains(msg, "--format tasks-json needs --epic KEY") {
		t.Errorf("tasks-json without an epic: %+v %q", got, msg)
	}
	if got, msg := parseOptions(t, exportCommand, "--format", "csv"); got != nil || !strings.Contains(msg, `--format "csv": use documents or tasks-json`) {
		t.Errorf("bad format: %+v %q", got, msg)
	}
}

func TestValidateFlags(t *testing.T) {
	t.Parallel()
	got, msg := parseOptions(t, validateCommand, "task_cr_01", "--store", "/tmp/wo.db")
	if want := (&validateOptions{Store: sqlite("/tmp/wo.db"), Key: "task_cr_01"}); !reflect.DeepEqual(got, want) {
		t.Errorf("options\n got %+v\nwant %+v (%s)", got, want, msg)
	}
	if got, _ := parseOptions(t, validateCommand, "-f", "-"); got == nil || got.File != "-" || got.Key != "" {
		t.Errorf("-f -: %+v", got)
	}
	if got, msg := parseOptions(t, validateCommand, "-f", "a.json", "task_x"); got != nil || !strings.Contains(msg, "give either a KEY or -f FILE, not both") {
		t.Errorf("both: %+v %q", got, msg)
	}
	if got, msg := parseOptions(t, validateCommand); got != nil || !strings.Contains(msg, "missing task KEY") {
		t.Errorf("neither: %+v %q", got, msg)
	}
}

func TestListFlags(t *testing.T) {
	t.Parallel()
	got, msg := parseOptions(t, listCommand, "--status", "in_review", "--parent", "task_e", "--store", "arangodb+http://db:8529", "--database", "hades")
	want := &listOptions{Store: StoreConfig{URL: "arangodb+http://db:8529", Database: "hades", Collection: "persephone_tasks", User: "ci", Password: "pw"},
		Filter: store.Filter{Status: string(workorder.StatusInReview), ParentKey: "task_e"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("options\n got %+v\nwant %+v (%s)", got, want, msg)
	}
	if got, msg := parseOptions(t, listCommand, "--status", "done"); got != nil || !strings.Contains(msg, `--status "done": use one of open, in_progress, in_review, closed, blocked`) {
		t.Errorf("bad status: %+v %q", got, msg)
	}
	if got, msg := parseOptions(t, listCommand, "task_x"); got != nil || !strings.Contains(msg, "wo list takes no arguments") {
		t.Errorf("argument: %+v %q", got, msg)
	}
}

func TestRunFlags(t *testing.T) {
	t.Parallel()
	got, msg := parseOptions(t, runCommand, "task_cr_01", "--from-step", "2", "--until-step", "5", "--repo", "/src/app",
		"--agent", "fixer --fast", "--max-iterations", "3", "--github-api", "https://ghe/api/v3/", "--review-wait", "90s",
		"--poll-interval", "5s", "--agent-timeout", "10m", "--git-timeout", "1m", "--git-stall", "15s", "--dry-run", "--json", "--store", "/tmp/wo.db")
	want := &runOptions{Store: sqlite("/tmp/wo.db"), JSON: true, DryRun: true, Parallel: 1, WaitTimeout: 30 * time.Minute, ProgressEvery: time.Minute,
		Task: procedure.RunOptions{Key: "task_cr_01", FromStep: 2, UntilStep: 5, RepoPath: "/src/app"},
		Engine: engineOptions{Agent: "fixer --fast", MaxIterations: 3, GitHubAPI: "https://ghe/api/v3/", ReviewWait: 90 * time.Second,
			PollInterval: 5 * time.Second, AgentTimeout: 10 * time.Minute, GitTimeout: time.Minute, GitStall: 15 * time.Second}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("options\n got %+v\nwant %+v (%s)", got, want, msg)
	}

	got, msg = parseOptions(t, runCommand, "task_cr_01")
	want = &runOptions{Store: sqlite(""), Parallel: 1, WaitTimeout: 30 * time.Minute, ProgressEvery: time.Minute, Task: procedure.RunOptions{Key: "task_cr_01"},
		Engine: engineOptions{AgentTimeout: 30 * time.Minute, GitTimeout: action.DefaultGitTimeout, GitStall: action.DefaultGitStall}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("defaults\n got %+v\nwant %+v (%s)", got, want, msg)
	}

	got, msg = parseOptionsEnv(t, map[string]string{"WO_AGENT": "env-agent", "WO_REVIEW_WAIT": "2m", "WO_POLL_INTERVAL": "7s",
		"WO_AGENT_TIMEOUT": "45m", "WO_GIT_TIMEOUT": "20s", "WO_GIT_STALL": "2m", "GITHUB_API_URL": "https://env/api/", "WO_PROGRESS_INTERVAL": "10s"}, runCommand, "task_cr_01")
	want.ProgressEvery = 10 * time.Second
	want.Engine = engineOptions{Agent: "env-agent", GitHubAPI: "https://env/api/", ReviewWait: 2 * time.Minute, PollInterval: 7 * time.Second,
		AgentTimeout: 45 * time.Minute, GitTimeout: 20 * time.Second, GitStall: 2 * time.Minute}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("environment\n got %+v\nwant %+v (%s)", got, want, msg)
	}
	got, _ = parseOptionsEnv(t, map[string]string{"WO_AGENT": "env-agent", "WO_AGENT_TIMEOUT": "45m"}, runCommand, "task_cr_01",
		"--agent", "flag-agent", "--agent-timeout", "1m")
	if got == nil || got.Engine.Agent != "flag-agent" || got.Engine.AgentTimeout != time.Minute {
		t.Errorf("a flag beats its environment variable: %+v", got)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "missing task KEY: usage: wo run KEY"},
		{[]string{"task_a", "task_b"}, "expected one task KEY, got 2 arguments: task_a task_b"},
		{[]string{"--epic", "task_e", "task_a"}, "give either a task KEY or --epic KEY, not both"},
		{[]string{"--epic", "task_e", "--dry-run"}, "--dry-run, --from-step and --until-step work on one task, not with --epic"},
		{[]string{"--epic", "task_e", "--from-step", "2"}, "--dry-run, --from-step and --until-step work on one task, not with --epic"},
		{[]string{"--epic", "task_e", "--until-step", "1"}, "--dry-run, --from-step and --until-step work on one task, not with --epic"},
		{[]string{"task_a", "--parallel", "many"}, `invalid value "many" for flag -parallel`},
	} {
		if got, msg := parseOptions(t, runCommand, tc.args...); got != nil || !strings.Contains(msg, tc.want) {
			t.Errorf("%v: options %+v, message %q", tc.args, got, msg)
		}
	}
}

func TestRunEpicFlags(t *testing.T) {
	t.Parallel()
	got, msg := parseOptions(t, runCommand, "--epic", "task_e", "--parallel", "4", "--wait", "--wait-timeout", "5m", "--repo", "/src/app")
	want := &runOptions{Store: sqlite(""), Epic: "task_e", Parallel: 4, Wait: true, WaitTimeout: 5 * time.Minute, ProgressEvery: time.Minute,
		Task:   procedure.RunOptions{RepoPath: "/src/app"},
		Engine: engineOptions{AgentTimeout: 30 * time.Minute, GitTimeout: action.DefaultGitTimeout, GitStall: action.DefaultGitStall}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("options\n got %+v\nwant %+v (%s)", got, want, msg)
	}
	// --wait is the default only where CI=true, and an explicit value wins.
	for _, tc := range []struct {
		ci   string
		args []string
		want bool
	}{
		{"", nil, false},
		{"true", nil, true},
		{"1", nil, false},
		{"false", []string{"--wait"}, true},
		{"true", []string{"--wait=false"}, false},
	} {
		got, msg := parseOptionsEnv(t, map[string]string{"CI": tc.ci}, runCommand, append([]string{"--epic", "task_e"}, tc.args...)...)
		if got == nil || got.Wait != tc.want || got.WaitTimeout != 30*time.Minute || got.Parallel != 1 {
			t.Errorf("CI=%q %v: options %+v (%s), want Wait %v", tc.ci, tc.args, got, msg, tc.want)
		}
	}
}

func TestResetFlags(t *testing.T) {
	t.Parallel()
	got, msg := parseOptions(t, resetCommand, "task_cr_01", "--to-step", "3", "--store", "/tmp/wo.db")
	if want := (&resetOptions{Store: sqlite("/tmp/wo.db"), Key: "task_cr_01", ToStep: 3}); !reflect.DeepEqual(got, want) {
		t.Errorf("options\n got %+v\nwant %+v (%s)", got, want, msg)
	}
	if got, msg := parseOptions(t, resetCommand, "task_cr_01", "--to-start", "--dry-run"); !reflect.DeepEqual(got, &resetOptions{Store: sqlite(""), Key: "task_cr_01", DryRun: true}) {
		t.Errorf("--to-start --dry-run: %+v (%s)", got, msg)
	}
	// How far back is never a default: without one, nothing is reset.
	for _, args := range [][]string{{"task_cr_01"}, {"task_cr_01", "--dry-run"}} {
		if got, msg := parseOptions(t, resetCommand, args...); got != nil || !strings.Contains(msg, "say how far back: --to-step N keeps steps 1..N done, --to-start keeps none") {
			t.Errorf("%q: %+v %q", args, got, msg)
		}
	}
	if got, msg := parseOptions(t, resetCommand, "task_cr_01", "--to-step", "2", "--to-start"); got != nil || !strings.Contains(msg, "not both") {
		t.Errorf("both: %+v %q", got, msg)
	}
	if got, msg := parseOptions(t, resetCommand, "--to-step", "1"); got != nil || !strings.Contains(msg, "missing task KEY: usage: wo reset KEY") {
		t.Errorf("no key: %+v %q", got, msg)
	}
}

// decision builds the command of one gate decision as parseOptions wants it.
func decision(d gateDecision) func(*Factory, func(context.Context, *Factory, *decisionOptions) (result, error)) *cli.Command {
	return func(f *Factory, run func(context.Context, *Factory, *decisionOptions) (result, error)) *cli.Command {
		return decisionCommand(f, d, run)
	}
}

func TestDecisionFlags(t *testing.T) {
	t.Parallel()
	got, msg := parseOptions(t, decision(approveDecision), "task_cr_01", "--store", "/tmp/wo.db")
	if want := (&decisionOptions{Store: sqlite("/tmp/wo.db"), Key: "task_cr_01", Decision: workorder.DecisionApproved}); !reflect.DeepEqual(got, want) {
		t.Errorf("approve\n got %+v\nwant %+v (%s)", got, want, msg)
	}
	got, msg = parseOptions(t, decision(reviseDecision), "task_cr_01", "--note", "split the handler")
	if want := (&decisionOptions{Store: sqlite(""), Key: "task_cr_01", Decision: workorder.DecisionRevise, Note: "split the handler"}); !reflect.DeepEqual(got, want) {
		t.Errorf("revise\n got %+v\nwant %+v (%s)", got, want, msg)
	}
	got, msg = parseOptions(t, decision(cancelDecision), "--reason", "superseded", "task_cr_01")
	if want := (&decisionOptions{Store: sqlite(""), Key: "task_cr_01", Decision: workorder.DecisionCancelled, Note: "superseded"}); !reflect.DeepEqual(got, want) {
		t.Errorf("cancel\n got %+v\nwant %+v (%s)", got, want, msg)
	}
	for _, tc := range []struct {
		d    gateDecision
		args []string
		want string
	}{
		{reviseDecision, []string{"task_cr_01"}, "missing required --note"},
		{cancelDecision, []string{"task_cr_01"}, "missing required --reason"},
		{approveDecision, []string{"task_cr_01", "--note", "ok"}, "unknown flag --note"},
		{approveDecision, nil, "missing task KEY: usage: wo approve KEY"},
		{cancelDecision, []string{"--reason", "dup", "task_a", "task_b"}, "expected one task KEY, got 2 arguments: task_a task_b"},
	} {
		if got, msg := parseOptions(t, decision(tc.d), tc.args...); got != nil || !strings.Contains(msg, tc.want) {
			t.Errorf("%s %v: options %+v, message %q", tc.d.Name, tc.args, got, msg)
		}
	}
}

func TestSyncFlags(t *testing.T) {
	t.Parallel()
	got, msg := parseOptions(t, syncCommand, "task_e", "--github-api", "https://ghe/api/v3/", "--store", "/tmp/wo.db")
	if want := (&syncOptions{Store: sqlite("/tmp/wo.db"), Key: "task_e", GitHubAPI: "https://ghe/api/v3/"}); !reflect.DeepEqual(got, want) {
		t.Errorf("options\n got %+v\nwant %+v (%s)", got, want, msg)
	}
	got, msg = parseOptionsEnv(t, map[string]string{"GITHUB_API_URL": "https://env/api/"}, syncCommand, "task_e")
	if want := (&syncOptions{Store: sqlite(""), Key: "task_e", GitHubAPI: "https://env/api/"}); !reflect.DeepEqual(got, want) {
		t.Errorf("GITHUB_API_URL\n got %+v\nwant %+v (%s)", got, want, msg)
	}
	if got, msg := parseOptions(t, syncCommand); got != nil || !strings.Contains(msg, "missing task KEY: usage: wo sync KEY") {
		t.Errorf("no key: %+v %q", got, msg)
	}
}

func TestStatusFlags(t *testing.T) {
	t.Parallel()
	got, msg := parseOptions(t, statusCommand, "--epic", "task_e", "--format", "markdown", "--watch", "--interval", "10s",
		"--refresh", "--github-api", "https://ghe/api/v3/", "--store", "/tmp/wo.db")
	want := &statusOptions{Store: sqlite("/tmp/wo.db"), Key: "task_e", Format: "markdown", Watch: true, Interval: 10 * time.Second,
		Refresh: true, GitHubAPI: "https://ghe/api/v3/"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("options\n got %+v\nwant %+v (%s)", got, want, msg)
	}
	got, msg = parseOptions(t, statusCommand, "task_cr_01")
	if want := (&statusOptions{Store: sqlite(""), Key: "task_cr_01", Format: "table", Interval: 3 * time.Second}); !reflect.DeepEqual(got, want) {
		t.Errorf("defaults\n got %+v\nwant %+v (%s)", got, want, msg)
	}
	// Without a key, the run names the epics it could show (see
	// TestStatusWithoutAKeySaysWhatItNeedsAndWhereToFindOne).
	if got, msg := parseOptions(t, statusCommand); got == nil || got.Key != "" {
		t.Errorf("no key: %+v (%s)", got, msg)
	}
	for _, format := range []string{"mermaid", "dot"} {
		if got, _ := parseOptions(t, statusCommand, "task_e", "--format", format); got == nil || got.Format != format {
			t.Errorf("--format %s: %+v", format, got)
		}
	}
	if got, _ := parseOptionsEnv(t, map[string]string{"GITHUB_API_URL": "https://env/api/"}, statusCommand, "task_e"); got == nil || got.GitHubAPI != "https://env/api/" {
		t.Errorf("GITHUB_API_URL: %+v", got)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"task_e", "--format", "json"}, `--format "json": use table, markdown, mermaid or dot`},
		{[]string{"task_a", "task_b"}, "expected one task KEY, got 2 arguments: task_a task_b"},
	} {
		if got, msg := parseOptions(t, statusCommand, tc.args...); got != nil || !strings.Contains(msg, tc.want) {
			t.Errorf("%v: options %+v, message %q", tc.args, got, msg)
		}
	}
}

func TestShowAndLogFlags(t *testing.T) {
	t.Parallel()
	arango := StoreConfig{URL: "arangodb+http://db:8529", Database: "hades", Collection: "tasks", User: "ci", Password: "pw", Timeout: 5 * time.Second}
	args := []string{"task_cr_01", "--store", "arangodb+http://db:8529", "--database", "hades", "--collection", "tasks", "--store-timeout", "5s", "--json"}
	if got, msg := parseOptions(t, showCommand, args...); !reflect.DeepEqual(got, &showOptions{Store: arango, Key: "task_cr_01"}) {
		t.Errorf("show: %+v (%s)", got, msg)
	}
	if got, msg := parseOptions(t, logCommand, args...); !reflect.DeepEqual(got, &logOptions{Store: arango, Key: "task_cr_01"}) {
		t.Errorf("log: %+v (%s)", got, msg)
	}
	// The store's environment variables, as every command reads them.
	env := map[string]string{"WO_STORE": "arangodb+http://env:8529", "WO_DATABASE": "envdb", "WO_COLLECTION": "envtasks", "WO_STORE_TIMEOUT": "9s"}
	fromEnv := StoreConfig{URL: "arangodb+http://env:8529", Database: "envdb", Collection: "envtasks", User: "ci", Password: "pw", Timeout: 9 * time.Second}
	if got, msg := parseOptionsEnv(t, env, showCommand, "task_cr_01"); !reflect.DeepEqual(got, &showOptions{Store: fromEnv, Key: "task_cr_01"}) {
		t.Errorf("show, store from the environment: %+v (%s)", got, msg)
	}
	if got, msg := parseOptionsEnv(t, map[string]string{"ARANGO_URL": "http://a:8529", "HADES_DATABASE": "h"}, logCommand, "task_cr_01"); got == nil ||
		got.Store.URL != "http://a:8529" || got.Store.Database != "h" {
		t.Errorf("log, ARANGO_URL and HADES_DATABASE: %+v (%s)", got, msg)
	}
	if got, msg := parseOptions(t, showCommand); got != nil || !strings.Contains(msg, "missing task KEY: usage: wo show KEY") {
		t.Errorf("show without a key: %+v %q", got, msg)
	}
	if got, msg := parseOptions(t, logCommand, "task_a", "task_b"); got != nil || !strings.Contains(msg, "expected one task KEY, got 2 arguments: task_a task_b") {
		t.Errorf("log with two keys: %+v %q", got, msg)
	}
}

func TestPromptFlags(t *testing.T) {
	t.Parallel()
	got, msg := parseOptions(t, promptCommand, "task_cr_01", "--format", "markdown", "--store", "/tmp/wo.db")
	if want := (&promptOptions{Store: sqlite("/tmp/wo.db"), Key: "task_cr_01", Format: "markdown"}); !reflect.DeepEqual(got, want) {
		t.Errorf("options\n got %+v\nwant %+v (%s)", got, want, msg)
	}
	if got, msg := parseOptions(t, promptCommand, "task_cr_01"); !reflect.DeepEqual(got, &promptOptions{Store: sqlite(""), Key: "task_cr_01", Format: "text"}) {
		t.Errorf("defaults: %+v (%s)", got, msg)
	}
	if got, _ := parseOptions(t, promptCommand, "task_cr_01", "--format", "json"); got == nil || got.Format != "json" {
		t.Errorf("--format json: %+v", got)
	}
	if got, msg := parseOptions(t, promptCommand, "task_cr_01", "--format", "html"); got != nil || !strings.Contains(msg, `--format "html": use text, markdown or json`) {
		t.Errorf("bad format: %+v %q", got, msg)
	}
	if got, msg := parseOptions(t, promptCommand, "--format", "html"); got != nil || !strings.Contains(msg, "missing task KEY: usage: wo prompt KEY") {
		t.Errorf("no key comes before a bad format: %+v %q", got, msg)
	}
}

func TestInitFlags(t *testing.T) {
	t.Parallel()
	got, msg := parseOptions(t, initCommand, "--store", "arangodb+http://db:8529", "--database", "hades", "--collection", "tasks")
	want := &initOptions{Store: StoreConfig{URL: "arangodb+http://db:8529", Database: "hades", Collection: "tasks", User: "ci", Password: "pw"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("options\n got %+v\nwant %+v (%s)", got, want, msg)
	}
	if got, msg := parseOptions(t, initCommand); !reflect.DeepEqual(got, &initOptions{Store: sqlite("")}) {
		t.Errorf("defaults: %+v (%s)", got, msg)
	}
}

func TestRunReviewerAndThreadFlags(t *testing.T) {
	t.Parallel()
	o, _ := parseOptions(t, runCommand, "task_a", "--reviewer", "coderabbitai[bot]", "--reviewer", "ann", "--resolve-threads", "--review-wait", "0")
	if strings.Join(o.Engine.Reviewers, ",") != "coderabbitai[bot],ann" || !o.Engine.ResolveThreads || !o.Engine.NoReviewWait {
		t.Errorf("engine options %+v", o.Engine)
	}
	o, _ = parseOptions(t, runCommand, "task_a", "--review-wait", "2m")
	if o.Engine.NoReviewWait || o.Engine.ReviewWait != 2*time.Minute || o.Engine.Reviewers != nil {
		t.Errorf("engine options %+v", o.Engine)
	}
	// A reviewer named so that nobody could match would make the run wait
	// for ever: a usage error instead.
	for _, bad := range []string{"", "@alice", "coderabbit ai"} {
		if o, msg := parseOptions(t, runCommand, "task_a", "--reviewer", bad); o != nil || !strings.Contains(msg, "name the reviewer as GitHub does") {
			t.Errorf("--reviewer %q: options %v, message %q", bad, o, msg)
		}
	}
}

func TestUndoFlags(t *testing.T) {
	t.Parallel()
	got, msg := parseOptions(t, undoCommand, "task_cr_01", "--reason", "wrong split", "--comments", "--close", "--dry-run",
		"--repo", "/src/repo", "--github-api", "https://ghe.example.com/api/v3/", "--git-timeout", "1m", "--store", "/tmp/wo.db")
	want := &undoOptions{Store: sqlite("/tmp/wo.db"),
		Undo:   undo.Options{Key: "task_cr_01", Reason: "wrong split", Comments: true, Close: true, DryRun: true, RepoPath: "/src/repo"},
		Engine: engineOptions{GitHubAPI: "https://ghe.example.com/api/v3/", GitTimeout: time.Minute, GitStall: action.DefaultGitStall}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("options\n got %+v\nwant %+v (%s)", got, want, msg)
	}
	if got, msg := parseOptions(t, undoCommand, "--epic", "task_big"); got == nil || got.Epic != "task_big" || got.Undo.Key != "" || got.Engine.GitTimeout != action.DefaultGitTimeout {
		t.Errorf("--epic: %+v (%s)", got, msg)
	}
	if got, msg := parseOptions(t, undoCommand, "task_a", "--epic", "task_big"); got != nil || !strings.Contains(msg, "either a task KEY or --epic KEY") {
		t.Errorf("both: %+v %q", got, msg)
	}
	if got, msg := parseOptions(t, undoCommand, "--close"); got != nil || !strings.Contains(msg, "missing task KEY: usage: wo undo KEY") {
		t.Errorf("no key: %+v %q", got, msg)
	}
}
