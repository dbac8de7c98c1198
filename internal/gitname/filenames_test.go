package gitname

import "testing"

// The spellings below are git's own test cases (t0060's is_ntfs_dotgitmodules
// and is_hfs_dotgitmodules) and the ones an attack on the fix gate used.

func TestFoldName(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]string{
		".GitHub":                         ".github",
		".git\u200chub":                   ".github",
		"\ufeff.gi\u206at":                ".git",
		".github. ":                       ".github",
		".gitmodules::$DATA":              ".gitmodules",
		".gitmodules . :x":                ".gitmodules",
		"\u212a.md":                       "k.md", // the Kelvin sign folds to k
		"\u017fRC":                        "src",  // so does the long s to s
		"Straße":                          "straße",
		"a.b":                             "a.b",
		"..":                              "",
		"CLAUDE.md\u200d.":                "claude.md",
		"x\u200b":                         "x\u200b", // U+200B is not one HFS+ ignores
		"\u2029x":                         "\u2029x",
		"\u202bx\u206fy\u200f":            "xy",
		"\u200bx\u200c\u200d\u200e\u2010": "\u200bx\u2010", // U+200B and U+2010 lie just outside
		"\u2029\u202a\u202e\u202f":        "\u2029\u202f",
		"\u2069\u206a\u206f\u2070":        "\u2069\u2070",
		"\ufefe\ufeff\uff00":              "\ufefe\uff00",
	} {
		if got := FoldName(name); got != want {
			t.Errorf("FoldName(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestIsAliasOf(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, long string
		want       bool
	}{
		// .gitmodules as git's tests spell it.
		{".gitmodules", ".gitmodules", true},
		{".git\u200cmodules", ".gitmodules", true},
		{".Gitmodules", ".gitmodules", true},
		{".gitmoduleS", ".gitmodules", true},
		{".gitmodules ", ".gitmodules", true},
		{".gitmodules.", ".gitmodules", true},
		{".gitmodules  .", ".gitmodules", true},
		{"GITMOD~1", ".gitmodules", true},
		{"gitmod~4", ".gitmodules", true},
		{"GI7EBA~1", ".gitmodules", true},
		{"gi7eba~9", ".gitmodules", true},
		{"GI7EB~10", ".gitmodules", true},
		{"GI7E~101", ".gitmodules", true},
		{"GI7~1001", ".gitmodules", true},
		{"GI~10001", ".gitmodules", true},
		{"G~100001", ".gitmodules", true},
		{"~1000001", ".gitmodules", true},
		{"GI0000~1", ".gitmodules", true},
		{"GI7FC~1", ".gitmodules", true}, // git knows the hash, and keeps this one apart; wo does not
		{".gitmodules:$DATA", ".gitmodules", true},
		{".gitmodules::$DATA", ".gitmodules", true},
		{"gitmod~1 . ", ".gitmodules", true},
		{"gitmod~1:x", ".gitmodules", true},
		// ... and what git's tests keep apart from it.
		{".gitmodules x", ".gitmodules", false},
		{".gitmodulesx", ".gitmodules", false},
		{".gitmodules x.", ".gitmodules", false},
		{"GI7EBA~0", ".gitmodules", false},
		{"GI7EBA~", ".gitmodules", false},
		{"GI7EBA~X", ".gitmodules", false},
		{"GI7EBA~1X", ".gitmodules", false},
		{"gi7eba~123", ".gitmodules", false}, // nine characters: no short name
		{"gjtmod~1", ".gitmodules", false},
		{"xi7eba~1", ".gitmodules", false},
		{"gxtmod~1", ".gitmodules", false},
		{"gitmod~1.x", ".gitmodules", false},
		{"gitmodules", ".gitmodules", false},
		{"gitmod~", ".gitmodules", false},
		{"docs", ".gitmodules", false},
		// .github and names with an extension.
		{"GITHUB~1", ".github", true},
		{"GITHUB~1. ", ".github", true},
		{"github", ".github", false},
		{".githubx", ".github", false},
		{"CLAUDE~1.MD", "claude.md", true},
		{"CLAUDE~1", "claude.md", false},
		{"CLAUDE~1.MDX", "claude.md", false},
		{"AIDERC~1.YML", ".aider.conf.yml", true},
		{"PRE-CO~1.YAM", ".pre-commit-config.yaml", true},
		{"PRE-CO~1.YAML", ".pre-commit-config.yaml", false},
		{"CODEX~1", ".codex", true},
		{"CODEXA~1", ".codex", true}, // a hash: wo takes any
		{"CODEXZ~1", ".codex", false},
		{"claude.md.bak", "claude.md", false},
	} {
		if got := IsAliasOf(c.name, c.long); got != c.want {
			t.Errorf("IsAliasOf(%q, %q) = %v, want %v", c.name, c.long, got, c.want)
		}
	}
}

func TestIsDotGitAndItsNeighbours(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]bool{
		".git": true, ".GIT": true, "git~1": true, "GIT~1": true, ".git.": true, ".git ": true, ".g\u200cit": true,
		".git::$DATA": true, ".git:x": true, "\ufeff.git": true, "git~1..": true,
		"git~2": false, "gi7eba~1": false, ".gitx": false, "git": false, ".gi": false, "": false, ".git x": false,
	} {
		if got := IsDotGit(name); got != want {
			t.Errorf("IsDotGit(%q) = %v, want %v", name, got, want)
		}
	}
	for name, want := range map[string]bool{".GitHub.": true, "GITHUB~2": true, ".git\u200dhub": true, "github": false, ".gitmodules": false} {
		if got := IsDotGitHub(name); got != want {
			t.Errorf("IsDotGitHub(%q) = %v, want %v", name, got, want)
		}
	}
	for name, want := range map[string]bool{".GITMODULES": true, "gi7eba~1": true, ".gitmodules::$DATA": true, "gitmodules.md": false, ".github": false} {
		if got := IsDotGitmodules(name); got != want {
			t.Errorf("IsDotGitmodules(%q) = %v, want %v", name, got, want)
		}
	}
}
