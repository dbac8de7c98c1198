package workorder

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/wo-runner/wo/internal/gitname"
)

// keyPattern is ArangoDB's document key alphabet (at most 254 bytes).
var keyPattern = regexp.MustCompile(`^[A-Za-z0-9_\-:.@()+,=;$!*'%]{1,254}$`)

// CheckKey explains why s cannot be a document key, or returns nil.
func CheckKey(s string) error {
	if !keyPattern.MatchString(s) {
		return fmt.Errorf("%q is not a valid key: use 1-254 letters, digits or _-:.@()+,=;$!*'%%", s)
	}
	return nil
}

// NewKey returns a generated key: "task_" and 6 hex digits.
func NewKey() string {
	var b [3]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return "task_" + hex.EncodeToString(b[:])
}

// CheckRefName applies git's check-ref-format rules to a branch name.
func CheckRefName(name string) error {
	if why := refProblem(name); why != "" {
		return fmt.Errorf("%q is not a branch name git accepts: %s", name, why)
	}
	return nil
}

// CheckRelativePath explains why p cannot name a file inside a repository
// (gitname.CheckRelativePath: gitops applies the same rule).
func CheckRelativePath(p string) error { return gitname.CheckRelativePath(p) }

// repoPattern is GitHub's owner/name.
var repoPattern = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9._-]{1,100}$`)

// Inside reports whether path is an absolute path strictly below root (also
// absolute), after cleaning both: the only places a worktree may go.
func Inside(root, path string) bool {
	if !filepath.IsAbs(root) || !filepath.IsAbs(path) {
		return false
	}
	root, path = filepath.Clean(root), filepath.Clean(path)
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, "../")
}
