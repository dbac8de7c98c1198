package ghstandin

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// The stand-in's reviewer comes in three modes. The idealised one (the
// default) posts a review object for every head: CHANGES_REQUESTED with
// its comments, APPROVED when it has none. The other two answer the way
// the real bots do on GitHub, as docs/reviewers.md describes them (this
// is still a test double, and models only what wo reads):
//
//   - ModeCodeRabbit: one summary comment edited in place, a commit status
//     "CodeRabbit" on each head, COMMENTED reviews whose findings may sit
//     in the body, no review object for a clean re-review; pull requests
//     into other branches than DefaultBranch are skipped; it is rate
//     limited and pauses; it answers "@coderabbitai review" and
//     "@coderabbitai resume" comments.
//   - ModeCopilot: COMMENTED reviews only, inline comments by "Copilot",
//     and a new head is reviewed only when Copilot is asked again through
//     requested_reviewers.
const (
	ModeIdealised  = ""
	ModeCodeRabbit = "coderabbit"
	ModeCopilot    = "copilot"
)

// CodeRabbitBot is the CodeRabbit mode's configuration.
type CodeRabbitBot struct {
	// DefaultBranch is the repository's default branch: pull requests into
	// any other are skipped unless asked (CodeRabbit's default
	// reviews.auto_review.base_branches: []). Empty means "main".
	DefaultBranch string
	// AllBases reviews every base, as with base_branches [".*"].
	AllBases bool
	// ReviewObjectWhenClean posts a COMMENTED review "Actionable comments
	// posted: 0" for a clean re-review, as older versions do; by default a
	// clean re-review posts none.
	ReviewObjectWhenClean bool
	// RateLimit is how many reviews it does before it is rate limited;
	// RateLimitWait how long the notice says to wait. 0: never limited.
	RateLimit     int
	RateLimitWait time.Duration
	// PauseAfter is how many reviewed commits before "Reviews paused"
	// (auto_pause_after_reviewed_commits); 0: never.
	PauseAfter int
	// AbortNext makes the next n reviews fail as when the head changed
	// during the review.
	AbortNext int
	// Silent never answers anything.
	Silent bool
	// NewerWording writes the newer texts: "Review limit reached", "Next
	// review available in", and a coverage marker naming the head.
	NewerWording bool
}

// CopilotBot is the Copilot mode's configuration.
type CopilotBot struct {
	// ReviewOnOpen reviews the first head without being asked, as when the
	// repository asks Copilot for every new pull request.
	ReviewOnOpen bool
	// OutOfQuota answers a request with the notice that the requester's
	// quota is used up.
	OutOfQuota bool
}

// botState is what the CodeRabbit and Copilot modes keep of a PR.
type botState struct {
	summaryID int64  // CodeRabbit's summary comment
	reviewed  int    // reviews posted (CodeRabbit: for pausing)
	paused    bool   // CodeRabbit's reviews are paused
	asked     string // a head a command or a request asked to review
	seen      string // the head CodeRabbit last reacted to
}

// crLimited reports whether CodeRabbit is rate limited now (the limit is
// the developer's, over every pull request): it is once RateLimit reviews
// were done, until RateLimitWait has passed; then the budget is back.
func (s *Server) crLimited() bool {
	now := time.Now()
	if !s.crLimitedUntil.IsZero() {
		if now.Before(s.crLimitedUntil) {
			return true
		}
		s.crLimitedUntil, s.crReviews = time.Time{}, 0
		return false
	}
	if s.crReviews >= s.CodeRabbit.RateLimit {
		s.crLimitedUntil = now.Add(s.CodeRabbit.RateLimitWait)
		return true
	}
	return false
}

// copilotLogin and copilotInline are Copilot's names: its reviews are by
// the app's bot, its inline comments by "Copilot".
const (
	copilotLogin  = "copilot-pull-request-reviewer[bot]"
	copilotInline = "Copilot"
)

// statusJSON is a status, as the list of a commit's statuses has it.
func (s *Server) statusJSON(repo string, id int64, context, state, desc, creator string, at time.Time) map[string]any {
	return map[string]any{
		"url": s.api("repos/%s/statuses/%d", repo, id), "avatar_url": nil, "id": id, "node_id": nodeID("StatusContext", id),
		"state": state, "description": desc, "target_url": nil, "context": context,
		"created_at": stamp(at), "updated_at": stamp(at), "creator": s.userJSON(creator),
	}
}

// setStatus posts the bot's commit status on sha (GitHub keeps every
// status; the newest of a context is its state).
func (s *Server) setStatus(repo, sha, state, desc string) {
	s.postStatus(repo, sha, "CodeRabbit", state, desc, s.ReviewerLogin)
}

func (s *Server) postStatus(repo, sha, context, state, desc, creator string) {
	if s.statuses == nil {
		s.statuses = map[string][]map[string]any{}
	}
	s.nextID++
	key := repo + "@" + sha
	s.statuses[key] = append([]map[string]any{s.statusJSON(repo, s.nextID, context, state, desc, creator, time.Now())}, s.statuses[key]...)
}

// SetStatus posts the CodeRabbit status on sha, as the bot would.
func (s *Server) SetStatus(repo, sha, state, desc string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.setStatus(repo, sha, state, desc)
}

// StatusAs posts a commit status on sha as login, with any context: on
// GitHub anyone who can push can.
func (s *Server) StatusAs(repo, sha, login, context, state, desc string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.postStatus(repo, sha, context, state, desc, login)
}

// Status returns the state and description of the newest CodeRabbit
// status on sha, for tests ("" when there is none).
func (s *Server) Status(repo, sha string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, x := range s.statuses[repo+"@"+sha] {
		if x["context"] == "CodeRabbit" {
			return fmt.Sprint(x["state"]) + ": " + fmt.Sprint(x["description"])
		}
	}
	return ""
}

// listStatuses answers GET /repos/{owner}/{repo}/commits/{ref}/statuses:
// every status of the commit (ref a SHA or a branch), newest first.
func (s *Server) listStatuses(w http.ResponseWriter, r *http.Request, repo, ref string) int {
	sha := ref
	if b := s.headSHA(repo, ref); b != "" {
		sha = b
	}
	return s.page(w, r, s.statuses[repo+"@"+sha])
}

// checkRuns answers GET /repos/{owner}/{repo}/commits/{ref}/check-runs:
// the stand-in's bots report through statuses, so there are none.
func (s *Server) checkRuns(w http.ResponseWriter, r *http.Request) int {
	return s.reply(w, r, http.StatusOK, map[string]any{"total_count": 0, "check_runs": []any{}})
}

// requestReviewers answers POST …/pulls/{n}/requested_reviewers: asking
// Copilot makes it review the head.
func (s *Server) requestReviewers(w http.ResponseWriter, r *http.Request, repo string, p *pr) int {
	var in struct {
		Reviewers []string `json:"reviewers"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		return s.errorJSON(w, http.StatusUnprocessableEntity, "Validation Failed")
	}
	for _, who := range in.Reviewers {
		switch {
		case s.Mode == ModeCopilot && who == copilotLogin:
			p.bot.asked = s.headSHA(repo, p.Head)
			p.pendingSHA, p.pendingSince = p.bot.asked, time.Now()
		case strings.EqualFold(who, "copilot-pull-request-reviewer"):
			return s.errorJSON(w, http.StatusUnprocessableEntity, "Reviews may only be requested from collaborators. One or more of the users or teams you specified is not a collaborator of the "+repo+" repository.")
		}
	}
	s.requestedReviews = append(s.requestedReviews, in.Reviewers...)
	return s.reply(w, r, http.StatusCreated, s.prJSON(repo, p))
}

// HoldReviews stops (true) or lets go (false) the bot's reviews, in every
// mode: a head it would review waits, so that a test can act on the pull
// request before the review lands, however slow the machine.
func (s *Server) HoldReviews(hold bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hold = hold
}

// ThreadAs opens a review thread on path:line of the PR's head as login
// (a person's review comment, with a review of its own).
func (s *Server) ThreadAs(repo string, number int, login, path string, line int, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.find(repo, strconv.Itoa(number))
	if p == nil {
		return
	}
	sha := s.headSHA(repo, p.Head)
	s.nextID++
	reviewID := s.nextID
	p.reviews = append(p.reviews, s.reviewJSON(repo, p, reviewID, login, "COMMENTED", "", sha))
	s.postThreads(repo, p, reviewID, login, login, []Comment{{Path: path, Line: line, Body: body}}, sha)
}

// RequestedReviewers returns every login asked for a review so far.
func (s *Server) RequestedReviewers() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.requestedReviews...)
}

var reCommand = regexp.MustCompile(`(?i)^\s*@coderabbitai\s+(full review|review|resume|pause)\s*$`)

// botCommand reacts to a new conversation comment: CodeRabbit takes a
// command only when the comment's first line is the command alone.
func (s *Server) botCommand(repo string, p *pr, body string) {
	if s.Mode != ModeCodeRabbit || s.CodeRabbit.Silent {
		return
	}
	first, _, _ := strings.Cut(strings.TrimSpace(body), "\n")
	m := reCommand.FindStringSubmatch(first)
	if m == nil {
		return
	}
	head := s.headSHA(repo, p.Head)
	switch strings.ToLower(m[1]) {
	case "review", "full review":
		s.botSay(repo, p, "<!-- This is an auto-generated reply by CodeRabbit -->\n<details>\n<summary>✅ Actions performed</summary>\n\nReview triggered.\n\n> Note: CodeRabbit is an incremental review system and does not re-review already reviewed commits.\n\n</details>")
		p.bot.asked, p.bot.seen = head, "" // reconsider the head
	case "resume":
		p.bot.paused = false
		s.botSay(repo, p, "<!-- This is an auto-generated reply by CodeRabbit -->\n<details>\n<summary>✅ Actions performed</summary>\n\nReviews resumed.\n\n</details>")
	case "pause":
		p.bot.paused = true
	}
}

// botSay posts a conversation comment as CodeRabbit.
func (s *Server) botSay(repo string, p *pr, body string) {
	s.nextID++
	p.issueComms = append(p.issueComms, s.issueCommentJSON(repo, p, s.nextID, s.ReviewerLogin, body))
}

// summaryStanza writes CodeRabbit's summary comment with one state stanza
// (empty: none), creating it the first time and editing it after.
func (s *Server) summaryStanza(repo string, p *pr, kind, stanza, extra string) {
	body := "<!-- This is an auto-generated comment: summarize by coderabbit.ai -->\n"
	if stanza != "" {
		body += "<!-- This is an auto-generated comment: " + kind + " by coderabbit.ai -->\n\n" + stanza +
			"\n\n<!-- end of auto-generated comment: " + kind + " by coderabbit.ai -->\n"
	}
	body += extra + "\n<!-- walkthrough_start -->\n\n## Walkthrough\n\nThe change adds the files of this part.\n\n<!-- walkthrough_end -->\n" +
		"<!-- tips_start -->\n\n---\n\nThanks for using CodeRabbit!\n\n<sub>Comment `@coderabbitai help` to get the list of available commands and usage tips.</sub>\n\n<!-- tips_end -->"
	now := stamp(time.Now())
	for _, c := range p.issueComms {
		if c["id"] == p.bot.summaryID {
			c["body"], c["updated_at"] = body, now
			return
		}
	}
	s.nextID++
	p.bot.summaryID = s.nextID
	p.issueComms = append(p.issueComms, s.issueCommentJSON(repo, p, s.nextID, s.ReviewerLogin, body))
}

// codeRabbitHead reacts to a head CodeRabbit has not looked at: it skips,
// is limited or paused (each said in the summary and a green status), or
// starts a review (a pending status) that review() finishes after the
// delay. It reports whether a review is under way.
func (s *Server) codeRabbitHead(repo string, p *pr, sha string) bool {
	cfg := &s.CodeRabbit
	if cfg.Silent {
		return false
	}
	asked := p.bot.asked == sha
	def := cfg.DefaultBranch
	if def == "" {
		def = "main"
	}
	switch {
	case !asked && !cfg.AllBases && p.Base != def:
		s.summaryStanza(repo, p, "skip review", "> [!IMPORTANT]\n> ## Review skipped\n>\n> Auto reviews are disabled on base/target branches other than the default branch.\n>\n"+
			"> Please check the settings in the CodeRabbit UI or the `.coderabbit.yaml` file in this repository. To trigger a single review, invoke the `@coderabbitai review` command.", "")
		s.setStatus(repo, sha, "success", "Review skipped")
		return false
	case !asked && p.bot.paused:
		s.summaryStanza(repo, p, "review paused", "> [!NOTE]\n> ## Reviews paused\n>\n> It looks like this branch is under active development. To avoid overwhelming you with review comments due to an influx of new commits, CodeRabbit has automatically paused this review.\n>\n"+
			"> Use the following commands to manage reviews:\n> - `@coderabbitai resume` to resume automatic reviews.\n> - `@coderabbitai review` to trigger a single review.", "")
		s.setStatus(repo, sha, "success", "Review skipped")
		return false
	case cfg.RateLimit > 0 && s.crLimited():
		left := time.Until(s.crLimitedUntil).Round(time.Second)
		mins, secs := int(left/time.Minute), int(left%time.Minute/time.Second)
		text := fmt.Sprintf("> [!WARNING]\n> ## Rate limit exceeded\n>\n> @%s has exceeded the limit for the number of commits or files that can be reviewed per hour. Please wait **%d minutes and %d seconds** before requesting another review.\n>\n"+
			"> <details>\n> <summary>⌛ How to resolve this issue?</summary>\n>\n> After the wait time has elapsed, a review can be triggered using the `@coderabbitai review` command as a PR comment.\n> </details>", p.User, mins, secs)
		if cfg.NewerWording {
			text = fmt.Sprintf("> [!WARNING]\n> ## Review limit reached\n>\n> Next review available in: **%d minutes**", max(1, int((left+time.Minute-1)/time.Minute)))
		}
		s.summaryStanza(repo, p, "rate limited", text, "")
		s.setStatus(repo, sha, "success", "Review rate limited")
		return false
	}
	s.summaryStanza(repo, p, "review in progress", "> [!NOTE]\n> Currently processing new changes in this PR. This may take a few minutes, please wait...", "")
	s.setStatus(repo, sha, "pending", "Review in progress")
	return true
}

// codeRabbitAbort fails CodeRabbit's review of sha as when the head
// changed during it (AbortNext): the review is lost.
func (s *Server) codeRabbitAbort(repo string, p *pr, sha string) {
	s.CodeRabbit.AbortNext--
	s.codeRabbitFailed(repo, p, sha, p.reviewedSHA, sha)
	p.bot.asked = ""
}

// codeRabbitFailed says, in the summary and in a failed status on sha,
// that the review failed because the head moved from one commit to
// another while it ran.
func (s *Server) codeRabbitFailed(repo string, p *pr, sha, from, to string) {
	s.summaryStanza(repo, p, "failure", fmt.Sprintf("> [!CAUTION]\n> ## Review failed\n>\n> The head commit changed during the review from %s to %s.", short7(from), short7(to)), "")
	s.setStatus(repo, sha, "failure", "Review failed: the head commit changed during the review")
}

// codeRabbitReview finishes CodeRabbit's review of sha: a COMMENTED review
// with its threads and body sections, or, clean, the summary alone.
func (s *Server) codeRabbitReview(repo string, p *pr, sha string, comments []Comment) {
	cfg := &s.CodeRabbit
	s.crReviews++
	p.bot.reviewed++
	p.bot.asked = ""
	var inline, outside, nitpicks, dups []Comment
	for _, c := range comments {
		switch c.Kind {
		case "outside":
			outside = append(outside, c)
		case "nitpick":
			nitpicks = append(nitpicks, c)
		case "duplicate":
			dups = append(dups, c)
		default:
			if c.Path != "" {
				inline = append(inline, c)
			}
		}
	}
	coverage := ""
	if cfg.NewerWording {
		coverage = fmt.Sprintf("<!-- final_review_risk_coverage:{\"coveredCommitId\":%q,\"kind\":\"reviewed\"} -->\n", sha)
	}
	if len(comments) == 0 && p.bot.reviewed > 1 && !cfg.ReviewObjectWhenClean {
		s.summaryStanza(repo, p, "", "", coverage+"No actionable comments were generated in the recent review. 🎉\n")
	} else {
		var body strings.Builder
		fmt.Fprintf(&body, "**Actionable comments posted: %d**\n\n", len(inline))
		if len(outside) > 0 {
			body.WriteString("> [!CAUTION]\n> Some comments are outside the diff and can’t be posted inline due to platform limitations.\n>\n>\n>\n")
			body.WriteString(quote(findingsSection("⚠️ Outside diff range comments", outside)))
			body.WriteString("\n")
		}
		if len(dups) > 0 {
			body.WriteString(findingsSection("♻️ Duplicate comments", dups))
		}
		if len(nitpicks) > 0 {
			body.WriteString(findingsSection("🧹 Nitpick comments", nitpicks))
		}
		body.WriteString("\n<details>\n<summary>📜 Review details</summary>\n\n**Configuration used**: defaults\n**Review profile**: CHILL\n\n</details>\n")
		s.nextID++
		reviewID := s.nextID
		p.reviews = append(p.reviews, s.reviewJSON(repo, p, reviewID, s.ReviewerLogin, "COMMENTED", body.String(), sha))
		s.postThreads(repo, p, reviewID, s.ReviewerLogin, s.ReviewerLogin, inline, sha)
		s.summaryStanza(repo, p, "", "", coverage)
	}
	s.setStatus(repo, sha, "success", "Review completed")
	if cfg.PauseAfter > 0 && p.bot.reviewed >= cfg.PauseAfter {
		p.bot.paused = true
	}
}

// copilotReview posts Copilot's review of sha: always COMMENTED.
func (s *Server) copilotReview(repo string, p *pr, sha string, comments []Comment) {
	p.bot.asked = ""
	s.nextID++
	reviewID := s.nextID
	var inline []Comment
	for _, c := range comments {
		if c.Path != "" {
			inline = append(inline, c)
		}
	}
	body := fmt.Sprintf("## Pull request overview\n\nThis pull request adds the files of this part.\n\n### Reviewed Changes\n\nCopilot reviewed 3 out of 3 changed files in this pull request and generated %d comments.", len(inline))
	if len(inline) == 0 {
		body = "## Pull request overview\n\nCopilot reviewed 3 out of 3 changed files in this pull request and generated no comments."
	}
	if s.Copilot.OutOfQuota {
		body, inline = "Copilot was unable to review this pull request because the user who requested the review has reached their quota limit.", nil
	}
	p.reviews = append(p.reviews, s.reviewJSON(repo, p, reviewID, copilotLogin, "COMMENTED", body, sha))
	s.postThreads(repo, p, reviewID, copilotInline, copilotLogin, inline, sha)
}

// postThreads posts inline comments of one review: each a review comment
// (by restLogin, as the REST API names its author) opening a thread (by
// threadLogin, as the GraphQL API names it).
func (s *Server) postThreads(repo string, p *pr, reviewID int64, restLogin, threadLogin string, comments []Comment, sha string) {
	for _, c := range comments {
		s.nextID++
		body := c.Body
		if c.Suggestion != "" {
			body += "\n\n<details>\n<summary>📝 Committable suggestion</summary>\n\n> ‼️ **IMPORTANT**\n> Carefully review the code before committing.\n\n```suggestion\n" + c.Suggestion + "\n```\n\n</details>"
		}
		cc := c
		cc.Body = body
		p.comments = append(p.comments, s.reviewCommentJSON(repo, p, s.nextID, reviewID, restLogin, cc, sha))
		p.threads = append(p.threads, &thread{id: nodeID("PullRequestReviewThread", s.nextID), path: c.Path, line: c.Line, startLine: c.StartLine, sha: sha,
			comments: []threadComment{{id: s.nextID, login: threadLogin, body: body, at: time.Now()}}})
	}
}

// findingsSection is one collapsed section of a review body, by file.
func findingsSection(title string, cs []Comment) string {
	byFile := map[string][]Comment{}
	var order []string
	for _, c := range cs {
		if _, ok := byFile[c.Path]; !ok {
			order = append(order, c.Path)
		}
		byFile[c.Path] = append(byFile[c.Path], c)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "<details>\n<summary>%s (%d)</summary><blockquote>\n\n", title, len(cs))
	for _, path := range order {
		fmt.Fprintf(&b, "<details>\n<summary>%s (%d)</summary><blockquote>\n\n", path, len(byFile[path]))
		for i, c := range byFile[path] {
			if i > 0 {
				b.WriteString("---\n\n")
			}
			lines := strconv.Itoa(c.Line)
			if c.StartLine > 0 && c.StartLine < c.Line {
				lines = fmt.Sprintf("%d-%d", c.StartLine, c.Line)
			}
			fmt.Fprintf(&b, "`%s`: **%s**\n\n", lines, c.Body)
		}
		b.WriteString("</blockquote></details>\n")
	}
	b.WriteString("\n</blockquote></details>\n")
	return b.String()
}

func quote(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight("> "+l, " ")
	}
	return strings.Join(lines, "\n") + "\n"
}

func short7(sha string) string {
	if len(sha) > 7 {
		return sha[:7]
	}
	return sha
}
