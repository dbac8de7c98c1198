package leaks

import (
	"encoding/base64"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const token = "ghs_wo0wnT0ken1234567890abcdefABCDEF"

func reversed(s string) string {
	r := []rune(s)
	slices.Reverse(r)
	return string(r)
}

// scan scans a new file of the lines texts.
func scan(s *Scanner, texts ...string) []Finding {
	text := []byte(strings.Join(texts, "\n") + "\n")
	return s.Scan(text, Added(nil, text))
}

// wo's token is found in every encoding an agent could hide it in, inside
// other text; the finding names the kind, never the token.
func TestWosTokenIsFoundInEveryEncoding(t *testing.T) {
	t.Parallel()
	s := New(token, "")
	for name, text := range map[string]string{
		"raw":              "// " + token,
		"url":              "x=" + url.QueryEscape(token+"/"),
		"base64":           base64.StdEncoding.EncodeToString([]byte(token)),
		"base64 prefixed":  base64.StdEncoding.EncodeToString([]byte("x-access-token:" + token)),
		"base64 offset 1":  base64.StdEncoding.EncodeToString([]byte("a" + token + "zz")),
		"base64 offset 2":  base64.RawURLEncoding.EncodeToString([]byte("ab" + token)),
		"hex":              "var k = \"" + hex.EncodeToString([]byte(token)) + "\"",
		"hex upper":        strings.ToUpper(hex.EncodeToString([]byte(token))),
		"reversed":         reversed(token),
		"reversed base64":  base64.StdEncoding.EncodeToString([]byte(reversed(token))),
		"in a longer blob": "data:" + base64.StdEncoding.EncodeToString([]byte("{\"user\":\"x\",\"token\":\""+token+"\"}")),
	} {
		got := scan(s, "package x", text)
		if len(got) != 1 || got[0].Line != 2 || got[0].Kind != "wo's GitHub token" {
			t.Errorf("%s: %+v", name, got)
		}
	}
	if got := scan(s, "package x", "const Named = 1", base64.StdEncoding.EncodeToString([]byte("hello, world of code"))); len(got) != 0 {
		t.Errorf("ordinary code: %+v", got)
	}
}

// The secrets of the credential files a user has are known by their
// contents, whatever they look like.
func TestTheCredentialFilesInHomeAreKnown(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	files := map[string]string{
		".config/gh/hosts.yml": "github.com:\n    user: alice\n    oauth_token: gho_aliceToken0123456789abcdef\n    git_protocol: https\n",
		".git-credentials":     "https://alice:plainGitPassw0rd99@git.example.com\n",
		".netrc":               "machine api.example.com login alice password netrcSecretValue42\n",
		".ssh/id_ed25519":      "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n-----END OPENSSH PRIVATE KEY-----\n",
		".aws/credentials":     "[default]\naws_access_key_id = AKIAEXAMPLEKEYID0001\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n",
		".config/gcloud/application_default_credentials.json": `{"client_id":"x.apps.googleusercontent.com","client_secret":"gcloudClientSecret77","refresh_token":"1//0gRefreshTokenValue-abcdef","type":"authorized_user"}`,
		".npmrc": "//registry.npmjs.org/:_authToken=npm_NpmTokenValue0123456789\n",
	}
	s := New("", homeWith(t, home, files))
	for secret, kind := range map[string]string{
		"gho_aliceToken0123456789abcdef": "hosts.yml",
		"plainGitPassw0rd99":             ".git-credentials",
		"netrcSecretValue42":             ".netrc",
		"b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW": "SSH private key",
		"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY":                               "AWS",
		"1//0gRefreshTokenValue-abcdef":                                          "gcloud",
		"npm_NpmTokenValue0123456789":                                            "npm",
	} {
		for _, text := range []string{secret, base64.StdEncoding.EncodeToString([]byte(secret)), reversed(secret)} {
			got := scan(s, `log("`+text+`")`)
			if len(got) != 1 || !strings.Contains(got[0].Kind, kind) || strings.Contains(got[0].Kind, secret) {
				t.Errorf("%s as %q: %+v", kind, text, got)
			}
		}
	}
}

// Kinds gitleaks knows are found with no file to read them from; an
// ordinary high-entropy identifier is not a secret.
func TestSecretsOfKnownKindsAreFound(t *testing.T) {
	t.Parallel()
	s := New("", "")
	for _, text := range []string{
		"-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\nQyNTUxOQAAACDqNcx7DbY8J4Y8vYjE8m3ZkqF1fGQmYw1K4oFQd3xJZAAAAJgAAAAAAAAA\n-----END OPENSSH PRIVATE KEY-----",
		`aws_key = "AKIAZ7QW3RTX5LKM2PNB"`,
		`token := "ghp_Xk9qL2mZ8vB4nR7tY1wE5sD3fG6hJ0cA2pQz"`,
	} {
		if got := scan(s, text); len(got) != 1 || got[0].Kind == "" {
			t.Errorf("%q: %+v", text, got)
		}
	}
	if got := scan(s, `const checksum = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"`, "func main() {}"); len(got) != 0 {
		t.Errorf("ordinary code: %+v", got)
	}
}

// homeWith writes files (path under home → text) into home, as a user's
// credential files are (mode 0600), and returns home.
func homeWith(t *testing.T, home string, files map[string]string) string {
	t.Helper()
	for rel, text := range files {
		p := filepath.Join(home, rel)
		os.MkdirAll(filepath.Dir(p), 0o700)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return home
}

func TestAddedAreTheLinesAChangeAdds(t *testing.T) {
	t.Parallel()
	got := Added([]byte("a\nkey\nb\n"), []byte("a\nkey\nnew\nb\nkey\n"))
	want := []Line{{3, "new"}, {5, "key"}}
	if !slices.Equal(got, want) {
		t.Errorf("Added: %+v, want %+v", got, want)
	}
	if got := Added(nil, []byte("x\n")); !slices.Equal(got, []Line{{1, "x"}}) {
		t.Errorf("a new file: %+v", got)
	}
}

// The inner part of a secret's base64 is in the base64 of every text
// around it at its alignment, and is the longest such part: one more
// character at either end depends on the text around it.
func TestBase64InnerIsWhatEveryTextAroundTheSecretShares(t *testing.T) {
	t.Parallel()
	for _, secret := range []string{token, "exactly-18-bytes!!", "seventeen-bytes!!", "sixteen-bytes!!!"} {
		for pad := range 3 {
			inner := base64Inner(base64.StdEncoding, secret, pad)
			if inner == "" {
				t.Fatalf("%q at %d: no inner part", secret, pad)
			}
			var texts []string
			for _, before := range []string{"\x00\x00", "\xff\xff", "ab"} {
				for _, after := range []string{"", "\x00", "\xff\xff", "xyz"} {
					enc := base64.StdEncoding.EncodeToString([]byte(before[:pad] + secret + after))
					texts = append(texts, enc)
					// The inner part sits where the secret's bytes do.
					if at := strings.Index(enc, inner); at < 0 {
						t.Errorf("%q at %d: %q not in %q", secret, pad, inner, enc)
					}
				}
			}
			// Longest: the characters next to it differ between texts.
			first := strings.Index(texts[0], inner)
			for _, d := range []int{-1, 1} {
				differs := false
				for _, x := range texts[1:] {
					i := strings.Index(x, inner)
					var a, b byte
					switch {
					case d < 0 && first > 0 && i > 0:
						a, b = texts[0][first-1], x[i-1]
					case d > 0 && first+len(inner) < len(texts[0]) && i+len(inner) < len(x):
						a, b = texts[0][first+len(inner)], x[i+len(inner)]
					default:
						differs = true // at the very end: nothing to add
					}
					differs = differs || a != b
				}
				if !differs {
					t.Errorf("%q at %d: %q could be longer at its %s", secret, pad, inner, map[int]string{-1: "start", 1: "end"}[d])
				}
			}
		}
	}
}

// Values that are not secrets of a credential file, and secrets too short
// to tell from words, are not findings; a finding is on its own line.
func TestOnlyTheSecretsOfCredentialFilesCount(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	files := map[string]string{
		".aws/credentials": "[default]\nregion = us-east-1-zone\naws_secret_access_key = awsSecretValue99\n",
		".netrc":           "machine a.example login alice password abcdefg1\nmachine b.example login bob password abcdef1\nmachine c password",
		".config/gcloud/application_default_credentials.json": `{"type": "authorized_user", "private_key": "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0\n-----END PRIVATE KEY-----\n", "auth": "dockerAuthValue1"}`,
		".ssh/id_rsa": "-----BEGIN OPENSSH PRIVATE KEY-----\n20charsExactlyABCDEF\n-----END OPENSSH PRIVATE KEY-----\n",
	}
	s := New("", homeWith(t, home, files))
	for text, found := range map[string]bool{
		"awsSecretValue99": true, "us-east-1-zone": false, // a region is no secret
		"abcdefg1": true, "abcdef1": false, // eight characters at least
		"MIIEvQIBADANBgkqhkiG9w0": true, "authorized_user": false, "dockerAuthValue1": true,
		"20charsExactlyABCDEF": true,
	} {
		got := scan(s, "package x", "", "var v = `"+text+"`", "")
		if found && (len(got) != 1 || got[0].Line != 3) {
			t.Errorf("%q: %+v, want one finding on line 3", text, got)
		}
		if !found && len(got) != 0 {
			t.Errorf("%q: %+v, want none", text, got)
		}
	}
	// gitleaks' findings are placed on their line too.
	if got := scan(New("", ""), "package x", "", `token := "ghp_Xk9qL2mZ8vB4nR7tY1wE5sD3fG6hJ0cA2pQz"`); len(got) != 1 || got[0].Line != 3 {
		t.Errorf("a GitHub token on line 3: %+v", got)
	}
}
