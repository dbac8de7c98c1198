package egress

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
)

// serve starts p on a unix socket, as an agent's box reaches it, and
// returns a client that goes through it and the socket's path.
func serve(t *testing.T, p *Proxy) (*http.Client, string) {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "proxy.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	p.Serve(ln)
	t.Cleanup(func() { p.Close() })
	proxyURL, _ := url.Parse("http://proxy.invalid")
	tr := &http.Transport{Proxy: http.ProxyURL(proxyURL), DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", sock)
	}}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}, sock
}

// connect asks the proxy at sock for a tunnel to target and returns the
// proxy's status line and the connection.
func connect(t *testing.T, sock, target string) (string, net.Conn) {
	t.Helper()
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
	status, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		t.Fatalf("no answer to CONNECT %s: %v", target, err)
	}
	return strings.TrimSpace(status), c
}

func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); io.Copy(c, c) }()
		}
	}()
	return ln.Addr().String()
}

func TestATunnelGoesOnlyToAnAllowedHost(t *testing.T) {
	t.Parallel()
	allowed, other := echoServer(t), echoServer(t)
	p := New([]string{allowed})
	_, sock := serve(t, p)
	status, c := connect(t, sock, allowed)
	if !strings.Contains(status, "200") {
		t.Fatalf("CONNECT to an allowed host: %s", status)
	}
	// The tunnel carries bytes both ways (the status line's blank line first).
	fmt.Fprint(c, "hello\n")
	r := bufio.NewReader(c)
	var got string
	for got == "" || got == "\r\n" {
		got, _ = r.ReadString('\n')
	}
	if got != "hello\n" {
		t.Errorf("through the tunnel: %q", got)
	}
	status, _ = connect(t, sock, other)
	if !strings.Contains(status, "403") {
		t.Errorf("CONNECT to a host not allowed: %s", status)
	}
	status, _ = connect(t, sock, other)
	_, port, _ := net.SplitHostPort(other)
	refused := p.Refusals()
	if len(refused) != 1 || refused[0].Host != "127.0.0.1" || fmt.Sprint(refused[0].Port) != port || refused[0].Count != 2 ||
		!strings.Contains(refused[0].Why, "--agent-allow-host 127.0.0.1:"+port) {
		t.Errorf("refusals: %+v", refused)
	}
}

func TestAPlainHTTPRequestIsForwardedOnlyToAnAllowedHost(t *testing.T) {
	t.Parallel()
	var sawProxyAuth string
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sawProxyAuth = r.Header.Get("Proxy-Authorization")
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: %s %s\n\n", r.Method, r.URL.Path)
	}))
	defer api.Close()
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { t.Error("a host not allowed was reached") }))
	defer other.Close()
	p := New([]string{strings.TrimPrefix(api.URL, "http://")})
	client, _ := serve(t, p)
	req, _ := http.NewRequest("POST", api.URL+"/v1/messages", strings.NewReader("{}"))
	req.Header.Set("Proxy-Authorization", "Basic c2VjcmV0")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "data: POST /v1/messages\n\n" {
		t.Errorf("through the proxy: %d %q", resp.StatusCode, body)
	}
	if sawProxyAuth != "" {
		t.Errorf("the proxy passed the client's Proxy-Authorization on: %q", sawProxyAuth)
	}
	resp, err = client.Get(other.URL + "/x")
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), "not an allowed host") {
		t.Errorf("a host not allowed: %d %q", resp.StatusCode, body)
	}
}

// An allowed name is reached at the address it resolves to, checked: a
// metadata address never, and loopback or private only when the entry
// names the address itself.
func TestAnAllowedNameIsReachedOnlyAtAnAddressItMayHave(t *testing.T) {
	t.Parallel()
	p := New([]string{"api.example.com", "rebind.example.com:443", "metadata.example.com", "169.254.169.254:80", "127.0.0.1:8080", "localhost:4000"})
	p.resolve = func(_ context.Context, host string) ([]netip.Addr, error) {
		return map[string][]netip.Addr{
			"api.example.com":      {netip.MustParseAddr("203.0.113.7")},
			"rebind.example.com":   {netip.MustParseAddr("203.0.113.8"), netip.MustParseAddr("127.0.0.1")},
			"metadata.example.com": {netip.MustParseAddr("169.254.169.254")},
			"localhost":            {netip.MustParseAddr("127.0.0.1")},
		}[host], nil
	}
	for _, c := range []struct {
		host string
		port int
		addr string // "" when refused
		why  string
	}{
		{"api.example.com", 443, "203.0.113.7:443", ""},
		{"api.example.com", 80, "", "not an allowed host"},
		{"rebind.example.com", 443, "", "loopback or private"},
		{"metadata.example.com", 443, "", "metadata"},
		{"169.254.169.254", 80, "", "metadata"},
		{"127.0.0.1", 8080, "127.0.0.1:8080", ""},
		{"localhost", 4000, "127.0.0.1:4000", ""},
		{"127.0.0.1", 443, "", "not an allowed host"},
	} {
		addr, why := p.check(context.Background(), c.host, c.port)
		if addr != c.addr || (c.why == "") != (why == "") || !strings.Contains(why, c.why) {
			t.Errorf("%s:%d: %q, %q; want %q, %q", c.host, c.port, addr, why, c.addr, c.why)
		}
	}
}

func TestParseHost(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"API.example.com": "api.example.com:443", "gw.corp:4000": "gw.corp:4000", "[::1]:8080": "[::1]:8080",
		"::1": "[::1]:443", "https://x.com": "", "x.com:0": "", "x.com:70000": "", "": "", "user@x.com": "", "x.com/path": ""} {
		got, err := ParseHost(in)
		if got != want || (want == "") != (err != nil) {
			t.Errorf("ParseHost(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}
