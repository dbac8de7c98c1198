package procedure

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/wo-runner/wo/workorder"
)

// reviewPace paces an epic to its reviewer: while a reviewer is rate
// limited (a child's state.review_not_before lies ahead), the children
// that have not opened their pull request yet are held back. Each would
// only get a rate-limit notice, and wo would ask again later: the
// reviewer's budget spent twice for one review. Children with a pull
// request go on, and ask once the limit is over.
type reviewPace struct {
	mu    sync.Mutex
	until time.Time
	by    string // the task whose reviewer said so
}

// maxPaceHold bounds how long a recorded rate limit holds an epic back.
const maxPaceHold = 25 * time.Hour

// learn takes a child's rate limit into account.
func (p *reviewPace) learn(doc workorder.Document) {
	st, err := workorder.StateOf(doc)
	if err != nil || st.ReviewNotBefore == "" {
		return
	}
	t, err := time.Parse(time.RFC3339Nano, st.ReviewNotBefore)
	if err != nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if t.After(p.until) {
		p.until, p.by = t, workorder.Key(doc)
	}
}

// hold says why a child is held back now, or "" when it may start.
func (p *reviewPace) hold(doc workorder.Document, now time.Time) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.until.After(now) {
		return ""
	}
	// A limit recorded from a server clock far ahead holds a day at most.
	if p.until.After(now.Add(maxPaceHold)) {
		p.until = now.Add(maxPaceHold)
	}
	if st, err := workorder.StateOf(doc); err == nil && st.PRNumber > 0 {
		return ""
	}
	return fmt.Sprintf("held back: the reviewer of %s is rate limited until %s, and a pull request opened now would only get a rate-limit notice; run the epic again after that",
		p.by, p.until.UTC().Format(time.RFC3339))
}

// learnAfter reads a child's state after its run, for its rate limit.
func (e *Engine) learnAfter(ctx context.Context, pace *reviewPace, key string) {
	if doc, err := e.Store.Get(ctx, key); err == nil {
		pace.learn(doc)
	}
}

// Held reports whether an epic task outcome's reason is a hold of the
// review pace (for wo status and tests).
func Held(reason string) bool { return strings.HasPrefix(reason, "held back: the reviewer of ") }
