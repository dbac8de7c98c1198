// Package epicworld is the world of the tests of the packages above the
// engine (procedure/undo, procedure/stack, procedure/ghevent): the
// fixture's repository, bare remote and GitHub stand-in, an embedded
// SQLite store holding task_cr_01, and an engine over them; and an epic,
// task_ep, whose children's pull requests are open on the stand-in. It is
// test support: only tests import it.
package epicworld

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/wo-runner/wo/github"
	"github.com/wo-runner/wo/integration/ghstandin"
	"github.com/wo-runner/wo/internal/gittest"
	"github.com/wo-runner/wo/procedure"
	"github.com/wo-runner/wo/procedure/action"
	"github.com/wo-runner/wo/procedure/internal/fixture"
	"github.com/wo-runner/wo/store"
	"github.com/wo-runner/wo/workorder"
)

// World is a fixture with a store and an engine.
type World struct {
	*fixture.World
	T      *testing.T
	Ctx    context.Context
	Store  store.Store
	Engine *procedure.Engine
}

// New builds the fixture that opts describe, stores task_cr_01 and makes
// an engine over them.
func New(t *testing.T, opts fixture.Options) *World {
	t.Helper()
	ctx := context.Background()
	w := fixture.New(t, opts)
	h := &World{World: w, T: t, Ctx: ctx}
	e := &procedure.Engine{Runner: "tester@host:1", Attempts: 1, Backoff: time.Millisecond,
		Settings: action.Settings{PollInterval: time.Millisecond, Agent: w.Agent},
		Getenv:   func(k string) string { return w.Env[k] }}
	e.Settings.AgentWritable = w.AgentWritable(t)
	if opts.Unconfined {
		e.Settings.Sandbox = action.SandboxOff
	}
	if w.GH != nil {
		e.GitHubAPI = w.GH.URL
	}
	s, err := store.OpenSQLite(ctx, filepath.Join(w.Root, "wo.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	e.Store, h.Store, h.Engine = s, s, e
	e.FillDefaults()
	if err := s.Create(ctx, w.Doc); err != nil {
		t.Fatal(err)
	}
	return h
}

// Client is a GitHub client of the stand-in, as a person's tool.
func (h *World) Client() *github.Client {
	h.T.Helper()
	c, err := github.New(github.Config{BaseURL: h.GH.URL, Token: fixture.Token, Repo: fixture.Repo})
	if err != nil {
		h.T.Fatal(err)
	}
	return c
}

// Patch merges fields into a stored document.
func (h *World) Patch(key string, fields map[string]any) {
	h.T.Helper()
	doc, err := h.Store.Get(h.Ctx, key)
	if err != nil {
		h.T.Fatal(err)
	}
	if _, err := h.Store.Update(h.Ctx, key, doc["_rev"].(string), fields); err != nil {
		h.T.Fatal(err)
	}
}

// StateOf is a stored task's work_order.state.
func (h *World) StateOf(key string) workorder.State {
	h.T.Helper()
	doc, err := h.Store.Get(h.Ctx, key)
	if err != nil {
		h.T.Fatal(err)
	}
	st, err := workorder.StateOf(doc)
	if err != nil {
		h.T.Fatal(err)
	}
	return st
}

// StackOnStandin stores epic task_ep with n children whose PRs are open
// on the stand-in, each description written by its author without a
// stack section; the stand-in is set up by standIn (when not nil) before
// it starts.
func StackOnStandin(t *testing.T, n int, standIn func(*ghstandin.Server)) *World {
	t.Helper()
	h := New(t, fixture.Options{GitHub: true, StandIn: standIn})
	ctx := context.Background()
	client := h.Client()
	if err := h.Store.Create(ctx, map[string]any{"_key": "task_ep", "type": "epic", "title": "the epic", "status": "open"}); err != nil {
		t.Fatal(err)
	}
	base := fixture.Base
	for i := 1; i <= n; i++ {
		branch := fmt.Sprintf("review/%02d-part", i)
		gittest.Run(t, h.Repo, "checkout", "-q", "-b", branch, base)
		fixture.WriteFile(t, filepath.Join(h.Repo, fmt.Sprintf("part%d.txt", i)), "part\n")
		gittest.Run(t, h.Repo, "add", "-A")
		gittest.Run(t, h.Repo, "commit", "-q", "-m", branch)
		gittest.Run(t, h.Repo, "push", "-q", "origin", branch)
		pr, err := client.CreatePR(ctx, branch, base, fmt.Sprintf("[%d/%d] part %d", i, n, i), fmt.Sprintf("Author's text of part %d.", i))
		if err != nil {
			t.Fatal(err)
		}
		var blocked []any
		if i > 1 {
			blocked = []any{fmt.Sprintf("task_ep_pr%02d", i-1)}
		}
		doc := fixture.StackChild(fmt.Sprintf("task_ep_pr%02d", i), fmt.Sprintf("[%d/%d] part %d", i, n, i), blocked,
			map[string]any{"pr_number": pr.Number, "pr_url": pr.URL})
		if err := h.Store.Create(ctx, doc); err != nil {
			t.Fatal(err)
		}
		base = branch
	}
	return h
}
