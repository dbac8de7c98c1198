package integration

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/wo-runner/wo/github"
	"github.com/wo-runner/wo/integration/ghstandin"
)

const (
	stackBegin = "<!-- wo:stack -->"
	stackEnd   = "<!-- /wo:stack -->"
)

// stackRow is one row of a stack table: | mark | part | PR | title | depends on | state |.
var stackRow = regexp.MustCompile(`(?m)^\| (→)? \| (?:\*\*)?(\d+) of (\d+)(?:\*\*)? \| ([^|]+) \| (.+) \| ([^|]+) \| ([^|]+) \|$`)

// stackBodies reads the stand-in's PRs: number → description.
func stackBodies(gh *ghstandin.Server) map[int]string {
	out := map[int]string{}
	for _, p := range gh.PullRequests("acme/big") {
		out[p["number"].(int)] = p["body"].(string)
	}
	return out
}

// patchesSince counts PATCHes of pull requests after the first n requests.
func patchesSince(gh *ghstandin.Server, n int) map[string]int {
	out := map[string]int{}
	for _, r := range gh.Requests()[n:] {
		if r.Method == http.MethodPatch {
			out[r.Path]++
		}
	}
	return out
}

// approvingGitHub starts a stand-in that serves origin as the GitHub
// repository repo and approves each PR at once (no review rounds), and
// returns the environment wo needs to reach it. It closes with the test.
func approvingGitHub(t *testing.T, repo, origin string) (*ghstandin.Server, []string) {
	t.Helper()
	gh := ghstandin.New(secretToken)
	gh.Remotes[repo] = origin
	gh.ReviewDelay = 50 * time.Millisecond
	if err := gh.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(gh.Close)
	return gh, []string{"GITHUB_TOKEN=" + secretToken, "GITHUB_API_URL=" + gh.URL, "WO_REVIEW_WAIT=20s", "WO_POLL_INTERVAL=50ms"}
}

func TestStackTablesInPRDescriptionsAfterSplitRunAndSync(t *testing.T) {
	t.Parallel()
	f := goModuleFixture(t, 12)
	gh, env := approvingGitHub(t, "acme/big", f.origin)

	r := f.wo(env, "split", "--repo", f.repo, "--base", "base", "--source", "main", "--mode", "stacked",
		"--github-repo", "acme/big", "--worktree-root", f.wtRoot, "--max-lines", "40", "--epic-key", "task_big", "--json")
	if r.code != 0 {
		t.Fatalf("split: exit %d\n%s", r.code, r.stderr)
	}
	var split struct {
		Data struct {
			PRs []struct {
				Number int
				Title  string
			} `json:"prs"`
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &split); err != nil {
		t.Fatal(err)
	}
	n := len(split.Data.PRs)
	if n < 3 {
		t.Fatalf("%d PRs: too few for a stack", n)
	}
	if r := f.wo(env, "run", "--epic", "task_big", "--parallel", "3"); r.code != 0 {
		t.Fatalf("run --epic: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	reads, edits := 0, 0
	for pr, c := range patchesSince(gh, 0) {
		edits += c
		// Each pull request opens with the stack as then known, and the
		// epic run refreshes once at its end: an earlier part is edited
		// once, not once per later part (n(n-1)/2 edits in all).
		if c > 1 {
			t.Errorf("the epic run edited the description of #%v %d times, want at most once", pr, c)
		}
	}
	if edits > n-1 {
		t.Errorf("the epic run edited descriptions %d times for %d PRs, want at most %d", edits, n, n-1)
	}
	for _, q := range gh.Requests() {
		if q.Method == http.MethodGet && regexp.MustCompile(`/pulls/\d+$`).MatchString(q.Path) {
			reads++
		}
	}
	t.Logf("the epic run of %d stacked PRs read PRs %d times and edited descriptions %d times", n, reads, edits)

	// GitHub's number of each part, from the work orders.
	ghNumber := map[int]int{} // part → GitHub number
	prURL := map[int]string{}
	for part := 1; part <= n; part++ {
		st := stateOf(f.doc(fmt.Sprintf("task_big_pr%02d", part)))
		num, _ := st["pr_number"].(float64)
		ghNumber[part] = int(num)
		prURL[part], _ = st["pr_url"].(string)
		if !strings.HasSuffix(prURL[part], fmt.Sprintf("/acme/big/pull/%d", ghNumber[part])) {
			t.Fatalf("part %d recorded #%d at %q", part, ghNumber[part], prURL[part])
		}
	}
	checkTables := func(when string, merged map[int]bool) map[int]string {
		t.Helper()
		bodies := stackBodies(gh)
		if len(bodies) != n {
			t.Fatalf("%s: %d PRs on the stand-in for %d parts", when, len(bodies), n)
		}
		for part := 1; part <= n; part++ {
			body := bodies[ghNumber[part]]
			if strings.Count(body, stackBegin) != 1 || strings.Count(body, stackEnd) != 1 {
				t.Errorf("%s: part %d (#%d) has no single stack section:\n%s", when, part, ghNumber[part], body)
				continue
			}
			if !strings.Contains(body, fmt.Sprintf("### Stack: part %d of %d\n", part, n)) {
				t.Errorf("%s: part %d does not say so:\n%s", when, part, body)
			}
			// Stacked: each part depends on the one just below it.
			if part > 1 && !strings.Contains(body, fmt.Sprintf("Depends on #%d", ghNumber[part-1])) {
				t.Errorf("%s: part %d does not say it depends on #%d:\n%s", when, part, ghNumber[part-1], body)
			}
			rows := stackRow.FindAllStringSubmatch(body, -1)
			if len(rows) != n {
				t.Errorf("%s: part %d's table has %d rows, want %d:\n%s", when, part, len(rows), n, body)
				continue
			}
			for i, row := range rows {
				mark, p, of, pr, title, dep, state := row[1], row[2], row[3], row[4], row[5], row[6], row[7]
				if p != fmt.Sprint(i+1) || of != fmt.Sprint(n) {
					t.Errorf("%s: part %d's row %d says part %s of %s", when, part, i+1, p, of)
				}
				if !strings.Contains(title, fmt.Sprintf("%d/%d", i+1, n)) {
					t.Errorf("%s: part %d's row %d has the title %q, not part %d's", when, part, i+1, title, i+1)
				}
				wantDep := "-"
				switch {
				case i+1 == part+1:
					wantDep = "this pull request"
				case i > 0:
					wantDep = fmt.Sprintf("#%d", ghNumber[i])
				}
				if dep != wantDep {
					t.Errorf("%s: part %d's row %d depends on %q, want %q", when, part, i+1, dep, wantDep)
				}
				wantState := "open"
				if merged[i+1] {
					wantState = "merged"
				}
				if state != wantState {
					t.Errorf("%s: part %d's row %d is %q, want %q", when, part, i+1, state, wantState)
				}
				if i+1 == part {
					if mark != "→" || pr != "**this pull request**" {
						t.Errorf("%s: part %d's own row is not marked: %q", when, part, row[0])
					}
					continue
				}
				link := fmt.Sprintf("#%d", ghNumber[i+1]) // GitHub links it

				if mark != "" || pr != link {
					t.Errorf("%s: part %d's row %d: %q, want the link %s", when, part, i+1, row[0], link)
				}
			}
		}
		return bodies
	}
	bodies := checkTables("after the epic run", nil)

	// Right after the run every table is current: a sync edits nothing.
	from := len(gh.Requests())
	if r := f.wo(env, "sync", "task_big"); r.code != 0 {
		t.Fatalf("sync: exit %d\n%s", r.code, r.stderr)
	}
	if p := patchesSince(gh, from); len(p) != 0 {
		t.Errorf("a sync with nothing changed edited descriptions: %v", p)
	}

	// A person writes in the top PR's description (in GitHub's editor,
	// which sends CRLF), and part 1 is merged.
	top := ghNumber[n]
	edited := "Reviewer: start with the store.\r\n\r\n" + strings.ReplaceAll(bodies[top], "\n", "\r\n") + "\r\n\r\n- [ ] checked the CLI by hand"
	client, err := github.New(github.Config{BaseURL: gh.URL, Token: secretToken, Repo: "acme/big"})
	if err != nil {
		t.Fatal(err)
	}
	if err := client.EditPRBody(testContext(), top, edited); err != nil {
		t.Fatal(err)
	}
	// Squash-merged as on GitHub, its branch kept: wo sync restacks, and
	// the PR above it is retargeted to the base.
	if _, err := gh.MergeAs("acme/big", ghNumber[1], ghstandin.MergeSquash, false); err != nil {
		t.Fatal(err)
	}
	from = len(gh.Requests())
	r = f.wo(env, "sync", "task_big", "--json")
	if r.code != 0 {
		t.Fatalf("sync after the merge: exit %d\n%s", r.code, r.stderr)
	}
	var synced struct {
		Data []struct {
			Key        string `json:"key"`
			PRState    string `json:"pr_state"`
			StackTable string `json:"stack_table"`
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &synced); err != nil {
		t.Fatal(err)
	}
	for _, d := range synced.Data[1:] {
		want := "updated"
		if d.Key == "task_big_pr01" {
			want = "" // merged: its description is history
		}
		if d.StackTable != want {
			t.Errorf("sync says the stack table of %s (%s) is %q, want %q", d.Key, d.PRState, d.StackTable, want)
		}
	}
	p := patchesSince(gh, from)
	if p[fmt.Sprintf("/repos/acme/big/pulls/%d", ghNumber[1])] != 0 {
		t.Errorf("the merged PR's description was edited: %v", p)
	}
	for part := 2; part <= n; part++ {
		// Its description once; part 2 also its base (a PATCH of its own).
		want := 1
		if part == 2 {
			want = 2
		}
		if c := p[fmt.Sprintf("/repos/acme/big/pulls/%d", ghNumber[part])]; c != want {
			t.Errorf("part %d was edited %d times after the merge, want %d", part, c, want)
		}
	}
	// The merged part keeps the table it had; every open one shows it merged.
	after := stackBodies(gh)
	if after[ghNumber[1]] != bodies[ghNumber[1]] {
		t.Errorf("the merged PR's description changed:\n%s", after[ghNumber[1]])
	}
	for part := 2; part <= n; part++ {
		body := after[ghNumber[part]]
		if !strings.Contains(body, fmt.Sprintf("| 1 of %d | #%d |", n, ghNumber[1])) ||
			!strings.Contains(strings.SplitN(body[strings.Index(body, fmt.Sprintf("| 1 of %d |", n)):], "\n", 2)[0], "| merged |") {
			t.Errorf("part %d does not show part 1 merged:\n%s", part, body)
		}
		if part == 2 && !strings.Contains(body, fmt.Sprintf("Depends on #%d (merged)", ghNumber[1])) {
			t.Errorf("part 2 does not say its dependency is merged:\n%s", body)
		}
	}
	topBody := after[top]
	if !strings.HasPrefix(topBody, "Reviewer: start with the store.\r\n\r\n") || !strings.HasSuffix(topBody, stackEnd+"\r\n\r\n- [ ] checked the CLI by hand") {
		t.Errorf("the text a person wrote around the section changed:\n%q", topBody)
	}
	i, j := strings.Index(edited, stackBegin), strings.Index(topBody, stackBegin)
	if edited[:i] != topBody[:j] {
		t.Errorf("the text before the section changed: %q → %q", edited[:i], topBody[:j])
	}

	// Once more with nothing new: no edit.
	from = len(gh.Requests())
	if r := f.wo(env, "sync", "task_big"); r.code != 0 || !strings.Contains(r.stdout, "stack table unchanged") {
		t.Fatalf("sync again: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if p := patchesSince(gh, from); len(p) != 0 {
		t.Errorf("a second sync edited descriptions: %v", p)
	}
	if v := gh.Violations(); len(v) > 0 {
		t.Errorf("requests GitHub's OpenAPI description does not allow: %v", v)
	}
}
