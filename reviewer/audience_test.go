package reviewer

import "testing"

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
