package arango

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wo-runner/wo/store"
)

// silentServer accepts connections and never answers.
func silentServer(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return l.Addr().String()
}

func TestServerThatNeverAnswersTimesOut(t *testing.T) {
	addr := silentServer(t)
	s, err := Open(context.Background(), Config{URL: "arangodb+http://" + addr, Database: "hades", Timeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ops := map[string]func(ctx context.Context) error{
		"list": func(ctx context.Context) error { _, err := s.List(ctx, store.Filter{}); return err },
		"get":  func(ctx context.Context) error { _, err := s.Get(ctx, "task_1"); return err },
		"update": func(ctx context.Context) error {
			_, err := s.Update(ctx, "task_1", "1", map[string]any{"x": 1})
			return err
		},
		"log": func(ctx context.Context) error {
			return s.AppendLog(ctx, store.LogEntry{Action: "a", TaskKey: "task_1"})
		},
	}
	for name, op := range ops {
		done := make(chan error, 1)
		go func() { done <- op(context.Background()) }()
		select {
		case err := <-done:
			if !store.IsUnavailable(err) || !strings.Contains(err.Error(), addr) || !strings.Contains(err.Error(), "--store-timeout") {
				t.Errorf("%s: want an unavailable error naming the server and --store-timeout, got %v", name, err)
			}
		case <-time.After(15 * time.Second):
			t.Fatalf("%s hung on a server that never answers", name)
		}
	}
}
