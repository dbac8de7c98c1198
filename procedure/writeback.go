package procedure

import (
	"context"
	"fmt"
	"sync"
	"time"

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
}

// Write merges patch (top-level document fields) into the task, renewing
// the lease and updated_at in the same write.
func (w *StateWriteBack) Write(ctx context.Context, patch map[string]any) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := w.now()
	full := map[string]any{"updated_at": workorder.Timestamp(now)}
	store.Merge(full, patch)
	store.Merge(full, store.Nest("work_order.state.lease", map[string]any{
		"holder": w.runner, "expires_at": workorder.Timestamp(now.Add(w.leaseTTL)),
	}))
	return w.write(ctx, full)
}

// Release clears the lease if this runner still holds it; the lock keeps a
// last renewal from putting it back.
func (w *StateWriteBack) Release(ctx context.Context) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return (&store.Leases{Store: w.store, Now: w.now}).Release(ctx, w.key, w.runner)
}

func (w *StateWriteBack) write(ctx context.Context, patch map[string]any) error {
	first := true
	return store.RetryConflicts(ctx, func() error {
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
			w.rev, _ = doc["_rev"].(string)
		}
		first = false
		rev, err := w.store.Update(ctx, w.key, w.rev, patch)
		if err == nil {
			w.rev = rev
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
