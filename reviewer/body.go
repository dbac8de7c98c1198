package reviewer

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/wo-runner/wo/termtext"
)

// Review bodies in the shape CodeRabbit writes them keep findings in
// collapsed sections:
//
//	<details>
//	<summary>🧹 Nitpick comments (2)</summary><blockquote>
//	<details>
//	<summary>internal/config/config.go (2)</summary><blockquote>
//	`10-12`: **Title.**
//	Text, maybe a diff, maybe more <details> of its own.
//	---
//	`40`: **Another.**
//	</blockquote></details>
//	</blockquote></details>
//
// The reading is tolerant: markers and headings, not whole sentences. A
// section it does not know is skipped; a file with no line range is kept
// with line 0.

var (
	reSectionSummary = regexp.MustCompile(`(?i)<summary>[^<]*?\b(outside diff range|nitpick|duplicate|additional)\b[^<]*?comments?\s*\((\d+)\)\s*</summary>`)
	reFileSummary    = regexp.MustCompile(`<summary>\s*([^<]+?)\s+\((\d+)\)\s*</summary>`)
	reEntry          = regexp.MustCompile("^\\s*`(\\d+)(?:\\s*-\\s*(\\d+))?`\\s*:\\s*(.*)$")
	reDetailsOpen    = regexp.MustCompile(`(?i)<details\b[^>]*>`)
	reDetailsClose   = regexp.MustCompile(`(?i)</details\s*>`)
	// reMarkupLine is a line of the sections' own markup, which is not
	// the finding's text.
	reMarkupLine = regexp.MustCompile(`(?mi)^\s*(?:</?(?:blockquote|details)\s*>\s*)+$`)
)

// maxBody bounds the body read (GitHub's own limit is 65,536 characters),
// and maxDepth the nesting of <details> followed: a hostile server's body
// costs little.
const (
	maxBody  = 256 << 10
	maxDepth = 32
)

// maxFindings bounds what one body yields, so that a hostile body cannot
// make the state grow without end.
const maxFindings = 200

// maxFindingBody bounds one finding's text.
const maxFindingBody = 4000

type frameKind int

const (
	frameOther frameKind = iota
	frameSection
	frameFile
)

type frame struct {
	kind    frameKind
	section Section
	path    string
	labeled bool // its <summary> was read
}

// ParseBody reads the findings in the collapsed sections of a review
// body. Findings outside any known section (and the review's own text)
// are not findings: the inline threads carry those.
func ParseBody(body string) []Finding {
	if len(body) > maxBody {
		body = body[:maxBody]
	}
	var out []Finding
	var stack []*frame
	ignored := 0 // <details> opened past maxDepth, not followed
	var cur *Finding
	var text strings.Builder
	flush := func() {
		if cur == nil {
			return
		}
		cur.Body = strings.TrimSpace(reMarkupLine.ReplaceAllString(text.String(), ""))
		cur.Body = termtext.Cut(cur.Body, maxFindingBody)
		if len(out) < maxFindings {
			out = append(out, *cur)
		}
		cur = nil
		text.Reset()
	}
	// fileFrame is the innermost file of a known section, or nil.
	fileFrame := func() *frame {
		for i := len(stack) - 1; i >= 0; i-- {
			switch stack[i].kind {
			case frameFile:
				return stack[i]
			case frameSection:
				return nil
			}
		}
		return nil
	}
	sectionOf := func() (Section, bool) {
		for i := len(stack) - 1; i >= 0; i-- {
			if stack[i].kind == frameSection {
				return stack[i].section, true
			}
		}
		return "", false
	}
	for _, line := range strings.Split(strings.ReplaceAll(body, "\r\n", "\n"), "\n") {
		// CodeRabbit quotes whole sections (the caution about comments
		// outside the diff): one level of "> " is markup, not text.
		if rest, ok := strings.CutPrefix(line, ">"); ok {
			line = strings.TrimPrefix(rest, " ")
		}
		opens := len(reDetailsOpen.FindAllString(line, -1))
		for range opens {
			if len(stack) < maxDepth {
				stack = append(stack, &frame{})
			} else {
				ignored++
			}
		}
		if m := reSectionSummary.FindStringSubmatch(line); m != nil && len(stack) > 0 && !stack[len(stack)-1].labeled {
			flush()
			top := stack[len(stack)-1]
			top.kind, top.labeled = frameSection, true
			top.section = sectionName(m[1])
		} else if m := reFileSummary.FindStringSubmatch(line); m != nil && len(stack) > 0 && !stack[len(stack)-1].labeled {
			top := stack[len(stack)-1]
			top.labeled = true
			if _, in := sectionOf(); in && len(stack) >= 2 && stack[len(stack)-2].kind == frameSection {
				flush()
				top.kind, top.path = frameFile, strings.Trim(m[1], "`* ")
			}
		} else if len(stack) > 0 && strings.Contains(strings.ToLower(line), "<summary>") {
			stack[len(stack)-1].labeled = true
		}
		if f := fileFrame(); f != nil && stack[len(stack)-1] == f {
			if m := reEntry.FindStringSubmatch(line); m != nil {
				flush()
				sec, _ := sectionOf()
				start, _ := strconv.Atoi(m[1])
				end := start
				if m[2] != "" {
					end, _ = strconv.Atoi(m[2])
				}
				if end < start {
					start, end = end, start
				}
				cur = &Finding{Section: sec, Path: f.path, StartLine: start, Line: end}
				if start == end {
					cur.StartLine = 0
				}
				text.WriteString(m[3])
				text.WriteString("\n")
				goto closes
			}
			if strings.TrimSpace(line) == "---" {
				flush()
				goto closes
			}
		}
		if cur != nil && fileFrame() != nil {
			text.WriteString(line)
			text.WriteString("\n")
		}
	closes:
		for range len(reDetailsClose.FindAllString(line, -1)) {
			if ignored > 0 {
				ignored--
				continue
			}
			if len(stack) == 0 {
				break
			}
			top := stack[len(stack)-1]
			if top.kind == frameFile || top.kind == frameSection {
				flush()
			}
			stack = stack[:len(stack)-1]
		}
	}
	flush()
	return out
}

func sectionName(s string) Section {
	switch strings.ToLower(s) {
	case "outside diff range":
		return OutsideDiff
	case "duplicate":
		return Duplicate
	case "nitpick":
		return Nitpick
	default:
		return Additional
	}
}
