package procedure

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/wo-runner/wo/store"
	"github.com/wo-runner/wo/workorder"
)

// historyWindow is how many past steps estimates look at.
const historyWindow = 2000

// minSamples is how many past durations an action needs before wo will
// estimate it; per repository when that many exist there.
const minSamples = 3

// Estimator turns the durations of past steps (the step_completed entries of
// the activity log) into remaining-time estimates. It never invents one: an
// action with too little history makes the estimate "no estimate yet".
type Estimator struct {
	byAction map[string][]sample
}

type sample struct {
	ms   int64
	repo string
	task string
}

// NewEstimator reads the recent step history in one query.
func NewEstimator(ctx context.Context, s store.Store) (*Estimator, error) {
	logs, err := store.LogDetails(ctx, s, "step_completed", historyWindow, "action", "duration_ms", "repo")
	if err != nil {
		return nil, err
	}
	e := &Estimator{byAction: map[string][]sample{}}
	for _, l := range logs {
		action, _ := l.Details["action"].(string)
		ms, ok := workorder.AsInt(l.Details["duration_ms"])
		if action == "" || !ok {
			continue
		}
		repo, _ := l.Details["repo"].(string)
		e.byAction[action] = append(e.byAction[action], sample{ms: ms, repo: repo, task: l.TaskKey})
	}
	return e, nil
}

// Estimate is a remaining time and what it rests on.
type Estimate struct {
	Remaining time.Duration `json:"-"`
	Seconds   int64         `json:"seconds"`
	Basis     string        `json:"basis"`
	Known     bool          `json:"known"`
	// Class is the duration class: instant (under 10s), short (under
	// 10 minutes), long, or unknown without history.
	Class DurationClass `json:"class"`
	// Confidence says how much history the estimate rests on: low (fewer
	// than 5 past runs of some step), medium (fewer than 20), high.
	Confidence string `json:"confidence,omitempty"`
}

// DurationClass sorts tasks by how long they take.
type DurationClass string

// The duration classes.
const (
	DurationInstant DurationClass = "instant"
	DurationShort   DurationClass = "short"
	DurationLong    DurationClass = "long"
	DurationUnknown DurationClass = "unknown"
)

func classOf(d time.Duration) DurationClass {
	switch {
	case d < 10*time.Second:
		return DurationInstant
	case d < 10*time.Minute:
		return DurationShort
	default:
		return DurationLong
	}
}

func confidenceOf(fewest int) string {
	switch {
	case fewest < 5:
		return "low"
	case fewest < 20:
		return "medium"
	default:
		return "high"
	}
}

func (e Estimate) String() string {
	if !e.Known {
		return e.Basis
	}
	return fmt.Sprintf("~%s (%s)", e.Remaining.Round(time.Second), e.Basis)
}

// Remaining estimates the steps of a task not yet done: the median past
// duration of each one's action (of this repository when it has enough
// history, else of all).
func (est *Estimator) Remaining(doc workorder.Document) Estimate {
	steps, _ := mustProcedure(doc)
	current, _ := workorder.AsInt(workorder.Get(doc, "work_order.state.current_step"))
	repo := workorder.String(doc, "work_order.context.repo_path")
	var total time.Duration
	tasks := map[string]bool{}
	fewest := -1
	for _, s := range steps {
		if s.Step <= int(current) {
			continue
		}
		samples := est.byAction[s.Action]
		var here []sample
		for _, x := range samples {
			if repo != "" && x.repo == repo {
				here = append(here, x)
			}
		}
		if len(here) >= minSamples {
			samples = here
		}
		if len(samples) < minSamples {
			return Estimate{Class: DurationUnknown,
				Basis: fmt.Sprintf("no estimate yet: %d past %s step(s), %d needed", len(samples), s.Action, minSamples)}
		}
		if fewest < 0 || len(samples) < fewest {
			fewest = len(samples)
		}
		total += time.Duration(median(samples)) * time.Millisecond
		for _, x := range samples {
			tasks[x.task] = true
		}
	}
	e := Estimate{Remaining: total, Seconds: int64(total.Seconds()), Known: true, Class: classOf(total),
		Basis: fmt.Sprintf("from %d past run(s)", len(tasks))}
	if fewest >= 0 {
		e.Confidence = confidenceOf(fewest)
		e.Basis += fmt.Sprintf(", %s confidence", e.Confidence)
	}
	return e
}

func median(samples []sample) int64 {
	ms := make([]int64, len(samples))
	for i, s := range samples {
		ms[i] = s.ms
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i] < ms[j] })
	if len(ms)%2 == 1 {
		return ms[len(ms)/2]
	}
	return (ms[len(ms)/2-1] + ms[len(ms)/2]) / 2
}

func mustProcedure(doc workorder.Document) ([]workorder.Step, bool) {
	list, _ := workorder.Get(doc, "work_order.procedure").([]any)
	out := make([]workorder.Step, 0, len(list))
	for _, x := range list {
		m, _ := x.(map[string]any)
		n, _ := workorder.AsInt(m["step"])
		a, _ := m["action"].(string)
		out = append(out, workorder.Step{Step: int(n), Action: a})
	}
	return out, len(out) > 0
}
