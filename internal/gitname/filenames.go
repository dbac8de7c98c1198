package gitname

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// A name that means something to git or to a tool (.git, .github,
// .gitmodules, an agent's settings) must be recognised in every spelling
// that some file system or git itself reads as that name, or a fix could
// carry it in under another: as git's path.c does (is_ntfs_dotgit,
// is_hfs_dotgit, is_ntfs_dot_generic, is_hfs_dot_generic), and a little
// wider where git is exact about one file system and wo checks for all of
// them at once.

// FoldName is how the most forgiving file system reads one path
// component: in one case (Unicode simple folding, so the Kelvin sign is a
// k), without the characters HFS+ and git ignore (U+200C–U+200F,
// U+202A–U+202E, U+206A–U+206F, U+FEFF), cut at ':' (on NTFS name:stream
// and name::$DATA are streams of name) and without the trailing dots and
// spaces Windows drops.
func FoldName(name string) string {
	var b strings.Builder
	for _, r := range name {
		if r == ':' {
			break
		}
		if !hfsIgnored(r) {
			b.WriteRune(foldRune(r))
		}
	}
	return strings.TrimRight(b.String(), ". ")
}

// hfsIgnored reports whether HFS+ leaves r out of a name (git's
// next_hfs_char).
func hfsIgnored(r rune) bool {
	return r >= 0x200c && r <= 0x200f || r >= 0x202a && r <= 0x202e || r >= 0x206a && r <= 0x206f || r == 0xfeff
}

// foldRune is r in one case: the lower-case ASCII letter when r folds to
// one (K, k and the Kelvin sign are all k), else r's lower case.
func foldRune(r rune) rune {
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		if f < utf8.RuneSelf {
			return unicode.ToLower(f)
		}
	}
	return unicode.ToLower(r)
}

// IsAliasOf reports whether a file system could take the path component
// name for the file long (written folded, as ".gitmodules" or
// "claude.md"): the same name once folded (FoldName), or one of long's
// NTFS 8.3 short names (see isShortName).
func IsAliasOf(name, long string) bool {
	n := FoldName(name)
	return n == long || isShortName(n, long)
}

// isShortName reports whether the folded name n has the shape of an NTFS
// short name of long: a head, '~' and a number (1–9, then digits), at most
// eight characters before the extension, and long's extension cut to three.
// The head is a prefix of long's name (its dots dropped: GITMOD~1,
// CLAUDE~1.MD), or two of its letters followed by hex digits, NTFS's
// fall-back form with a hash (git's is_ntfs_dot_generic reads
// .gitmodules's gi7eba~1 so; wo takes any hash, as it knows them not
// for every name). A name of that shape is refused even when the hash
// would not match: no real file is named so.
func isShortName(n, long string) bool {
	stem, ext := strings.TrimLeft(long, "."), ""
	if i := strings.LastIndexByte(stem, '.'); i >= 0 {
		stem, ext = stem[:i], stem[i+1:]
	}
	stem = strings.ReplaceAll(stem, ".", "")
	ext = ext[:min(len(ext), 3)]
	base, nExt, dotted := strings.Cut(n, ".")
	if nExt != ext || dotted != (ext != "") {
		return false
	}
	tilde := strings.IndexByte(base, '~')
	if tilde < 0 || len(base) > 8 || tilde+1 == len(base) || base[tilde+1] == '0' {
		return false
	}
	for i := tilde + 1; i < len(base); i++ {
		if base[i] < '0' || base[i] > '9' {
			return false
		}
	}
	for i := 0; i < tilde; i++ {
		same := i < len(stem) && base[i] == stem[i]
		hash := i >= 2 && strings.IndexByte("0123456789abcdef", base[i]) >= 0
		if !same && !hash {
			return false
		}
	}
	return true
}

// IsDotGit reports whether a file system could take name for ".git": in
// any case, with NTFS's trailing dots and spaces, a stream (.git::$DATA)
// or its short name git~1, or with the characters that HFS+ ignores.
// Exactly git's is_ntfs_dotgit and is_hfs_dotgit: a tree git accepts is
// not refused (.git is always the first name a clone writes, so its short
// name is git~1).
func IsDotGit(name string) bool {
	n := FoldName(name)
	return n == ".git" || n == "git~1"
}

// IsDotGitHub reports whether a file system could take name for
// ".github", whose workflows run with the repository's secrets.
func IsDotGitHub(name string) bool { return IsAliasOf(name, ".github") }

// IsDotGitmodules reports whether a file system could take name for
// ".gitmodules", which makes git fetch and check out other repositories.
func IsDotGitmodules(name string) bool { return IsAliasOf(name, ".gitmodules") }
