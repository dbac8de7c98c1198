package procedure

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/wo-runner/wo/internal/gittest"
	"github.com/wo-runner/wo/procedure/internal/fixture"
	"github.com/wo-runner/wo/store"
	"github.com/wo-runner/wo/workorder"
)

// changedAfterLoad is a store in which another writer changes the task
// right after the run's first read of it: between the checks wo run makes
// on the task as loaded and the lease write it resumes from.
type changedAfterLoad struct {
	store.Store
	once   sync.Once
	change func()
}

func (s *changedAfterLoad) Get(ctx context.Context, key string) (map[string]any, error) {
	doc, err := s.Store.Get(ctx, key)
	s.once.Do(s.change)
	return doc, err
}

// gitSteps are the seed's steps up to the push: none needs GitHub.
func gitSteps() []any { return fixture.Steps()[:5] }

// A run resumes from the task as its lease write found it. When that
// differs from what the run loaded and checked, the run checks it again;
// a task that then fails the checks stops the run with that error and
// gives the lease back, as any refusal before the first step does.
func TestARunThatResumesOnATaskThatNoLongerPassesItsChecksStopsAndLetsGo(t *testing.T) {
	for _, c := range []struct {
		name   string
		change func(h *stepHarness) map[string]any
		want   func(error) bool
	}{
		{"another runner moved it on and what is left fails its check", func(h *stepHarness) map[string]any {
			// The source commit it recorded lacks a file of the manifest.
			return map[string]any{"work_order": map[string]any{"state": map[string]any{"current_step": 2, "completed_steps": []any{1, 2},
				"source_sha": gittest.Run(t, h.Repo, "rev-parse", fixture.Base)}}}
		}, func(err error) bool { var pf *PreflightError; return errors.As(err, &pf) }},
		{"it no longer validates", func(*stepHarness) map[string]any {
			steps := gitSteps()
			steps[3].(map[string]any)["message"] = 5 // read as no message
			return map[string]any{"work_order": map[string]any{"procedure": steps}}
		}, func(err error) bool { var inv *workorder.InvalidError; return errors.As(err, &inv) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newStepContext(t, stepOpts{Procedure: gitSteps()})
			if err := h.r.wb.Release(h.ctx); err != nil { // the harness's own lease
				t.Fatal(err)
			}
			e := h.engine()
			e.Store = &changedAfterLoad{Store: h.store, change: func() { anotherWriter(t, h, c.change(h)) }}
			var err error
			func() {
				defer func() {
					if p := recover(); p != nil {
						t.Fatalf("the run panicked: %v", p)
					}
				}()
				_, err = e.Run(h.ctx, RunOptions{Key: fixture.Key})
			}()
			if !c.want(err) {
				t.Errorf("the run: %v", err)
			}
			doc, gerr := h.store.Get(h.ctx, fixture.Key)
			if gerr != nil {
				t.Fatal(gerr)
			}
			if cur := store.Current(doc); cur != nil && cur.Holder == e.Runner {
				t.Errorf("the lease is still held by the run that stopped: %+v", cur)
			}
		})
	}
}
