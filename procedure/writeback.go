package procedure

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/wo-runner/wo/redact"
	"github.com/wo-runner/wo/store"
	"github.com/wo-runner/wo/workorder"
)

// StateWriteBack writes a running task's state to the store. Every write is
// conditional on the revision it last saw; when another writer moved it
// (a Persephone tool, a renewal elsewhere) it rereads, checks that this
// runner still holds the lease, and applies the same patch again. Patches
// set absolute values, so applying one twice is harmless.
type StateWriteBack struct {
	mu       sync.Mutex
	store    store.Store
	key      string
	rev      string
	runner   string
	leaseTTL time.Duration
	now      func() time.Time
	// secrets are taken out of every patch: a review comment, an agent's
	// output or an error may carry the token, and the document is read by
	// every tool and person with access to the store.
	secrets *redact.Secrets
	// stale says a write that does not rebase (a lease renewal) went on
	// over another writer's change: rev is theirs, but the run has not
	// seen their change. The run's next write rebases on the document as
	// it stands, as if its revision had moved, so it never overwrites
	// what they did (a task closed, a note added) unseen.
	stale bool
}

// Rebase turns a patch into one that keeps what another writer changed:
// it is given the document as that writer left it and returns the patch
// to write instead, or an error to stop.
type Rebase func(fresh workorder.Document) (map[string]any, error)

// Write merges patch (top-level document fields) into the task, renewing
// the lease and updated_at in the same write. A patch that sets only
// absolute values wo alone writes (a lease renewal) is applied again as it
// is when another writer moved the revision.
func (w *StateWriteBack) Write(ctx context.Context, patch map[string]any) error {
	return w.WriteRebasing(ctx, patch, nil)
}

// WriteRebasing is Write for a patch that must respect another writer:
// when the revision moved, rebase builds the patch anew from the document
// as it now stands.
func (w *StateWriteBack) WriteRebasing(ctx context.Context, patch map[string]any, rebase Rebase) error {
	return w.WriteLogged(ctx, patch, rebase, nil)
}

// WriteLogged is WriteRebasing that also appends activity-log entries in
// the same write when the store can (store.LoggedUpdater): one round trip
// instead of one per entry more. On a store that cannot, only the state
// is written and ErrEntriesNotWritten says the caller must append them.
func (w *StateWriteBack) WriteLogged(ctx context.Context, patch map[string]any, rebase Rebase, entries []store.LogEntry) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	full := func(p map[string]any) map[string]any {
		now := w.now()
		out := map[string]any{"updated_at": workorder.Timestamp(now)}
		if clean, ok := w.secrets.Value(p).(map[string]any); ok {
			p = clean
		}
		store.Merge(out, p)
		store.Merge(out, store.Nest("work_order.state.lease", map[string]any{
			"holder": w.runner, "expires_at": workorder.Timestamp(now.Add(w.leaseTTL)),
		}))
		return out
	}
	strict := rebase != nil
	if rebase == nil {
		rebase = func(workorder.Document) (map[string]any, error) { return patch, nil }
	}
	return w.write(ctx, full(patch), func(fresh workorder.Document) (map[string]any, error) {
		p, err := rebase(fresh)
		if err != nil {
			return nil, err
		}
		return full(p), nil
	}, entries, strict)
}

// Release clears the lease if this runner still holds it; the lock keeps a
// last renewal from putting it back.
func (w *StateWriteBack) Release(ctx context.Context) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return (&store.Leases{Store: w.store, Now: w.now}).Release(ctx, w.key, w.runner)
}

// logged reports whether the store writes log entries with an update.
func (w *StateWriteBack) logged() bool {
	_, ok := w.store.(store.LoggedUpdater)
	return ok
}

func (w *StateWriteBack) write(ctx context.Context, patch map[string]any, rebase Rebase, entries []store.LogEntry, strict bool) error {
	lu, _ := w.store.(store.LoggedUpdater)
	// A write that rebases starts from the document as it stands when a
	// renewal went on over someone's change since the run last wrote.
	first := !(strict && w.stale)
	moved := false // this write went on over another writer's change
	return store.RetryConflicts(ctx, func() error {
		moved = !first
		// The revision this attempt writes on. It becomes w.rev only
		// when the write succeeds: a rebase that refused another
		// writer's change (a task they closed), or a write that failed,
		// leaves w.rev at what the run last wrote, so that the next
		// write (the record of the failure) meets their change again.
		base := w.rev
		if !first {
			doc, err := w.store.Get(ctx, w.key)
			if err != nil {
				return err
			}
			if cur := store.Current(doc); cur == nil || cur.Holder != w.runner {
				holder := ""
				if cur != nil {
					holder = cur.Holder
				}
				return &store.LeaseLostError{Key: w.key, Holder: holder}
			}
			base, _ = doc["_rev"].(string)
			if patch, err = rebase(doc); err != nil {
				return err
			}
		}
		first = false
		var rev string
		var err error
		if lu != nil && len(entries) > 0 {
			rev, err = lu.UpdateLogged(ctx, w.key, base, patch, entries)
		} else {
			rev, err = w.store.Update(ctx, w.key, base, patch)
		}
		if err == nil {
			w.rev = rev
			switch {
			case strict:
				w.stale = false // the run's write saw the document as it was
			case moved:
				w.stale = true
			}
		}
		return err
	})
}

// keepAlive renews the lease every third of its lifetime until ctx ends.
func (w *StateWriteBack) keepAlive(ctx context.Context, onError func(error)) {
	t := time.NewTicker(w.leaseTTL / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := w.Write(ctx, map[string]any{}); err != nil && ctx.Err() == nil {
				onError(fmt.Errorf("renewing the lease: %w", err))
			}
		}
	}
}
