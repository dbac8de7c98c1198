package reviewer

import (
	"strings"
	"testing"
	"time"

	"github.com/wo-runner/wo/github"
)

const (
	head  = "9c1d2e3f00000000000000000000000000000000"
	older = "0510fe2000000000000000000000000000000000"
	cr    = "coderabbitai[bot]"
)

var t0 = time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)

// summaryWith is CodeRabbit's summary comment holding one state stanza,
// last edited at edited.
func summaryWith(stanza string, edited time.Time) github.Comment {
	return github.Comment{ID: 1, Author: cr, CreatedAt: t0.Add(-time.Hour), UpdatedAt: edited,
		Body: "<!-- This is an auto-generated comment: summarize by coderabbit.ai -->\n" + stanza +
			"\n<!-- walkthrough_start -->\n## Walkthrough\nThe CLI now prints \"review in progress\" and \"No actionable comments were generated\"; see ## Review skipped.\n<!-- walkthrough_end -->\n<!-- tips_start -->\n---\nThanks for using CodeRabbit!\n<!-- tips_end -->"}
}

func status(state, desc string, at time.Time) github.Status {
	return github.Status{Context: "CodeRabbit", State: state, Description: desc, Creator: cr, UpdatedAt: at}
}

const (
	skipStanza = "<!-- This is an auto-generated comment: skip review by coderabbit.ai -->\n\n> [!IMPORTANT]\n> ## Review skipped\n>\n" +
		"> Auto reviews are disabled on base/target branches other than the default branch.\n>\n> To trigger a single review, invoke the `@coderabbitai review` command.\n\n" +
		"<!-- end of auto-generated comment: skip review by coderabbit.ai -->"
	limitStanza = "<!-- This is an auto-generated comment: rate limited by coderabbit.ai -->\n\n> [!WARNING]\n> ## Rate limit exceeded\n>\n" +
		"> @dev has exceeded the limit for the number of commits or files that can be reviewed per hour. Please wait **22 minutes and 5 seconds** before requesting another review.\n\n" +
		"<!-- end of auto-generated comment: rate limited by coderabbit.ai -->"
	pausedStanza = "<!-- This is an auto-generated comment: review paused by coderabbit.ai -->\n\n> [!NOTE]\n> ## Reviews paused\n>\n" +
		"> Use the following commands to manage reviews:\n> - `@coderabbitai resume` to resume automatic reviews.\n> - `@coderabbitai review` to trigger a single review.\n\n" +
		"<!-- end of auto-generated comment: review paused by coderabbit.ai -->"
	failedStanza = "<!-- This is an auto-generated comment: failure by coderabbit.ai -->\n\n> [!CAUTION]\n> ## Review failed\n>\n" +
		"> The head commit changed during the review from 0510fe2 to 9c1d2e3.\n\n<!-- end of auto-generated comment: failure by coderabbit.ai -->"
	progressStanza = "<!-- This is an auto-generated comment: review in progress by coderabbit.ai -->\n\n> [!NOTE]\n> Currently processing new changes in this PR. This may take a few minutes, please wait...\n\n" +
		"<!-- end of auto-generated comment: review in progress by coderabbit.ai -->"
	cleanStanza = "No actionable comments were generated in the recent review. 🎉"
)

func TestCodeRabbitReadsWhereItStandsOnTheHead(t *testing.T) {
	pushed := t0
	review := github.Review{ID: 7, Author: cr, State: "COMMENTED", CommitID: head, Body: "**Actionable comments posted: 2**", SubmittedAt: t0.Add(8 * time.Minute)}
	oldReview := review
	oldReview.CommitID = older
	cases := []struct {
		name      string
		s         Signals
		kind      Kind
		said      string
		notBefore time.Time
		review    bool
	}{
		{name: "nothing yet", s: Signals{}, kind: Waiting},
		{name: "status pending", s: Signals{Statuses: []github.Status{status("pending", "Review in progress", t0.Add(time.Minute))}}, kind: InProgress, said: "Review in progress"},
		{name: "skipped: a green status that is no review", s: Signals{
			Statuses: []github.Status{status("success", "Review skipped", t0.Add(time.Minute))},
			Comments: []github.Comment{summaryWith(skipStanza, t0.Add(time.Minute))}}, kind: Skipped, said: "Review skipped"},
		{name: "skipped, told by the summary alone", s: Signals{Comments: []github.Comment{summaryWith(skipStanza, t0.Add(time.Minute))}}, kind: Skipped, said: "Review skipped"},
		{name: "rate limited, the wait read from the summary", s: Signals{
			Statuses: []github.Status{status("success", "Review rate limited", t0.Add(2*time.Minute))},
			Comments: []github.Comment{summaryWith(limitStanza, t0.Add(2*time.Minute))}},
			kind: RateLimited, said: "Rate limit exceeded", notBefore: t0.Add(2*time.Minute + 22*time.Minute + 5*time.Second)},
		{name: "rate limited with no time given", s: Signals{Statuses: []github.Status{status("success", "Review rate limited", t0.Add(2*time.Minute))}},
			kind: RateLimited, notBefore: t0.Add(2*time.Minute + defaultLimitWait)},
		{name: "paused", s: Signals{Comments: []github.Comment{summaryWith(pausedStanza, t0.Add(time.Minute))}}, kind: Paused, said: "Reviews paused"},
		{name: "paused: a skipped status that the summary explains", s: Signals{
			Statuses: []github.Status{status("success", "Review skipped", t0.Add(time.Minute))},
			Comments: []github.Comment{summaryWith(pausedStanza, t0.Add(time.Minute))}}, kind: Paused, said: "Reviews paused"},
		{name: "failed: the head changed during the review", s: Signals{
			Statuses: []github.Status{status("failure", "Review failed", t0.Add(3*time.Minute))}}, kind: Aborted},
		{name: "in progress, told by the summary", s: Signals{Comments: []github.Comment{summaryWith(progressStanza, t0.Add(time.Minute))}}, kind: InProgress},
		{name: "a review of the head", s: Signals{Reviews: []github.Review{oldReview, review},
			Statuses: []github.Status{status("success", "Review completed", t0.Add(9*time.Minute))}}, kind: Reviewed, review: true, said: "**Actionable comments posted: 2**"},
		{name: "a review of the head while the status is still pending", s: Signals{Reviews: []github.Review{review},
			Statuses: []github.Status{status("pending", "Review in progress", t0.Add(9*time.Minute))}}, kind: InProgress},
		{name: "a review of an older head only", s: Signals{Reviews: []github.Review{oldReview}}, kind: Waiting},
		{name: "clean with no review object: the status", s: Signals{Reviews: []github.Review{oldReview},
			Statuses: []github.Status{status("success", "Review completed", t0.Add(9*time.Minute))}}, kind: Reviewed, said: "status: Review completed"},
		// The summary is edited for other reasons too (a chat answer): an
		// old "no actionable comments" is no evidence about this head.
		{name: "a clean summary with no marker, edited after the push, is no evidence", s: Signals{Reviews: []github.Review{oldReview},
			Comments: []github.Comment{summaryWith(cleanStanza, t0.Add(9*time.Minute))}}, kind: Waiting},
		{name: "a pending status unchanged for an hour is a lost review", s: Signals{Now: t0.Add(2 * time.Hour),
			Statuses: []github.Status{status("pending", "Review in progress", t0.Add(time.Minute))}}, kind: Aborted, said: "unchanged since"},
		{name: "a rate limit far in the future is cut to a day", s: Signals{Now: t0,
			Statuses: []github.Status{status("success", "Review rate limited", time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC))}},
			kind: RateLimited, notBefore: t0.Add(maxLimitWait)},
		{name: "words in the walkthrough are not a state", s: Signals{Comments: []github.Comment{summaryWith("", t0.Add(time.Minute))}}, kind: Waiting},
		{name: "a clean summary from before the push is about an older head", s: Signals{Reviews: []github.Review{oldReview},
			Comments: []github.Comment{summaryWith(cleanStanza, t0.Add(-10*time.Minute))}}, kind: Waiting},
		{name: "a coverage marker naming the head", s: Signals{Comments: []github.Comment{summaryWith(
			`<!-- final_review_risk_coverage:{"coveredCommitId":"`+head+`","kind":"reviewed"} -->`, t0.Add(-10*time.Minute))}}, kind: Reviewed},
		{name: "a coverage marker naming another head", s: Signals{Comments: []github.Comment{summaryWith(
			`<!-- final_review_risk_coverage:{"coveredCommitId":"`+older+`","kind":"reviewed"} -->`+"\n"+cleanStanza, t0.Add(9*time.Minute))}}, kind: Waiting},
		{name: "two statuses in one second: the first listed is the newer", s: Signals{
			Statuses: []github.Status{status("pending", "Review in progress", t0.Add(time.Minute)), status("success", "Review skipped", t0.Add(time.Minute))}}, kind: InProgress},
		{name: "a status named CodeRabbit posted by someone else", s: Signals{
			Statuses: []github.Status{{Context: "CodeRabbit", State: "success", Description: "Review completed", Creator: "alice", UpdatedAt: t0.Add(time.Minute)}}}, kind: Waiting},
		{name: "someone else's status and comments", s: Signals{
			Statuses: []github.Status{{Context: "ci/build", State: "success", Description: "Review completed", UpdatedAt: t0}},
			Comments: []github.Comment{{Author: "mallory", Body: "<!-- This is an auto-generated comment: summarize by coderabbit.ai -->\n" + cleanStanza, UpdatedAt: t0.Add(time.Hour)}},
			Reviews:  []github.Review{{Author: "coderabbitai", CommitID: head, State: "APPROVED"}}}, kind: Waiting},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.s.Head, c.s.Since = head, pushed
			r := CodeRabbit{}.Read(c.s)
			if r.Kind != c.kind {
				t.Fatalf("kind %s, want %s (%+v)", r.Kind, c.kind, r)
			}
			if c.said != "" && !strings.Contains(r.Said, c.said) {
				t.Errorf("said %q, want %q in it", r.Said, c.said)
			}
			if !c.notBefore.IsZero() && !r.NotBefore.Equal(c.notBefore) {
				t.Errorf("not before %s, want %s", r.NotBefore, c.notBefore)
			}
			if c.review != (r.Review != nil) || (r.Review != nil && r.Review.CommitID != head) {
				t.Errorf("review %+v", r.Review)
			}
		})
	}
}

func TestCodeRabbitReadsWithheldReviewsEvenWhenThePushTimeIsUnknown(t *testing.T) {
	// A state written before wo recorded push times: a withheld review is
	// still seen (asking once more is cheap), a clean summary is not
	// (that would call a head reviewed on no evidence).
	s := Signals{Head: head, Comments: []github.Comment{summaryWith(skipStanza, t0)}}
	if r := (CodeRabbit{}).Read(s); r.Kind != Skipped {
		t.Errorf("skip with no push time: %s", r.Kind)
	}
	s.Comments = []github.Comment{summaryWith(cleanStanza, t0)}
	if r := (CodeRabbit{}).Read(s); r.Kind != Waiting {
		t.Errorf("clean summary with no push time: %s, want waiting", r.Kind)
	}
}

func TestWaitInReadsTheNoticesWordings(t *testing.T) {
	cases := map[string]time.Duration{
		"Please wait **22 minutes and 5 seconds** before requesting another review.":                                           22*time.Minute + 5*time.Second,
		"Next review available in: **9 minutes**":                                                                              9 * time.Minute,
		"More reviews will be available in 55 minutes and 25 seconds.":                                                         55*time.Minute + 25*time.Second,
		"Review rate limit: 0/1 reviews remaining, refill in 14 minutes and 56 seconds.":                                       14*time.Minute + 56*time.Second,
		"You have reached your daily quota limit. Please wait up to 24 hours and I will start processing your requests again!": 24 * time.Hour,
		"Please wait **1 hour, 2 minutes and 3 seconds**":                                                                      time.Hour + 2*time.Minute + 3*time.Second,
		"Please wait **45 seconds**":                                                                                           45 * time.Second,
		"Please wait 99999 hours":                                                                                              maxLimitWait,
	}
	for text, want := range cases {
		if got, ok := waitIn(text); !ok || got != want {
			t.Errorf("waitIn(%q) = %s, %v; want %s", text, got, ok, want)
		}
	}
	for _, text := range []string{"", "Rate limit exceeded", "Please wait a moment", "wait 5 bananas", "Please wait 999999999999 minutes"} {
		if got, ok := waitIn(text); ok {
			t.Errorf("waitIn(%q) = %s, want none", text, got)
		}
	}
}

func TestCodeRabbitAsksWithACommandOfItsOwn(t *testing.T) {
	p := CodeRabbit{}
	for k, want := range map[Kind]string{Skipped: "@coderabbitai review", RateLimited: "@coderabbitai review", Aborted: "@coderabbitai review",
		Paused: "@coderabbitai resume|@coderabbitai review", Waiting: "", InProgress: "", Reviewed: "", Unavailable: ""} {
		var got []string
		for _, a := range p.Ask(k) {
			if len(a.Reviewers) > 0 {
				t.Errorf("%s: CodeRabbit is asked by comment, not as a reviewer", k)
			}
			got = append(got, a.Comment)
		}
		if strings.Join(got, "|") != want {
			t.Errorf("Ask(%s) = %q, want %q", k, got, want)
		}
	}
	if !p.Signal(github.Comment{Author: cr, Body: "Review triggered."}) {
		t.Error("CodeRabbit's acknowledgement taken as a finding")
	}
	if p.Wait() < 20*time.Minute || p.Latency() <= 10*time.Minute {
		t.Errorf("wait %s, latency %s: shorter than CodeRabbit's worst observed latency", p.Wait(), p.Latency())
	}
}

func TestCopilotReviewsAreAnswersUnlessItCouldNotReview(t *testing.T) {
	p := Copilot{}
	bot := "copilot-pull-request-reviewer[bot]"
	review := func(body, commit string) github.Review {
		return github.Review{Author: bot, State: "COMMENTED", CommitID: commit, Body: body, SubmittedAt: t0}
	}
	cases := []struct {
		reviews []github.Review
		kind    Kind
	}{
		{nil, Waiting},
		{[]github.Review{review("## Pull request overview\nCopilot reviewed 3 out of 3 changed files in this pull request and generated 2 comments.", older)}, Waiting},
		{[]github.Review{review("## Pull request overview\nCopilot reviewed 3 out of 3 changed files in this pull request and generated 2 comments.", head)}, Reviewed},
		{[]github.Review{review("Copilot reviewed 3 out of 3 changed files in this pull request and generated no comments.", head)}, Reviewed},
		{[]github.Review{review("Copilot wasn't able to review any files in this pull request.", head)}, Unavailable},
		{[]github.Review{review("Copilot was unable to review this pull request because the user who requested the review has reached their quota limit.", head)}, Unavailable},
	}
	for i, c := range cases {
		if r := p.Read(Signals{Head: head, Reviews: c.reviews}); r.Kind != c.kind {
			t.Errorf("case %d: %s, want %s", i, r.Kind, c.kind)
		}
	}
	asks := p.Ask(Waiting)
	if len(asks) != 1 || asks[0].Comment != "" || len(asks[0].Reviewers) != 1 || asks[0].Reviewers[0] != bot {
		t.Errorf("Copilot is asked %+v, want a re-request of %s", asks, bot)
	}
	if p.Ask(Reviewed) != nil || p.Ask(Unavailable) != nil {
		t.Error("Copilot asked again after it answered")
	}
	if !p.Is("Copilot") || !p.Is(bot) || p.Is("copilot-pull-request-reviewer") {
		t.Error("Copilot's names: its review's bot, its inline comments' \"Copilot\", never a bare name a user could hold")
	}
}

func TestForPicksTheProfileByLogin(t *testing.T) {
	cases := map[string]string{
		"coderabbitai": "coderabbit", "coderabbitai[bot]": "coderabbit", "CodeRabbitAI[bot]": "coderabbit",
		"copilot-pull-request-reviewer[bot]": "copilot", "copilot-pull-request-reviewer": "copilot",
		"gemini-code-assist": "gemini", "alice": "alice", "some-bot[bot]": "some-bot[bot]",
	}
	for login, want := range cases {
		if got := For(login).Name(); got != want {
			t.Errorf("For(%q) = %s, want %s", login, got, want)
		}
	}
	if !Known("coderabbitai[bot]") || Known("alice") {
		t.Error("Known")
	}
	// A user who registered a bot's bare name is not the bot.
	if (CodeRabbit{}).Is("coderabbitai") {
		t.Error("the user coderabbitai taken for the bot")
	}
}

func TestGenericAndGeminiReadReviewsOfTheHead(t *testing.T) {
	g := For("alice")
	s := Signals{Head: head, Reviews: []github.Review{{Author: "alice", State: "APPROVED", CommitID: older}}}
	if r := g.Read(s); r.Kind != Waiting {
		t.Errorf("alice's review of an older head: %s", r.Kind)
	}
	s.Reviews = append(s.Reviews, github.Review{Author: "alice", State: "CHANGES_REQUESTED", CommitID: head})
	if r := g.Read(s); r.Kind != Reviewed || r.Review == nil || r.Review.State != "CHANGES_REQUESTED" {
		t.Errorf("alice's review of the head: %+v", r)
	}
	if g.Ask(Waiting) != nil || g.Wait() != DefaultWait {
		t.Error("a person is not asked, and waited for the default time")
	}
	gm := Gemini{}
	ceased := Signals{Head: head, Comments: []github.Comment{{Author: "gemini-code-assist[bot]", Body: "Gemini Code Assist's review activity has ceased."}},
		Reviews: []github.Review{{Author: "gemini-code-assist[bot]", CommitID: head, State: "COMMENTED"}}}
	if r := gm.Read(ceased); r.Kind != Unavailable {
		t.Errorf("Gemini that ceased: %s, want unavailable", r.Kind)
	}
}

// Found by an attack on the loop: names, words and clocks that must not
// change a reading.
func TestReadingsHoldAgainstLookalikesAndWordsInTheChange(t *testing.T) {
	for _, l := range []string{"coderabbitai", "gemini-code-assist", "copilot-pull-request-reviewer", "some-bot[bot]"} {
		if Known(l) {
			t.Errorf("Known(%q): a user holding a bot's bare name is not the bot", l)
		}
	}
	for _, l := range []string{"coderabbitai[bot]", "CodeRabbitAI[bot]", "copilot-pull-request-reviewer[bot]", "Copilot", "Copilot[bot]", "gemini-code-assist[bot]"} {
		if !Known(l) {
			t.Errorf("Known(%q) = false", l)
		}
	}
	if (Copilot{}).Is("copilot-pull-requeſt-reviewer[bot]") || github.SameLogin("KODERABBITAI[BOT]", "\u212aoderabbitai[bot]") {
		t.Error("a non-ASCII lookalike login matches")
	}
	cp := Copilot{}
	about := "## Pull request overview\nThis PR adds a per-user storage quota.\nCopilot reviewed 3 out of 3 changed files in this pull request and generated 2 comments."
	if r := cp.Read(Signals{Head: head, Reviews: []github.Review{{Author: "copilot-pull-request-reviewer[bot]", CommitID: head, State: "COMMENTED", Body: about}}}); r.Kind != Reviewed {
		t.Errorf("a Copilot review of a PR about quotas reads as %s", r.Kind)
	}
	g := Gemini{}
	sum := "## Summary of Changes\nThe v1 endpoint is no longer available; clients move to v2."
	first := Signals{Head: head, Comments: []github.Comment{{Author: "gemini-code-assist[bot]", Body: sum}},
		Reviews: []github.Review{{Author: "gemini-code-assist[bot]", CommitID: head, State: "COMMENTED"}}}
	if r := g.Read(first); r.Kind != Reviewed {
		t.Errorf("Gemini's summary of a PR that retires an endpoint reads as %s", r.Kind)
	}
	next := Signals{Head: "new", Reviews: first.Reviews}
	if r := g.Read(next); r.Kind != Skipped || len(g.Ask(r.Kind)) != 1 || g.Ask(r.Kind)[0].Comment != "/gemini review" {
		t.Errorf("Gemini on a new head: %s, asked %v; want it asked with /gemini review", r.Kind, g.Ask(r.Kind))
	}
	if r := g.Read(Signals{Head: head}); r.Kind != Waiting {
		t.Errorf("Gemini before its first review: %s, want waiting (it reviews a new pull request by itself)", r.Kind)
	}
}

func FuzzParseBody(f *testing.F) {
	f.Add(crReviewBody)
	f.Add("<details><summary>🧹 Nitpick comments (1)</summary><blockquote>\n<details><summary>a (1)</summary><blockquote>\n`1-2`: x\n</blockquote></details></blockquote></details>")
	f.Fuzz(func(t *testing.T, body string) {
		got := ParseBody(body)
		if len(got) > maxFindings {
			t.Fatalf("%d findings", len(got))
		}
		for _, x := range got {
			if len(x.Body) > maxFindingBody+8 || x.Line < 0 || x.StartLine < 0 || (x.StartLine > 0 && x.StartLine > x.Line) {
				t.Fatalf("finding %+v", x)
			}
		}
		waitIn(body)
	})
}

// Edges of CodeRabbit's reading, each found by a mutant that lived.
func TestCodeRabbitReadingEdges(t *testing.T) {
	marker := `<!-- final_review_risk_coverage:{"coveredCommitId":"` + head + `","kind":"reviewed"} -->`
	s := Signals{Head: head, Since: t0, Comments: []github.Comment{summaryWith(marker+"\n"+cleanStanza, t0.Add(time.Minute))}}
	if r := (CodeRabbit{}).Read(s); r.Kind != Reviewed {
		t.Errorf("a coverage marker for the head with a clean stanza: %s, want reviewed", r.Kind)
	}
	walkFirst := "<!-- walkthrough_start -->\n## Review skipped\n<!-- walkthrough_end -->"
	if k := stanza(walkFirst); k != Waiting {
		t.Errorf("a walkthrough at the very start read as %s", k)
	}
	if d, ok := waitIn("Please wait 100000 seconds"); !ok || d != maxLimitWait {
		t.Errorf("100000 seconds: %s %v, want the bound", d, ok)
	}
	if d, ok := waitIn("Please wait 0 minutes"); ok {
		t.Errorf("a wait of nothing read as %s", d)
	}
}

// A command to a review bot is talk with the bot, whoever wrote it; a
// mention of a person, or a bot's name later in the text, is not.
func TestIsCommand(t *testing.T) {
	for body, want := range map[string]bool{
		"@coderabbitai review":           true,
		"  @coderabbitai\nresolve":       true,
		"@copilot please look":           true,
		"/gemini review":                 true,
		"@alice what do you think?":      false,
		"please ask @coderabbitai again": false,
		"":                               false,
		"gemini review":                  false,
	} {
		if got := IsCommand(body); got != want {
			t.Errorf("IsCommand(%q) = %v, want %v", body, got, want)
		}
	}
}
