package procedure

import (
	"fmt"
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
