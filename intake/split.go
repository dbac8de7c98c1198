package intake

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/wo-runner/wo/gitops"
	"github.com/wo-runner/wo/split"
	"github.com/wo-runner/wo/store"
	"github.com/wo-runner/wo/workorder"
)

// SplitRequest is a change to split into review PRs, and where their work
// orders will run.
type SplitRequest struct {
	RepoPath     string // the repository's main checkout
	Base, Source string // refs: reviewed against, holding the change
	// HandPlan is a hand-written plan (JSON); nil plans automatically
	// with Auto.
	HandPlan     []byte
	Auto         split.Options
	EpicKey      string // default: from SourceEvent, else from repository, base and source
	KeyPrefix    string
	GitHubRepo   string // owner/name; default: from the origin remote's URL
	WorktreeRoot string // default: a folder beside the repository
	Mode         string
	SourceEvent  string
}

// BadRequestError is a split that cannot be planned as asked: a plan,
// mode or key that does not fit the change. Nothing was written.
type BadRequestError struct{ Err error }

func (e *BadRequestError) Error() string { return e.Err.Error() }
func (e *BadRequestError) Unwrap() error { return e.Err }

// SplitPlan is a planned split: the epic and one work order per PR, not
// yet written.
type SplitPlan struct {
	Plan  *split.Plan
	Epic  workorder.Document
	Tasks []workorder.Document
	// NoReview says why the work orders stop after the push, without a
	// pull request or a review (no GitHub repository to open them on),
	// and how to have them; "" when they open PRs.
	NoReview string
}

// Ready lists the planned work orders that could start at once.
func (p *SplitPlan) Ready() []string { return split.Ready(p.Tasks) }

// PlanSplit reads the change from git and plans its review PRs. It writes
// nothing.
func PlanSplit(ctx context.Context, req SplitRequest) (*SplitPlan, error) {
	repo, err := gitops.Open(req.RepoPath)
	if err != nil {
		return nil, err
	}
	change, err := split.ReadChange(ctx, repo, req.Base, req.Source)
	if err != nil {
		return nil, err
	}
	var plan *split.Plan
	if req.HandPlan != nil {
		hp, err := split.ParseHandPlan(req.HandPlan)
		if err != nil {
			return nil, &BadRequestError{err}
		}
		if plan, err = split.FromHand(change, hp); err != nil {
			return nil, &BadRequestError{err}
		}
	} else if plan, err = split.Make(change, req.Auto); err != nil {
		return nil, &BadRequestError{err}
	}
	ghRepo, noReview := req.GitHubRepo, ""
	if ghRepo == "" {
		ghRepo, noReview = githubRepoOf(repo)
	}
	root := req.WorktreeRoot
	if root == "" {
		root = filepath.Join(filepath.Dir(repo.Path), filepath.Base(repo.Path)+"-review")
	}
	epicKey := req.EpicKey
	if req.SourceEvent != "" && epicKey == "" {
		epicKey = "task_split_" + EventKey(req.SourceEvent, 16)[len("task_"):]
	}
	epic, tasks, err := split.Documents(plan, split.DocOptions{EpicKey: epicKey, KeyPrefix: req.KeyPrefix,
		Repo: ghRepo, RepoPath: repo.Path, WorktreeRoot: root, Mode: req.Mode})
	if err != nil {
		return nil, &BadRequestError{err}
	}
	if req.SourceEvent != "" {
		epic["source_event_id"] = req.SourceEvent
	}
	return &SplitPlan{Plan: plan, Epic: epic, Tasks: tasks, NoReview: noReview}, nil
}

var githubURL = regexp.MustCompile(`github\.com[:/]([^/]+)/([^/]+?)(?:\.git)?/?$`)

// noReviewFix is how to have the review steps back.
const noReviewFix = "the work orders will push their branches and stop, with no pull request and no review: " +
	"pass --github-repo OWNER/NAME, or add the GitHub remote (git remote add origin https://github.com/OWNER/NAME.git), and split again"

// githubRepoOf reads owner/name from the origin remote's URL; without
// one, why says why not, and how to fix it.
func githubRepoOf(r *gitops.Repo) (repo, why string) {
	remote, err := r.Git().Remote("origin")
	if err != nil || len(remote.Config().URLs) == 0 {
		return "", fmt.Sprintf("the repository %s has no remote named origin, so wo cannot tell which GitHub repository the PRs belong to: %s", r.Path, noReviewFix)
	}
	url := remote.Config().URLs[0]
	if m := githubURL.FindStringSubmatch(url); m != nil {
		return m[1] + "/" + m[2], ""
	}
	return "", fmt.Sprintf("the origin remote of %s (%s) is not a GitHub repository's URL: %s", r.Path, redactURL(url), noReviewFix)
}

// redactURL leaves out the user information of a remote's URL (a token
// may be there).
func redactURL(u string) string {
	if scheme, rest, ok := strings.Cut(u, "://"); ok {
		if at := strings.LastIndexByte(rest, '@'); at >= 0 && (strings.IndexByte(rest, '/') < 0 || at < strings.IndexByte(rest, '/')) {
			return scheme + "://…@" + rest[at+1:]
		}
	}
	return u
}

// SplitWritten is what WriteSplit did.
type SplitWritten struct {
	Created []string `json:"created,omitempty"`
	Updated []string `json:"updated,omitempty"`
	Same    []string `json:"unchanged,omitempty"`
	// Ready lists the work orders that can start now, as stored.
	Ready []string `json:"-"`
	// Validation holds the reports that carry warnings.
	Validation []workorder.Report `json:"-"`
	// Warnings are what went wrong after the documents were written.
	Warnings []string `json:"-"`
}

var splitOrigin = Origin{Source: "split", Command: "split"}

// WriteSplit validates the planned documents as an import would and
// writes them. On a first run all are created at once. On a rerun with
// the same keys, work orders whose files or dependencies changed are
// updated if they have not started; if one has started nothing is
// written, and a plan of another shape is refused too.
func (in *Intake) WriteSplit(ctx context.Context, p *SplitPlan) (*SplitWritten, error) {
	epicKey := workorder.Key(p.Epic)
	docs := append([]workorder.Document{p.Epic}, p.Tasks...)
	reports := in.Check(ctx, docs, splitOrigin.Source)
	if err := Invalid(reports); err != nil {
		return nil, err
	}
	res := &SplitWritten{Validation: withWarnings(reports)}
	_, err := in.Store.Get(ctx, epicKey)
	switch {
	case store.IsNotFound(err):
		created, err := in.store(ctx, docs, res.Validation, splitOrigin)
		if err != nil {
			return nil, err
		}
		res.Created, res.Warnings = created.Keys, created.Warnings
	case err != nil:
		return nil, err
	default:
		if err := in.revise(ctx, epicKey, p.Tasks, res); err != nil {
			return res, err
		}
	}
	change := p.Plan.Change
	// The planning event goes on the epic's timeline.
	if err := in.Store.AppendLog(ctx, store.LogEntry{Action: "split_planned", TaskKey: epicKey, SessionKey: in.Session,
		Details: map[string]any{"prs": len(p.Plan.PRs), "files": len(change.Files), "base": change.BaseRef,
			"source": change.SourceRef, "created": len(res.Created), "updated": len(res.Updated)}}); err != nil {
		res.Warnings = append(res.Warnings, fmt.Sprintf("the split was written but not logged: %v", err))
	}
	children, err := in.Store.List(ctx, store.Filter{ParentKey: epicKey})
	if err != nil {
		return res, err
	}
	res.Ready = split.Ready(children)
	return res, nil
}

// revise brings the stored work orders of a rerun up to the new plan.
func (in *Intake) revise(ctx context.Context, epicKey string, tasks []workorder.Document, res *SplitWritten) error {
	children, err := in.Store.List(ctx, store.Filter{ParentKey: epicKey})
	if err != nil {
		return err
	}
	if err := split.CheckRerun(epicKey, children, tasks); err != nil {
		return err
	}
	have := map[string]map[string]any{}
	for _, c := range children {
		have[workorder.Key(c)] = c
	}
	// Refuse before writing anything if any has started.
	var started []string
	var changed []workorder.Document
	for _, t := range tasks {
		switch rev := split.Revise(have[workorder.Key(t)], t); {
		case rev.Started != "":
			started = append(started, rev.Started)
		case rev.Patch == nil:
			res.Same = append(res.Same, rev.Key)
		default:
			changed = append(changed, t)
		}
	}
	if len(started) > 0 {
		return &split.StartedError{Started: started}
	}
	for _, t := range changed {
		key := workorder.Key(t)
		updated := false
		err := store.RetryConflicts(ctx, func() error {
			cur, err := in.Store.Get(ctx, key)
			if err != nil {
				return err
			}
			rev := split.Revise(cur, t)
			switch {
			case rev.Started != "":
				return &split.StartedError{Started: []string{rev.Started}}
			case rev.Patch == nil:
				return nil // another writer brought it up to date
			}
			_, err = in.Store.Update(ctx, key, cur["_rev"].(string), rev.Patch)
			updated = err == nil
			return err
		})
		if err != nil {
			return fmt.Errorf("updating %s: %w", key, err)
		}
		if updated {
			res.Updated = append(res.Updated, key)
		} else {
			res.Same = append(res.Same, key)
		}
	}
	return nil
}
