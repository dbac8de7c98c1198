package commands

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/wo-runner/wo/store"
	"github.com/wo-runner/wo/workorder"
)

func newStatusCommand(f *Factory) *cli.Command {
	return &cli.Command{
		Name:      "status",
		Usage:     "show where a task, or an epic and all its children, stands",
		ArgsUsage: "KEY",
		Description: `For a task: its status, step n/m and the step's action, PR link, review
iterations, open comments at the last check, blockers not yet closed, and
the age of its last update. For an epic (or any task with children): the
same for every child, read in one query, with totals.`,
		Flags: append(storeFlags(),
			&cli.BoolFlag{Name: "refresh", Usage: "first read the pull requests on GitHub, as wo sync does"},
			&cli.StringFlag{Name: "github-api", EnvVars: []string{"GITHUB_API_URL"}, Usage: "GitHub API base `URL`"},
		),
		Action: f.action(func(c *cli.Context) (result, error) {
			key, err := oneArg(c, "task KEY")
			if err != nil {
				return result{}, err
			}
			var rows []StatusRow
			err = f.withStore(c, func(s store.Store) error {
				if c.Bool("refresh") {
					if _, err := syncTree(c, f, s, key); err != nil {
						return err
					}
				}
				doc, err := s.Get(c.Context, key)
				if err != nil {
					return err
				}
				children, err := s.List(c.Context, store.Filter{ParentKey: key})
				if err != nil {
					return err
				}
				docs := append([]map[string]any{doc}, children...)
				byKey := map[string]map[string]any{}
				for _, d := range docs {
					byKey[workorder.Key(d)] = d
				}
				for _, d := range docs {
					rows = append(rows, statusRow(d, byKey))
				}
				return nil
			})
			if err != nil {
				return result{}, err
			}
			return result{data: rows, human: func(w io.Writer) error { return writeStatus(w, rows) }}, nil
		}),
	}
}

// StatusRow is one task in wo status.
type StatusRow struct {
	Key              string   `json:"key"`
	Title            string   `json:"title"`
	Status           string   `json:"status"`
	Phase            string   `json:"phase,omitempty"`
	Step             int      `json:"current_step"`
	Steps            int      `json:"steps"`
	NextAction       string   `json:"next_action,omitempty"`
	PRURL            string   `json:"pr_url,omitempty"`
	ReviewIterations int      `json:"review_iterations"`
	OpenComments     int      `json:"open_comments"`
	BlockedBy        []string `json:"blocked_by_open,omitempty"`
	UpdatedAt        string   `json:"updated_at,omitempty"`
}

func statusRow(d map[string]any, known map[string]map[string]any) StatusRow {
	r := StatusRow{Key: workorder.Key(d), Title: workorder.String(d, "title"), Status: workorder.String(d, "status"),
		UpdatedAt: workorder.String(d, "updated_at")}
	task, err := workorder.Parse(d)
	if err != nil || task.WorkOrder == nil {
		return r
	}
	wo := task.WorkOrder
	r.Phase, r.Step, r.Steps = wo.State.Phase, wo.State.CurrentStep, len(wo.Procedure)
	if s, ok := wo.StepByNumber(wo.State.CurrentStep + 1); ok {
		r.NextAction = s.Action
	}
	r.PRURL = deref(wo.State.PRURL)
	r.ReviewIterations, r.OpenComments = wo.State.ReviewIterations, len(wo.State.ReviewComments)
	for _, b := range wo.Dependencies.BlockedBy {
		if dep, ok := known[b]; !ok || !workorder.BlockerSatisfied(d, dep) {
			r.BlockedBy = append(r.BlockedBy, b)
		}
	}
	return r
}

func writeStatus(w io.Writer, rows []StatusRow) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tSTATUS\tSTEP\tNEXT\tREVIEWS\tCOMMENTS\tPR\tUPDATED\tTITLE")
	counts := map[string]int{}
	for _, r := range rows {
		step, next := "-", orDash(r.NextAction)
		if r.Steps > 0 {
			step = fmt.Sprintf("%d/%d", r.Step, r.Steps)
			if r.Step == r.Steps {
				next = "done"
			}
		}
		status := r.Status
		if len(r.BlockedBy) > 0 {
			status += " (waits for " + fmt.Sprint(r.BlockedBy) + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%s\t%s\t%s\n", r.Key, status, step, next, r.ReviewIterations,
			r.OpenComments, orDash(r.PRURL), age(r.UpdatedAt), r.Title)
		counts[r.Status]++
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(rows) > 1 {
		_, err := fmt.Fprintf(w, "%d tasks: %d closed, %d in review, %d in progress, %d blocked, %d open\n", len(rows),
			counts["closed"], counts["in_review"], counts["in_progress"], counts["blocked"], counts["open"])
		return err
	}
	return nil
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
