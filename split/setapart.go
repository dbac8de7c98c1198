package split

import (
	"bytes"
	"fmt"
	"path"
	"sort"
	"strings"
)

// Files that no one reviews line by line are set apart: lockfiles,
// generated code, vendored code, test data blobs. They are read through
// what makes them (a manifest, a generator, go.mod), so their lines and
// files do not count against a PR's budget; they still go into the PR
// whose code needs them, and the plan says which were set apart.

// lockfiles are written by a tool from a manifest beside them.
var lockfiles = map[string]string{
	"go.sum": "go.mod", "go.work.sum": "go.work", "package-lock.json": "package.json", "npm-shrinkwrap.json": "package.json",
	"yarn.lock": "package.json", "pnpm-lock.yaml": "package.json", "bun.lock": "package.json", "Cargo.lock": "Cargo.toml",
	"Gemfile.lock": "Gemfile", "poetry.lock": "pyproject.toml", "uv.lock": "pyproject.toml", "Pipfile.lock": "Pipfile",
	"composer.lock": "composer.json", "flake.lock": "flake.nix", "mix.lock": "mix.exs", "pubspec.lock": "pubspec.yaml",
	"Package.resolved": "Package.swift", "packages.lock.json": "the project file", "gradle.lockfile": "build.gradle",
}

// testDataBlob is the size over which a text file of test data is a
// blob, compared by a test rather than read.
const testDataBlob = 500

// setApartWhy says why a file is set apart, or "".
func setApartWhy(f File) string {
	base := path.Base(f.Path)
	if manifest, ok := lockfiles[base]; ok {
		return fmt.Sprintf("a lockfile, written by its tool from %s: review that change instead", manifest)
	}
	for _, part := range strings.Split(f.Dir(), "/") {
		switch part {
		case "vendor", "node_modules", "third_party":
			return fmt.Sprintf("vendored code (%s/): review the change that brought it (go.mod, a manifest)", part)
		}
	}
	switch {
	case strings.HasSuffix(base, ".pb.go") || strings.HasSuffix(base, ".pb.gw.go") || strings.HasSuffix(base, "_pb2.py") ||
		strings.HasSuffix(base, "_grpc.pb.go"):
		return "generated from a .proto file: review the .proto file"
	case strings.HasPrefix(base, "zz_generated"):
		return "generated (zz_generated): review its generator"
	case strings.HasSuffix(base, ".min.js") || strings.HasSuffix(base, ".min.css"):
		return "minified: review its source"
	}
	src := f.src
	if f.Kind == "deleted" {
		src = f.baseSrc // what it was: a deletion of generated code is read by its generator too
	}
	if path.Ext(f.Path) == ".go" && src != nil && generated(src) {
		return "generated (its header says Code generated … DO NOT EDIT): review its generator"
	}
	if belowTestdata(f.Dir()) && (f.Binary || f.Lines > testDataBlob) {
		if f.Binary {
			return "test data, binary: the tests that read it say what it is"
		}
		return fmt.Sprintf("test data of %d lines: the tests that read it say what it is", f.Lines)
	}
	return ""
}

// generated says whether a Go file's header, before its package clause,
// has the line that marks generated code (https://go.dev/s/generatedcode):
// "// Code generated … DO NOT EDIT.".
func generated(src []byte) bool {
	if !bytes.Contains(src[:min(len(src), headerRead)], []byte("Code generated ")) {
		return false
	}
	for pos := 0; pos < len(src) && pos < headerRead; {
		end, next := lineAt(src, pos)
		line := bytes.TrimSuffix(src[pos:end], []byte("\r"))
		if bytes.HasPrefix(line, []byte("package ")) {
			return false
		}
		if bytes.HasPrefix(line, []byte("// Code generated ")) && bytes.HasSuffix(line, []byte(" DO NOT EDIT.")) {
			return true
		}
		pos = next
	}
	return false
}

// markSetApart records on each file of the change why it is set apart.
func markSetApart(c *Change) {
	for i := range c.Files {
		c.Files[i].SetApart = setApartWhy(c.Files[i])
	}
}

// weight is the lines a file counts against a budget: none when it is
// set apart.
func (f File) weight() int {
	if f.SetApart != "" {
		return 0
	}
	return f.Lines
}

// GitHub shows a pull request's diff up to 20,000 lines and 300 files:
// past that a reviewer cannot read it there, whatever is set apart.
const (
	GitHubMaxLines = 20000
	GitHubMaxFiles = 300
)

// size is what files count against a budget: the lines and files a
// reviewer reads (those set apart left out), and all of them, which
// GitHub's display limits count.
type size struct {
	lines, files       int
	rawLines, rawFiles int
}

func (s size) plus(t size) size {
	return size{s.lines + t.lines, s.files + t.files, s.rawLines + t.rawLines, s.rawFiles + t.rawFiles}
}

// over says whether the files are over the reviewer's budget or past
// what GitHub shows of a diff.
func (s size) over(opts Options) bool {
	return over(s.lines, s.files, opts) || s.rawLines > GitHubMaxLines || s.rawFiles > GitHubMaxFiles
}

// weigh sizes files.
func weigh(files []File) size {
	var s size
	for _, f := range files {
		s.rawLines += f.Lines
		s.rawFiles++
		if f.SetApart == "" {
			s.lines += f.Lines
			s.files++
		}
	}
	return s
}

// setApartSummary lists what the plan set apart, by reason: the files
// (at most five named, then how many more) and their lines.
func setApartSummary(c *Change) []string {
	byWhy := map[string][]File{}
	for _, f := range c.Files {
		if f.SetApart != "" {
			byWhy[f.SetApart] = append(byWhy[f.SetApart], f)
		}
	}
	var out []string
	for _, why := range sortedKeys(byWhy) {
		files := byWhy[why]
		sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
		lines := 0
		var names []string
		for i, f := range files {
			lines += f.Lines
			if i < 5 {
				names = append(names, f.Path)
			}
		}
		if len(files) > 5 {
			names = append(names, fmt.Sprintf("%d more", len(files)-5))
		}
		out = append(out, fmt.Sprintf("%s (%d files, %d lines): %s", strings.Join(names, ", "), len(files), lines, why))
	}
	return out
}
