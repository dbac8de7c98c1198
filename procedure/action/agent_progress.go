package action

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/wo-runner/wo/termtext"
)

// agentProgress shows what the agent is doing while it runs: a wait for
// the agent with its last line, its secrets removed (the line is escaped
// where it is printed). Its whole output goes to the activity log when it
// ends.
type agentProgress struct {
	sc   *StepContext
	mu   sync.Mutex
	wait Wait
}

// maxAgentLine bounds the line a wait carries; the status line shows less.
const maxAgentLine = 1 << 10

// newAgentProgress is the progress of the agent named who, started at
// started: it waits for the agent until its time limit.
func newAgentProgress(sc *StepContext, who string, started time.Time) *agentProgress {
	w := Wait{For: "agent " + who, Since: started}
	if limit := sc.Settings().AgentTimeout; limit > 0 {
		w.Until = started.Add(limit)
	}
	return &agentProgress{sc: sc, wait: w}
}

// start says the step waits for the agent; end that it no longer does.
func (p *agentProgress) start() { p.sc.Waiting(p.wait) }
func (p *agentProgress) end()   { p.sc.Waiting(Wait{}) }

// stream is a writer for one of the agent's outputs.
func (p *agentProgress) stream() io.Writer { return &progressLines{p: p} }

func (p *agentProgress) line(l string) {
	text := agentLineText(l)
	if text == "" {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	w := p.wait
	w.Last = termtext.Cut(p.sc.Redact(text), maxAgentLine)
	p.sc.Waiting(w)
}

// progressLines splits a stream into lines, keeping at most one partial
// line of 64 KiB.
type progressLines struct {
	p   *agentProgress
	buf []byte
}

func (w *progressLines) Write(b []byte) (int, error) {
	w.buf = append(w.buf, b...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		w.p.line(string(w.buf[:i]))
		w.buf = w.buf[i+1:]
	}
	if len(w.buf) > 64<<10 {
		w.buf = w.buf[:0]
	}
	return len(b), nil
}

// agentLineText is what a line of an agent's output says to a person: a
// JSON event's text (a message, a tool's name, an error), else the line.
func agentLineText(l string) string {
	l = strings.TrimSpace(l)
	if !strings.HasPrefix(l, "{") {
		return l
	}
	var e struct {
		Type    string `json:"type"`
		Subtype string `json:"subtype"`
		Result  string `json:"result"`
		Message json.RawMessage
		Item    *struct {
			Type    string `json:"type"`
			Text    string `json:"text"`
			Command string `json:"command"`
		} `json:"item"`
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(l), &e) != nil {
		return l
	}
	switch {
	case e.Error != nil && e.Error.Message != "":
		return "error: " + e.Error.Message
	case e.Item != nil && e.Item.Text != "":
		return e.Item.Text
	case e.Item != nil && e.Item.Command != "":
		return "runs " + e.Item.Command
	case e.Type == "result":
		return "finished (" + e.Subtype + ")"
	case e.Type == "assistant" && len(e.Message) > 0:
		var m struct {
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
				Name string `json:"name"`
			} `json:"content"`
		}
		if json.Unmarshal(e.Message, &m) == nil {
			for _, c := range m.Content {
				if c.Text != "" {
					return c.Text
				}
				if c.Name != "" {
					return "uses " + c.Name
				}
			}
		}
	}
	return ""
}
