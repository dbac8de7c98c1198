// Command boxprobe is the integration tests' hand inside an agent's box:
// it tries one way out and says whether it got through. It is a test
// tool, not part of wo.
//
//	boxprobe unix PATH     connect to a unix socket and send a line
//	boxprobe udp ADDR      send a datagram
//	boxprobe tcp ADDR      connect and send a line
//	boxprobe proxy URL     GET the URL through $HTTP_PROXY (for every host,
//	                       loopback too, as the agents' own clients do)
//
// It exits 0 when the way was open, 3 when it was shut.
package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"time"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: boxprobe unix|udp|tcp|proxy TARGET")
		os.Exit(2)
	}
	if err := probe(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
}

func probe(kind, target string) error {
	switch kind {
	case "unix", "udp", "tcp":
		c, err := net.DialTimeout(kind, target, 3*time.Second)
		if err != nil {
			return err
		}
		defer c.Close()
		_, err = fmt.Fprintln(c, "exfiltrated by the agent")
		return err
	case "proxy":
		proxy := func(*http.Request) (*url.URL, error) {
			if v := os.Getenv("HTTP_PROXY"); v != "" {
				return url.Parse(v)
			}
			return nil, nil
		}
		client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{Proxy: proxy}}
		resp, err := client.Get(target)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		fmt.Printf("%d %s\n", resp.StatusCode, b)
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("status %d", resp.StatusCode)
		}
		return nil
	}
	return fmt.Errorf("unknown probe %q", kind)
}
