package split

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/wo-runner/wo/gitops"
	"github.com/wo-runner/wo/internal/gittest"
	"github.com/wo-runner/wo/workorder"
)

func git(t testing.TB, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=T", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=T", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_NOSYSTEM=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// goPkg is a package of the generated change: its files' line counts and
// the packages it imports.
type goPkg struct {
	dir     string
	files   int
	lines   int
	imports []string
}

// repoWithChange builds a module whose base branch has only go.mod and
// whose main branch adds the packages.
func repoWithChange(t testing.TB, pkgs []goPkg, extra map[string]string) *gitops.Repo {
	t.Helper()
	root := t.TempDir()
	repo := filepath.Join(root, "repo")
	gittest.Run(t, root, "init", "-q", "-b", "main", repo)
	os.WriteFile(filepath.Join(repo, "go.mod"), []byte("module example.com/big\n\ngo 1.22\n"), 0o644)
	gittest.Run(t, repo, "add", "-A")
	gittest.Run(t, repo, "commit", "-q", "-m", "base")
	gittest.Run(t, repo, "branch", "base")
	for _, p := range pkgs {
		name := filepath.Base(p.dir)
		for i := 0; i < p.files; i++ {
			var b strings.Builder
			fmt.Fprintf(&b, "package %s\n", name)
			if i == 0 {
				for _, imp := range p.imports {
					fmt.Fprintf(&b, "\nimport _ \"example.com/big/%s\"\n", imp)
				}
			}
			for b.Len() > 0 && strings.Count(b.String(), "\n") < p.lines/p.files {
				b.WriteString("// filler\n")
			}
			os.MkdirAll(filepath.Join(repo, p.dir), 0o755)
			os.WriteFile(filepath.Join(repo, p.dir, fmt.Sprintf("f%d.go", i)), []byte(b.String()), 0o644)
		}
	}
	for path, content := range extra {
		os.MkdirAll(filepath.Dir(filepath.Join(repo, path)), 0o755)
		os.WriteFile(filepath.Join(repo, path), []byte(content), 0o644)
	}
	gittest.Run(t, repo, "add", "-A")
	gittest.Run(t, repo, "commit", "-q", "-m", "the change")
	r, err := gitops.Open(repo)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func plan(t *testing.T, r *gitops.Repo, opts Options) *Plan {
	t.Helper()
	c, err := ReadChange(context.Background(), r, "base", "main")
	if err != nil {
		t.Fatal(err)
	}
	p, err := Make(c, opts)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func prOf(p *Plan, dir string) *PR {
	for _, pr := range p.PRs {
		for _, u := range pr.Units {
			if u == dir || strings.Contains(u, dir) {
				return pr
			}
		}
	}
	return nil
}

func TestPlanKeepsPackagesWholeAndOrdersByImports(t *testing.T) {
	t.Parallel()
	r := repoWithChange(t, []goPkg{
		{dir: "internal/config", files: 3, lines: 60},
		{dir: "internal/store", files: 2, lines: 80, imports: []string{"internal/config"}},
		{dir: "internal/api", files: 2, lines: 80, imports: []string{"internal/store", "internal/config"}},
		{dir: "cmd/big", files: 1, lines: 20, imports: []string{"internal/api"}},
		{dir: "internal/huge", files: 4, lines: 400},
	}, map[string]string{"internal/store/testdata/case.json": "{}\n", "docs/readme.md": "# docs\n"})
	p := plan(t, r, Options{MaxLines: 90, MaxFiles: 10})

	// Every changed file in exactly one PR.
	seen := map[string]int{}
	for _, pr := range p.PRs {
		for _, f := range pr.Files {
			seen[f.Path]++
		}
	}
	if len(seen) != len(p.Change.Files) {
		t.Errorf("%d files planned, %d changed", len(seen), len(p.Change.Files))
	}
	for path, n := range seen {
		if n != 1 {
			t.Errorf("%s is in %d PRs", path, n)
		}
	}
	// No package split; test data stays with its package.
	for _, dir := range []string{"internal/config", "internal/store", "internal/api", "internal/huge"} {
		owners := map[int]bool{}
		for _, pr := range p.PRs {
			for _, f := range pr.Files {
				if strings.HasPrefix(f.Path, dir+"/") {
					owners[pr.Number] = true
				}
			}
		}
		if len(owners) != 1 {
			t.Errorf("%s is split across PRs %v", dir, owners)
		}
	}
	// Imports order the PRs and become dependencies.
	cfg, st, api, cmd := prOf(p, "internal/config"), prOf(p, "internal/store"), prOf(p, "internal/api"), prOf(p, "cmd/big")
	if !(cfg.Number <= st.Number && st.Number <= api.Number && api.Number <= cmd.Number) {
		t.Errorf("order config #%d, store #%d, api #%d, cmd #%d", cfg.Number, st.Number, api.Number, cmd.Number)
	}
	if st != cfg && !contains(st.BlockedBy, cfg.Number) {
		t.Errorf("store's PR #%d is not blocked by config's #%d: %v", st.Number, cfg.Number, st.BlockedBy)
	}
	if !contains(cmd.BlockedBy, api.Number) || !contains(api.Blocks, cmd.Number) {
		t.Errorf("dependencies are not recorded both ways: %v / %v", cmd.BlockedBy, api.Blocks)
	}
	// The oversize package stays whole and is reported.
	if len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0], "internal/huge alone has") {
		t.Errorf("warnings: %v", p.Warnings)
	}
	for _, pr := range p.PRs {
		if pr.Lines > 90 && !strings.Contains(strings.Join(pr.Units, ","), "internal/huge") {
			t.Errorf("PR #%d has %d lines over the budget", pr.Number, pr.Lines)
		}
	}
	// Deterministic.
	again := plan(t, r, Options{MaxLines: 90, MaxFiles: 10})
	a, _ := json.Marshal(p.PRs)
	b, _ := json.Marshal(again.PRs)
	if string(a) != string(b) {
		t.Error("the same change gave two different plans")
	}
}

func TestImportCyclesAreMergedIntoOnePR(t *testing.T) {
	t.Parallel()
	r := repoWithChange(t, []goPkg{
		{dir: "a", files: 1, lines: 10, imports: []string{"b"}},
		{dir: "b", files: 1, lines: 10, imports: []string{"c"}},
		{dir: "c", files: 1, lines: 10, imports: []string{"a"}},
		{dir: "d", files: 1, lines: 10, imports: []string{"a"}},
	}, nil)
	p := plan(t, r, Options{MaxLines: 15, MaxFiles: 10})
	ab, c, d := prOf(p, "a"), prOf(p, "c"), prOf(p, "d")
	if ab != c || ab.Units[0] != "a + b + c" {
		t.Fatalf("the cycle a→b→c→a is not one unit: %v", ab.Units)
	}
	if d == ab || !contains(d.BlockedBy, ab.Number) {
		t.Errorf("d must come after the cycle: %+v", d)
	}
}

func TestHandPlanIsChecked(t *testing.T) {
	t.Parallel()
	r := repoWithChange(t, []goPkg{
		{dir: "lib", files: 1, lines: 10},
		{dir: "app", files: 1, lines: 10, imports: []string{"lib"}},
	}, map[string]string{"docs/a.md": "x\n"})
	c, err := ReadChange(context.Background(), r, "base", "main")
	if err != nil {
		t.Fatal(err)
	}
	parse := func(s string) *HandPlan {
		hp, err := ParseHandPlan([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return hp
	}
	p, err := FromHand(c, parse(`{"prs": [{"title": "Library", "globs": ["lib/**"]}, {"title": "App", "globs": ["app/**", "web/**"]}], "exclude": ["docs/**"]}`))
	if err != nil {
		t.Fatal(err)
	}
	if p.PRs[0].Title != "[1/2] Library" || !reflect.DeepEqual(p.PRs[1].BlockedBy, []int{1}) || !reflect.DeepEqual(p.Excluded, []string{"docs/a.md"}) {
		t.Errorf("plan: %+v %+v excluded %v", p.PRs[0], p.PRs[1], p.Excluded)
	}
	if len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0], `"web/**" matches no changed file`) {
		t.Errorf("warnings %v", p.Warnings)
	}
	if _, err := FromHand(c, parse(`{"prs": [{"title": "Lib", "globs": ["lib/**"]}]}`)); err == nil ||
		!strings.Contains(err.Error(), "app/f0.go is in no PR and not excluded") || !strings.Contains(err.Error(), "docs/a.md is in no PR") {
		t.Errorf("uncovered files: %v", err)
	}
	if _, err := FromHand(c, parse(`{"prs": [{"title": "App", "globs": ["app/**"]}, {"title": "Lib", "globs": ["lib/**", "docs/**"]}]}`)); err == nil ||
		!strings.Contains(err.Error(), "PR #1 imports example.com/big/lib from PR #2, which comes later") {
		t.Errorf("wrong order: %v", err)
	}
	if _, err := ParseHandPlan([]byte(`{"prs": [{"title": "x", "globs": ["[bad"]}]}`)); err == nil {
		t.Error("a bad glob was accepted")
	}
}

func TestReviseChangesOnlyWorkOrdersThatHaveNotStarted(t *testing.T) {
	t.Parallel()
	r := repoWithChange(t, []goPkg{{dir: "lib", files: 2, lines: 10}, {dir: "app", files: 1, lines: 10, imports: []string{"lib"}}}, nil)
	_, tasks, err := Documents(plan(t, r, Options{MaxLines: 12}), DocOptions{RepoPath: r.Path, WorktreeRoot: "/tmp/wt"})
	if err != nil {
		t.Fatal(err)
	}
	roundTrip := func(d map[string]any) map[string]any {
		var out map[string]any
		b, _ := json.Marshal(d)
		json.Unmarshal(b, &out)
		return out
	}
	app := tasks[len(tasks)-1]
	if rev := Revise(roundTrip(app), app); rev.Patch != nil || rev.Started != "" {
		t.Errorf("the same plan again: %+v", rev)
	}
	// The import is gone from the source: same files, no dependency.
	planned := roundTrip(app)
	store := roundTrip(app)
	store["_rev"] = "r1"
	planned["work_order"].(map[string]any)["dependencies"] = map[string]any{"blocked_by": []any{}, "blocks": []any{}}
	rev := Revise(store, planned)
	if got := fmt.Sprint(workorder.Get(rev.Patch, "work_order.dependencies.blocked_by")); got != "[]" {
		t.Errorf("a dropped dependency must be written: %+v", rev)
	}
	if rev.Patch["work_order"].(map[string]any)["state"] != nil || rev.Patch["status"] != nil {
		t.Errorf("a rerun writes inputs and dependencies only: %v", rev.Patch)
	}
	// Started: left alone and named.
	store["work_order"].(map[string]any)["state"].(map[string]any)["current_step"] = 3.0
	if rev := Revise(store, planned); rev.Patch != nil || rev.Started != workorder.Key(app)+" (status open, step 3)" {
		t.Errorf("started work order: %+v", rev)
	}
	if err := CheckRerun("task_e", tasks[:1], tasks); err == nil || !strings.Contains(err.Error(), "exists with 1 work orders, and this plan has 2") {
		t.Errorf("another shape: %v", err)
	}
	if err := CheckRerun("task_e", tasks, tasks); err != nil {
		t.Error(err)
	}
}

func TestReadChangeKinds(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	repo := filepath.Join(root, "repo")
	gittest.Run(t, root, "init", "-q", "-b", "main", repo)
	os.WriteFile(filepath.Join(repo, "keep.txt"), []byte("a\nb\n"), 0o644)
	os.WriteFile(filepath.Join(repo, "gone.txt"), []byte("x\n"), 0o644)
	os.WriteFile(filepath.Join(repo, "old.txt"), []byte(strings.Repeat("same content\n", 20)), 0o644)
	gittest.Run(t, repo, "add", "-A")
	gittest.Run(t, repo, "commit", "-q", "-m", "base")
	gittest.Run(t, repo, "branch", "base")
	os.WriteFile(filepath.Join(repo, "keep.txt"), []byte("a\nb\nc"), 0o644)
	os.Remove(filepath.Join(repo, "gone.txt"))
	gittest.Run(t, repo, "mv", "old.txt", "new.txt")
	os.WriteFile(filepath.Join(repo, "blob.bin"), []byte{0, 1, 2, 3}, 0o644)
	gittest.Run(t, repo, "add", "-A")
	gittest.Run(t, repo, "commit", "-q", "-m", "change")
	r, _ := gitops.Open(repo)
	c, err := ReadChange(context.Background(), r, "base", "main")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, f := range c.Files {
		got[f.Path] = fmt.Sprintf("%s/%d/%v/%s", f.Kind, f.Lines, f.Binary, f.OldPath)
	}
	// A modified or renamed file counts the lines added and removed, what
	// a reviewer reads: keep.txt gains one, old.txt moves unchanged.
	want := map[string]string{"keep.txt": "modified/1/false/", "gone.txt": "deleted/1/false/",
		"new.txt": "renamed/0/false/old.txt", "blob.bin": "added/0/true/"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("changes:\n got %v\nwant %v", got, want)
	}
}

func TestPRsAreNamedApartAndNumberedAsASeries(t *testing.T) {
	t.Parallel()
	plan := &Plan{PRs: []*PR{
		{Number: 1, Units: []string{"internal/msg", "internal/event"}, unitLines: map[string]int{"internal/msg": 27, "internal/event": 305}},
		{Number: 2, Units: []string{"internal/adapters/claudecode", "internal/adapters/codex"}},
		{Number: 3, Units: []string{"internal/tui (part 2 of 3)"}, Files: []File{{Path: "internal/tui/keys.go", Lines: 100},
			{Path: "internal/tui/view_test.go", Lines: 900}, {Path: "internal/tui/view.go", Lines: 300}, {Path: "internal/tui/z.go", Lines: 10}}},
		{Number: 4, Units: []string{"internal/tui (part 3 of 3)"}, Files: []File{{Path: "internal/tui/model.go", Lines: 100}}},
		{Number: 5, Units: []string{"."}},
		{Number: 6, Units: []string{"intake", "integration/ghstandin (part 1 of 3)"}, unitLines: map[string]int{"intake": 100, "integration/ghstandin (part 1 of 3)": 269},
			Files: []File{{Path: "intake/a.go", Lines: 100}, {Path: "integration/ghstandin/state.go", Lines: 269}}},
	}}
	name(plan)
	// A part is named after its largest files, code first, not "part 2
	// of 3", which reads alike across the package's PRs.
	// Among other packages, a part is named after its largest file there.
	want := []string{"[1/6] internal/event and internal/msg", "[2/6] internal/adapters", "[3/6] internal/tui: view, keys, z and 1 more",
		"[4/6] internal/tui: model", "[5/6] root", "[6/6] integration/ghstandin (state.go) and intake"}
	wantSlug := []string{"event-and-internal-msg", "adapters", "tui-view-keys-z-and-1-more", "tui-model", "root", "integration-ghstandin-state-go-and-intak"}
	for i, pr := range plan.PRs {
		if pr.Title != want[i] || pr.Slug != wantSlug[i] {
			t.Errorf("PR %d is titled %q (%s), want %q (%s)", pr.Number, pr.Title, pr.Slug, want[i], wantSlug[i])
		}
	}
}

// A PR of a cycle of many packages was titled with every member's name
// (390 characters on go-git; GitHub refuses a title over 256): the theme
// is capped and names the dominant package, "and N more".
func TestCycleTitleIsCappedAndNamesItsDominantPackage(t *testing.T) {
	t.Parallel()
	var pkgs []goPkg
	for i := 0; i < 12; i++ {
		lines := 10
		if i == 7 {
			lines = 30
		}
		pkgs = append(pkgs, goPkg{dir: fmt.Sprintf("averyveryverylongpackagename%02d", i), files: 1, lines: lines,
			imports: []string{fmt.Sprintf("averyveryverylongpackagename%02d", (i+1)%12)}})
	}
	p := plan(t, repoWithChange(t, pkgs, nil), Options{MaxLines: 400})
	pr := prOf(p, "averyveryverylongpackagename07")
	if n := utf8.RuneCountInString(pr.Theme); n > 72 || len(pr.Title) > 256 {
		t.Errorf("theme of %d characters, title of %d: %q", n, len(pr.Title), pr.Title)
	}
	if pr.Theme != "averyveryverylongpackagename07 and 11 more" {
		t.Errorf("the cycle's PR is titled %q", pr.Title)
	}
	if got := fit(strings.Repeat("x/", 50)+"leaf", " and 3 more"); utf8.RuneCountInString(got) != 72 || !strings.HasSuffix(got, "/leaf and 3 more") {
		t.Errorf("a long name is cut to %q", got)
	}
}

// go.mod's unit (README, licence, CI files) is often the PR's largest,
// but "module and 1 more" says nothing: the PR is named after its
// package. Consecutive parts of one package read as one range.
func TestThemesNameWhatThePRIsAbout(t *testing.T) {
	t.Parallel()
	plan := &Plan{PRs: []*PR{
		{Number: 1, Units: []string{"go.mod", "utils"}, unitLines: map[string]int{"go.mod": 1200, "utils": 300}},
		{Number: 2, Units: []string{"go.mod", "utils", "lists"}, unitLines: map[string]int{"go.mod": 1200, "utils": 300, "lists": 200}},
	}}
	name(plan)
	if got := plan.PRs[0].Theme; got != "utils and go.mod" {
		t.Errorf("go.mod with utils is themed %q", got)
	}
	if got := plan.PRs[1].Theme; got != "utils, lists and go.mod" {
		t.Errorf("go.mod with utils and lists is themed %q", got)
	}
	u := &unit{name: "plumbing"}
	names, lines := packagesOf([]*piece{{unit: u, part: 3, parts: 4, size: size{lines: 10}}, {unit: u, part: 4, parts: 4, size: size{lines: 20}}})
	if !reflect.DeepEqual(names, []string{"plumbing (parts 3-4 of 4)"}) || lines[names[0]] != 30 {
		t.Errorf("two parts of one package in a PR are named %v (%v)", names, lines)
	}
	if got := displayUnit(". (tests) (part 1 of 2)"); got != "root (tests) (part 1 of 2)" {
		t.Errorf("the root package's tests are named %q", got)
	}
}

// Files alike enough to be renames are paired the same way on every
// read, and with the file whose path is most like theirs: go-git chose
// among equally alike files at random, and the plan changed with it.
func TestRenamesArePairedAlikeOnEveryRead(t *testing.T) {
	t.Parallel()
	page := func(lang string) string {
		var b strings.Builder
		for i := 0; i < 40; i++ {
			fmt.Fprintf(&b, "line %d of the style guide\n", i)
		}
		return b.String() + "translated into " + lang + "\n"
	}
	base := map[string]string{"docs/es/guide.md": page("es"), "docs/fr/guide.md": page("fr"), "docs/pt/guide.md": page("pt"),
		"same/a.txt": "one content\n", "same/b.txt": "one content\n"}
	// website/guide.mdx is as like each translation (equally unlike
	// its path): the first in path order is taken.
	source := map[string]string{"website/guide.mdx": page("a new site"), "moved/b.txt": "one content\n"}
	r := repoFromTo(t, base, source)
	var first []string
	for i := 0; i < 8; i++ {
		c, err := ReadChange(context.Background(), r, "base", "main")
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, f := range c.Files {
			got = append(got, f.Kind+" "+f.OldPath+" → "+f.Path)
		}
		if i == 0 {
			first = got
			continue
		}
		if !reflect.DeepEqual(got, first) {
			t.Fatalf("read %d differs:\n%v\nfrom\n%v", i+1, got, first)
		}
	}
	for _, want := range []string{"renamed docs/es/guide.md → website/guide.mdx", "renamed same/b.txt → moved/b.txt", "deleted  → same/a.txt"} {
		if !slices.Contains(first, want) {
			t.Errorf("the change lacks %q: %v", want, first)
		}
	}
}

// The parts of a docs site are titled after their sections (the folders
// that tell them apart), not the file names that every translation
// shares.
func TestPlainPartsAreTitledAfterTheirFolders(t *testing.T) {
	t.Parallel()
	source := map[string]string{"go.mod": gomodM, "p/p.go": "package p\n" + body("P", 10)}
	for _, lang := range []string{"es", "fr", "ja", "pt"} {
		for _, page := range []string{"usage.md", "changelog.md", "api.md"} {
			source["docs/i18n/"+lang+"/current/"+page] = strings.Repeat("a line of "+lang+"\n", 300)
		}
	}
	p := planChange(t, changeOf(t, map[string]string{"go.mod": gomodM}, source), Options{MaxLines: 1000, MaxFiles: 150, SplitLarge: true})
	seen := map[string]int{}
	for _, pr := range p.PRs {
		if !plainPR(pr) {
			continue
		}
		if !strings.Contains(pr.Title, "i18n/") || strings.Contains(pr.Title, "usage.md") || strings.Contains(pr.Title, "(2)") {
			t.Errorf("PR #%d is titled %q", pr.Number, pr.Title)
		}
		seen[pr.Theme]++
	}
	if len(seen) < 4 {
		t.Errorf("the docs' PRs have %d titles for four sections: %v", len(seen), seen)
	}
}
