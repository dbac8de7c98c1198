package agent

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestReadingWhatEachAgentSays(t *testing.T) {
	for _, tc := range []struct {
		name, agent    string
		stdout, stderr string
		exit           int
		want           Report
	}{
		{name: "claude fixed", agent: "claude", stdout: `{"type":"result","subtype":"success","is_error":false,"result":"Added the nil check.","total_cost_usd":0.0421,"num_turns":3,"usage":{"input_tokens":1200,"output_tokens":300,"cache_read_input_tokens":50}}`,
			want: Report{Message: "Added the nil check.", CostUSD: 0.0421, Turns: 3, Tokens: 1550}},
		{name: "claude rate limit, exit 0", agent: "claude", stdout: `{"type":"result","subtype":"success","is_error":true,"result":"API Error: 429 {\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\"}} · retry after 30 seconds","total_cost_usd":0,"num_turns":1}`,
			want: Report{Failure: FailRateLimit, Message: `API Error: 429 {"type":"error","error":{"type":"rate_limit_error"}} · retry after 30 seconds`, RetryAfter: 30 * time.Second, Turns: 1}},
		{name: "claude bad key", agent: "claude", stdout: `{"type":"result","subtype":"success","is_error":true,"result":"Invalid API key · Please run /login"}`, exit: 1,
			want: Report{Failure: FailAuth, Message: "Invalid API key · Please run /login"}},
		{name: "claude turn limit", agent: "claude", stdout: `{"type":"result","subtype":"error_max_turns","is_error":true,"num_turns":4,"total_cost_usd":0.2}`, exit: 1,
			want: Report{Failure: FailLimit, Message: "stopped at its max_turns limit after 4 turn(s)", Turns: 4, CostUSD: 0.2}},
		{name: "claude budget", agent: "claude", stdout: `{"type":"result","subtype":"error_max_budget_usd","is_error":true,"result":"budget spent","num_turns":2}`,
			want: Report{Failure: FailLimit, Message: "budget spent", Turns: 2}},
		{name: "claude stream-json ends with its result", agent: "claude", stdout: "{\"type\":\"system\",\"subtype\":\"init\"}\n{\"type\":\"assistant\"}\n{\"type\":\"result\",\"subtype\":\"success\",\"result\":\"done\",\"total_cost_usd\":0.01}\n",
			want: Report{Message: "done", CostUSD: 0.01}},
		{name: "claude without -p input", agent: "claude", stderr: "Error: Input must be provided either through stdin or as a prompt argument when using --print", exit: 1,
			want: Report{Failure: FailCrash, Message: "Error: Input must be provided either through stdin or as a prompt argument when using --print"}},
		{name: "claude text output with a bad key, exit 0", agent: "claude", stdout: "Invalid API key · Please run /login\n",
			want: Report{Failure: FailAuth, Message: "Invalid API key · Please run /login"}},
		{name: "codex fixed", agent: "codex", stdout: `{"type":"thread.started","thread_id":"t"}
{"type":"turn.started"}
{"type":"item.completed","item":{"id":"i1","type":"agent_message","text":"Handled the nil case."}}
{"type":"turn.completed","usage":{"input_tokens":900,"cached_input_tokens":100,"output_tokens":80}}`,
			want: Report{Message: "Handled the nil case.", Tokens: 980, Turns: 1}},
		{name: "codex turn failed", agent: "codex", stdout: `{"type":"turn.started"}
{"type":"turn.failed","error":{"message":"stream error: 429 Too Many Requests; try again in 20s"}}`, exit: 1,
			want: Report{Failure: FailRateLimit, Message: "stream error: 429 Too Many Requests; try again in 20s", RetryAfter: 20 * time.Second}},
		{name: "codex no key", agent: "codex", stdout: `{"type":"error","message":"401 Unauthorized: Missing bearer or basic authentication in header"}`, exit: 1,
			want: Report{Failure: FailAuth, Message: "401 Unauthorized: Missing bearer or basic authentication in header"}},
		{name: "codex not in exec mode", agent: "codex", stderr: "Error: stdin is not a terminal\n", exit: 1,
			want: Report{Failure: FailCrash, Message: "Error: stdin is not a terminal"}},
		{name: "aider rate limit, exit 0", agent: "aider", stdout: "Aider v0.86\nlitellm.RateLimitError: AnthropicException - rate_limit_error\nRetrying in 2.0 seconds...\n",
			// Its own retries are its business: the error line is the words.
			want: Report{Failure: FailRateLimit, Message: "litellm.RateLimitError: AnthropicException - rate_limit_error"}},
		{name: "aider no key, exit 0", agent: "aider", stdout: "Missing these environment variables:\n- ANTHROPIC_API_KEY\nAuthenticationError: no api key\n",
			want: Report{Failure: FailAuth, Message: "AuthenticationError: no api key"}},
		{name: "aider fixed", agent: "aider", stdout: "Applied edit to calc.go\n",
			want: Report{Message: "Applied edit to calc.go"}},
		{name: "gemini turn limit", agent: "gemini", stdout: `{"response":"","error":{"type":"FatalTurnLimitedError","message":"max turns"}}`, exit: 53,
			want: Report{Failure: FailLimit, Message: "stopped at its turn limit"}},
		{name: "gemini quota", agent: "gemini", stdout: `{"error":{"type":"ApiError","message":"Quota exceeded for requests","code":429}}`, exit: 1,
			want: Report{Failure: FailRateLimit, Message: "Quota exceeded for requests"}},
		{name: "gemini fixed", agent: "gemini", stdout: `{"response":"Fixed it.","stats":{"models":{"gemini-2.5-pro":{"tokens":{"total":700}}}}}`,
			want: Report{Message: "Fixed it.", Tokens: 700}},
		{name: "codex dies before any event", agent: "codex", stderr: "Error: 401 Unauthorized\n", exit: 1,
			want: Report{Failure: FailAuth, Message: "Error: 401 Unauthorized"}},
		{name: "codex prints no event and ends 0 over a quota", agent: "codex", stderr: "quota exceeded\n",
			want: Report{Failure: FailRateLimit, Message: "quota exceeded"}},
		{name: "codex prints no event and ends 0", agent: "codex", stdout: "done\n",
			want: Report{Message: "done"}},
		{name: "codex exits 1 after a completed turn", agent: "codex", stdout: `{"type":"turn.completed","usage":{"input_tokens":5,"output_tokens":5}}`, stderr: "panicked at core/src/lib.rs", exit: 101,
			want: Report{Failure: FailCrash, Message: "panicked at core/src/lib.rs", Tokens: 10, Turns: 1}},
		{name: "codex: two turns, the last message kept", agent: "codex", stdout: "{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}\n{\"type\":\"item.completed\",\"item\":{\"type\":\"agent_message\",\"text\":\"first\"}}\n{\"type\":\"item.completed\",\"item\":{\"type\":\"reasoning\",\"text\":\"thinking\"}}\n{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}\n",
			want: Report{Message: "first", Tokens: 4, Turns: 2}},
		{name: "gemini crashes with no JSON", agent: "gemini", stderr: "TypeError: x is undefined\n", exit: 1,
			want: Report{Failure: FailCrash, Message: "TypeError: x is undefined"}},
		{name: "gemini bad key with tokens spent", agent: "gemini", stdout: `{"response":"partial","error":{"type":"AuthError","message":"API key not valid"},"stats":{"models":{"m":{"tokens":{"total":9}}}}}`, exit: 1,
			want: Report{Failure: FailAuth, Message: "API key not valid", Tokens: 9}},
		{name: "gemini exits 42 on bad input", agent: "gemini", stderr: "Invalid input\n", exit: 42,
			want: Report{Failure: FailCrash, Message: "Invalid input"}},
		{name: "claude ends 0 with an error subtype", agent: "claude", stdout: `{"type":"result","subtype":"error_during_execution","is_error":false,"result":""}`, stderr: "socket hang up",
			want: Report{Failure: FailCrash, Message: "socket hang up"}},
		{name: "claude's result, then a non-zero exit", agent: "claude", stdout: `{"type":"result","subtype":"success","is_error":false,"result":"ok","num_turns":1}`, stderr: "Invalid API key", exit: 1,
			want: Report{Failure: FailAuth, Message: "ok", Turns: 1}},
		{name: "claude's result over several lines", agent: "claude", stdout: "{\n \"type\": \"result\",\n \"result\": \"pretty\"\n}\n",
			want: Report{Message: "pretty"}},
		{name: "a command of the user's failing", agent: "./fix.sh", stderr: "working...\nmodel overloaded\n", exit: 3,
			want: Report{Failure: FailRateLimit, Message: "working... / model overloaded"}},
		{name: "a command of the user's crashing", agent: "./fix.sh", stdout: "boom\n", exit: 2,
			want: Report{Failure: FailCrash, Message: "boom"}},
		{name: "a command of the user's that ends 0", agent: "./fix.sh", stdout: "a\nb\nc\nfixed\n",
			want: Report{Message: "b / c / fixed"}},
	} {
		c := call(t, tc.agent, CallInput{})
		got := c.Read(tc.stdout, tc.stderr, tc.exit)
		if got != tc.want {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.name, got, tc.want)
		}
	}
}

func TestRetryAfter(t *testing.T) {
	for text, want := range map[string]time.Duration{
		"retry after 30 seconds": 30 * time.Second, "Retry-After: 12": 12 * time.Second, "try again in 1m20s": 80 * time.Second,
		"resets in 2 minutes": 2 * time.Minute, "retry in 1.5 hours": 90 * time.Minute, "retry after 500 ms": 500 * time.Millisecond,
		"try again in 2h": 2 * time.Hour, "retry after 9999 hours": 24 * time.Hour, "rate limited": 0,
	} {
		if got := retryAfter(text); got != want {
			t.Errorf("retryAfter(%q) = %s, want %s", text, got, want)
		}
	}
}

func TestRetryAtATimeOfDayIsTheNextOne(t *testing.T) {
	now = func() time.Time { return time.Date(2026, 11, 27, 18, 0, 0, 0, time.UTC) }
	defer func() { now = time.Now }()
	for text, want := range map[string]time.Duration{
		"You've hit your usage limit. … or try again at 7:23 PM.": 83 * time.Minute,
		"try again at 6:00 PM": 24 * time.Hour, // now: the next one is tomorrow's
		"resets at 12:30 AM":   6*time.Hour + 30*time.Minute,
		"retry at 12:05 PM":    18*time.Hour + 5*time.Minute,
		"try again at 19:00":   time.Hour,
		"try again at 25:00":   0,
		"try again at 7:61 PM": 0,
	} {
		if got := retryAfter(text); got != want {
			t.Errorf("retryAfter(%q) = %s, want %s", text, got, want)
		}
	}
}

func TestMeaningfulKeepsTheFirstLinesThatSaySomething(t *testing.T) {
	if got := Meaningful("\n\n  first  \n───\nat foo.js:1\nsecond\nthird\nfourth\nfifth"); got != "first / second / third / fourth" {
		t.Errorf("got %q", got)
	}
	long := strings.Repeat("y", maxMessage+10)
	if got := Meaningful(long); got != long[:maxMessage]+" […]" {
		t.Errorf("a long first line: %d bytes", len(got))
	}
	exact := strings.Repeat("z", maxMessage)
	if got := Meaningful(exact); got != exact {
		t.Errorf("a line of exactly the bound is kept whole: %d bytes", len(got))
	}
	if got := Meaningful("ab\n" + strings.Repeat("c", maxMessage-3)); got != "ab / "+strings.Repeat("c", maxMessage-3) {
		t.Errorf("two lines that fill the bound exactly: %q", got)
	}
	if got := Meaningful("short\n" + long); got != "short" {
		t.Errorf("a long second line is left out: %q", got)
	}
}

func TestACostAnAgentCannotHaveMeantIsTakenOut(t *testing.T) {
	c := call(t, "claude", CallInput{})
	for out, want := range map[string]float64{
		`{"type":"result","result":"x","total_cost_usd":-1000000}`: 0,
		`{"type":"result","result":"x","total_cost_usd":1e300}`:    maxCostUSD,
		`{"type":"result","result":"x","total_cost_usd":0.25}`:     0.25,
		`{"type":"result","result":"x","total_cost_usd":1000000}`:  maxCostUSD,
	} {
		if got := c.Read(out, "", 0).CostUSD; got != want {
			t.Errorf("%s: cost %v, want %v", out, got, want)
		}
	}
	r := Report{Tokens: -5, Turns: -1, CostUSD: math.NaN()}.sane()
	if r.Tokens != 0 || r.Turns != 0 || r.CostUSD != 0 {
		t.Errorf("sane: %+v", r)
	}
	if generic.Ports[0] != 443 {
		t.Error("a command of the user's own may reach port 443")
	}
}
