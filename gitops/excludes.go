package gitops

import (
	"bytes"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/config"
)

// maxConfigFile bounds one git configuration file read for
// core.excludesFile.
const maxConfigFile = 1 << 20

// ExcludesFile is the global ignore file git reads for this repository:
// core.excludesFile from the system, the user's and the repository's
// configuration (the last one that sets it wins, as in git), else
// $XDG_CONFIG_HOME/git/ignore, else $HOME/.config/git/ignore. getenv
// answers HOME, XDG_CONFIG_HOME, GIT_CONFIG_GLOBAL and
// GIT_CONFIG_NOSYSTEM as git reads them; "" when there is no such file to
// look for. A configuration file that cannot be read sets nothing.
func (r *Repo) ExcludesFile(getenv func(string) string) string {
	home, xdg := getenv("HOME"), getenv("XDG_CONFIG_HOME")
	if xdg == "" && home != "" {
		xdg = filepath.Join(home, ".config")
	}
	var files []string
	if !configTrue(getenv("GIT_CONFIG_NOSYSTEM")) {
		files = append(files, "/etc/gitconfig")
	}
	switch global := getenv("GIT_CONFIG_GLOBAL"); {
	case global != "":
		files = append(files, global)
	default:
		if xdg != "" {
			files = append(files, filepath.Join(xdg, "git", "config"))
		}
		if home != "" {
			files = append(files, filepath.Join(home, ".gitconfig"))
		}
	}
	files = append(files, filepath.Join(r.GitDir, "config"))
	excludes := ""
	for _, f := range files {
		if v, ok := configValue(f, "core", "excludesfile"); ok {
			excludes = v
		}
	}
	switch {
	case excludes == "~" || strings.HasPrefix(excludes, "~/"):
		if home == "" {
			return ""
		}
		return filepath.Join(home, excludes[1:])
	case excludes != "":
		return excludes
	case xdg != "":
		return filepath.Join(xdg, "git", "ignore")
	}
	return ""
}

// configValue reads section.key from a git configuration file.
func configValue(path, section, key string) (string, bool) {
	b, err := readBounded(path, maxConfigFile, true)
	if err != nil {
		return "", false
	}
	cfg := config.New()
	if err := config.NewDecoder(bytes.NewReader(b)).Decode(cfg); err != nil {
		return "", false
	}
	if !cfg.HasSection(section) || !cfg.Section(section).HasOption(key) {
		return "", false
	}
	return cfg.Section(section).Option(key), true
}

// configTrue is git's reading of a boolean from the environment.
func configTrue(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}
