package gitname

import (
	"strings"
	"testing"
)

// Each refusal says why, and the paths a repository may hold pass.
func TestCheckRelativePathSaysWhyItRefuses(t *testing.T) {
	t.Parallel()
	for p, why := range map[string]string{
		"":                 "empty path",
		"/etc/passwd":      "is absolute",
		"C:x":              "is absolute",
		"a\x00b":           "contains a NUL byte",
		`a\b`:              "contains a backslash",
		"a/../b":           "climbs out of the repository",
		"..":               "climbs out of the repository",
		".git/config":      "points into .git",
		"a/GIT~1/x":        "points into .git",
		"a/.g\u200cit/x":   "points into .git",
		"a//b":             `is not clean: write it as "a/b"`,
		"./a":              `is not clean: write it as "a"`,
		"a/":               `is not clean: write it as "a"`,
		".":                "is the repository itself",
		"a/b.go":           "",
		"a.git/x":          "",
		".gitignore":       "",
		"docs/.github/x.y": "",
		"x":                "",
	} {
		err := CheckRelativePath(p)
		switch {
		case why == "" && err != nil:
			t.Errorf("%q refused: %v", p, err)
		case why != "" && (err == nil || !strings.Contains(err.Error(), why)):
			t.Errorf("%q: %v, want an error saying %q", p, err, why)
		}
	}
}

func TestShortCutsACommitIDTo12Characters(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"0123456789abcdef0123456789abcdef01234567": "0123456789ab",
		"0123456789abc": "0123456789ab",
		"0123456789ab":  "0123456789ab",
		"abc":           "abc",
		"":              "",
	} {
		if got := Short(in); got != want {
			t.Errorf("Short(%q) = %q, want %q", in, got, want)
		}
	}
}
