package procedure

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/wo-runner/wo/procedure/action"
	"github.com/wo-runner/wo/store"
	"github.com/wo-runner/wo/workorder"
)

// checked is an action with a Check that records which steps were checked
// before the run and can refuse.
type checked struct {
	scripted
	seen   *[]int
	refuse bool
}

func (c checked) Check(_ context.Context, sc *action.StepContext) error {
	*c.seen = append(*c.seen, sc.Step.Step)
	if c.refuse {
		return errors.New("bad input")
	}
	return nil
}

func checkedActions(seen *[]int, refuse bool) action.Actions {
	t := action.DefaultActions()
	for i, a := range t {
		if a.Name == "commit" {
			t[i].New = func() action.Action { return checked{scripted: scripted{run: pushed("c")}, seen: seen, refuse: refuse} }
		}
	}
	return t
}

func TestStepRangesAreBoundedAndChecksCoverOnlyWhatWillRun(t *testing.T) {
	t.Parallel()
	var seen []int
	e, _ := newTestEngine(t, "commit", "commit", "commit", "commit")
	e.Actions = checkedActions(&seen, false)
	for _, o := range []RunOptions{{FromStep: 5}, {UntilStep: 5}, {FromStep: -1}, {UntilStep: -1}} {
		o.Key = "task_e"
		if _, err := e.Run(context.Background(), o); err == nil || !strings.Contains(err.Error(), "steps 1..4") {
			t.Errorf("%+v: %v, want a refusal naming steps 1..4", o, err)
		}
	}
	res, err := e.Run(context.Background(), RunOptions{Key: "task_e", FromStep: 2, UntilStep: 3})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(seen) != "[2 3]" || fmt.Sprint(res.Ran) != "[2 3]" {
		t.Errorf("checked %v and ran %v, want steps 2 and 3 only", seen, res.Ran)
	}
	// The last step is a valid end, and --from-step reruns a finished task.
	seen = nil
	if res, err := e.Run(context.Background(), RunOptions{Key: "task_e", FromStep: 4, UntilStep: 4}); err != nil || fmt.Sprint(res.Ran) != "[4]" {
		t.Errorf("step 4 alone: %v %v", res, err)
	}
	if res, err := e.Run(context.Background(), RunOptions{Key: "task_e"}); err != nil || len(res.Ran) != 0 {
		t.Errorf("after step 4 the task is complete: ran %v (%v)", res.Ran, err)
	}
	if res, err := e.Run(context.Background(), RunOptions{Key: "task_e", FromStep: 1, UntilStep: 1}); err != nil || fmt.Sprint(res.Ran) != "[1]" {
		t.Errorf("--from-step on a complete task: %v %v", res, err)
	}
}

func TestAFailedCheckChangesNothing(t *testing.T) {
	t.Parallel()
	var seen []int
	e, s := newTestEngine(t, "commit", "commit")
	e.Actions = checkedActions(&seen, true)
	before, _ := s.Get(context.Background(), "task_e")
	_, err := e.Run(context.Background(), RunOptions{Key: "task_e"})
	var pf *PreflightError
	if !errors.As(err, &pf) || len(pf.Problems) != 2 || !strings.Contains(pf.Problems[0], "step 1 (commit): bad input") {
		t.Fatalf("preflight: %v", err)
	}
	after, _ := s.Get(context.Background(), "task_e")
	if after["_rev"] != before["_rev"] {
		t.Error("a refused run wrote to the task")
	}
}

func TestNotesOnlyForStepsThatSaySomethingAndRetriesBackOff(t *testing.T) {
	t.Parallel()
	fails := 2
	acts := scriptedActions(map[string]func(context.Context, *action.StepContext) (action.Outcome, error){
		"commit": ok(""),
		"push": func(ctx context.Context, sc *action.StepContext) (action.Outcome, error) {
			if fails > 0 {
				fails--
				return action.Outcome{}, action.Transient(errors.New("network blip"))
			}
			return pushed("p")(ctx, sc)
		},
	})
	e, s := newTestEngine(t, "commit", "push")
	e.Actions = acts
	e.Backoff = 20 * time.Millisecond
	var retries []time.Duration
	e.Events = func(ev Event) {
		if ev.Type == "step_retry" {
			retries = append(retries, ev.Duration)
		}
	}
	if _, err := e.Run(context.Background(), RunOptions{Key: "task_e"}); err != nil {
		t.Fatal(err)
	}
	_, st := get(t, s)
	if fmt.Sprint(st["notes"]) != "[p]" {
		t.Errorf("notes %v, want only the push's", st["notes"])
	}
	if len(retries) != 2 || retries[0] < 20*time.Millisecond || retries[0] > 30*time.Millisecond ||
		retries[1] < 40*time.Millisecond || retries[1] > 60*time.Millisecond {
		t.Errorf("retry pauses %v, want about 20ms then 40ms (doubling, up to half again as jitter)", retries)
	}
}

func TestEngineDefaults(t *testing.T) {
	t.Parallel()
	e := &Engine{}
	e.defaults()
	if e.LeaseTTL != 2*time.Minute || e.MaxLoopIterations != 5 || e.Attempts != 4 || e.Backoff != 500*time.Millisecond ||
		e.AgentTimeout != 30*time.Minute || e.PollInterval != 30*time.Second || e.EpicPoll != time.Second || e.Runner == "" {
		t.Errorf("defaults %+v", e)
	}
	set := &Engine{Runner: "r", LeaseTTL: time.Second, Attempts: 1, Backoff: time.Millisecond, EpicPoll: time.Millisecond,
		Settings: action.Settings{MaxLoopIterations: 1, AgentTimeout: time.Second, PollInterval: time.Millisecond}}
	set.defaults()
	if set.LeaseTTL != time.Second || set.Backoff != time.Millisecond || set.PollInterval != time.Millisecond || set.EpicPoll != time.Millisecond || set.Runner != "r" {
		t.Errorf("given values were replaced: %+v", set)
	}
}

// failingLogs is a store whose activity log cannot be written.
type failingLogs struct{ store.Store }

func (failingLogs) AppendLog(context.Context, store.LogEntry) error {
	return errors.New("log table locked")
}

func TestALostLogIsReportedOnce(t *testing.T) {
	t.Parallel()
	acts := scriptedActions(map[string]func(context.Context, *action.StepContext) (action.Outcome, error){"push": pushed("p")})
	e, s := newTestEngine(t, "push", "push")
	e.Actions = acts
	e.Store = failingLogs{s}
	var warned int
	e.Events = func(ev Event) {
		if ev.Type == "log_failed" {
			warned++
		}
	}
	res, err := e.Run(context.Background(), RunOptions{Key: "task_e"})
	if err != nil {
		t.Fatal(err)
	}
	if warned != 1 || len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "log table locked") {
		t.Errorf("warned %d times, warnings %v; want one report naming the cause", warned, res.Warnings)
	}
	if st, _ := workorder.StateOf(func() map[string]any { d, _ := s.Get(context.Background(), "task_e"); return d }()); st.CurrentStep != 2 {
		t.Errorf("the run stopped at step %d: a lost log entry must not stop it", st.CurrentStep)
	}
}

// What a rewind forgets is said by each action: every name is a field of
// the state, and rewinding past a step forgets what its action records and
// nothing another action records.
func TestEachActionForgetsWhatItRecords(t *testing.T) {
	t.Parallel()
	for _, a := range action.DefaultActions() {
		var st workorder.State
		if unknown := st.Forget(a.Forgets...); len(unknown) != 0 {
			t.Errorf("%s forgets %v, which are no state fields", a.Name, unknown)
		}
	}
	full := func() workorder.State {
		s := workorder.NewState()
		s.BaseSHA, s.SourceSHA, s.Branch, s.PushedTo = "b", "s", "br", "https://x"
		s.ReviewComments, s.ReviewCheckedSHA = []workorder.ReviewComment{{ID: 1}}, "c"
		s.LoopIterations, s.FixPushed = map[string]int{"9": 1}, &workorder.FixPush{From: "a", To: "b"}
		return s
	}
	forgets := func(name string) workorder.State {
		s := full()
		spec, _ := action.DefaultActions().Lookup(name)
		s.Forget(spec.Forgets...)
		return s
	}
	if s := forgets("checkout_files"); s.SourceSHA != "" || s.BaseSHA != "b" || len(s.ReviewComments) != 1 {
		t.Errorf("rewinding past checkout_files: %+v", s)
	}
	if s := forgets("conditional_loop"); s.LoopIterations != nil || s.FixPushed != nil {
		t.Errorf("rewinding past the loop kept its iterations, so its bound would stop it again: %+v", s)
	}
	if s := forgets("create_worktree"); s.BaseSHA != "" || s.SourceSHA != "s" {
		t.Errorf("rewinding past create_worktree: %+v", s)
	}
	if s := forgets("check_review"); s.ReviewComments != nil || s.ReviewCheckedSHA != "" || s.Branch != "br" {
		t.Errorf("rewinding past check_review: %+v", s)
	}
	if s := forgets("create_branch"); s.Branch != "" || s.PushedTo != "" || s.BaseSHA != "b" {
		t.Errorf("rewinding past create_branch: %+v", s)
	}
	if s := forgets("commit"); s.BaseSHA != "b" || s.Branch != "br" || s.SourceSHA != "s" {
		t.Errorf("rewinding past commit forgot what others record: %+v", s)
	}
}
