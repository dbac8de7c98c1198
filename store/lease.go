package store

import (
	"context"
	"fmt"
	"time"
)

// leasePath is where a task's lease lives, so that any runner, and any
// Persephone tool, can see who works on a task.
const leasePath = "work_order.state.lease"

// MaxLeaseSlack is how far past the taker's own lease time an existing
// lease may run and still be honoured.
const MaxLeaseSlack = time.Hour

// Leases gives one runner at a time the right to work on a task. It works
// on any Store through conditional updates, so every backend gets the same
// semantics and the conformance suite checks them all.
type Leases struct {
	Store Store
	Now   func() time.Time
}

// NewLeases returns lease operations over s.
func NewLeases(s Store) *Leases { return &Leases{Store: s, Now: time.Now} }

// Lease is the lease as it stands after an operation.
type Lease struct {
	Holder    string
	ExpiresAt time.Time
	Rev       string // the document revision the lease write produced
	// Doc is the document as that revision holds it: what a runner must
	// resume from, since it is exactly what the lease was written against.
	Doc map[string]any
}

// LeaseHeldError says another runner holds the task.
type LeaseHeldError struct {
	Key       string
	Holder    string
	ExpiresAt time.Time
}

func (e *LeaseHeldError) Error() string {
	return fmt.Sprintf("task %s is being run by %s (lease until %s); wait for it, or rerun after the lease expires",
		e.Key, e.Holder, e.ExpiresAt.UTC().Format(time.RFC3339))
}

// LeaseLostError says the caller no longer holds a lease it had.
type LeaseLostError struct {
	Key    string
	Holder string // who holds it now, "" if nobody
}

func (e *LeaseLostError) Error() string {
	if e.Holder == "" {
		return fmt.Sprintf("task %s: this runner's lease was released by someone else", e.Key)
	}
	return fmt.Sprintf("task %s: this runner's lease was taken over by %s", e.Key, e.Holder)
}

// Acquire takes the lease for holder for ttl. A lease that has expired, or
// whose holder takeOver says is gone, is taken over; holder's own lease is
// renewed. takeOver may be nil.
func (l *Leases) Acquire(ctx context.Context, key, holder string, ttl time.Duration, takeOver func(holder string) bool) (Lease, error) {
	return l.write(ctx, key, func(cur *Lease, now time.Time) (map[string]any, error) {
		// A lease running far past what any runner asks for was not written
		// by a runner renewing it (a document can say anything): it would
		// lock the task for good, so it counts as expired.
		forged := cur != nil && cur.ExpiresAt.After(now.Add(ttl+MaxLeaseSlack))
		if cur != nil && cur.Holder != holder && now.Before(cur.ExpiresAt) && !forged && (takeOver == nil || !takeOver(cur.Holder)) {
			return nil, &LeaseHeldError{Key: key, Holder: cur.Holder, ExpiresAt: cur.ExpiresAt}
		}
		return leaseValue(holder, now.Add(ttl)), nil
	})
}

// Renew extends holder's lease by ttl from now. It fails with
// LeaseLostError if holder no longer holds it.
func (l *Leases) Renew(ctx context.Context, key, holder string, ttl time.Duration) (Lease, error) {
	return l.write(ctx, key, func(cur *Lease, now time.Time) (map[string]any, error) {
		if cur == nil {
			return nil, &LeaseLostError{Key: key}
		}
		if cur.Holder != holder {
			return nil, &LeaseLostError{Key: key, Holder: cur.Holder}
		}
		return leaseValue(holder, now.Add(ttl)), nil
	})
}

// Release gives up holder's lease. Releasing a lease one does not hold is
// not an error and changes nothing.
func (l *Leases) Release(ctx context.Context, key, holder string) error {
	_, err := l.write(ctx, key, func(cur *Lease, _ time.Time) (map[string]any, error) {
		if cur == nil || cur.Holder != holder {
			return nil, errNothingToDo
		}
		return nil, nil
	})
	if err == errNothingToDo {
		return nil
	}
	return err
}

// Current reads the lease of a document, nil when none.
func Current(doc map[string]any) *Lease {
	wo, _ := doc["work_order"].(map[string]any)
	st, _ := wo["state"].(map[string]any)
	m, _ := st["lease"].(map[string]any)
	if m == nil {
		return nil
	}
	holder, _ := m["holder"].(string)
	exp, _ := m["expires_at"].(string)
	t, err := time.Parse(time.RFC3339Nano, exp)
	if holder == "" || err != nil {
		return nil
	}
	rev, _ := doc["_rev"].(string)
	return &Lease{Holder: holder, ExpiresAt: t, Rev: rev}
}

var errNothingToDo = fmt.Errorf("nothing to do")

// write runs a read-decide-conditional-write loop; decide returns the new
// lease value (nil to clear it) or an error to stop.
func (l *Leases) write(ctx context.Context, key string, decide func(cur *Lease, now time.Time) (map[string]any, error)) (Lease, error) {
	var out Lease
	err := RetryConflicts(ctx, func() error {
		doc, err := l.Store.Get(ctx, key)
		if err != nil {
			return err
		}
		now := l.Now()
		value, err := decide(Current(doc), now)
		if err != nil {
			return err
		}
		rev, _ := doc["_rev"].(string)
		var v any = value
		if value == nil {
			v = nil
		}
		newRev, err := l.Store.Update(ctx, key, rev, Nest(leasePath, v))
		if err != nil {
			return err
		}
		Merge(doc, Nest(leasePath, v))
		doc["_rev"] = newRev
		out = Lease{Rev: newRev, Doc: doc}
		if value != nil {
			out.Holder = value["holder"].(string)
			out.ExpiresAt, _ = time.Parse(time.RFC3339Nano, value["expires_at"].(string))
		}
		return nil
	})
	if err != nil {
		return Lease{}, err
	}
	return out, nil
}

func leaseValue(holder string, expires time.Time) map[string]any {
	return map[string]any{"holder": holder, "expires_at": expires.UTC().Format(time.RFC3339Nano)}
}
