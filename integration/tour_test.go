package integration

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/wo-runner/wo/internal/gittest"
)

// A reader's block: a shell block of the README or a guide that a
// `<!-- runs -->` line marks as runnable, with what its output must say
// (`<!-- runs; expect: TEXT -->`).
type readerBlock struct {
	file, script, expect string
	line                 int
}

var runsMarker = regexp.MustCompile(`^<!-- runs(?:; expect: (.*?))? -->$`)

// readerBlocks reads the runnable blocks of a Markdown file, in order.
func readerBlocks(t *testing.T, path string) []readerBlock {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	var out []readerBlock
	for i := 0; i < len(lines); i++ {
		m := runsMarker.FindStringSubmatch(strings.TrimSpace(lines[i]))
		if m == nil {
			continue
		}
		if i+1 >= len(lines) || strings.TrimSpace(lines[i+1]) != "```sh" {
			t.Fatalf("%s:%d: a runs marker must stand right above a ```sh block", path, i+1)
		}
		var body []string
		j := i + 2
		for ; j < len(lines) && strings.TrimSpace(lines[j]) != "```"; j++ {
			body = append(body, lines[j])
		}
		out = append(out, readerBlock{file: filepath.Base(path), line: i + 3, script: strings.Join(body, "\n") + "\n", expect: m[1]})
		i = j
	}
	return out
}

// readerShell is one bash session that runs blocks in turn, as a reader
// pasting them into a terminal would: what one block exports or starts in
// the background, the next one has.
type readerShell struct {
	t     *testing.T
	cmd   *exec.Cmd
	in    io.WriteCloser
	lines chan string
	dir   string
	n     int
}

func startReaderShell(t *testing.T, env []string) *readerShell {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command("bash", "--noprofile", "--norc")
	cmd.Dir = dir
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	r, w := io.Pipe()
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sh := &readerShell{t: t, cmd: cmd, in: in, lines: make(chan string, 1024), dir: dir}
	go func() {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			sh.lines <- sc.Text()
		}
		close(sh.lines)
	}()
	t.Cleanup(func() {
		// The session and whatever it left running (the stand-in).
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
		w.Close()
	})
	return sh
}

// run runs one block and returns its output and the commands that failed
// in it; a block that does not finish in time fails the test.
func (sh *readerShell) run(script string, limit time.Duration) (string, []string) {
	sh.t.Helper()
	sh.n++
	file := filepath.Join(sh.dir, fmt.Sprintf("block%02d.sh", sh.n))
	if err := os.WriteFile(file, []byte(script), 0o644); err != nil {
		sh.t.Fatal(err)
	}
	// One line, so that bash has read all of it before the block runs,
	// and the block reads nothing of what comes after.
	fmt.Fprintf(sh.in, `__failed=""; trap '__failed="$__failed|$BASH_COMMAND (exit $?)"' ERR; source %q </dev/null; trap - ERR; printf '\n@@end %%s\n' "$__failed"`+"\n", file)
	var out strings.Builder
	deadline := time.After(limit)
	for {
		select {
		case line, ok := <-sh.lines:
			if !ok {
				sh.t.Fatalf("the shell ended while running:\n%s\noutput:\n%s", script, out.String())
			}
			if rest, found := strings.CutPrefix(line, "@@end "); found {
				var failed []string
				for _, f := range strings.Split(rest, "|") {
					if f != "" {
						failed = append(failed, f)
					}
				}
				return out.String(), failed
			}
			out.WriteString(line + "\n")
		case <-deadline:
			sh.t.Fatalf("not done after %s:\n%s\noutput so far:\n%s", limit, script, out.String())
		}
	}
}

var (
	standinOnce sync.Once
	standinBin  string
	standinErr  error
)

// buildStandin builds bin/gh-standin as make build does.
func buildStandin(t *testing.T) string {
	standinOnce.Do(func() {
		dir, err := os.MkdirTemp("", "wo-standin-")
		if err != nil {
			standinErr = err
			return
		}
		standinBin = filepath.Join(dir, "gh-standin")
		if out, err := exec.Command("go", "build", "-o", standinBin, "./ghstandin/cmd/gh-standin").CombinedOutput(); err != nil {
			standinErr = fmt.Errorf("building gh-standin: %v\n%s", err, out)
		}
	})
	if standinErr != nil {
		t.Fatal(standinErr)
	}
	return standinBin
}

// TestTheTourAndTheGuidesRunAsWritten follows the tour (docs/tour.md) from a
// fresh folder — a repository, the GitHub stand-in, an agent, the
// documented work order, validate, import, run — and checks the pull
// request, the pushed branch and the task's state it leaves. Then it runs
// every guide's runnable examples, in the same shell, as a reader who did
// the tour would.
func TestTheTourAndTheGuidesRunAsWritten(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("the tour is written for bash, which this machine lacks")
	}
	bin := t.TempDir()
	for name, target := range map[string]string{"wo": woBin, "gh-standin": buildStandin(t)} {
		if err := os.Symlink(target, filepath.Join(bin, name)); err != nil {
			t.Fatal(err)
		}
	}
	home, tmp := t.TempDir(), t.TempDir()
	gitPath, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	env := []string{
		"PATH=" + bin + ":" + filepath.Dir(gitPath) + ":/usr/bin:/bin",
		"HOME=" + home, "TMPDIR=" + tmp, "LANG=C.UTF-8", "GIT_CONFIG_NOSYSTEM=1",
		"XDG_STATE_HOME=" + filepath.Join(home, "state"),
	}
	sh := startReaderShell(t, env)

	tour := readerBlocks(t, "../docs/tour.md")
	if len(tour) < 5 {
		t.Fatalf("docs/tour.md marks %d blocks of its tour to run; it has six", len(tour))
	}
	for _, b := range tour {
		out, failed := sh.run(b.script, 3*time.Minute)
		if len(failed) > 0 {
			t.Fatalf("docs/tour.md:%d: a command failed: %q\n%s", b.line, failed, out)
		}
		if b.expect != "" && !strings.Contains(out, b.expect) {
			t.Errorf("docs/tour.md:%d: the output does not say %q:\n%s", b.line, b.expect, out)
		}
	}
	out, _ := sh.run(`echo "T=$T"`, 10*time.Second)
	T := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(out), "T="))
	if T == "" || !strings.HasPrefix(T, tmp) {
		t.Fatalf("the tour's folder is %q, not a fresh folder under TMPDIR %s", T, tmp)
	}
	checkTourPullRequest(t, T)
	checkTourBranch(t, T)
	checkTourState(t, T)
	checkKeyCompletion(t, env, T)

	guides, _ := filepath.Glob("../docs/*.md")
	sort.Strings(guides)
	ran := 0
	for _, g := range guides {
		if filepath.Base(g) == "tour.md" {
			continue // followed above
		}
		for _, b := range readerBlocks(t, g) {
			ran++
			out, failed := sh.run("cd \"$T\"\n"+b.script, 2*time.Minute)
			if len(failed) > 0 {
				t.Errorf("docs/%s:%d: a command failed: %q\n%s", b.file, b.line, failed, out)
				continue
			}
			if b.expect != "" && !strings.Contains(out, b.expect) {
				t.Errorf("docs/%s:%d: the output does not say %q:\n%s", b.file, b.line, b.expect, out)
			}
		}
	}
	if ran < 6 {
		t.Errorf("the guides mark %d examples to run; each guide that can run offline should", ran)
	}
	// The examples read and tried things; the tour's task is as it was.
	checkTourState(t, T)
}

// checkTourPullRequest asks the stand-in, as GitHub would be asked, for
// the pull requests of you/hello.
func checkTourPullRequest(t *testing.T, T string) {
	t.Helper()
	url, err := os.ReadFile(filepath.Join(T, "gh-url"))
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("GET", strings.TrimRight(string(url), "/")+"/repos/you/hello/pulls?state=all", nil)
	req.Header.Set("Authorization", "Bearer tour-token")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var prs []struct {
		Number int    `json:"number"`
		Title  string `json:"title"`
		Body   string `json:"body"`
		State  string `json:"state"`
		Head   struct{ Ref string }
		Base   struct{ Ref string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&prs); err != nil {
		t.Fatalf("the stand-in's pull requests: %v", err)
	}
	if len(prs) != 1 {
		t.Fatalf("the tour opened %d pull requests, want 1: %+v", len(prs), prs)
	}
	pr := prs[0]
	if pr.Title != "Add Hello" || pr.Head.Ref != "review/hello" || pr.Base.Ref != "main" || pr.State != "open" {
		t.Errorf("the pull request: %q %s→%s %s; want \"Add Hello\" review/hello→main open", pr.Title, pr.Head.Ref, pr.Base.Ref, pr.State)
	}
	if !strings.Contains(pr.Body, "Put hello.go up for review") || !strings.Contains(pr.Body, "hello.go") {
		t.Errorf("the pull request's body does not carry the objective and the file: %q", pr.Body)
	}
}

// checkTourBranch reads the pushed branch with git: the work order's
// commit, then the agent's fix of the review comment.
func checkTourBranch(t *testing.T, T string) {
	t.Helper()
	origin := filepath.Join(T, "origin.git")
	subjects := gittest.Run(t, origin, "log", "--format=%s", "review/hello")
	if want := "Fix review comments (iteration 1)\nAdd Hello\nfirst commit"; subjects != want {
		t.Errorf("review/hello on the remote:\n%s\nwant:\n%s", subjects, want)
	}
	if file := gittest.Run(t, origin, "show", "review/hello:hello.go"); !strings.Contains(file, "// Hello returns a greeting.") {
		t.Errorf("the pushed hello.go lacks the agent's fix:\n%s", file)
	}
	if wt := gittest.Run(t, filepath.Join(T, "repo"), "worktree", "list"); strings.Contains(wt, "worktrees") {
		t.Errorf("the worktree was not cleaned up:\n%s", wt)
	}
}

// checkTourState reads the task as the tour left it.
func checkTourState(t *testing.T, T string) {
	t.Helper()
	cmd := exec.Command(woBin, "show", "hello_01", "--json")
	cmd.Env = append(os.Environ(), "WO_STORE="+filepath.Join(T, "wo.db"))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("wo show hello_01: %v\n%s", err, out)
	}
	var env struct {
		Data struct {
			Task struct {
				Status    string `json:"status"`
				WorkOrder struct {
					State struct {
						CurrentStep      int    `json:"current_step"`
						PRNumber         int    `json:"pr_number"`
						ReviewIterations int    `json:"review_iterations"`
						Phase            string `json:"phase"`
					} `json:"state"`
				} `json:"work_order"`
			} `json:"task"`
		} `json:"data"`
	}
	if err := json.Unmarshal(out, &env); err != nil {
		t.Fatalf("wo show --json: %v\n%s", err, out)
	}
	task := env.Data.Task
	st := task.WorkOrder.State
	if task.Status != "in_review" || st.CurrentStep != 11 || st.PRNumber != 1 || st.ReviewIterations != 1 {
		t.Errorf("hello_01: status %s, step %d, PR #%d, %d fix round(s); want in_review, 11, #1, 1", task.Status, st.CurrentStep, st.PRNumber, st.ReviewIterations)
	}
}

// checkKeyCompletion presses TAB after "wo show hel" in bash with wo's
// completion loaded: the tour's task key comes from the store.
func checkKeyCompletion(t *testing.T, env []string, T string) {
	t.Helper()
	prog := `source <(wo completion bash); COMP_WORDS=(wo show hel); COMP_CWORD=2; _wo; printf '%s\n' "${COMPREPLY[@]}"`
	cmd := exec.Command("bash", "-c", prog)
	cmd.Env = append(env, "WO_STORE="+filepath.Join(T, "wo.db"))
	out, err := cmd.CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "hello_01" {
		t.Errorf("wo show hel<TAB> in bash: %q (%v), want hello_01", out, err)
	}
}
