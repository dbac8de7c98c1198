package gitops

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/plumbing/transport/client"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
)

// DefaultStall is how long a push may move no byte, either way, before wo
// gives up on the remote: a server that accepts a push and then never
// answers ends within it, while a large push that keeps moving is never cut
// off (the whole push is bounded by the network timeout too).
const DefaultStall = 60 * time.Second

// ErrStalled says the remote moved no byte for the stall limit.
var ErrStalled = errors.New("the remote made no progress")

// stallWatch cancels a push whose connections move no byte for limit. A
// byte moves when wo reads or writes one, and also when the remote takes
// one that wo wrote earlier: a large pack sits in the kernel's send buffer
// while a slow remote reads it, and that draining is progress too (on
// Linux, where the buffer's fill can be read).
type stallWatch struct {
	last   atomic.Int64 // unix nanoseconds of the last byte moved
	limit  time.Duration
	cancel context.CancelCauseFunc

	mu    sync.Mutex
	conns []net.Conn
	queue map[net.Conn]int // bytes each had still to send at the last look
}

func (w *stallWatch) touch() { w.last.Store(time.Now().UnixNano()) }

// watch checks the connections until ctx ends.
func (w *stallWatch) watch(ctx context.Context) {
	w.touch()
	tick := time.NewTicker(min(w.limit/4, time.Second))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			if w.draining() {
				w.touch()
			}
			if time.Since(time.Unix(0, w.last.Load())) > w.limit {
				w.cancel(fmt.Errorf("%w for %s", ErrStalled, w.limit))
				return
			}
		}
	}
}

// draining reports whether a connection's send buffer shrank since the
// last look: the remote is reading what wo wrote.
func (w *stallWatch) draining() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	moved := false
	for _, c := range w.conns {
		n, ok := unsent(c)
		if !ok {
			continue
		}
		if before, seen := w.queue[c]; seen && n < before {
			moved = true
		}
		w.queue[c] = n
	}
	return moved
}

func (w *stallWatch) add(c net.Conn) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.queue == nil {
		w.queue = map[net.Conn]int{}
	}
	w.conns = append(w.conns, c)
}

// watchedConn counts every read and write of a connection as progress.
type watchedConn struct {
	net.Conn
	w *stallWatch
}

func (c watchedConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.w.touch()
	}
	return n, err
}

func (c watchedConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	if n > 0 {
		c.w.touch()
	}
	return n, err
}

// transportFor is the git transport for an endpoint: over HTTP(S), a
// client of its own whose connections the watch sees; anything else (a
// local path, SSH) go-git's own.
func transportFor(ep *transport.Endpoint, w *stallWatch) (transport.Transport, error) {
	if ep.Protocol != "http" && ep.Protocol != "https" {
		return client.NewClient(ep)
	}
	dialer := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dialer.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		w.touch()
		w.add(c)
		return watchedConn{Conn: c, w: w}, nil
	}
	return githttp.NewClient(&http.Client{Transport: tr}), nil
}
