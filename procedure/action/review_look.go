package action

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/wo-runner/wo/github"
	"github.com/wo-runner/wo/internal/gitname"
	"github.com/wo-runner/wo/reviewer"
	"github.com/wo-runner/wo/termtext"
	"github.com/wo-runner/wo/workorder"
)

// maxAsksPerHead bounds the requests for review wo makes for one head and
// one reviewer: a bot that keeps withholding its review after that many
// is a matter for a person, not for more comments.
const maxAsksPerHead = 4

// look is one look at where the awaited reviewers stand on the pushed
// head.
type look struct {
	head     string
	audience reviewer.Audience
	signals  reviewer.Signals
	stands   []workorder.ReviewerStand
	readings map[string]reviewer.Reading // by login
	// done: every awaited reviewer is done with the head (with no
	// reviewer named and none seen: someone who counts reviewed it).
	done    bool
	arrived string // what arrived, for the step's note
	asks    []workorder.ReviewAsk
	asked   []string // "@coderabbitai review (coderabbitai[bot], skipped)"
}

// with are the awaited reviewers whose reading is of kind.
func (l look) with(kind reviewer.Kind) []string {
	var out []string
	for _, s := range l.stands {
		if s.Kind == string(kind) {
			out = append(out, s.Login)
		}
	}
	return out
}

// limitedUntil is the latest time a rate-limited reviewer named, with what
// it said; zero when none is limited beyond now.
func (l look) limitedUntil(now time.Time) (time.Time, string) {
	var until time.Time
	var said string
	for login, r := range l.readings {
		if r.Kind == reviewer.RateLimited && r.NotBefore.After(now) && r.NotBefore.After(until) {
			until, said = r.NotBefore, fmt.Sprintf("%s: %s", login, termtext.Line(r.Said))
		}
	}
	return until, said
}

// reviewLook reads the review signals of the pushed head and, for each
// awaited reviewer that withholds its review, asks for it (once for each
// thing it said, and never more than maxAsksPerHead times for one head).
func reviewLook(ctx context.Context, sc *StepContext, client *github.Client, n int, me string) (look, error) {
	s, err := readSignals(ctx, sc, client, n)
	if err != nil {
		return look{}, err
	}
	head := s.Head
	l := look{head: head, signals: s, audience: audienceOf(sc, me, s), readings: map[string]reviewer.Reading{}}
	if len(l.audience.Awaited) == 0 {
		// No reviewer named, none seen: a review of the head by someone
		// who counts ends the wait.
		for _, r := range s.Reviews {
			if (head == "" || r.CommitID == head) && l.audience.Counts(r.Author, r.Association) && r.State != "PENDING" {
				l.done, l.arrived = true, fmt.Sprintf("review by %s arrived (%s)", r.Author, r.State)
				return l, nil
			}
		}
		return l, nil
	}
	now := sc.Now()
	l.done = true
	var parts []string
	for _, p := range l.audience.Awaited {
		r := p.Read(s)
		l.readings[p.Login()] = r
		stand := workorder.ReviewerStand{Login: p.Login(), Head: head, Kind: string(r.Kind), Said: termtext.Clip(r.Said, 200)}
		if !r.At.IsZero() {
			stand.At = workorder.Timestamp(r.At)
		}
		l.stands = append(l.stands, stand)
		if r.Kind == reviewer.Reviewed {
			parts = append(parts, fmt.Sprintf("%s (%s)", p.Login(), reviewedState(p, r)))
			continue
		}
		l.done = false
		if r.Kind == reviewer.RateLimited && r.NotBefore.After(now) {
			continue // asked once the wait is over
		}
		if err := l.ask(ctx, sc, client, n, p, r); err != nil {
			return l, err
		}
	}
	if l.done {
		l.arrived = "review by " + strings.Join(parts, ", ") + " arrived"
		if len(parts) == 1 {
			who, state, _ := strings.Cut(parts[0], " ")
			l.arrived = fmt.Sprintf("review by %s arrived %s", who, state)
		}
	}
	return l, nil
}

// readSignals reads what GitHub shows of pull request n's review of the
// pushed head: the reviews, the conversation and the head's statuses.
// Every answer is conditional: when nothing moved, each is a free 304.
func readSignals(ctx context.Context, sc *StepContext, client *github.Client, n int) (reviewer.Signals, error) {
	st := sc.State()
	s := reviewer.Signals{Head: st.PushedSHA, Now: sc.Now()}
	if t, err := time.Parse(time.RFC3339Nano, st.PushedAt); err == nil {
		s.Since = t
	}
	var err error
	if s.Reviews, err = client.Reviews(ctx, n); err != nil {
		return s, err
	}
	if s.Comments, err = client.IssueComments(ctx, n); err != nil {
		return s, err
	}
	if s.Head != "" {
		if s.Statuses, err = headStatuses(ctx, client, s.Head); err != nil {
			return s, err
		}
	}
	return s, nil
}

// reviewedState is how a reviewer that reviewed the head says so: its
// review's state, and a word when a bare name matched an app's bot.
func reviewedState(p reviewer.Profile, r reviewer.Reading) string {
	if r.Review == nil {
		return "reviewed"
	}
	state := r.Review.State
	if bare := p.Login(); !strings.HasSuffix(bare, "[bot]") && strings.EqualFold(r.Review.Author, bare+"[bot]") {
		// A bare name resolves to the app's bot by the account GitHub
		// reports; a user of that name would match too.
		state += fmt.Sprintf("; the bare name %s matched the app %s: name it so, since a user may hold the bare name", bare, r.Review.Author)
	}
	return state
}

// headStatuses are what the head's commit statuses and check runs say,
// where a review bot reports its review of the head.
func headStatuses(ctx context.Context, client *github.Client, head string) ([]github.Status, error) {
	statuses, err := client.Statuses(ctx, head)
	if err != nil {
		return nil, err
	}
	runs, err := client.CheckRuns(ctx, head)
	if err != nil {
		return nil, err
	}
	return append(statuses, runs...), nil
}

// TooManyAsksError says a reviewer was asked as often as wo asks for one
// head and still withholds its review.
type TooManyAsksError struct {
	Reviewer, Head string
	Asks           int
	Said           string
}

func (e *TooManyAsksError) Error() string {
	return fmt.Sprintf("%s was asked %d times to review %s and still has not (it says: %s); look at the pull request, then run wo run again",
		e.Reviewer, e.Asks, gitname.Short(e.Head), termtext.Line(e.Said))
}

// ask makes the requests p's profile names for reading r, each at most
// once: a comment is wo's when it carries its marker (found on GitHub, so
// a rerun after a crash never posts it again), a re-request when the
// state records it.
func (l *look) ask(ctx context.Context, sc *StepContext, client *github.Client, n int, p reviewer.Profile, r reviewer.Reading) error {
	asks := p.Ask(r.Kind)
	if len(asks) == 0 {
		return nil
	}
	signal := ""
	if !r.At.IsZero() {
		signal = r.At.UTC().Format(time.RFC3339)
	}
	episode := fmt.Sprintf("%s %s %s", r.Kind, signal, p.Login())
	prefix := fmt.Sprintf("<!-- wo:ask %s %s ", p.Name(), l.head)
	episodes := l.askedEpisodes(sc.State(), p, prefix)
	if !episodes[episode] && len(episodes) >= maxAsksPerHead {
		return &TooManyAsksError{Reviewer: p.Login(), Head: l.head, Asks: len(episodes), Said: r.Said}
	}
	at := workorder.Timestamp(sc.Now())
	for i, a := range asks {
		rec := workorder.ReviewAsk{Reviewer: p.Login(), Head: l.head, Kind: string(r.Kind), Signal: signal, At: at}
		if len(a.Reviewers) > 0 {
			if episodes[episode] {
				continue // asked already; waiting for the answer
			}
			if err := client.RequestReviewers(ctx, n, a.Reviewers); err != nil {
				return err
			}
			rec.How = "re-request"
		} else {
			// A command is the comment's first line, alone, as the bot
			// reads commands; the marker is an HTML comment GitHub does
			// not show. Each of an episode's comments is looked for on
			// its own: a crash between two leaves only the second to
			// post.
			marker := fmt.Sprintf("%s%s #%d/%d -->", prefix, episode, i+1, len(asks))
			if l.posted(marker) {
				continue
			}
			if _, err := client.Comment(ctx, n, a.Comment+"\n\n"+marker); err != nil {
				return err
			}
			rec.How = a.Comment
		}
		sc.Fault("after_ask")
		asked := sc.State()
		asked.ReviewAsks = appendAsk(asked.ReviewAsks, rec)
		if err := sc.Checkpoint(ctx, asked); err != nil {
			return err
		}
		l.asks = append(l.asks, rec)
		l.asked = append(l.asked, fmt.Sprintf("%s (%s, %s)", rec.How, p.Login(), r.Kind))
	}
	return nil
}

// askedEpisodes are the episodes (a reading's kind, its time and the
// reviewer) already asked about for this head: by wo's own comments
// marked with prefix, and by the re-requests the state st records.
func (l *look) askedEpisodes(st workorder.State, p reviewer.Profile, prefix string) map[string]bool {
	episodes := map[string]bool{}
	for _, c := range l.signals.Comments {
		if github.SameLogin(c.Author, l.audience.Me) {
			if i := strings.Index(c.Body, prefix); i >= 0 {
				rest := c.Body[i+len(prefix):]
				if j := strings.Index(rest, " #"); j >= 0 {
					episodes[rest[:j]] = true
				}
			}
		}
	}
	for _, a := range st.ReviewAsks {
		if a.Head == l.head && github.SameLogin(a.Reviewer, p.Login()) {
			episodes[fmt.Sprintf("%s %s %s", a.Kind, a.Signal, p.Login())] = true
		}
	}
	return episodes
}

// posted reports whether wo's comment with marker is on the pull request.
func (l *look) posted(marker string) bool {
	return slices.ContainsFunc(l.signals.Comments, func(c github.Comment) bool {
		return github.SameLogin(c.Author, l.audience.Me) && strings.Contains(c.Body, marker)
	})
}

// maxRecordedAsks bounds state.review_asks.
const maxRecordedAsks = 50

func appendAsk(list []workorder.ReviewAsk, a workorder.ReviewAsk) []workorder.ReviewAsk {
	for _, x := range list {
		if x.Head == a.Head && x.Reviewer == a.Reviewer && x.Kind == a.Kind && x.Signal == a.Signal && x.How == a.How {
			return list
		}
	}
	list = append(list, a)
	if len(list) > maxRecordedAsks {
		list = list[len(list)-maxRecordedAsks:]
	}
	return list
}
