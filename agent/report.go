package agent

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Failure is how an agent's run failed, as far as its own words say.
type Failure string

const (
	FailNone      Failure = ""
	FailAuth      Failure = "auth"       // no credentials, or rejected ones
	FailRateLimit Failure = "rate_limit" // the model's API said to slow down, or a quota is spent
	FailLimit     Failure = "limit"      // a turn or budget limit ended the run
	FailCrash     Failure = "crash"      // anything else: an error, a non-zero exit
)

// Report is what an agent said about one run, read from its output and
// exit code. Whether it changed anything is the diff's to say, not this.
type Report struct {
	Failure Failure
	// Message is the agent's own words: its final answer, or its error,
	// first meaningful lines only.
	Message string
	// RetryAfter is when a rate-limited agent may be asked again, where it
	// said (0 when it did not).
	RetryAfter time.Duration
	// CostUSD, Tokens and Turns are what the run cost, as the tool reports
	// it (0 when it does not).
	CostUSD float64
	Tokens  int64
	Turns   int
}

// maxCostUSD bounds the cost one run may report: more is taken for this
// much (a cap still stops the next run).
const maxCostUSD = 1e6

// sane is the report with what an agent cannot have meant taken out: a
// negative, infinite or not-a-number cost (which would lift a cost cap
// for good), negative tokens or turns.
func (r Report) sane() Report {
	switch {
	case math.IsNaN(r.CostUSD) || r.CostUSD < 0:
		r.CostUSD = 0
	case r.CostUSD > maxCostUSD:
		r.CostUSD = maxCostUSD
	}
	r.Tokens, r.Turns = max(r.Tokens, 0), max(r.Turns, 0)
	return r
}

// maxMessage bounds the agent's words kept in a report.
const maxMessage = 600

// Meaningful is the first lines of text that say something: blank lines,
// progress bars and stack frames left out, at most maxMessage bytes.
func Meaningful(text string) string {
	var kept []string
	size := 0
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "at ") || strings.HasPrefix(l, "File \"") || strings.Trim(l, "─-=━█▌░ .") == "" {
			continue
		}
		if size+len(l) > maxMessage {
			if len(kept) == 0 {
				kept = append(kept, l[:maxMessage]+" […]")
			}
			break
		}
		kept = append(kept, l)
		size += len(l) + 1
		if len(kept) == 4 {
			break
		}
	}
	return strings.Join(kept, " / ")
}

var (
	rateWords = regexp.MustCompile(`(?i)\b429\b|rate[ _-]?limit|ratelimiterror|too many requests|quota|usage limit|overloaded|\b529\b`)
	authWords = regexp.MustCompile(`(?i)invalid api key|api[ _-]?key (is )?(missing|not (set|found|valid))|no api key|not logged in|please run /login|authentication[ _]?(error|failed)|authenticationerror|unauthori[sz]ed|\b401\b|invalid x-api-key|credentials? (are )?(missing|invalid)|login required|\b403\b.*(forbidden|permission)`)
	// "retry after 30 seconds", "try again in 1m20s", "retry-after: 12",
	// "resets in 45s".
	retryWords = regexp.MustCompile(`(?i)(?:retry[- ]after|try again in|resets? in|retry in)[:\s]+(\d+(?:\.\d+)?)\s*(ms|s|sec|secs|seconds?|m|mins?|minutes?|h|hours?)?\b|(?:try again in|retry in)\s+((?:\d+h)?(?:\d+m)?(?:\d+(?:\.\d+)?s))`)
)

// classify says how a run failed from its words, FailCrash when they
// name no known cause.
func classify(text string) Failure {
	switch {
	case rateWords.MatchString(text):
		return FailRateLimit
	case authWords.MatchString(text):
		return FailAuth
	}
	return FailCrash
}

// failureIn is the failure a text names, FailNone when it names none:
// for tools that exit 0 after an error, whose words are all there is.
func failureIn(text string) Failure {
	if f := classify(text); f != FailCrash {
		return f
	}
	return FailNone
}

// retryAt finds "try again at 7:23 PM" (Codex's usage limit): a time of
// day on this machine's clock, the next one to come.
var retryAt = regexp.MustCompile(`(?i)(?:try again|retry|resets?) at (\d{1,2}):(\d{2})\s*([AP]M)?`)

// now is the clock a time of day is read against.
var now = time.Now

// retryAfter is the wait a rate-limit message names, 0 when none.
func retryAfter(text string) time.Duration {
	if m := retryAt.FindStringSubmatch(text); m != nil {
		h, _ := strconv.Atoi(m[1])
		min, _ := strconv.Atoi(m[2])
		switch strings.ToUpper(m[3]) {
		case "PM":
			if h < 12 {
				h += 12
			}
		case "AM":
			if h == 12 {
				h = 0
			}
		}
		if h > 23 || min > 59 {
			return 0
		}
		t := now()
		at := time.Date(t.Year(), t.Month(), t.Day(), h, min, 0, 0, t.Location())
		if !at.After(t) {
			at = at.Add(24 * time.Hour)
		}
		return at.Sub(t)
	}
	m := retryWords.FindStringSubmatch(text)
	if m == nil {
		return 0
	}
	if m[3] != "" {
		d, _ := time.ParseDuration(m[3])
		return d
	}
	n, _ := strconv.ParseFloat(m[1], 64) // digits, as the pattern matched
	unit := time.Second
	switch u := strings.ToLower(m[2]); {
	case u == "ms":
		unit = time.Millisecond
	case strings.HasPrefix(u, "m"):
		unit = time.Minute
	case strings.HasPrefix(u, "h"):
		unit = time.Hour
	}
	d := time.Duration(n * float64(unit))
	if d > 24*time.Hour {
		return 24 * time.Hour
	}
	return d
}

// failed is the report of a run that failed with words text.
func failed(f Failure, text string) Report {
	r := Report{Failure: f, Message: Meaningful(text)}
	if f == FailRateLimit {
		r.RetryAfter = retryAfter(text)
	}
	return r
}

// readGeneric reads a command wo knows nothing of: its exit code alone
// says it failed, and its last words why.
func readGeneric(stdout, stderr string, exit int) Report {
	if exit != 0 {
		words := stderr
		if strings.TrimSpace(words) == "" {
			words = stdout
		}
		return failed(classify(words), lastLines(words, 3))
	}
	return Report{Message: Meaningful(lastLines(stdout, 3))}
}

// lastLines is the last n non-blank lines of text.
func lastLines(text string, n int) string {
	lines := strings.Split(strings.TrimSpace(text), "\n")
	var out []string
	for i := len(lines) - 1; i >= 0 && len(out) < n; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" {
			out = append([]string{l}, out...)
		}
	}
	return strings.Join(out, "\n")
}

// errorLines are the lines of text that name a failure, else text.
func errorLines(text string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if failureIn(l) != FailNone || strings.Contains(strings.ToLower(l), "error") {
			out = append(out, l)
		}
	}
	if len(out) == 0 {
		return text
	}
	return strings.Join(out, "\n")
}
