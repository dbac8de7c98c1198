// Package leaks finds secrets in what a review fix adds, before wo pushes
// it: the secrets wo knows (its GitHub token, and what the credential
// files in the user's home hold), in the encodings that hide them from a
// plain search (URL, base64 at every alignment, hex, reversed), and every
// kind of secret that gitleaks' detector knows (cloud keys, private keys,
// tokens of well-known services).
//
// A finding names the line and the kind of secret, never the secret.
package leaks

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/rs/zerolog"
	"github.com/zricethezav/gitleaks/v8/detect"
	"github.com/zricethezav/gitleaks/v8/logging"
)

// Finding is one secret in a text: its line (1-based) and its kind.
type Finding struct {
	Line int
	Kind string
}

// minSecret is the shortest value taken for a secret: shorter ones (a
// username, "x") would match everywhere.
const minSecret = 8

// maxCredentialFile bounds what is read of one credential file.
const maxCredentialFile = 1 << 20

// Scanner finds secrets. Its zero value finds only what gitleaks knows.
type Scanner struct {
	forms []form
}

// form is one spelling of a known secret, and what it is.
type form struct {
	text, kind string
}

// New is a scanner of the secrets wo knows: token (wo's GitHub token;
// empty for none) and the credential files under home (the user's, ""
// for none).
func New(token, home string) *Scanner {
	s := &Scanner{}
	if token != "" {
		s.add(token, "wo's GitHub token")
		s.addBase64("x-access-token:"+token, "wo's GitHub token")
	}
	if home != "" {
		for _, c := range credentialsIn(home) {
			s.add(c.value, c.kind)
		}
	}
	return s
}

// add adds a secret in every spelling a fix may hide it in.
func (s *Scanner) add(secret, kind string) {
	if len(secret) < minSecret {
		return
	}
	rev := []rune(secret)
	slices.Reverse(rev)
	for _, f := range []string{secret, url.QueryEscape(secret), url.PathEscape(secret), string(rev),
		hex.EncodeToString([]byte(secret)), strings.ToUpper(hex.EncodeToString([]byte(secret)))} {
		s.forms = append(s.forms, form{f, kind})
	}
	s.addBase64(secret, kind)
	s.addBase64(string(rev), kind)
}

// addBase64 adds the base64 of secret as it appears inside the base64 of
// any longer text: at each of the three alignments.
func (s *Scanner) addBase64(secret, kind string) {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		for pad := range 3 {
			if f := base64Inner(enc, secret, pad); len(f) >= 16 {
				s.forms = append(s.forms, form{f, kind})
			}
		}
	}
}

// base64Inner is the part of the base64 of any text holding secret after
// pad bytes that is the same whatever the text around it: the characters
// whose six bits all come from the secret's bytes.
func base64Inner(enc *base64.Encoding, secret string, pad int) string {
	full := enc.WithPadding(base64.NoPadding).EncodeToString(append(make([]byte, pad), secret...))
	start := (pad*8 + 5) / 6           // the first character after the text before it
	end := (pad + len(secret)) * 8 / 6 // the last one the secret's bits fill
	if end <= start {
		return ""
	}
	return full[start:end]
}

// Scan finds the secrets that a change adds to a file: in its added lines
// (Added), of its text after the change. The known secrets are looked
// for line by line; gitleaks' rules run over the whole text, so that a
// secret of several lines (a private key) is found, and count where a
// finding starts or ends on an added line.
func (s *Scanner) Scan(after []byte, added []Line) []Finding {
	var out []Finding
	found := map[int]bool{}
	for _, l := range added {
		if kind := s.known(l.Text); kind != "" {
			out = append(out, Finding{Line: l.Number, Kind: kind})
			found[l.Number] = true
		}
	}
	det := detector()
	if det == nil || len(added) == 0 {
		return out
	}
	isAdded := map[int]bool{}
	for _, l := range added {
		isAdded[l.Number] = true
	}
	for _, f := range det.DetectBytes(after) {
		// gitleaks counts lines from 0.
		line := f.StartLine + 1
		if !isAdded[line] {
			line = f.EndLine + 1
		}
		if isAdded[line] && !found[line] {
			out = append(out, Finding{Line: line, Kind: f.Description})
			found[line] = true
		}
	}
	slices.SortFunc(out, func(a, b Finding) int { return a.Line - b.Line })
	return out
}

func (s *Scanner) known(text string) string {
	for _, f := range s.forms {
		if strings.Contains(text, f.text) {
			return f.kind
		}
	}
	return ""
}

// Line is a line of a text, numbered from 1.
type Line struct {
	Number int
	Text   string
}

// Added are the lines of after that before does not have (as many times
// as it has them fewer): what a change adds, so that a secret the file
// held already (a test's fixture key) is not taken for the fix's.
func Added(before, after []byte) []Line {
	have := map[string]int{}
	for _, l := range splitLines(before) {
		have[l]++
	}
	var out []Line
	for i, l := range splitLines(after) {
		if have[l] > 0 {
			have[l]--
			continue
		}
		out = append(out, Line{Number: i + 1, Text: l})
	}
	return out
}

func splitLines(b []byte) []string {
	if len(b) == 0 {
		return nil
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

var (
	detectorOnce sync.Once
	gitleaks     *detect.Detector
)

// detector is gitleaks' detector with its default rules but the generic
// one (any long random-looking value assigned to a key-like name), which
// takes ordinary code for secrets; nil if it cannot be built. Built once:
// its configuration is read through a global.
func detector() *detect.Detector {
	detectorOnce.Do(func() {
		logging.Logger = zerolog.Nop() // it logs to stderr otherwise
		d, err := detect.NewDetectorDefaultConfig()
		if err != nil {
			return
		}
		delete(d.Config.Rules, "generic-api-key")
		gitleaks = d
	})
	return gitleaks
}

// credential is a secret found in a credential file.
type credential struct{ value, kind string }

// credentialsIn reads the secrets of the credential files a user
// typically has under home: gh's, git's, netrc, SSH private keys, AWS,
// Google Cloud, Docker and npm.
func credentialsIn(home string) []credential {
	var out []credential
	read := func(rel string) []byte {
		f, err := os.Open(filepath.Join(home, rel))
		if err != nil {
			return nil
		}
		defer f.Close()
		b, _ := io.ReadAll(io.LimitReader(f, maxCredentialFile))
		return b
	}
	for _, v := range yamlValues(read(".config/gh/hosts.yml"), "oauth_token") {
		out = append(out, credential{v, "gh's GitHub token (~/.config/gh/hosts.yml)"})
	}
	for _, line := range strings.Fields(string(read(".git-credentials"))) {
		if u, err := url.Parse(line); err == nil && u.User != nil {
			if pw, ok := u.User.Password(); ok {
				out = append(out, credential{pw, "a password of ~/.git-credentials"})
			}
		}
	}
	netrc := strings.Fields(string(read(".netrc")))
	for i := 0; i+1 < len(netrc); i++ {
		if netrc[i] == "password" {
			out = append(out, credential{netrc[i+1], "a password of ~/.netrc"})
		}
	}
	keys, _ := filepath.Glob(filepath.Join(home, ".ssh", "id_*"))
	for _, k := range keys {
		if strings.HasSuffix(k, ".pub") {
			continue
		}
		rel, _ := filepath.Rel(home, k)
		for _, line := range strings.Split(string(read(rel)), "\n") {
			if line = strings.TrimSpace(line); len(line) >= 20 && !strings.HasPrefix(line, "-----") {
				out = append(out, credential{line, "an SSH private key (~/" + rel + ")"})
			}
		}
	}
	for _, name := range []string{"aws_secret_access_key", "aws_session_token", "aws_access_key_id"} {
		for _, v := range iniValues(read(".aws/credentials"), name) {
			out = append(out, credential{v, "an AWS credential (~/.aws/credentials)"})
		}
	}
	for _, rel := range []string{".config/gcloud/application_default_credentials.json", ".docker/config.json"} {
		for _, v := range jsonSecrets(read(rel)) {
			out = append(out, credential{v, "a credential of ~/" + rel})
		}
	}
	for _, v := range iniValues(read(".npmrc"), "_authToken") {
		out = append(out, credential{v, "an npm token (~/.npmrc)"})
	}
	return out
}

// yamlValues are the values of key in a flat or nested YAML file, read
// line by line (gh writes "    oauth_token: VALUE").
func yamlValues(b []byte, key string) []string {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), ":")
		if ok && strings.TrimSpace(k) == key {
			out = append(out, strings.Trim(strings.TrimSpace(v), `"'`))
		}
	}
	return out
}

// iniValues are the values of a key in an INI-like file ("key = value",
// and npm's "//registry/:_authToken=value").
func iniValues(b []byte, key string) []string {
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, "=")
		if ok && (strings.TrimSpace(k) == key || strings.HasSuffix(strings.TrimSpace(k), ":"+key)) {
			out = append(out, strings.Trim(strings.TrimSpace(v), `"'`))
		}
	}
	return out
}

// jsonSecrets are the values of a JSON file's secret-named fields, at any
// depth: tokens, keys, secrets, passwords and auths.
func jsonSecrets(b []byte) []string {
	var v any
	if json.Unmarshal(b, &v) != nil {
		return nil
	}
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				lk := strings.ToLower(k)
				if s, ok := e.(string); ok && (strings.Contains(lk, "token") || strings.Contains(lk, "secret") || strings.Contains(lk, "key") ||
					strings.Contains(lk, "password") || lk == "auth") {
					out = append(out, s)
					// A private key in PEM: each of its lines too.
					for _, line := range strings.Split(s, "\n") {
						if len(line) >= 20 && !strings.HasPrefix(line, "-----") {
							out = append(out, line)
						}
					}
					continue
				}
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	return out
}
