package intake

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wo-runner/wo/internal/gittest"
	"github.com/wo-runner/wo/split"
	"github.com/wo-runner/wo/store"
	"github.com/wo-runner/wo/workorder"
)

// commitFiles writes files into repo and commits them.
func commitFiles(t *testing.T, repo string, files map[string]string) {
	t.Helper()
	for path, content := range files {
		os.MkdirAll(filepath.Dir(filepath.Join(repo, path)), 0o755)
		os.WriteFile(filepath.Join(repo, path), []byte(content), 0o644)
	}
	gittest.Run(t, repo, "add", "-A")
	gittest.Run(t, repo, "commit", "-q", "-m", "change")
}

// twoPackages is a module whose base branch has only go.mod and whose
// main branch adds package alib and package bapp, which imports alib.
func twoPackages(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	repo := filepath.Join(root, "repo")
	gittest.Run(t, root, "init", "-q", "-b", "main", repo)
	commitFiles(t, repo, map[string]string{"go.mod": "module example.com/big\n\ngo 1.22\n"})
	gittest.Run(t, repo, "branch", "base")
	commitFiles(t, repo, map[string]string{
		"alib/a.go":   "package alib\n\n// A is the library.\nconst A = 1\n",
		"alib/b.go":   "package alib\n\n// B is more library.\nconst B = 2\n",
		"bapp/app.go": "package bapp\n\nimport _ \"example.com/big/alib\"\n\n// App uses the library.\nconst App = 3\n",
	})
	return repo
}

func request(repo string) SplitRequest {
	return SplitRequest{RepoPath: repo, Base: "base", Source: "main", Auto: split.Options{MaxLines: 8, MaxFiles: 10},
		GitHubRepo: "acme/big", WorktreeRoot: "/tmp/wt", EpicKey: "task_big"}
}

func planAndWrite(t *testing.T, in *Intake, req SplitRequest) (*SplitPlan, *SplitWritten, error) {
	t.Helper()
	p, err := PlanSplit(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	res, err := in.WriteSplit(context.Background(), p)
	return p, res, err
}

// prFor is the key of the work order whose files are under dir.
func prFor(t *testing.T, p *SplitPlan, dir string) string {
	t.Helper()
	for _, d := range p.Tasks {
		if strings.Contains(fmt.Sprint(workorder.Get(d, "work_order.inputs.file_manifest")), dir+"/") {
			return workorder.Key(d)
		}
	}
	t.Fatalf("no work order holds %s", dir)
	return ""
}

func TestWriteSplitIsIdempotentAndGuardsStartedWork(t *testing.T) {
	repo := twoPackages(t)
	in := newIntake(t)
	ctx := context.Background()
	p, res, err := planAndWrite(t, in, request(repo))
	if err != nil || len(res.Created) != 3 {
		t.Fatalf("first write: %+v %v", res, err)
	}
	lib, app := prFor(t, p, "alib"), prFor(t, p, "bapp")
	if strings.Join(res.Ready, ",") != lib {
		t.Errorf("ready to run: %v, want only %s", res.Ready, lib)
	}
	if logs, _ := in.Store.Logs(ctx, app); len(logs) != 1 || logs[0].Action != "task_created" || logs[0].Details["command"] != "split" {
		t.Errorf("work order log: %+v", logs)
	}
	if logs, _ := in.Store.Logs(ctx, "task_big"); len(logs) != 2 || logs[1].Action != "split_planned" || fmt.Sprint(logs[1].Details["created"]) != "3" {
		t.Errorf("epic log: %+v", logs)
	}
	if _, res, err := planAndWrite(t, in, request(repo)); err != nil || len(res.Same) != 2 || len(res.Created)+len(res.Updated) != 0 {
		t.Fatalf("rerun: %+v %v", res, err)
	}
	// The source changes: a file is added to alib.
	commitFiles(t, repo, map[string]string{"alib/new.go": "package alib\n"})
	_, res, err = planAndWrite(t, in, request(repo))
	if err != nil || strings.Join(res.Updated, ",") != lib || strings.Join(res.Same, ",") != app {
		t.Fatalf("changed source: %+v %v", res, err)
	}
	stored, _ := in.Store.Get(ctx, lib)
	if !strings.Contains(fmt.Sprint(workorder.Get(stored, "work_order.inputs.file_manifest")), "alib/new.go") {
		t.Errorf("manifest not updated: %v", workorder.Get(stored, "work_order.inputs.file_manifest"))
	}
	// Once started, a work order is left alone and named, and nothing is
	// written.
	in.Store.Update(ctx, lib, stored["_rev"].(string), store.Nest("work_order.state.current_step", 3))
	before, _ := in.Store.Get(ctx, lib)
	commitFiles(t, repo, map[string]string{"alib/newer.go": "package alib\n"})
	_, _, err = planAndWrite(t, in, request(repo))
	var started *split.StartedError
	if !errors.As(err, &started) || !strings.Contains(err.Error(), lib+" (status open, step 3)") || !strings.Contains(err.Error(), "nothing was written") {
		t.Errorf("started work order: %v", err)
	}
	if after, _ := in.Store.Get(ctx, lib); after["_rev"] != before["_rev"] {
		t.Error("a started work order was changed")
	}
}

// A rerun after an edit that drops an import must drop the dependency: in
// the document and in the store's blocked_by edges, which wo run reads.
func TestSplitRerunThatDropsADependencyUpdatesBlockedBy(t *testing.T) {
	repo := twoPackages(t)
	in := newIntake(t)
	ctx := context.Background()
	p, _, err := planAndWrite(t, in, request(repo))
	if err != nil {
		t.Fatal(err)
	}
	lib, app := prFor(t, p, "alib"), prFor(t, p, "bapp")
	if deps, _ := in.Store.BlockedBy(ctx, app); strings.Join(deps, ",") != lib {
		t.Fatalf("before: %s blocked by %v, want %s", app, deps, lib)
	}
	commitFiles(t, repo, map[string]string{"bapp/app.go": "package bapp\n\n// App stands alone now.\nconst App = 3\n"})
	p, res, err := planAndWrite(t, in, request(repo))
	if err != nil {
		t.Fatal(err)
	}
	if prFor(t, p, "bapp") != app || !strings.Contains(strings.Join(res.Updated, ","), app) {
		t.Fatalf("the work order of bapp was not updated: %+v", res)
	}
	stored, _ := in.Store.Get(ctx, app)
	if got := store.BlockedByOf(stored); len(got) != 0 {
		t.Errorf("work_order.dependencies.blocked_by still %v", got)
	}
	if got, err := in.Store.BlockedBy(ctx, app); err != nil || len(got) != 0 {
		t.Errorf("persephone_edges still say %s is blocked by %v (%v)", app, got, err)
	}
	if strings.Join(res.Ready, ",") != lib+","+app {
		t.Errorf("ready to run: %v", res.Ready)
	}
}

// A split's documents are judged by the same validator as an import's.
func TestSplitDocumentsAreValidatedLikeImports(t *testing.T) {
	repo := twoPackages(t)
	in := newIntake(t)
	req := request(repo)
	req.WorktreeRoot = "relative/worktrees"
	_, _, err := planAndWrite(t, in, req)
	var inv *workorder.InvalidError
	if !errors.As(err, &inv) || !strings.Contains(err.Error(), `work_order.context.worktree_root: "relative/worktrees" must be an absolute path`) {
		t.Fatalf("want the relative worktree root refused: %v", err)
	}
	if docs, _ := in.Store.List(context.Background(), store.Filter{}); len(docs) != 0 {
		t.Errorf("%d documents written from an invalid split", len(docs))
	}
}

// conflictOnce makes the first conditional update of each key meet a
// newer revision, as when a person edits the task at the same moment.
type conflictOnce struct {
	store.Store
	seen map[string]bool
}

func (c *conflictOnce) Update(ctx context.Context, key, rev string, patch map[string]any) (string, error) {
	if !c.seen[key] {
		c.seen[key] = true
		doc, err := c.Store.Get(ctx, key)
		if err != nil {
			return "", err
		}
		if _, err := c.Store.Update(ctx, key, doc["_rev"].(string), map[string]any{"x_edited_by": "someone"}); err != nil {
			return "", err
		}
	}
	return c.Store.Update(ctx, key, rev, patch)
}

func TestSplitRerunRereadsAfterAConflict(t *testing.T) {
	repo := twoPackages(t)
	in := newIntake(t)
	ctx := context.Background()
	p, _, err := planAndWrite(t, in, request(repo))
	if err != nil {
		t.Fatal(err)
	}
	lib := prFor(t, p, "alib")
	in.Store = &conflictOnce{Store: in.Store, seen: map[string]bool{}}
	commitFiles(t, repo, map[string]string{"alib/new.go": "package alib\n"})
	_, res, err := planAndWrite(t, in, request(repo))
	if err != nil || strings.Join(res.Updated, ",") != lib {
		t.Fatalf("rerun with a concurrent edit: %+v %v", res, err)
	}
	stored, _ := in.Store.Get(ctx, lib)
	if stored["x_edited_by"] != "someone" || !strings.Contains(fmt.Sprint(workorder.Get(stored, "work_order.inputs.file_manifest")), "alib/new.go") {
		t.Errorf("both writes must survive: %v", stored)
	}
}
