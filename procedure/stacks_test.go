package procedure

import (
	"testing"
	"time"
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
