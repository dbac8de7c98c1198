package procedure

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/wo-runner/wo/store"
)

func TestAnEpicRunRefreshesBetweenWavesAtMostOnceAMinute(t *testing.T) {
	for _, c := range []struct {
		w, n  int
		since time.Duration
		want  bool
	}{
		{0, 3, StackRefreshEvery, true},
		{1, 3, 2 * StackRefreshEvery, true},
		{0, 3, StackRefreshEvery - time.Second, false}, // refreshed less than a minute ago
		{2, 3, time.Hour, false},                       // the last wave: the run's end refreshes
		{0, 1, time.Hour, false},
	} {
		if got := refreshDue(c.w, c.n, c.since); got != c.want {
			t.Errorf("after wave %d of %d, %s since the last refresh: %v, want %v", c.w+1, c.n, c.since, got, c.want)
		}
	}
}

// ownClass is an error of a package above the engine that classifies
// itself.
type ownClass struct{}

func (ownClass) Error() string { return "stopped" }
func (ownClass) Classification() Classification {
	return Classification{OutcomeWaiting, "OWN_STOP"}
}

func TestAnErrorFromAboveTheEngineClassifiesItself(t *testing.T) {
	if got := Classify(fmt.Errorf("restacking: %w", ownClass{})); got != (Classification{OutcomeWaiting, "OWN_STOP"}) {
		t.Errorf("a wrapped Classifier: %+v, want its own classification", got)
	}
	// It keeps its place in the table: an error earlier in it still wins.
	if got := Classify(fmt.Errorf("%w; %w", ownClass{}, &store.LeaseHeldError{Key: "k"})); got.Code != "LEASE_HELD" {
		t.Errorf("a held lease with a Classifier: %+v, want LEASE_HELD", got)
	}
}

// An engine built without a stack keeper cannot take GitHub's stacks
// apart: wo undo --epic through it must stop on an epic whose state says
// wo made some, not go on to close their pull requests under them.
func TestAnEngineWithoutAKeeperRefusesToUndoAnEpicWithGitHubStacks(t *testing.T) {
	e, s := epicStore(t)
	ctx := context.Background()
	if got, err := e.UnstackEpic(ctx, "task_epic", false); err != nil || got != nil {
		t.Fatalf("an epic without stacks: %v %v, want nothing to do", got, err)
	}
	doc, err := s.Get(ctx, "task_epic")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Update(ctx, "task_epic", doc["_rev"].(string), map[string]any{"work_order": map[string]any{"state": map[string]any{
		"github_stacks": map[string]any{"enabled": true, "checked_at": "2026-11-27T00:00:00Z", "stacks": []any{7}}}}}); err != nil {
		t.Fatal(err)
	}
	_, err = e.UnstackEpic(ctx, "task_epic", true)
	if err == nil || !strings.Contains(err.Error(), "task_epic") || !strings.Contains(err.Error(), "[7]") || !strings.Contains(err.Error(), "stack keeper") {
		t.Errorf("an epic with GitHub stacks and no keeper: %v, want a refusal naming the epic, its stacks and the keeper", err)
	}
}
