package github

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestOneAccountHasOneLoginWhicheverAPINamesIt(t *testing.T) {
	for _, c := range []struct {
		a    actor
		want string
	}{
		{actor{Login: "coderabbitai", Typename: "Bot"}, "coderabbitai[bot]"},
		{actor{Login: "coderabbitai[bot]", Typename: "Bot"}, "coderabbitai[bot]"}, // never twice
		{actor{Login: "alice", Typename: "User"}, "alice"},
		{actor{Login: "alice"}, "alice"},
		{actor{Typename: "Bot"}, ""}, // a deleted account
	} {
		if got := c.a.restLogin(); got != c.want {
			t.Errorf("%+v reads as %q, want %q", c.a, got, c.want)
		}
	}
}

func TestLoginsMatchAsGitHubsDo(t *testing.T) {
	same := []struct {
		a, b string
		want bool
	}{
		{"coderabbitai[bot]", "CodeRabbitAI[bot]", true},
		{"alice", "Alice", true},
		{"alice", "alicia", false},
		{"", "", false}, // nobody is not somebody
		{"coderabbitai[bot]", "coderabbitai", false},
	}
	for _, c := range same {
		if got := SameLogin(c.a, c.b); got != c.want {
			t.Errorf("SameLogin(%q, %q) = %v", c.a, c.b, got)
		}
	}
	reviewer := []struct {
		login, name string
		want        bool
	}{
		{"coderabbitai[bot]", "coderabbitai", true}, // the app's name waits for its bot
		{"coderabbitai[bot]", "CodeRabbitAI[bot]", true},
		{"coderabbitai", "coderabbitai[bot]", false}, // a person is not the bot
		{"alice", "bob", false},
		{"", "", false},
	}
	for _, c := range reviewer {
		if got := IsReviewer(c.login, c.name); got != c.want {
			t.Errorf("IsReviewer(%q, %q) = %v", c.login, c.name, got)
		}
	}
}

func TestAnAnswerLargerThanWoReadsIsAnError(t *testing.T) {
	huge := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"data":{"x":"`)
		chunk := strings.Repeat("a", 1<<20)
		for range MaxResponseBytes>>20 + 1 {
			io.WriteString(w, chunk)
		}
		io.WriteString(w, `"}}`)
	}
	_, c := newScripted(t, huge, huge)
	_, err := c.ReviewThreads(context.Background(), 7)
	if err == nil || !strings.Contains(err.Error(), "GitHub's answer to POST /api/graphql is larger than 32 MiB; wo reads no more") {
		t.Errorf("GraphQL: %v", err)
	}
	_, err = c.Reviews(context.Background(), 7)
	if err == nil || !strings.Contains(err.Error(), "is larger than 32 MiB") {
		t.Errorf("REST: %v", err)
	}
}

func TestABoundedBodyReadsUpToItsLimitExactly(t *testing.T) {
	read := func(body string, limit int64) (string, error) {
		b, err := io.ReadAll(&boundedBody{ReadCloser: io.NopCloser(strings.NewReader(body)), left: limit, what: "GET /x"})
		return string(b), err
	}
	if got, err := read("12345", 5); got != "12345" || err != nil {
		t.Errorf("a body of exactly the limit: %q, %v", got, err)
	}
	if got, err := read("123456", 5); got != "12345" || err == nil || !strings.Contains(err.Error(), "GET /x") {
		t.Errorf("a byte past the limit: %q, %v", got, err)
	}
}
