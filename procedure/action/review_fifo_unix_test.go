//go:build unix

package action

import (
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// A FIFO where a thread's file was (left by an agent's earlier pass).
func TestTheCodeAroundAThreadIsNeverReadFromAPipe(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "a.go"), 0o644); err != nil {
		t.Skip("this system makes no pipes: " + err.Error())
	}
	done := make(chan string, 1)
	go func() { done <- codeAround(dir, "a.go", 3) }()
	select {
	case <-done:
	case <-time.After(3 * time.Second):
		t.Error("codeAround blocks on a FIFO: the prompt is never built")
	}
}
