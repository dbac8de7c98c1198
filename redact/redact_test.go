package redact

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"strings"
	"testing"
)

const token = "ghp_Secret+/=Token_0123456789"

func TestEveryFormOfTheTokenIsRemoved(t *testing.T) {
	s := New().Token(token)
	basic := base64.StdEncoding.EncodeToString([]byte("x-access-token:" + token))
	for _, text := range []string{
		"raw " + token,
		"Authorization: Bearer " + token,
		"Authorization: token " + token,
		"Authorization: Basic " + basic,
		"echo: " + base64.RawURLEncoding.EncodeToString([]byte("x-access-token:"+token)),
		"https://x?access_token=" + url.QueryEscape(token),
		"https://x/" + url.PathEscape(token) + "/y",
		`{"message":"Bad credentials","header":"Bearer ` + token + `"}`,
	} {
		got := s.String(text)
		if strings.Contains(got, token) || strings.Contains(got, basic) || strings.Contains(got, url.QueryEscape(token)) ||
			strings.Contains(got, strings.TrimRight(basic, "=")) || !strings.Contains(got, Mask) {
			t.Errorf("%q → %q still holds the token", text, got)
		}
	}
}

func TestErrorKeepsItsChain(t *testing.T) {
	s := New().Token(token)
	inner := fmt.Errorf("reading: %w (%s)", fs.ErrNotExist, token)
	err := s.Error(inner)
	if strings.Contains(err.Error(), token) || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("%v: token left or chain broken", err)
	}
	if s.Error(nil) != nil {
		t.Error("nil became an error")
	}
	plain := errors.New("nothing secret")
	if s.Error(plain) != plain {
		t.Error("an error without secrets was wrapped")
	}
}

func TestValueRedactsNestedDetails(t *testing.T) {
	s := New().Basic("root", "arango-pw")
	v := s.Value(map[string]any{"error": "401 root:arango-pw", "list": []any{"x arango-pw", 3},
		"auth": "Basic " + base64.StdEncoding.EncodeToString([]byte("root:arango-pw"))})
	if got := fmt.Sprint(v); strings.Contains(got, "arango-pw") || strings.Contains(got, "cm9vdDphcmFuZ28tcHc") {
		t.Errorf("left a secret: %s", got)
	}
}

func TestNothingToRedact(t *testing.T) {
	var s *Secrets
	if s.String("a") != "a" || New("").String("a") != "a" || !New("").Empty() {
		t.Error("empty secrets changed text")
	}
}
