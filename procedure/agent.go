package procedure

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/kballard/go-shellquote"
)

// AgentRun is the outcome of one agent command.
type AgentRun struct {
	ExitCode int
	Stdout   string // trimmed to maxAgentOutput
	Stderr   string
	Duration time.Duration
}

// What is kept of an agent's output: stdout whole up to 1 MiB (the
// deliverable may come last), stderr up to 16 KiB.
const (
	maxAgentStdout = 1 << 20
	maxAgentStderr = 16 << 10
)

// runAgent runs the configured agent command in dir with the prompt on
// stdin and in a file. The command line is split into words as a shell
// would, but no shell runs it.
func runAgent(ctx context.Context, command, dir, key, prompt string, timeout time.Duration) (AgentRun, error) {
	words, err := shellquote.Split(command)
	if err != nil || len(words) == 0 {
		return AgentRun{}, fmt.Errorf("agent command %q cannot be split into words: %v", command, err)
	}
	promptFile := filepath.Join(os.TempDir(), fmt.Sprintf("wo-prompt-%s-%d.md", key, time.Now().UnixNano()))
	if err := os.WriteFile(promptFile, []byte(prompt), 0o600); err != nil {
		return AgentRun{}, err
	}
	defer os.Remove(promptFile)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, words[0], words[1:]...)
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader([]byte(prompt))
	stdout, stderr := limitedBuffer{limit: maxAgentStdout}, limitedBuffer{limit: maxAgentStderr}
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Env = append(os.Environ(), "WO_TASK_KEY="+key, "WO_WORKTREE="+dir, "WO_PROMPT_FILE="+promptFile)
	cmd.WaitDelay = 5 * time.Second
	started := time.Now()
	err = cmd.Run()
	run := AgentRun{Stdout: stdout.String(), Stderr: stderr.String(), Duration: time.Since(started)}
	var exit *exec.ExitError
	switch {
	case ctx.Err() == context.DeadlineExceeded:
		return run, fmt.Errorf("agent command %s ran longer than its limit of %s and was stopped", words[0], timeout)
	case errors.As(err, &exit):
		run.ExitCode = exit.ExitCode()
		return run, fmt.Errorf("agent command %s exited with status %d: %s", words[0], run.ExitCode, lastLine(run.Stderr))
	case err != nil:
		return run, fmt.Errorf("agent command %s could not run: %v", words[0], err)
	}
	return run, nil
}

// limitedBuffer keeps the first limit bytes and counts the rest.
type limitedBuffer struct {
	buf     bytes.Buffer
	limit   int
	dropped int
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	room := b.limit - b.buf.Len()
	if room > 0 {
		n := min(room, len(p))
		b.buf.Write(p[:n])
		b.dropped += len(p) - n
	} else {
		b.dropped += len(p)
	}
	return len(p), nil
}

func (b *limitedBuffer) String() string {
	if b.dropped > 0 {
		return b.buf.String() + fmt.Sprintf("\n[… %d more bytes not kept]", b.dropped)
	}
	return b.buf.String()
}

func lastLine(s string) string {
	s = string(bytes.TrimSpace([]byte(s)))
	if i := bytes.LastIndexByte([]byte(s), '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}
