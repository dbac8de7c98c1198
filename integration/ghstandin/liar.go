package ghstandin

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
)

// PRStateLiar starts a proxy in front of the stand-in at target that
// answers the requests lie picks with a pull request's state turned to
// closed; a PATCH it picks is answered as a read and never reaches the
// stand-in, as a server that answers a close without closing. It is for
// tests of what wo does when GitHub's answers disagree; close it when done.
func PRStateLiar(target string, lie func(*http.Request) bool) *httptest.Server {
	u, _ := url.Parse(target)
	proxy := httputil.NewSingleHostReverseProxy(u)
	proxy.ModifyResponse = func(res *http.Response) error {
		if res.Request.Header.Get("X-Lie") == "" {
			return nil
		}
		b, _ := io.ReadAll(res.Body)
		b = bytes.Replace(b, []byte(`"state":"open"`), []byte(`"state":"closed"`), 1)
		res.Body, res.ContentLength = io.NopCloser(bytes.NewReader(b)), int64(len(b))
		res.Header.Del("Content-Length")
		res.Header.Del("ETag")
		return nil
	}
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if lie(r) {
			r.Header.Set("X-Lie", "1")
			r.Header.Del("If-None-Match")
			if r.Method == http.MethodPatch {
				r.Method, r.Body, r.ContentLength = http.MethodGet, http.NoBody, 0
			}
		}
		proxy.ServeHTTP(w, r)
	}))
}
