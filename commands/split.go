package commands

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/wo-runner/wo/gitops"
	"github.com/wo-runner/wo/procedure"
	"github.com/wo-runner/wo/split"
	"github.com/wo-runner/wo/store"
)

func newSplitCommand(f *Factory) *cli.Command {
	return &cli.Command{
		Name:  "split",
		Usage: "cut a big change into an epic of review PRs, one work order each",
		Description: `Reads the change from --base to --source, groups the files into review pull
requests (a Go package or directory is never split; tests stay with their
code; each PR under --max-lines and --max-files where possible), orders them
so that a PR comes after the PRs whose Go packages it imports, and writes an
epic with one work order per PR (the seed's review procedure, branch
review/NN-slug, dependencies both ways) in one all-or-nothing import.

Rerunning split for the same repository, base and source finds the same keys:
work orders that have not started get the new manifests, started ones are
left alone and named. --plan FILE takes a hand-written plan instead:
{"prs": [{"title": "...", "globs": ["internal/config/**"]}], "exclude": ["docs/**"]}.

--mode independent (default): every PR targets --base, and a PR starts once
the PRs it depends on are merged. --mode stacked: a PR targets the branch of
the PR it depends on, and starts once that one is pushed.`,
		Flags: append(storeFlags(),
			&cli.StringFlag{Name: "repo", Value: ".", Usage: "the repository's main checkout `PATH`"},
			&cli.StringFlag{Name: "base", Required: true, Usage: "the `REF` the PRs are reviewed against"},
			&cli.StringFlag{Name: "source", Required: true, Usage: "the `REF` that holds the whole change"},
			&cli.StringFlag{Name: "epic-key", Usage: "the epic's `KEY` (default: derived from repository, base and source)"},
			&cli.StringFlag{Name: "key-prefix", Usage: "work order keys are `PREFIX`01, PREFIX02, … (default: the epic key + _pr)"},
			&cli.IntFlag{Name: "max-lines", Value: 400, Usage: "line budget per PR"},
			&cli.IntFlag{Name: "max-files", Value: 30, Usage: "file budget per PR"},
			&cli.StringFlag{Name: "by", Value: "package", Usage: "group by `package` (directory) or dir (top-level directory)"},
			&cli.StringFlag{Name: "plan", Usage: "use the hand-written plan in `FILE`"},
			&cli.StringFlag{Name: "mode", Value: "independent", Usage: "independent or stacked"},
			&cli.StringFlag{Name: "github-repo", Usage: "GitHub `OWNER/NAME` for the PRs (default: from the origin remote's URL; without one the procedure stops after the push)"},
			&cli.StringFlag{Name: "worktree-root", Usage: "where the worktrees go (`DIR`, default: a folder beside the repository)"},
			&cli.StringFlag{Name: "source-event-id", Usage: "the `ID` of the event (a push, a CI run) this split answers: the epic key derives from it, so the same event never makes a second epic"},
			&cli.BoolFlag{Name: "dry-run", Usage: "print the plan; write nothing"},
			&cli.BoolFlag{Name: "emit-matrix", Usage: "print a GitHub Actions matrix of the work orders that can run now"},
		),
		Action: f.action(func(c *cli.Context) (result, error) {
			if c.Args().Len() > 0 {
				return result{}, usagef("wo split takes no arguments: use --base and --source")
			}
			repo, err := gitops.Open(c.String("repo"))
			if err != nil {
				return result{}, err
			}
			change, err := split.ReadChange(c.Context, repo, c.String("base"), c.String("source"))
			if err != nil {
				return result{}, err
			}
			var plan *split.Plan
			if file := c.String("plan"); file != "" {
				data, _, err := f.readInput(file)
				if err != nil {
					return result{}, err
				}
				hp, err := split.ParseHandPlan(data)
				if err != nil {
					return result{}, usagef(err.Error())
				}
				if plan, err = split.FromHand(change, hp); err != nil {
					return result{}, usagef(err.Error())
				}
			} else if plan, err = split.Make(change, split.Options{MaxLines: c.Int("max-lines"), MaxFiles: c.Int("max-files"), By: c.String("by")}); err != nil {
				return result{}, usagef(err.Error())
			}
			ghRepo := c.String("github-repo")
			if ghRepo == "" {
				ghRepo = githubRepoOf(repo)
			}
			root := c.String("worktree-root")
			if root == "" {
				root = filepath.Join(filepath.Dir(repo.Path), filepath.Base(repo.Path)+"-review")
			}
			epicKey := c.String("epic-key")
			if event := c.String("source-event-id"); event != "" && epicKey == "" {
				epicKey = "task_split_" + eventKey(event, 16)[len("task_"):]
			}
			epic, tasks, err := split.Documents(plan, split.DocOptions{EpicKey: epicKey, KeyPrefix: c.String("key-prefix"),
				Repo: ghRepo, RepoPath: repo.Path, WorktreeRoot: root, Mode: c.String("mode")})
			if err != nil {
				return result{}, usagef(err.Error())
			}
			if event := c.String("source-event-id"); event != "" {
				epic["source_event_id"] = event
			}
			for _, w := range plan.Warnings {
				fmt.Fprintln(f.Stderr, "warning:", w)
			}
			out := map[string]any{"epic": epic["_key"], "prs": plan.PRs, "warnings": plan.Warnings, "excluded": plan.Excluded}
			docs := tasks
			if !c.Bool("dry-run") {
				err = f.withStore(c, func(s store.Store) error {
					res, err := split.Write(c.Context, s, epic, tasks)
					if err != nil {
						return err
					}
					// The planning event goes on the epic's timeline.
					if err := s.AppendLog(c.Context, store.LogEntry{Action: "split_planned", TaskKey: epic["_key"].(string),
						SessionKey: procedure.Identity(), Details: map[string]any{"prs": len(plan.PRs), "files": len(change.Files),
							"base": change.BaseRef, "source": change.SourceRef, "created": len(res.Created), "updated": len(res.Updated)}}); err != nil {
						fmt.Fprintln(f.Stderr, "warning: the split was written but not logged:", err)
					}
					out["written"] = res
					docs, err = s.List(c.Context, store.Filter{ParentKey: epic["_key"].(string)})
					return err
				})
				if err != nil {
					return result{}, err
				}
			}
			matrix := map[string]any{"include": []any{}}
			for _, k := range split.Ready(docs) {
				matrix["include"] = append(matrix["include"].([]any), map[string]any{"key": k})
			}
			out["matrix"] = matrix
			if c.Bool("emit-matrix") {
				return result{data: matrix, human: func(w io.Writer) error {
					b, _ := json.Marshal(matrix)
					_, err := fmt.Fprintln(w, string(b))
					return err
				}}, nil
			}
			return result{data: out, human: func(w io.Writer) error {
				return writeSplit(w, plan, epic["_key"].(string), tasks, c.Bool("dry-run"), out["written"])
			}}, nil
		}),
	}
}

var githubURL = regexp.MustCompile(`github\.com[:/]([^/]+)/([^/]+?)(?:\.git)?/?$`)

// githubRepoOf reads owner/name from the origin remote's URL.
func githubRepoOf(r *gitops.Repo) string {
	remote, err := r.Git().Remote("origin")
	if err != nil || len(remote.Config().URLs) == 0 {
		return ""
	}
	if m := githubURL.FindStringSubmatch(remote.Config().URLs[0]); m != nil {
		return m[1] + "/" + m[2]
	}
	return ""
}

func writeSplit(w io.Writer, plan *split.Plan, epic string, tasks []map[string]any, dry bool, written any) error {
	verb := "wrote"
	if dry {
		verb = "would write (dry run)"
	}
	fmt.Fprintf(w, "%s epic %s: %d files in %d PRs\n", verb, epic, len(plan.Change.Files), len(plan.PRs))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PR\tKEY\tTITLE\tFILES\tLINES\tWAVE\tBLOCKED BY")
	for i, pr := range plan.PRs {
		var deps []string
		for _, d := range pr.BlockedBy {
			deps = append(deps, fmt.Sprintf("#%d", d))
		}
		fmt.Fprintf(tw, "#%d\t%s\t%s\t%d\t%d\t%d\t%s\n", pr.Number, tasks[i]["_key"], pr.Title, len(pr.Files), pr.Lines, pr.Wave, orDash(strings.Join(deps, ", ")))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(plan.Excluded) > 0 {
		fmt.Fprintf(w, "excluded: %s\n", strings.Join(plan.Excluded, ", "))
	}
	if res, ok := written.(*split.WriteResult); ok && (len(res.Updated) > 0 || len(res.Same) > 0) {
		fmt.Fprintf(w, "already there: %d unchanged, %d updated (%s)\n", len(res.Same), len(res.Updated), strings.Join(res.Updated, ", "))
	}
	return nil
}
