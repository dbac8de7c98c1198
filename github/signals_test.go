package github

import (
	"context"
	"testing"
	"time"
)

// A review bot may report its review of a head as a check run rather than
// a commit status: wo reads each run as a status, its state from the
// run's status and conclusion, its creator the app's bot.
func TestCheckRunsReadAsStatuses(t *testing.T) {
	runs := `{"total_count": 5, "check_runs": [
	 {"name": "CodeRabbit", "status": "in_progress", "started_at": "2026-01-02T10:00:00Z", "app": {"slug": "coderabbitai"}, "output": {"title": "Review in progress"}},
	 {"name": "CodeRabbit", "status": "completed", "conclusion": "success", "started_at": "2026-01-02T10:00:00Z", "completed_at": "2026-01-02T10:07:00Z", "app": {"slug": "coderabbitai"}, "output": {"title": "Review completed"}},
	 {"name": "lint", "status": "completed", "conclusion": "neutral", "app": {"slug": "linter"}},
	 {"name": "docs", "status": "completed", "conclusion": "skipped"},
	 {"name": "tests", "status": "completed", "conclusion": "timed_out", "app": {"slug": "ci"}}]}`
	s, c := newScripted(t, jsonReply(200, runs))
	got, err := c.CheckRuns(context.Background(), "abc123")
	if err != nil {
		t.Fatal(err)
	}
	if p := s.seen[0].URL.Path; p != "/api/v3/repos/acme/hermes/commits/abc123/check-runs" {
		t.Errorf("path %s", p)
	}
	want := []Status{
		{Context: "CodeRabbit", State: "pending", Description: "Review in progress", Creator: "coderabbitai[bot]", UpdatedAt: time.Date(2026, 1, 2, 10, 0, 0, 0, time.UTC)},
		{Context: "CodeRabbit", State: "success", Description: "Review completed", Creator: "coderabbitai[bot]", UpdatedAt: time.Date(2026, 1, 2, 10, 7, 0, 0, time.UTC)},
		{Context: "lint", State: "success", Creator: "linter[bot]"},
		{Context: "docs", State: "success"},
		{Context: "tests", State: "failure", Creator: "ci[bot]"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d runs, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Context != w.Context || g.State != w.State || g.Description != w.Description || g.Creator != w.Creator || !g.UpdatedAt.Equal(w.UpdatedAt) {
			t.Errorf("run %d: got %+v, want %+v", i, g, w)
		}
	}
}

// A commit status names who posted it: anyone who can push may post a
// status with a review bot's context.
func TestStatusesNameTheirCreator(t *testing.T) {
	statuses := `[{"context": "CodeRabbit", "state": "success", "description": "Review skipped", "creator": {"login": "mallory"}, "updated_at": "2026-01-02T10:00:00Z"}]`
	s, c := newScripted(t, jsonReply(200, statuses))
	got, err := c.Statuses(context.Background(), "abc123")
	if err != nil {
		t.Fatal(err)
	}
	if p := s.seen[0].URL.Path; p != "/api/v3/repos/acme/hermes/commits/abc123/statuses" {
		t.Errorf("path %s", p)
	}
	if len(got) != 1 || got[0].Context != "CodeRabbit" || got[0].State != "success" || got[0].Description != "Review skipped" ||
		got[0].Creator != "mallory" || !got[0].UpdatedAt.Equal(time.Date(2026, 1, 2, 10, 0, 0, 0, time.UTC)) {
		t.Errorf("%+v", got)
	}
}
