package commands

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/wo-runner/wo/internal/gitname"
	"github.com/wo-runner/wo/procedure/stack"
	"github.com/wo-runner/wo/store"
	"github.com/wo-runner/wo/termtext"
)

func newLandCommand(f *Factory) *cli.Command { return landCommand(f, runLand) }

// landOptions are what wo land is asked.
type landOptions struct {
	Store     StoreConfig
	GitHubAPI string
	stack.LandOptions
}

func landCommand(f *Factory, run func(context.Context, *Factory, *landOptions) (result, error)) *cli.Command {
	return &cli.Command{
		Name:      "land",
		Usage:     "merge an epic's pull requests, bottom first, once each is approved and green",
		ArgsUsage: "EPIC",
		Description: `Merges the epic's pull requests in stack order, from the bottom up to
--through (a pull request's number, or its task's key; the whole epic
when not given). Before merging anything it checks each of them: the
task's run ended with its review loop clean, its head is the one wo
pushed and reviewed, GitHub shows it approved by someone who can push to
the repository (not wo, a bot or an outsider) with no changes requested,
and its checks and statuses are green. When one is not ready it merges
nothing, says which and why, and names the --through that lands the
ready ones under it (exit 3).

On a repository with GitHub's stacked pull requests each merge goes
through GitHub's asynchronous merge API, and wo follows its result; a
rule that refuses the merge stops the land with GitHub's reason (exit 3).
Elsewhere it uses the ordinary merge. Between two merges of a stacked
epic it restacks the pull requests above (as wo sync does), so that none
replays a commit above a squashed one. Each merge commit's message is the
pull request's title and its description without wo's stack table.

wo land can be stopped at any moment and run again: it reads each pull
request before merging it, never merges one twice, and goes on waiting
for a merge it asked for. Merged pull requests close their tasks. It
holds the epic's lease while it works (another wo land of the epic: exit
4); a pull request in GitHub's merge queue, or a merge still running when
--timeout ends, stops it (exit 3: run it again later); GitHub not
answering well exits 5.`,
		Flags: append(storeFlags(),
			&cli.StringFlag{Name: "through", Usage: "land up to and including pull request `N` (or the task KEY)"},
			&cli.StringFlag{Name: "method", Value: "squash", Usage: "merge `METHOD`: squash, merge or rebase"},
			&cli.DurationFlag{Name: "timeout", Value: 30 * time.Minute, Usage: "give up waiting for one asynchronous merge after this `DURATION`"},
			&cli.DurationFlag{Name: "poll-every", Value: 2 * time.Second, Usage: "read an asynchronous merge's result every `DURATION`"},
			&cli.StringFlag{Name: "github-api", Usage: "GitHub API base `URL`"},
		),
		Action: f.action(func(c *cli.Context) (result, error) {
			epic, err := oneArg(c, "EPIC key")
			if err != nil {
				return result{}, err
			}
			if c.Duration("poll-every") < 100*time.Millisecond {
				return result{}, usagef("--poll-every is at least 100ms")
			}
			o := &landOptions{Store: f.storeConfig(c), GitHubAPI: c.String("github-api"), LandOptions: stack.LandOptions{
				Epic: epic, Through: c.String("through"), Method: c.String("method"),
				Timeout: c.Duration("timeout"), PollEvery: c.Duration("poll-every"),
			}}
			o.Progress = func(s string) { fmt.Fprintln(f.Stderr, termtext.Line(s)) }
			return run(c.Context, f, o)
		}),
	}
}

func runLand(ctx context.Context, f *Factory, o *landOptions) (result, error) {
	var out *stack.LandResult
	var landErr error
	err := f.useStore(ctx, o.Store, func(s store.Store) error {
		e := f.engine(s, engineOptions{GitHubAPI: o.GitHubAPI})
		out, landErr = stack.Of(e).Land(ctx, o.LandOptions)
		if out == nil {
			return landErr
		}
		return nil
	})
	if err != nil {
		return result{}, err
	}
	res := result{data: out, always: true, human: func(w io.Writer) error {
		writeLand(w, out)
		for _, warn := range out.Warnings {
			fmt.Fprintf(f.Stderr, "warning: %s\n", termtext.Line(warn))
		}
		return nil
	}}
	return res, landErr
}

// writeLand prints what wo land did, a line a pull request.
func writeLand(w io.Writer, r *stack.LandResult) {
	how := "ordinary merge"
	if r.GitHubStacks {
		how = "GitHub's asynchronous merge (the repository has stacked pull requests)"
	}
	fmt.Fprintf(w, "Land of epic %s, %s by %s:\n", termtext.Line(r.Epic), r.Method, how)
	for _, s := range r.Steps {
		line := fmt.Sprintf("  #%d %s (%s): %s", s.PR, termtext.Line(s.Title), s.Key, strings.ReplaceAll(s.Outcome, "_", " "))
		if s.PR == 0 {
			line = fmt.Sprintf("  %s: %s", s.Key, strings.ReplaceAll(s.Outcome, "_", " "))
		}
		if s.SHA != "" {
			line += " at " + gitname.Short(s.SHA)
		}
		if s.Reason != "" {
			line += ": " + termtext.Line(s.Reason)
		}
		fmt.Fprintln(w, line)
	}
	switch {
	case r.Complete:
		fmt.Fprintln(w, "Landed.")
	case r.Stopped != "":
		fmt.Fprintf(w, "Stopped: %s\n", termtext.Line(r.Stopped))
	}
}
