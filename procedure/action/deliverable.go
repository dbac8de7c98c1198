package action

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/wo-runner/wo/workorder"
)

const (
	openTag  = "<deliverable>"
	closeTag = "</deliverable>"
)

// Extraction is an agent's output split as the deliverable format says: the work log
// (reasoning, research; logged, never delivered) and the deliverable.
type Extraction struct {
	Work        string
	Deliverable string
	Found       bool // a <deliverable> block was there
	Blocks      int  // how many blocks there were
}

// ExtractDeliverable splits an agent's output. A block is a closing tag
// and the nearest opening tag before it, so a work log that mentions
// "<deliverable>" before the real block does not leak into the
// deliverable, and the deliverable never holds a tag.
func ExtractDeliverable(output string) Extraction {
	type block struct{ start, end, innerStart, innerEnd int }
	var blocks []block
	for pos := 0; ; {
		c := strings.Index(output[pos:], closeTag)
		if c < 0 {
			break
		}
		c += pos
		if o := strings.LastIndex(output[pos:c], openTag); o >= 0 {
			o += pos
			blocks = append(blocks, block{o, c + len(closeTag), o + len(openTag), c})
		}
		pos = c + len(closeTag)
	}
	if len(blocks) == 0 {
		return Extraction{Work: strings.TrimSpace(output)}
	}
	b := blocks[0]
	return Extraction{
		Work:        strings.TrimSpace(output[:b.start] + output[b.end:]),
		Deliverable: strings.TrimSpace(output[b.innerStart:b.innerEnd]),
		Found:       true,
		Blocks:      len(blocks),
	}
}

// Invalid says why a deliverable must not be delivered, or "" when it may
// (the deliverable's validation gate, and one block only: wo never guesses which).
func (e Extraction) Invalid() string {
	switch {
	case !e.Found:
		return "deliverable tags missing"
	case e.Blocks > 1:
		return fmt.Sprintf("%d <deliverable> blocks: exactly one is delivered, so wo will not pick", e.Blocks)
	case e.Deliverable == "":
		return "deliverable is empty"
	case strings.EqualFold(e.Deliverable, "NONE"):
		return "the agent declined to produce a deliverable (NONE)"
	}
	return ""
}

// targetConstraints tell the agent where its deliverable goes.
var targetConstraints = map[string]string{
	"pr_body":    "Your deliverable becomes the description of the pull request. Markdown is supported.",
	"pr_comment": "Your deliverable is posted as a comment on the pull request. Markdown is supported; keep it focused.",
	"task_note":  "Your deliverable is kept as a note on the task. Plain text is best.",
}

// AgentPrompt is the prompt of an agent step: the agent context section,
// the task and step, and, when the step delivers, the deliverable output format.
func AgentPrompt(doc workorder.Document, step workorder.Step) string {
	var b strings.Builder
	b.WriteString(ContextSection(doc))
	fmt.Fprintf(&b, "\nTask: %q (%s)\n\n%s\n", workorder.String(doc, "title"), workorder.Key(doc), workorder.String(doc, "work_order.objective"))
	if d := workorder.String(doc, "description"); d != "" {
		fmt.Fprintf(&b, "\n%s\n", d)
	}
	fmt.Fprintf(&b, "\n## Work Items\n  • %s\n", cmp.Or(workorder.NewScope(doc).Text(step.Description), step.Command, "Do the task above."))
	delivery := paramsOf[agentParams](step).Delivery
	if len(delivery) == 0 {
		return b.String()
	}
	b.WriteString(`
## Output Format

Complete the work items above. Structure your response as follows:

First, write your reasoning, research, and analysis. This working section is logged
internally, but is NOT sent to anyone.

Then produce your final deliverable wrapped in XML tags:

<deliverable>
[Your standalone result goes here]
</deliverable>

Rules for the deliverable:
- The recipient sees ONLY the content inside the tags. Nothing else.
- Write a complete, standalone message. The recipient has no other context.
- Do not include preamble ("Here are the results:", "I found:", etc.)
- Do not include task metadata, step numbers, or internal reasoning.
- Do not reference these instructions or the task itself.
`)
	seen := map[string]bool{}
	for _, d := range delivery {
		if c := targetConstraints[d.Target]; c != "" && !seen[d.Target] {
			seen[d.Target] = true
			b.WriteString("\n" + c + "\n")
		}
	}
	b.WriteString(`
If you cannot produce a deliverable (safety concern, insufficient information,
or ethical issue), output exactly:
<deliverable>NONE</deliverable>
Explain your reason in the working section above.
`)
	return b.String()
}
