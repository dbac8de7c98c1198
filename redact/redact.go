// Package redact removes secrets from text before it leaves wo: errors,
// log entries, notes, the task document and the command's output. A
// server may echo what it was sent (an Authorization header in an error
// body), so every form in which wo could have sent a secret is removed,
// not just the secret as configured.
package redact

import (
	"encoding/base64"
	"errors"
	"net/url"
	"sort"
	"strings"
)

// Mask replaces a secret.
const Mask = "[REDACTED]"

// Secrets is a set of secrets and the forms they travel in. The zero value
// and nil redact nothing.
type Secrets struct {
	forms []string
}

// New returns the secrets to remove. Empty strings are ignored.
func New(secrets ...string) *Secrets {
	s := &Secrets{}
	for _, v := range secrets {
		s.Add(v)
	}
	return s
}

// Token adds a GitHub token in every form wo sends it: raw (also inside
// "Bearer TOKEN" and "token TOKEN"), URL-encoded, and as HTTP Basic
// credentials x-access-token:TOKEN for git over HTTPS.
func (s *Secrets) Token(token string) *Secrets {
	s.Add(token)
	s.Basic("x-access-token", token)
	return s
}

// Basic adds a password in its raw and URL-encoded forms and the base64
// of user:password that HTTP Basic authentication sends.
func (s *Secrets) Basic(user, password string) *Secrets {
	if password == "" {
		return s
	}
	s.Add(password)
	pair := user + ":" + password
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		s.add(enc.EncodeToString([]byte(pair)))
	}
	return s
}

// Add adds a secret in its raw and URL-encoded forms.
func (s *Secrets) Add(secret string) *Secrets {
	if secret == "" {
		return s
	}
	s.add(secret)
	s.add(url.QueryEscape(secret))
	s.add(url.PathEscape(secret))
	return s
}

func (s *Secrets) add(form string) {
	for _, f := range s.forms {
		if f == form {
			return
		}
	}
	s.forms = append(s.forms, form)
	// Longest first, so that a form containing another is removed whole.
	sort.Slice(s.forms, func(i, j int) bool { return len(s.forms[i]) > len(s.forms[j]) })
}

// Empty reports whether there is nothing to redact.
func (s *Secrets) Empty() bool { return s == nil || len(s.forms) == 0 }

// String returns text with every form of every secret replaced by Mask.
func (s *Secrets) String(text string) string {
	if s.Empty() {
		return text
	}
	for _, f := range s.forms {
		text = strings.ReplaceAll(text, f, Mask)
	}
	return text
}

// Error returns err with its message redacted. The result still unwraps to
// err, so errors.Is and errors.As keep working; callers that print a
// wrapped error's own message must redact it themselves.
func (s *Secrets) Error(err error) error {
	if err == nil || s.Empty() {
		return err
	}
	msg := err.Error()
	clean := s.String(msg)
	if clean == msg {
		return err
	}
	var already *Error
	if errors.As(err, &already) && already == err {
		return &Error{msg: clean, err: already.err}
	}
	return &Error{msg: clean, err: err}
}

// Value returns v with every string inside it (maps, slices, errors)
// redacted; it is for log details and other loosely typed data.
func (s *Secrets) Value(v any) any {
	if s.Empty() {
		return v
	}
	switch x := v.(type) {
	case string:
		return s.String(x)
	case error:
		return s.String(x.Error())
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = s.Value(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = s.Value(e)
		}
		return out
	case []string:
		out := make([]string, len(x))
		for i, e := range x {
			out[i] = s.String(e)
		}
		return out
	}
	return v
}

// Error is an error whose message had secrets removed.
type Error struct {
	msg string
	err error
}

func (e *Error) Error() string { return e.msg }
func (e *Error) Unwrap() error { return e.err }
