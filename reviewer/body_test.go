package reviewer

import (
	"fmt"
	"strings"
	"testing"
)

// crReviewBody is a review body in the shape CodeRabbit posts (written for
// this test after the public record, not copied): the actionable count,
// the caution about comments outside the diff, and four collapsed
// sections, one finding with details of its own.
const crReviewBody = "**Actionable comments posted: 1**\n\n" +
	"> [!CAUTION]\n> Some comments are outside the diff and can’t be posted inline due to platform limitations.\n>\n>\n>\n" +
	"> <details>\n> <summary>⚠️ Outside diff range comments (2)</summary><blockquote>\n>\n" +
	"> <details>\n> <summary>internal/config/config.go (2)</summary><blockquote>\n>\n" +
	"> `40-44`: **Close the file on every path.**\n>\n> The early return leaks the handle.\n>\n" +
	"> <details>\n> <summary>🤖 Prompt for AI Agents</summary>\n>\n> ```\n> In internal/config/config.go around lines 40-44, defer f.Close().\n> ```\n>\n> </details>\n>\n" +
	"> ---\n>\n> `90`: **Wrap the error.**\n>\n> Say which file failed.\n>\n" +
	"> </blockquote></details>\n>\n> </blockquote></details>\n\n" +
	"<details>\n<summary>♻️ Duplicate comments (1)</summary><blockquote>\n\n" +
	"<details>\n<summary>internal/state/state.go (1)</summary><blockquote>\n\n" +
	"`12-13`: **Still racy.**\n\nThe map is written without the lock.\n\n" +
	"</blockquote></details>\n\n</blockquote></details>\n" +
	"<details>\n<summary>🧹 Nitpick comments (2)</summary><blockquote>\n\n" +
	"<details>\n<summary>internal/event/event.go (1)</summary><blockquote>\n\n" +
	"`7`: **Name the constant.**\n\n" +
	"<details>\n<summary>📝 Committable suggestion</summary>\n\n```suggestion\nconst maxEvents = 7\n```\n\n</details>\n\n" +
	"</blockquote></details>\n" +
	"<details>\n<summary>README.md (1)</summary><blockquote>\n\n`3-5`: **Typo.**\n\n</blockquote></details>\n\n" +
	"</blockquote></details>\n" +
	"<details>\n<summary>🔇 Additional comments (1)</summary><blockquote>\n\n" +
	"<details>\n<summary>internal/plugin/plugin.go (1)</summary><blockquote>\n\n`1-20`: **LGTM.**\n\n</blockquote></details>\n\n" +
	"</blockquote></details>\n\n" +
	"<details>\n<summary>📜 Review details</summary>\n\n**Configuration used**: defaults\n\n" +
	"<details>\n<summary>📥 Commits</summary>\n\nReviewing files that changed from the base of the PR and between 0510fe2 and 9c1d2e3.\n\n</details>\n\n" +
	"<details>\n<summary>📒 Files selected for processing (3)</summary>\n\n* `internal/config/config.go` (1 hunks)\n\n</details>\n\n</details>\n"

func TestParseBodyFindsEachFindingWithItsFileAndLines(t *testing.T) {
	// The outside-diff section is quoted ("> " before each line), as
	// CodeRabbit writes it after its caution.
	body := unquote(crReviewBody)
	got := ParseBody(body)
	want := []struct {
		sec         Section
		path        string
		start, line int
		text        string
	}{
		{OutsideDiff, "internal/config/config.go", 40, 44, "**Close the file on every path.**"},
		{OutsideDiff, "internal/config/config.go", 0, 90, "**Wrap the error.**"},
		{Duplicate, "internal/state/state.go", 12, 13, "**Still racy.**"},
		{Nitpick, "internal/event/event.go", 0, 7, "**Name the constant.**"},
		{Nitpick, "README.md", 3, 5, "**Typo.**"},
		{Additional, "internal/plugin/plugin.go", 1, 20, "**LGTM.**"},
	}
	if len(got) != len(want) {
		t.Fatalf("%d findings, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		g := got[i]
		if g.Section != w.sec || g.Path != w.path || g.StartLine != w.start || g.Line != w.line || !strings.HasPrefix(g.Body, w.text) {
			t.Errorf("finding %d = %+v, want %s %s %d-%d %q…", i, g, w.sec, w.path, w.start, w.line, w.text)
		}
	}
	// What belongs to a finding stays with it, nested details included;
	// the next finding's text does not leak into it.
	if !strings.Contains(got[0].Body, "defer f.Close()") || strings.Contains(got[0].Body, "Wrap the error") {
		t.Errorf("first finding's text: %q", got[0].Body)
	}
	if !strings.Contains(got[3].Body, "const maxEvents = 7") {
		t.Errorf("the nitpick lost its suggestion: %q", got[3].Body)
	}
	// The review's details (commits, files) are not findings.
	for _, f := range got {
		if strings.Contains(f.Body, "Files selected") || strings.Contains(f.Path, "Files selected") {
			t.Errorf("review details taken as a finding: %+v", f)
		}
	}
}

func TestParseBodyQuotedAsCodeRabbitQuotesIt(t *testing.T) {
	// Quoted bodies are read after unquoting; ParseBody itself reads
	// them too, since CodeRabbit quotes whole sections.
	if got := ParseBody(crReviewBody); len(got) != 6 || got[0].Section != OutsideDiff || got[0].StartLine != 40 {
		t.Fatalf("findings of the quoted body: %+v", got)
	}
}

func TestParseBodyWithoutSectionsHasNoFindings(t *testing.T) {
	for _, body := range []string{
		"", "LGTM", "**Actionable comments posted: 0**",
		"<details>\n<summary>📜 Review details</summary>\n\n`1-2`: **not a finding**\n</details>",
		// A finding line outside any file of a section.
		"<details>\n<summary>🧹 Nitpick comments (1)</summary><blockquote>\n`3`: **loose**\n</blockquote></details>",
	} {
		if got := ParseBody(body); len(got) != 0 {
			t.Errorf("ParseBody(%q) = %+v, want none", body, got)
		}
	}
}

func TestParseBodyIsBoundedAgainstAHostileBody(t *testing.T) {
	var b strings.Builder
	b.WriteString("<details>\n<summary>⚠️ Outside diff range comments (9999)</summary><blockquote>\n<details>\n<summary>a.go (9999)</summary><blockquote>\n")
	for i := 1; i < 5000; i++ {
		fmt.Fprintf(&b, "`%d`: **x**\n%s\n---\n", i, strings.Repeat("y", 10))
	}
	b.WriteString("`9999`: " + strings.Repeat("z", 100000) + "\n")
	// Unbalanced: no closing tags at all.
	got := ParseBody(b.String())
	if len(got) != maxFindings {
		t.Fatalf("%d findings, want the bound %d", len(got), maxFindings)
	}
	long := ParseBody("<details>\n<summary>♻️ Duplicate comments (1)</summary><blockquote>\n<details>\n<summary>a.go (1)</summary><blockquote>\n`1`: " + strings.Repeat("é", 10000) + "\n</blockquote></details></blockquote></details>")
	if len(long) != 1 || len(long[0].Body) > maxFindingBody+10 || !strings.HasSuffix(long[0].Body, "[…]") {
		t.Fatalf("a long finding is not cut: %d bytes", len(long[0].Body))
	}
	if !strings.HasPrefix(long[0].Body, "é") || strings.ContainsRune(long[0].Body, '\uFFFD') {
		t.Errorf("cut inside a character")
	}
}

// unquote removes the "> " CodeRabbit puts before quoted lines.
func unquote(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		l = strings.TrimPrefix(l, "> ")
		if l == ">" {
			l = ""
		}
		lines[i] = l
	}
	return strings.Join(lines, "\n")
}

// Edges of the reading, each found by a mutant that lived.
func TestParseBodyEdges(t *testing.T) {
	// Two closes on one line end the file and the section: what follows
	// is outside any section.
	closedTwice := "<details>\n<summary>🧹 Nitpick comments (1)</summary><blockquote>\n<details>\n<summary>a.go (1)</summary><blockquote>\n`1`: **one**\n" +
		"</blockquote></details></blockquote></details>\n<details>\n<summary>notes.md (1)</summary><blockquote>\n`2`: **not a finding**\n</blockquote></details>\n"
	if got := ParseBody(closedTwice); len(got) != 1 || got[0].Path != "a.go" {
		t.Errorf("findings %+v, want only a.go's", got)
	}
	// Summaries with no <details> around them are text.
	for _, body := range []string{"<summary>🧹 Nitpick comments (1)</summary>\n`1`: x", "<summary>a.go (1)</summary>\n`1`: x", "<summary>x</summary>"} {
		if got := ParseBody(body); len(got) != 0 {
			t.Errorf("ParseBody(%q) = %+v", body, got)
		}
	}
	// A finding's text goes on after details of its own.
	nested := "<details>\n<summary>♻️ Duplicate comments (1)</summary><blockquote>\n<details>\n<summary>a.go (1)</summary><blockquote>\n`5`: **Fix it.**\n" +
		"<details>\n<summary>🤖 Prompt for AI Agents</summary>\nIn a.go line 5.\n</details>\nAnd say why.\n</blockquote></details>\n</blockquote></details>\n"
	if got := ParseBody(nested); len(got) != 1 || !strings.Contains(got[0].Body, "In a.go line 5.") || !strings.HasSuffix(got[0].Body, "And say why.") {
		t.Errorf("findings %+v, want the text after the nested details kept", got)
	}
	// A finding of exactly the bound is kept whole.
	exact := "<details>\n<summary>♻️ Duplicate comments (1)</summary><blockquote>\n<details>\n<summary>a.go (1)</summary><blockquote>\n`1`: " +
		strings.Repeat("x", maxFindingBody) + "\n</blockquote></details></blockquote></details>"
	if got := ParseBody(exact); len(got) != 1 || len(got[0].Body) != maxFindingBody {
		t.Errorf("a finding of %d bytes became %d", maxFindingBody, len(got[0].Body))
	}
}
