package commands

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/wo-runner/wo/internal/gitname"
	"github.com/wo-runner/wo/workorder"
)

// stateText is one field of work_order.state, by its JSON name, as a
// person reads it: "step 9 ×2", not Go's map[9:2]. A field stateWords has
// no words for (another tool's, or one added since) reads as plainValue
// shows any JSON value. The text is untrusted: escape it.
func stateText(st workorder.State, name string) string {
	if words, ok := stateWords[name]; ok {
		return words(st)
	}
	return plainValue(workorder.StateMap(st)[name])
}

// unsetText is how a field that is not set reads.
const unsetText = "-"

// stateWords words each state field wo knows, by its JSON name.
var stateWords = map[string]func(workorder.State) string{
	"version":      func(st workorder.State) string { return strconv.Itoa(st.Version) },
	"current_step": func(st workorder.State) string { return "step " + strconv.Itoa(st.CurrentStep) },
	"completed_steps": func(st workorder.State) string {
		if len(st.CompletedSteps) == 0 {
			return "none"
		}
		return "steps " + stepRanges(st.CompletedSteps)
	},
	"review_iterations": func(st workorder.State) string { return strconv.Itoa(st.ReviewIterations) },
	"pr_url":            func(st workorder.State) string { return orDash(deref(st.PRURL)) },
	"worktree_path":     func(st workorder.State) string { return orDash(deref(st.WorktreePath)) },
	"notes":             func(st workorder.State) string { return notesText(st.Notes) },
	"pr_number":         func(st workorder.State) string { return "#" + strconv.Itoa(st.PRNumber) },
	"lease": func(st workorder.State) string {
		return ifSet(st.Lease, func(l workorder.Lease) string { return l.Holder + " until " + l.ExpiresAt.UTC().Format(time.RFC3339) })
	},
	"last_error": func(st workorder.State) string {
		return ifSet(st.LastError, func(e workorder.StepError) string {
			return fmt.Sprintf("step %d (%s), attempt %d: %s", e.Step, e.Action, e.Attempt, e.Message)
		})
	},
	"approval": func(st workorder.State) string {
		return ifSet(st.Approval, func(a workorder.Approval) string {
			return strings.TrimSuffix(fmt.Sprintf("%s by %s at %s: %s", a.Decision, a.By, a.At, a.Note), ": ")
		})
	},
	"step_durations_ms": func(st workorder.State) string {
		return byStep(st.StepDurationsMS, func(ms int64) string { return formatDuration(time.Duration(ms) * time.Millisecond) })
	},
	"base_sha":           shortSHA("base_sha"),
	"source_sha":         shortSHA("source_sha"),
	"commit_sha":         shortSHA("commit_sha"),
	"pushed_sha":         shortSHA("pushed_sha"),
	"stack_parent":       shortSHA("stack_parent"),
	"review_checked_sha": shortSHA("review_checked_sha"),
	"restack":            func(st workorder.State) string { return ifSet(st.Restack, restackText) },
	"reviewers": func(st workorder.State) string {
		return listText(st.Reviewers, 3, func(r workorder.ReviewerStand) string {
			return strings.TrimSuffix(fmt.Sprintf("%s %s on %s (%s)", r.Login, words(r.Kind), gitname.Short(r.Head), r.Said), " ()")
		})
	},
	"review_asks": func(st workorder.State) string {
		return countText(len(st.ReviewAsks), "request", "requests") + lastText(st.ReviewAsks, func(a workorder.ReviewAsk) string {
			return fmt.Sprintf("%s asked by %s on %s at %s", a.Reviewer, a.How, gitname.Short(a.Head), a.At)
		})
	},
	"review_uncounted": func(st workorder.State) string {
		return countText(len(st.ReviewUncounted), "not counted", "not counted") + firstText(st.ReviewUncounted, func(u workorder.UncountedComment) string {
			return fmt.Sprintf("%s by %s%s: %s", u.Kind, u.Author, onLine(u.Path, u.Line), u.Why)
		})
	},
	"review_comments": func(st workorder.State) string {
		return countText(len(st.ReviewComments), "comment", "comments") + firstText(st.ReviewComments, func(c workorder.ReviewComment) string {
			return fmt.Sprintf("%s%s: %s", c.Author, onLine(c.Path, c.Line), excerpt(c.Body))
		})
	},
	"review_watermark":     func(st workorder.State) string { return watermarkText(st.ReviewWatermark) },
	"review_seen":          func(st workorder.State) string { return watermarkText(st.ReviewSeen) },
	"review_threads":       func(st workorder.State) string { return threadsText(st.ReviewThreads) },
	"review_verdicts":      func(st workorder.State) string { return verdictsText(st.ReviewVerdicts) },
	"changes_requested_by": func(st workorder.State) string { return strings.Join(st.ChangesRequestedBy, ", ") },
	"fix_pushed": func(st workorder.State) string {
		return ifSet(st.FixPushed, func(p workorder.FixPush) string { return gitname.Short(p.From) + " → " + gitname.Short(p.To) })
	},
	"fix_requested": func(st workorder.State) string { return yesNo(st.FixRequested) },
	"loop_iterations": func(st workorder.State) string {
		return byStep(st.LoopIterations, func(n int) string { return "×" + strconv.Itoa(n) })
	},
	"criteria_results": func(st workorder.State) string { return criteriaText(st.CriteriaResults) },
	"deliverables": func(st workorder.State) string {
		return byStep(st.Deliverables, func(d string) string { return excerpt(d) })
	},
	"skipped": func(st workorder.State) string {
		return ifSet(st.Skipped, func(s workorder.Skip) string { return fmt.Sprintf("%s (by %s at %s)", s.Reason, s.By, s.At) })
	},
	"agent": func(st workorder.State) string {
		return ifSet(st.Agent, func(a workorder.AgentProcess) string {
			return fmt.Sprintf("pid %d on %s, step %d, since %s", a.PID, a.Host, a.Step, a.StartedAt)
		})
	},
	"agent_usage":   func(st workorder.State) string { return ifSet(st.AgentUsage, agentUsageText) },
	"github_stacks": func(st workorder.State) string { return ifSet(st.GitHubStacks, githubStacksText) },
	"pr_stack": func(st workorder.State) string {
		return ifSet(st.PRStack, func(p workorder.PRStack) string {
			return fmt.Sprintf("%d of %d in GitHub stack %d", p.Position, p.Size, p.Number)
		})
	},
	"land": func(st workorder.State) string {
		return ifSet(st.Land, func(l workorder.Land) string { return landLine(&l) })
	},
	"undo": func(st workorder.State) string {
		return ifSet(st.Undo, func(u workorder.UndoRecord) string {
			return fmt.Sprintf("started by %s at %s, %s", u.By, u.Started, countText(len(u.Steps), "step", "steps")) + lastText(u.Steps, func(s workorder.UndoStep) string {
				return strings.TrimSuffix(fmt.Sprintf("%s %s (%s)", s.Outcome, s.Target, s.Reason), " ()")
			})
		})
	},
}

// ifSet words a pointer field: unsetText when it is nil.
func ifSet[T any](p *T, text func(T) string) string {
	if p == nil {
		return unsetText
	}
	return text(*p)
}

// shortSHA words the commit field name: its id, short.
func shortSHA(name string) func(workorder.State) string {
	return func(st workorder.State) string { return gitname.Short(plainValue(workorder.StateMap(st)[name])) }
}

// stateTexts reads the state fields a document holds (JSON names to JSON
// values, as a reset plan lists them) and words each: the typed state
// where the value fits its field, plainValue where it does not.
func stateTexts(fields map[string]any) map[string]string {
	var st workorder.State
	raw, err := json.Marshal(fields)
	if err == nil {
		err = json.Unmarshal(raw, &st)
	}
	known := map[string]bool{}
	for _, f := range workorder.StateFields() {
		known[f.Name] = err == nil
	}
	out := make(map[string]string, len(fields))
	for name, v := range fields {
		if known[name] {
			out[name] = stateText(st, name)
		} else {
			out[name] = plainValue(v)
		}
	}
	return out
}

// stepRanges is "1–7, 9": runs of steps joined.
func stepRanges(steps []int) string {
	s := slices.Clone(steps)
	slices.Sort(s)
	s = slices.Compact(s)
	var parts []string
	for i := 0; i < len(s); {
		j := i
		for j+1 < len(s) && s[j+1] == s[j]+1 {
			j++
		}
		switch {
		case j == i:
			parts = append(parts, strconv.Itoa(s[i]))
		case j == i+1:
			parts = append(parts, strconv.Itoa(s[i]), strconv.Itoa(s[j]))
		default:
			parts = append(parts, fmt.Sprintf("%d–%d", s[i], s[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}

// byStep is a map by step number ("9") as "step 9 ×2, step 10 ×1", in
// step order, each value worded by text.
func byStep[V any](m map[string]V, text func(V) string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, errA := strconv.Atoi(keys[i])
		b, errB := strconv.Atoi(keys[j])
		if errA == nil && errB == nil {
			return a < b
		}
		return keys[i] < keys[j]
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = "step " + k + " " + text(m[k])
	}
	return orDash(strings.Join(parts, ", "))
}

// countText is "3 comments", "1 comment", "no comments".
func countText(n int, one, many string) string {
	if n == 0 {
		return "no " + many
	}
	return strconv.Itoa(n) + " " + plural(n, one, many)
}

// firstText is ", the first: …" of a list, "" for none.
func firstText[T any](list []T, text func(T) string) string {
	if len(list) == 0 {
		return ""
	}
	return ", the first: " + text(list[0])
}

// lastText is ", the last: …" of a list, "" for none.
func lastText[T any](list []T, text func(T) string) string {
	if len(list) == 0 {
		return ""
	}
	return ", the last: " + text(list[len(list)-1])
}

// listText words the first n items and counts the rest.
func listText[T any](list []T, n int, text func(T) string) string {
	var parts []string
	for i, x := range list {
		if i == n {
			parts = append(parts, fmt.Sprintf("and %d more", len(list)-n))
			break
		}
		parts = append(parts, text(x))
	}
	return orDash(strings.Join(parts, ", "))
}

func notesText(notes []string) string {
	if len(notes) == 0 {
		return "none"
	}
	return countText(len(notes), "note", "notes") + lastText(notes, excerpt)
}

// onLine is " on path:line", " on path" or "".
func onLine(path string, line int) string {
	switch {
	case path == "":
		return ""
	case line > 0:
		return fmt.Sprintf(" on %s:%d", path, line)
	}
	return " on " + path
}

func watermarkText(w workorder.Watermark) string {
	return fmt.Sprintf("review %d, review comment %d, issue comment %d", w.Review, w.ReviewComment, w.IssueComment)
}

// threadsText counts the open threads and says where the first ones are
// and who opened them.
func threadsText(threads []workorder.ReviewThread) string {
	counted := 0
	for _, t := range threads {
		if t.Counted {
			counted++
		}
	}
	s := fmt.Sprintf("%s, %d counted", countText(len(threads), "open thread", "open threads"), counted)
	if len(threads) == 0 {
		return s
	}
	return s + ": " + listText(threads, 2, func(t workorder.ReviewThread) string {
		v := ThreadView{Path: t.Path, Line: t.Line, Outdated: t.Outdated}
		if len(t.Comments) == 0 {
			return v.Where()
		}
		return fmt.Sprintf("%s by %s: %s", v.Where(), t.Comments[0].Author, excerpt(t.Comments[0].Body))
	})
}

// verdictsText is "alice approved, coderabbitai[bot] changes requested",
// by login.
func verdictsText(verdicts map[string]string) string {
	who := make([]string, 0, len(verdicts))
	for w := range verdicts {
		who = append(who, w)
	}
	sort.Strings(who)
	for i, w := range who {
		who[i] = w + " " + words(verdicts[w])
	}
	return orDash(strings.Join(who, ", "))
}

// words is an API's constant as words: CHANGES_REQUESTED reads
// "changes requested".
func words(s string) string {
	return strings.ToLower(strings.ReplaceAll(s, "_", " "))
}

func criteriaText(results []workorder.CriterionResult) string {
	if len(results) == 0 {
		return "none"
	}
	passed, unchecked := 0, 0
	var failed []string
	for _, r := range results {
		switch {
		case !r.Checked:
			unchecked++
		case r.Passed:
			passed++
		default:
			failed = append(failed, r.Criterion)
		}
	}
	s := fmt.Sprintf("%d of %d passed", passed, len(results))
	if unchecked > 0 {
		s += fmt.Sprintf(", %d not checked", unchecked)
	}
	if len(failed) > 0 {
		s += ", failed: " + excerpt(strings.Join(failed, "; "))
	}
	return s
}

func githubStacksText(g workorder.GitHubStacks) string {
	if !g.Enabled {
		return "the repository has no GitHub stacks (asked " + g.CheckedAt + ")"
	}
	s := "the repository has GitHub stacks (asked " + g.CheckedAt + ")"
	if len(g.Stacks) > 0 {
		s += "; wo made stack " + joinInts(g.Stacks)
	}
	if g.Note != "" {
		s += "; " + g.Note
	}
	return s
}

func restackText(r workorder.Restack) string {
	s := words(r.Outcome)
	if r.To != "" {
		s += " at " + gitname.Short(r.To)
	}
	if r.Onto != "" {
		s += " onto " + gitname.Short(r.Onto)
	}
	if len(r.Conflicts) > 0 {
		s += ", conflicts in " + strings.Join(r.Conflicts, ", ")
	}
	if r.Reason != "" {
		s += ": " + r.Reason
	}
	return s + " (" + r.At + ")"
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// plainValue is any JSON value as a person reads it, never in Go's syntax
// (map[…], […]): a list as "(3) a, b, c", an object as "{key: value, …}"
// by key, a number as written; long lists and objects are cut.
func plainValue(v any) string {
	switch t := v.(type) {
	case nil:
		return "-"
	case string:
		return t
	case bool:
		return yesNo(t)
	case json.Number:
		return t.String()
	case float64:
		return strconv.FormatFloat(t, 'f', -1, 64)
	case []any:
		parts := make([]string, 0, min(len(t), 6))
		for i, x := range t {
			if i == 5 {
				parts = append(parts, fmt.Sprintf("… and %d more", len(t)-5))
				break
			}
			parts = append(parts, plainValue(x))
		}
		return fmt.Sprintf("(%d) %s", len(t), strings.Join(parts, ", "))
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, 0, min(len(keys), 6))
		for i, k := range keys {
			if i == 5 {
				parts = append(parts, fmt.Sprintf("… and %d more", len(keys)-5))
				break
			}
			parts = append(parts, k+": "+plainValue(t[k]))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	// A Go value that is not JSON's: its JSON, which a person can read.
	if b, err := json.Marshal(v); err == nil {
		return plainValue(decodeJSON(b))
	}
	return "?"
}

// decodeJSON reads JSON into plain values, numbers as written.
func decodeJSON(b []byte) any {
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return string(b)
	}
	return v
}
