package reviewer

import (
	"fmt"
	"testing"

	"github.com/wo-runner/wo/github"
)

func TestAudienceCountsAwaitedReviewersAndWritersOnly(t *testing.T) {
	named := Audience{Me: "wo-bot", Awaited: []Profile{For("coderabbitai")}, Named: true}
	unnamed := Audience{Me: "wo-bot"}
	cases := []struct {
		a           Audience
		login, assn string
		want        bool
	}{
		{named, "coderabbitai[bot]", "NONE", true}, // the awaited bot, whatever its association
		{named, "coderabbitai", "NONE", false},     // a user who took the bot's bare name
		{named, "alice", "MEMBER", true},           // a writer
		{named, "alice", "OWNER", true},            //
		{named, "alice", "collaborator", true},     // GitHub's words, in any case
		{named, "mallory", "CONTRIBUTOR", false},   // a contributor cannot push
		{named, "mallory", "FIRST_TIME_CONTRIBUTOR", false},
		{named, "mallory", "NONE", false},
		{named, "copilot-pull-request-reviewer[bot]", "NONE", false}, // a bot not awaited
		{named, "WO-BOT", "MEMBER", false},                           // wo itself, in other case
		{named, "", "MEMBER", false},                                 // a deleted account (ghost)
		{unnamed, "coderabbitai[bot]", "NONE", true},                 // no names: a known review bot
		{unnamed, "some-app[bot]", "NONE", false},                    // but not any bot
		{unnamed, "mallory", "NONE", false},
		{unnamed, "alice", "MEMBER", true},
	}
	for _, c := range cases {
		if got := c.a.Counts(c.login, c.assn); got != c.want {
			t.Errorf("named %v: counts(%q, %q) = %v, want %v", c.a.Named, c.login, c.assn, got, c.want)
		}
	}
}

// With reviewers named, the audience awaits them; with none, the review
// bots wo knows among those who reviewed, commented or posted a status,
// each once, whatever login it used.
func TestTheAudienceAwaitsTheNamedOrTheBotsThatShowedUp(t *testing.T) {
	t.Parallel()
	names := func(a Audience) []string {
		var out []string
		for _, p := range a.Awaited {
			out = append(out, p.Name())
		}
		return out
	}
	s := Signals{
		Reviews:  []github.Review{{Author: "alice"}, {Author: "coderabbitai[bot]"}},
		Comments: []github.Comment{{Author: "some-app[bot]"}, {Author: "gemini-code-assist[bot]"}, {Author: "coderabbitai[bot]"}},
		Statuses: []github.Status{{Creator: "coderabbitai[bot]"}},
	}
	if a := AudienceOf("wo-bot", []string{"alice", "copilot"}, s); !a.Named || a.Me != "wo-bot" || fmt.Sprint(names(a)) != "[alice copilot]" {
		t.Errorf("named: %+v awaits %v", a, names(a))
	}
	if a := AudienceOf("wo-bot", nil, s); a.Named || fmt.Sprint(names(a)) != "[coderabbit gemini]" {
		t.Errorf("none named: awaits %v, named %v", names(a), a.Named)
	}
	if a := AudienceOf("wo-bot", nil, Signals{Statuses: []github.Status{{Creator: "coderabbitai[bot]"}}}); fmt.Sprint(names(a)) != "[coderabbit]" {
		t.Errorf("a bot seen only through its status: awaits %v", names(a))
	}
}
