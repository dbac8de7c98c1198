package commands

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/wo-runner/wo/intake"
	"github.com/wo-runner/wo/procedure"
	"github.com/wo-runner/wo/store"
	"github.com/wo-runner/wo/termtext"
	"github.com/wo-runner/wo/workorder"
)

func newValidateCommand(f *Factory) *cli.Command { return validateCommand(f, runValidate) }

// validateOptions are what wo validate is asked: a stored task's key, or
// a file of documents.
type validateOptions struct {
	Store StoreConfig
	Key   string
	File  string // - for standard input
}

func validateCommand(f *Factory, run func(context.Context, *Factory, *validateOptions) (result, error)) *cli.Command {
	return &cli.Command{
		Name:      "validate",
		Usage:     "check a stored task, or documents in a file, and list every problem",
		ArgsUsage: "KEY | -f FILE",
		Description: `Checks Persephone's fields (status, priority, type, block_reason), the
task-creation rules that wo create applies (errors and warnings), and the
work order's structure:
steps numbered 1..n, known actions, loop_to pointing back, conditions,
file_manifest paths, pr_number, dependencies that exist and form no cycle,
and the state's shape and version. Exits 2 when there is any error.

With -f, the file holds one document or an array; defaults that wo import
would fill (status, priority, _key) are applied first, so the result is
what an import would say.`,
		Flags: append(storeFlags(),
			&cli.StringFlag{Name: "file", Aliases: []string{"f"}, Usage: "validate the documents in `FILE` (- for stdin) instead of a stored task"},
		),
		Action: f.action(func(c *cli.Context) (result, error) {
			opts, err := validateOptionsFrom(c, f)
			if err != nil {
				return result{}, err
			}
			return run(c.Context, f, opts)
		}),
	}
}

// validateOptionsFrom reads the flags.
func validateOptionsFrom(c *cli.Context, f *Factory) (*validateOptions, error) {
	o := &validateOptions{Store: f.storeConfig(c), File: c.String("file")}
	if o.File != "" {
		if c.Args().Len() > 0 {
			return nil, usagef("give either a KEY or -f FILE, not both")
		}
		return o, nil
	}
	key, err := oneArg(c, "task KEY")
	o.Key = key
	return o, err
}

func runValidate(ctx context.Context, f *Factory, o *validateOptions) (result, error) {
	var reports []workorder.Report
	cfg := o.Store
	cfg.ReadOnly = o.File == "" // a stored task: only read the store
	err := f.useStore(ctx, cfg, func(s store.Store) error {
		in := newIntake(s)
		if o.File != "" {
			data, source, err := f.readInput(o.File)
			if err != nil {
				return err
			}
			docs, err := workorder.DecodeDocuments(source, data)
			if err != nil {
				return err
			}
			// What an import would say, defaults and all; then what a
			// run of each valid one would refuse.
			reports = in.Check(ctx, docs, source)
			for i := range reports {
				if i < len(docs) && len(reports) == len(docs) {
					f.preflight(ctx, s, docs[i], &reports[i])
				}
			}
			return nil
		}
		doc, err := s.Get(ctx, o.Key)
		if err != nil {
			return err
		}
		r := workorder.Validate(doc, in.Options(ctx, nil))
		f.preflight(ctx, s, doc, &r)
		reports = []workorder.Report{r}
		return nil
	})
	if err != nil {
		return result{}, err
	}
	res := result{data: reports, human: func(w io.Writer) error { return writeReports(w, reports) }}
	return res, invalid(reports)
}

// preflight adds to a valid document's report what wo run would refuse
// before changing anything (the repository, branches, files, the worktree
// folder), each as an error in the step it is about: a document wo
// validate passes is one wo run starts.
func (f *Factory) preflight(ctx context.Context, s store.Store, doc workorder.Document, r *workorder.Report) {
	if !r.Valid() {
		return
	}
	eng := f.engine(s, engineOptions{GitHubAPI: f.Getenv("GITHUB_API_URL")})
	err := eng.Preflight(ctx, doc, procedure.RunOptions{Key: workorder.Key(doc)})
	var pf *procedure.PreflightError
	if !errors.As(err, &pf) {
		if err != nil {
			r.Problems = append(r.Problems, workorder.Problem{Path: "work_order", Message: err.Error(), Severity: workorder.SeverityError})
		}
		return
	}
	// One problem per cause: a missing repository is every git step's.
	var order []string
	steps := map[string][]int{}
	for i, msg := range pf.Problems {
		step := 0
		if i < len(pf.Steps) {
			step = pf.Steps[i]
			if _, rest, ok := strings.Cut(msg, "): "); ok {
				msg = strings.TrimPrefix(rest, "task "+pf.Key+": ")
			}
		}
		if _, seen := steps[msg]; !seen {
			order = append(order, msg)
		}
		steps[msg] = append(steps[msg], step)
	}
	for _, msg := range order {
		at := steps[msg]
		path := "work_order.procedure"
		if at[0] > 0 {
			path = fmt.Sprintf("work_order.procedure[%d]", at[0]-1)
		}
		if len(at) > 1 {
			var more []string
			for _, n := range at[1:] {
				more = append(more, fmt.Sprint(n))
			}
			msg += " (steps " + strings.Join(more, ", ") + " too)"
		}
		r.Problems = append(r.Problems, workorder.Problem{Path: path, Message: "wo run would refuse: " + msg, Severity: workorder.SeverityError})
	}
}

// invalid returns the error for reports that contain errors, or nil.
func invalid(reports []workorder.Report) error { return intake.Invalid(reports) }

func writeReports(w io.Writer, reports []workorder.Report) error {
	for _, r := range reports {
		errs, warns := r.Errors(), r.Warnings()
		key := r.Name()
		switch {
		case len(errs) > 0:
			fmt.Fprintf(w, "%s: invalid, %d error(s), %d warning(s)\n", termtext.Line(key), len(errs), len(warns))
		case len(warns) > 0:
			fmt.Fprintf(w, "%s: valid, %d warning(s)\n", termtext.Line(key), len(warns))
		default:
			fmt.Fprintf(w, "%s: valid\n", termtext.Line(key))
		}
		for _, p := range errs {
			fmt.Fprintf(w, "  error   %s\n", termtext.Line(p.String()))
		}
		for _, p := range warns {
			fmt.Fprintf(w, "  warning %s\n", termtext.Line(p.String()))
		}
	}
	return nil
}
