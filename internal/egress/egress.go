// Package egress is a boxed agent's one way out: an HTTP proxy, served on
// a unix socket that the agent's box reaches from its own loopback, that
// lets through only the hosts it was told (the agent's model API, a
// gateway the user names) and counts every connection it refused, so that
// a user can see why an agent could not fetch something and what allows
// it.
//
// It speaks the two forms every HTTP client uses through HTTPS_PROXY and
// HTTP_PROXY: CONNECT host:port (a tunnel, for https) and a request with
// an absolute URL (for plain http, such as a gateway on loopback). A
// host's address is resolved here, once, and the connection made to the
// address that was checked: a link-local address (a cloud's metadata
// service) is never reached, and a name that resolves to a loopback or
// private address is refused unless the allowed entry names that address
// itself.
package egress

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// dialTimeout bounds the connection to an allowed host; headerTimeout
// how long a client of the proxy may take to say where it goes.
const (
	dialTimeout   = 30 * time.Second
	headerTimeout = 30 * time.Second
)

// Proxy is one agent run's proxy.
type Proxy struct {
	allow map[string]bool // "host:port", host lowercased, IPv6 in brackets
	srv   *http.Server
	ln    net.Listener
	// resolve and dial are the network's, replaced in tests.
	resolve func(ctx context.Context, host string) ([]netip.Addr, error)
	dial    func(ctx context.Context, addr string) (net.Conn, error)

	mu      sync.Mutex
	refused map[Refusal]int
}

// Refusal is a destination the proxy refused, and why.
type Refusal struct {
	Host string
	Port int
	Why  string
}

// Refused is a refusal and how many times it happened.
type Refused struct {
	Refusal
	Count int
}

// ParseHost reads a host the user allows, "HOST[:PORT]" (443 when no
// port is given; IPv6 in brackets), and gives it as the proxy keys it.
func ParseHost(s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" || strings.ContainsAny(s, "/@ ") {
		return "", fmt.Errorf("%q is not HOST or HOST:PORT (no scheme, path or user)", s)
	}
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		host, port = strings.Trim(s, "[]"), "443"
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 || host == "" {
		return "", fmt.Errorf("%q is not HOST or HOST:PORT with a port from 1 to 65535", s)
	}
	return net.JoinHostPort(strings.ToLower(host), strconv.Itoa(n)), nil
}

// New is a proxy that lets through the allowed hosts ("HOST:PORT", as
// ParseHost gives them). It serves nothing until Serve.
func New(allowed []string) *Proxy {
	p := &Proxy{allow: map[string]bool{}, refused: map[Refusal]int{},
		resolve: func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		},
		dial: func(ctx context.Context, addr string) (net.Conn, error) {
			d := net.Dialer{Timeout: dialTimeout}
			return d.DialContext(ctx, "tcp", addr)
		}}
	for _, a := range allowed {
		if key, err := ParseHost(a); err == nil {
			p.allow[key] = true
		}
	}
	return p
}

// Serve serves the proxy on ln until Close.
func (p *Proxy) Serve(ln net.Listener) {
	p.ln = ln
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: headerTimeout}
	go p.srv.Serve(ln)
}

// Close stops the proxy and every connection through it.
func (p *Proxy) Close() error {
	if p.srv == nil {
		return nil
	}
	return p.srv.Close()
}

// Refusals are the destinations refused so far, most often first.
func (p *Proxy) Refusals() []Refused {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]Refused, 0, len(p.refused))
	for r, n := range p.refused {
		out = append(out, Refused{Refusal: r, Count: n})
	}
	slices.SortFunc(out, func(a, b Refused) int {
		if a.Count != b.Count {
			return b.Count - a.Count
		}
		return strings.Compare(net.JoinHostPort(a.Host, strconv.Itoa(a.Port)), net.JoinHostPort(b.Host, strconv.Itoa(b.Port)))
	})
	return out
}

func (p *Proxy) refuse(w http.ResponseWriter, host string, port int, why string) {
	p.mu.Lock()
	p.refused[Refusal{Host: host, Port: port, Why: why}]++
	p.mu.Unlock()
	http.Error(w, "wo's agent proxy refused "+net.JoinHostPort(host, strconv.Itoa(port))+": "+why, http.StatusForbidden)
}

// ServeHTTP takes a CONNECT or an absolute-URL request.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var target string
	defaultPort := "443"
	switch {
	case r.Method == http.MethodConnect:
		target = r.Host
	case r.URL.IsAbs() && r.URL.Scheme == "http":
		target, defaultPort = r.URL.Host, "80"
	default:
		http.Error(w, "wo's agent proxy takes CONNECT host:port, or a request for an http:// URL", http.StatusBadRequest)
		return
	}
	host, portText, err := net.SplitHostPort(target)
	if err != nil {
		host, portText = strings.Trim(target, "[]"), defaultPort
	}
	host = strings.ToLower(host)
	port, err := strconv.Atoi(portText)
	if err != nil || port < 1 || port > 65535 {
		http.Error(w, "wo's agent proxy: no port in "+target, http.StatusBadRequest)
		return
	}
	addr, why := p.check(r.Context(), host, port)
	if why != "" {
		p.refuse(w, host, port, why)
		return
	}
	if r.Method == http.MethodConnect {
		p.tunnel(w, r, addr)
		return
	}
	p.forward(w, r, addr)
}

// check says where host:port may be reached, or why not.
func (p *Proxy) check(ctx context.Context, host string, port int) (string, string) {
	key := net.JoinHostPort(host, strconv.Itoa(port))
	if !p.allow[key] {
		return "", "not an allowed host (--agent-allow-host " + key + " allows it)"
	}
	literal, err := netip.ParseAddr(host)
	// An address named as such, or localhost, may be loopback or private.
	named := err == nil || host == "localhost"
	var addrs []netip.Addr
	if err == nil {
		addrs = []netip.Addr{literal}
	} else {
		ctx, cancel := context.WithTimeout(ctx, dialTimeout)
		defer cancel()
		if addrs, err = p.resolve(ctx, host); err != nil || len(addrs) == 0 {
			return "", fmt.Sprintf("its address could not be found (%v)", err)
		}
	}
	for _, a := range addrs {
		a = a.Unmap()
		switch {
		case a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() || a.IsMulticast() || a.IsUnspecified():
			return "", "it is a link-local, multicast or unspecified address (a cloud's metadata service is one): never reached"
		case (a.IsLoopback() || a.IsPrivate()) && !named:
			return "", fmt.Sprintf("the name resolves to %s, a loopback or private address: allow the address itself if that is meant", a)
		}
	}
	return net.JoinHostPort(addrs[0].Unmap().String(), strconv.Itoa(port)), ""
}

// tunnel joins the client to addr for a CONNECT.
func (p *Proxy) tunnel(w http.ResponseWriter, r *http.Request, addr string) {
	out, err := p.dial(r.Context(), addr)
	if err != nil {
		http.Error(w, "wo's agent proxy: "+err.Error(), http.StatusBadGateway)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		out.Close()
		http.Error(w, "wo's agent proxy cannot tunnel here", http.StatusInternalServerError)
		return
	}
	in, buf, err := hj.Hijack()
	if err != nil {
		out.Close()
		return
	}
	io.WriteString(in, "HTTP/1.1 200 Connection established\r\n\r\n")
	done := make(chan struct{}, 2)
	go func() {
		// What the client sent after its request line is in buf.
		io.Copy(out, buf)
		closeWrite(out)
		done <- struct{}{}
	}()
	go func() { io.Copy(in, out); closeWrite(in); done <- struct{}{} }()
	<-done
	<-done
	in.Close()
	out.Close()
}

// forward sends a plain-http request on to addr, streaming the answer
// (a model's server-sent events) as it comes.
func (p *Proxy) forward(w http.ResponseWriter, r *http.Request, addr string) {
	tr := &http.Transport{
		Proxy: nil,
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return p.dial(ctx, addr)
		},
		ResponseHeaderTimeout: 0, // a model may think for minutes; the agent's own limit bounds it
	}
	defer tr.CloseIdleConnections()
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			// To the host that was checked, by the name that was checked:
			// not a Host header the client made up.
			pr.Out.URL = pr.In.URL
			pr.Out.Host = ""
			pr.Out.Header.Del("Proxy-Authorization")
		},
		Transport:     tr,
		FlushInterval: -1,
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			http.Error(w, "wo's agent proxy: "+err.Error(), http.StatusBadGateway)
		},
	}
	rp.ServeHTTP(w, r)
}

func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
	}
}
