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
	var p bodyParser
	for _, line := range strings.Split(strings.ReplaceAll(body, "\r\n", "\n"), "\n") {
		// CodeRabbit quotes whole sections (the caution about comments
		// outside the diff): one level of "> " is markup, not text.
		if rest, ok := strings.CutPrefix(line, ">"); ok {
			line = strings.TrimPrefix(rest, " ")
		}
		p.line(line)
	}
	p.flush()
	return p.out
}

// bodyParser reads a review body line by line: the <details> it is in
// (stack), and the finding it is reading (cur, its text so far).
type bodyParser struct {
	out     []Finding
	stack   []*frame
	ignored int // <details> opened past maxDepth, not followed
	cur     *Finding
	text    strings.Builder
}

func (p *bodyParser) line(line string) {
	p.open(len(reDetailsOpen.FindAllString(line, -1)))
	p.label(line)
	if !p.entry(line) && p.cur != nil && p.fileFrame() != nil {
		p.text.WriteString(line)
		p.text.WriteString("\n")
	}
	p.close(len(reDetailsClose.FindAllString(line, -1)))
}

// open follows n <details> opened, up to maxDepth.
func (p *bodyParser) open(n int) {
	for range n {
		if len(p.stack) < maxDepth {
			p.stack = append(p.stack, &frame{})
		} else {
			p.ignored++
		}
	}
}

// label reads the <summary> of the innermost <details>: a known section,
// a file inside one, or anything else.
func (p *bodyParser) label(line string) {
	if len(p.stack) == 0 || p.stack[len(p.stack)-1].labeled {
		return
	}
	top := p.stack[len(p.stack)-1]
	if m := reSectionSummary.FindStringSubmatch(line); m != nil {
		p.flush()
		top.kind, top.labeled = frameSection, true
		top.section = sectionName(m[1])
	} else if m := reFileSummary.FindStringSubmatch(line); m != nil {
		top.labeled = true
		if _, in := p.sectionOf(); in && len(p.stack) >= 2 && p.stack[len(p.stack)-2].kind == frameSection {
			p.flush()
			top.kind, top.path = frameFile, strings.Trim(m[1], "`* ")
		}
	} else if strings.Contains(strings.ToLower(line), "<summary>") {
		top.labeled = true
	}
}

// entry reads a line directly in a file's <details> that starts a
// finding ("`10-12`: **Title.**") or ends one ("---"); it reports
// whether the line was one.
func (p *bodyParser) entry(line string) bool {
	f := p.fileFrame()
	if f == nil || p.stack[len(p.stack)-1] != f {
		return false
	}
	if strings.TrimSpace(line) == "---" {
		p.flush()
		return true
	}
	m := reEntry.FindStringSubmatch(line)
	if m == nil {
		return false
	}
	p.flush()
	sec, _ := p.sectionOf()
	start, _ := strconv.Atoi(m[1])
	end := start
	if m[2] != "" {
		end, _ = strconv.Atoi(m[2])
	}
	if end < start {
		start, end = end, start
	}
	p.cur = &Finding{Section: sec, Path: f.path, StartLine: start, Line: end}
	if start == end {
		p.cur.StartLine = 0
	}
	p.text.WriteString(m[3])
	p.text.WriteString("\n")
	return true
}

// close follows n </details>, ending the finding of a section or file
// that closes.
func (p *bodyParser) close(n int) {
	for range n {
		if p.ignored > 0 {
			p.ignored--
			continue
		}
		if len(p.stack) == 0 {
			return
		}
		top := p.stack[len(p.stack)-1]
		if top.kind == frameFile || top.kind == frameSection {
			p.flush()
		}
		p.stack = p.stack[:len(p.stack)-1]
	}
}

// flush ends the finding being read, keeping at most maxFindings.
func (p *bodyParser) flush() {
	if p.cur == nil {
		return
	}
	p.cur.Body = strings.TrimSpace(reMarkupLine.ReplaceAllString(p.text.String(), ""))
	p.cur.Body = termtext.Cut(p.cur.Body, maxFindingBody)
	if len(p.out) < maxFindings {
		p.out = append(p.out, *p.cur)
	}
	p.cur = nil
	p.text.Reset()
}

// fileFrame is the innermost file of a known section, or nil.
func (p *bodyParser) fileFrame() *frame {
	for i := len(p.stack) - 1; i >= 0; i-- {
		switch p.stack[i].kind {
		case frameFile:
			return p.stack[i]
		case frameSection:
			return nil
		}
	}
	return nil
}

// sectionOf is the innermost known section, if any.
func (p *bodyParser) sectionOf() (Section, bool) {
	for i := len(p.stack) - 1; i >= 0; i-- {
		if p.stack[i].kind == frameSection {
			return p.stack[i].section, true
		}
	}
	return "", false
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
