package gitops

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/plumbing/transport/client"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	"golang.org/x/net/proxy"
)

// DefaultStall is how long a git network operation may move no byte,
// either way, before wo gives up on the remote (--git-stall,
// WO_GIT_STALL): a server that accepts a connection and then never
// answers ends within it, while a large push that keeps moving is never
// cut off (the whole operation is bounded by the network timeout too).
const DefaultStall = 60 * time.Second

// ErrStalled says the remote moved no byte for the stall limit; a
// *StalledError is one.
var ErrStalled = errors.New("the remote made no progress")

// StalledError is a git network operation given up on because the remote
// moved no byte for Limit. It is an outside failure a later run may get
// past, but not one to try again at once: the try already waited as long
// as a try may.
type StalledError struct {
	Doing string // "pushing review/01 to https://…", without credentials
	Limit time.Duration
}

func (e *StalledError) Error() string {
	return fmt.Sprintf("%s: the remote moved nothing for %s; check that it answers, and run again (--git-stall or WO_GIT_STALL raises the limit)", e.Doing, e.Limit)
}

// Is makes a *StalledError an ErrStalled.
func (e *StalledError) Is(target error) bool { return target == ErrStalled }

// Temporary says a later run may get past it.
func (e *StalledError) Temporary() bool { return true }

// WaitedOut says the try already waited its whole limit: retrying within
// the same run would hold the runner as long again.
func (e *StalledError) WaitedOut() bool { return true }

// stallWatch cancels a git network operation whose connections move no
// byte for limit. A byte moves when wo reads or writes one, and also when
// the remote takes one that wo wrote earlier: a large pack sits in the
// kernel's send buffer while a slow remote reads it, and that draining is
// progress too (on Linux, where the buffer's fill can be read).
//
// The watch rides in the operation's context, and every transport wo
// uses finds it there: HTTP(S) through the round tripper wo installs in
// go-git's protocol table, SSH through a dialer go-git reaches by the
// proxy URL the watch names. A stall cancels the context and closes every
// connection, so that a read a transport does not bind to the context
// ends too. Local remotes (file paths) are not watched: the other side is
// a process on this machine, bounded by the network timeout alone.
type stallWatch struct {
	last   atomic.Int64 // unix nanoseconds of the last byte moved
	limit  time.Duration
	id     string
	cancel context.CancelCauseFunc

	mu    sync.Mutex
	conns []net.Conn
	queue map[net.Conn]int // bytes each had still to send at the last look
	http  *http.Transport  // this operation's connections, none shared with another's
}

type stallKey struct{}

var (
	watchIDs atomic.Int64
	watches  sync.Map // id → *stallWatch, for the SSH dialer
)

// watchStalls returns ctx watched for stalls of limit (DefaultStall when
// zero), and the function that ends the watch. After a stall, ctx is
// cancelled with ErrStalled as its cause: stalled tells.
func watchStalls(ctx context.Context, limit time.Duration) (context.Context, func()) {
	if limit <= 0 {
		limit = DefaultStall
	}
	ctx, cancel := context.WithCancelCause(ctx)
	w := &stallWatch{limit: limit, cancel: cancel, id: strconv.FormatInt(watchIDs.Add(1), 10), queue: map[net.Conn]int{}}
	w.touch()
	ctx = context.WithValue(ctx, stallKey{}, w)
	watches.Store(w.id, w)
	go w.watch(ctx)
	return ctx, func() {
		cancel(nil)
		watches.Delete(w.id)
		w.closeAll()
	}
}

// stalled is the stall that ended ctx, if one did: the limit it ran out.
func stalled(ctx context.Context) (time.Duration, bool) {
	if !errors.Is(context.Cause(ctx), ErrStalled) {
		return 0, false
	}
	w, _ := ctx.Value(stallKey{}).(*stallWatch)
	if w == nil {
		return 0, false
	}
	return w.limit, true
}

// proxyOptions point an SSH transport at the watch's dialer; other
// transports need nothing (HTTP finds the watch in the request's context).
func proxyOptions(ctx context.Context, ep *transport.Endpoint) transport.ProxyOptions {
	w, _ := ctx.Value(stallKey{}).(*stallWatch)
	if w == nil || ep.Protocol != "ssh" {
		return transport.ProxyOptions{}
	}
	return transport.ProxyOptions{URL: stallScheme + "://" + w.id}
}

func (w *stallWatch) touch() { w.last.Store(time.Now().UnixNano()) }

// watch checks the connections until ctx ends.
func (w *stallWatch) watch(ctx context.Context) {
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
				w.closeAll()
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

// dialed watches a new connection.
func (w *stallWatch) dialed(c net.Conn) net.Conn {
	w.touch()
	w.mu.Lock()
	defer w.mu.Unlock()
	w.conns = append(w.conns, c)
	return watchedConn{Conn: c, w: w}
}

// closeAll closes every connection of the watch.
func (w *stallWatch) closeAll() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, c := range w.conns {
		c.Close()
	}
	w.conns = nil
	if w.http != nil {
		w.http.CloseIdleConnections()
	}
}

// transport is the watch's own HTTP transport: its connections are
// dialed for this operation and watched, and no other operation reuses
// them (a kept-alive connection of another operation would report its
// bytes to the wrong watch).
func (w *stallWatch) transport() *http.Transport {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.http == nil {
		dialer := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := dialer.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return w.dialed(c), nil
		}
		w.http = tr
	}
	return w.http
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

// watchedRoundTripper sends a request through the transport of the watch
// in its context, or, with none, through Go's default transport.
type watchedRoundTripper struct{}

func (watchedRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	if w, ok := req.Context().Value(stallKey{}).(*stallWatch); ok {
		return w.transport().RoundTrip(req)
	}
	return http.DefaultTransport.RoundTrip(req)
}

// stallScheme is the proxy scheme by which go-git's SSH transport reaches
// a watch's dialer.
const stallScheme = "wo-stall"

// watchedDialer dials for go-git's SSH transport as go-git itself would
// (the environment's proxy, else directly) and watches the connection.
type watchedDialer struct{ id string }

func (d watchedDialer) Dial(network, addr string) (net.Conn, error) {
	return d.DialContext(context.Background(), network, addr)
}

func (d watchedDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	v, ok := watches.Load(d.id)
	if !ok {
		return nil, fmt.Errorf("dialing %s: the operation that asked for it has ended", addr)
	}
	c, err := proxy.Dial(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return v.(*stallWatch).dialed(c), nil
}

// go-git picks a transport by the remote's scheme from one table: wo's
// HTTP(S) client goes in it once, for every operation of the process,
// and the SSH dialer's scheme is registered with the proxy package.
func init() {
	for _, scheme := range []string{"http", "https"} {
		client.InstallProtocol(scheme, githttp.NewClient(&http.Client{Transport: watchedRoundTripper{}}))
	}
	proxy.RegisterDialerType(stallScheme, func(u *url.URL, _ proxy.Dialer) (proxy.Dialer, error) {
		return watchedDialer{id: u.Host}, nil
	})
}
