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
	// Offline checks the documents alone: of wo run's checks only what
	// they find in the document itself, and for a file no store.
	Offline bool
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
and the state's shape and version. Then, for a valid document, what wo run
would refuse on this machine before it changes anything: the repository,
its branches and the manifest's files, the worktree folder, a GitHub token.

Each problem is the document's or this machine's, and the exit code says
which: 2 when a document has an error (fix the document); 1 when the
documents are valid but this machine cannot run them as they are (fix the
machine, or run them where they can run); 0 when neither. --json marks
each problem "kind": "document" or "machine".

--offline checks the documents alone: not this machine, and with -f not
the store either (dependencies are checked among the file's documents, and
one outside them is a warning), so it needs no repository, token, store or
network: the check for a CI lint job, wo validate --offline -f tasks.json.

With -f, the file holds one document or an array; defaults that wo import
would fill (status, priority, _key) are applied first, so the result is
what an import would say.`,
		Flags: append(storeFlags(),
			&cli.StringFlag{Name: "file", Aliases: []string{"f"}, Usage: "validate the documents in `FILE` (- for stdin) instead of a stored task"},
			&cli.BoolFlag{Name: "offline", Usage: "check the documents alone: not this machine's repository, branches or token, and with -f not the store"},
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
	o := &validateOptions{Store: f.storeConfig(c), File: c.String("file"), Offline: c.Bool("offline")}
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
	var err error
	if o.Offline && o.File != "" {
		reports, err = validateFile(ctx, f, nil, o) // no store: the documents alone
	} else {
		cfg := o.Store
		cfg.ReadOnly = o.File == "" // a stored task: only read the store
		err = f.useStore(ctx, cfg, func(s store.Store) error {
			var err error
			if o.File != "" {
				reports, err = validateFile(ctx, f, s, o)
				return err
			}
			doc, err := s.Get(ctx, o.Key)
			if err != nil {
				return err
			}
			r := workorder.Validate(doc, newIntake(s).Options(ctx, nil))
			f.preflight(ctx, s, doc, &r, o.Offline)
			reports = []workorder.Report{r}
			return nil
		})
	}
	if err != nil {
		return result{}, err
	}
	for i := range reports {
		for j := range reports[i].Problems {
			if reports[i].Problems[j].Kind == "" {
				reports[i].Problems[j].Kind = workorder.OfDocument
			}
		}
	}
	res := result{data: reports, human: func(w io.Writer) error { return writeReports(w, reports) }}
	return res, validateVerdict(reports)
}

// validateFile says what an import of the documents in the file would
// say, defaults and all, then what a run of each valid one would refuse;
// it changes nothing. Without a store (s nil) it checks the documents
// alone.
func validateFile(ctx context.Context, f *Factory, s store.Store, o *validateOptions) ([]workorder.Report, error) {
	data, source, err := f.readInput(o.File)
	if err != nil {
		return nil, err
	}
	docs, err := workorder.DecodeDocuments(source, data)
	if err != nil {
		return nil, err
	}
	reports := newIntake(s).Check(ctx, docs, source)
	// A key that appears twice adds a report: then no report is known to
	// be one document's.
	if len(reports) == len(docs) {
		for i := range reports {
			f.preflight(ctx, s, docs[i], &reports[i], o.Offline)
		}
	}
	return reports, nil
}

// preflight adds to a valid document's report what wo run would refuse
// before changing anything, each as an error in the step it is about,
// marked as the document's (an empty manifest) or this machine's (the
// repository, branches, files, the worktree folder, a token): a document
// wo validate passes is one wo run starts here. Offline, only the
// document's are looked for (s may be nil).
func (f *Factory) preflight(ctx context.Context, s store.Store, doc workorder.Document, r *workorder.Report, offline bool) {
	if !r.Valid() {
		return
	}
	eng := f.engine(s, engineOptions{GitHubAPI: f.Getenv("GITHUB_API_URL")})
	err := eng.Preflight(ctx, doc, procedure.RunOptions{Key: workorder.Key(doc), Offline: offline})
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
	kinds := map[string]workorder.ProblemKind{}
	for i, msg := range pf.Problems {
		kind := workorder.OfMachine
		if i < len(pf.Kinds) {
			kind = pf.Kinds[i]
		}
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
		kinds[msg] = kind
	}
	for _, msg := range order {
		at, kind := steps[msg], kinds[msg]
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
		r.Problems = append(r.Problems, workorder.Problem{Path: path, Message: "wo run would refuse: " + msg, Severity: workorder.SeverityError, Kind: kind})
	}
}

// validateVerdict is wo validate's error, one kind at a time: a
// document's error first (exit 2: the document is wrong wherever it runs),
// else this machine's (exit 1: valid documents that wo run would refuse
// here), else nil.
func validateVerdict(reports []workorder.Report) error {
	var documents, machine []workorder.Report
	for _, r := range reports {
		switch {
		case len(errorsOf(r, workorder.OfDocument)) > 0:
			documents = append(documents, r)
		case len(errorsOf(r, workorder.OfMachine)) > 0:
			machine = append(machine, r)
		}
	}
	if len(documents) > 0 {
		return intake.Invalid(documents)
	}
	if len(machine) > 0 {
		return &cannotRunHereError{Reports: machine}
	}
	return nil
}

// errorsOf are a report's errors of one kind.
func errorsOf(r workorder.Report, kind workorder.ProblemKind) []workorder.Problem {
	var out []workorder.Problem
	for _, p := range r.Errors() {
		if p.Kind == kind {
			out = append(out, p)
		}
	}
	return out
}

// cannotRunHereError is valid documents that wo run would refuse on this
// machine: its problems are the machine's, not the documents'.
type cannotRunHereError struct {
	Reports []workorder.Report
}

func (e *cannotRunHereError) Error() string {
	var b strings.Builder
	n := workorder.ErrorCount(e.Reports)
	fmt.Fprintf(&b, "the document is valid, but this machine cannot run it: %d problem(s)", n)
	if len(e.Reports) > 1 {
		b.Reset()
		fmt.Fprintf(&b, "the documents are valid, but this machine cannot run %d of them: %d problem(s)", len(e.Reports), n)
	}
	b.WriteString(workorder.ProblemLines(e.Reports))
	b.WriteString("\nThese are this machine's problems (its repository, branches, worktree folder, token), not the document's; wo validate --offline checks the documents alone.")
	return b.String()
}

func writeReports(w io.Writer, reports []workorder.Report) error {
	for _, r := range reports {
		errs, machine, warns := errorsOf(r, workorder.OfDocument), errorsOf(r, workorder.OfMachine), r.Warnings()
		key := r.Name()
		switch {
		case len(errs) > 0:
			fmt.Fprintf(w, "%s: invalid, %d error(s), %d warning(s)\n", termtext.Line(key), len(errs), len(warns))
		case len(machine) > 0:
			fmt.Fprintf(w, "%s: valid, but this machine cannot run it: %d problem(s), %d warning(s)\n", termtext.Line(key), len(machine), len(warns))
		case len(warns) > 0:
			fmt.Fprintf(w, "%s: valid, %d warning(s)\n", termtext.Line(key), len(warns))
		default:
			fmt.Fprintf(w, "%s: valid\n", termtext.Line(key))
		}
		for _, p := range errs {
			fmt.Fprintf(w, "  error   %s\n", termtext.Line(p.String()))
		}
		for _, p := range machine {
			fmt.Fprintf(w, "  machine %s\n", termtext.Line(p.String()))
		}
		for _, p := range warns {
			fmt.Fprintf(w, "  warning %s\n", termtext.Line(p.String()))
		}
	}
	return nil
}
