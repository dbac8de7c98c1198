package integration

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// The example workflows in docs/ci pass actionlint, which the tools module
// pins (go tool runs it from the module cache).
func TestExampleWorkflowsPassActionlint(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("../docs/ci/*.yml")
	if err != nil || len(files) < 2 {
		t.Fatalf("workflows in docs/ci: %v (%v)", files, err)
	}
	for i, f := range files {
		abs, _ := filepath.Abs(f)
		files[i] = abs
	}
	cmd := exec.Command("go", append([]string{"tool", "actionlint"}, files...)...)
	cmd.Dir = "../tools"
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("actionlint: %v\n%s", err, out)
	}
}

// The example workflows follow GitHub's guidance for workflows that
// untrusted events start (issue 24, finding 4): read from the YAML itself.
func TestExampleWorkflowsKeepSecretsFromUntrustedEvents(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("../docs/ci/*.yml")
	if err != nil || len(files) < 2 {
		t.Fatalf("workflows in docs/ci: %v (%v)", files, err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			t.Parallel()
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var doc yaml.Node
			if err := yaml.Unmarshal(b, &doc); err != nil || len(doc.Content) != 1 {
				t.Fatalf("%s is not one YAML document: %v", f, err)
			}
			checkWorkflow(t, doc.Content[0])
		})
	}
}

// untrustedEvents are the triggers anyone who may comment can fire.
var untrustedEvents = []string{"issue_comment", "pull_request_review", "pull_request_review_comment", "pull_request"}

func checkWorkflow(t *testing.T, wf *yaml.Node) {
	t.Helper()
	on := mapValue(wf, "on")
	if on == nil {
		t.Fatal("no on: section")
	}
	var triggers []string
	for i := 0; i+1 < len(on.Content); i += 2 {
		triggers = append(triggers, on.Content[i].Value)
	}
	for _, refused := range []string{"pull_request_target", "workflow_run"} {
		if slices.Contains(triggers, refused) {
			t.Errorf("the workflow runs on %s, which runs a fork's request with the repository's secrets", refused)
		}
	}
	untrusted := slices.ContainsFunc(triggers, func(s string) bool { return slices.Contains(untrustedEvents, s) })
	if !untrusted && !slices.Equal(triggers, []string{"push"}) {
		t.Errorf("triggers %v: neither push alone nor checked as untrusted", triggers)
	}
	noSecrets(t, "the workflow's env", mapValue(wf, "env"))
	version := scalar(mapValue(mapValue(wf, "env"), "WO_VERSION"))
	if !regexp.MustCompile(`^v\d+\.\d+\.\d+$|^[0-9a-f]{40}$`).MatchString(version) {
		t.Errorf("WO_VERSION %q is not a pinned release or commit", version)
	}
	jobs := mapValue(wf, "jobs")
	if jobs == nil || len(jobs.Content) == 0 {
		t.Fatal("no jobs")
	}
	for i := 0; i+1 < len(jobs.Content); i += 2 {
		name, job := jobs.Content[i].Value, jobs.Content[i+1]
		noSecrets(t, "job "+name+"'s env", mapValue(job, "env"))
		cond := scalar(mapValue(job, "if"))
		if untrusted && cond != "github.event_name == 'push'" {
			// A job an event can start runs only for the awaited
			// reviewers and the repository's writers, and for merges of
			// the repository's own pull requests.
			for _, want := range []string{"github.event.sender.login", "vars.WO_REVIEWERS",
				`contains(fromJSON('["OWNER", "MEMBER", "COLLABORATOR"]'), github.event.review.author_association || github.event.comment.author_association)`,
				"github.event.pull_request.head.repo.full_name == github.repository"} {
				if !strings.Contains(cond, want) {
					t.Errorf("job %s runs on untrusted events without %q in its condition:\n%s", name, want, cond)
				}
			}
		}
		for _, step := range mapValue(job, "steps").Content {
			checkStep(t, name, step)
		}
	}
	// Secrets appear nowhere but in the env of a step that runs wo.
	var walk func(n *yaml.Node, inWoStepEnv bool)
	walk = func(n *yaml.Node, inWoStepEnv bool) {
		if n.Kind == yaml.ScalarNode && (strings.Contains(n.Value, "secrets.") || strings.Contains(n.Value, "github.token")) && !inWoStepEnv {
			t.Errorf("line %d: a secret outside a wo step's env: %s", n.Line, n.Value)
		}
		if n.Kind == yaml.MappingNode && isWoStep(n) {
			for i := 0; i+1 < len(n.Content); i += 2 {
				walk(n.Content[i+1], n.Content[i].Value == "env")
			}
			return
		}
		for _, c := range n.Content {
			walk(c, inWoStepEnv)
		}
	}
	walk(wf, false)
}

func checkStep(t *testing.T, job string, step *yaml.Node) {
	t.Helper()
	uses := mapValue(step, "uses")
	if uses != nil {
		if !regexp.MustCompile(`^[\w.-]+/[\w.-]+@[0-9a-f]{40}$`).MatchString(uses.Value) {
			t.Errorf("job %s uses %s: pin actions by full commit SHA", job, uses.Value)
		}
		if !regexp.MustCompile(`^# v\d+\.\d+\.\d+$`).MatchString(uses.LineComment) {
			t.Errorf("job %s uses %s with comment %q: name the version the SHA is", job, uses.Value, uses.LineComment)
		}
		if strings.HasPrefix(uses.Value, "actions/checkout@") {
			if pc := mapValue(mapValue(step, "with"), "persist-credentials"); pc == nil || pc.Value != "false" || pc.Tag != "!!bool" {
				t.Errorf("job %s checks out with the token kept in .git/config: set persist-credentials: false", job)
			}
		}
	}
	if run := scalar(mapValue(step, "run")); strings.Contains(run, "go install") &&
		(strings.Contains(run, "@latest") || !strings.Contains(run, "@${WO_VERSION}")) {
		t.Errorf("job %s installs wo unpinned: %s", job, run)
	}
	if env := mapValue(step, "env"); env != nil && !isWoStep(step) {
		noSecrets(t, "a step of job "+job+" that does not run wo", env)
	}
}

// isWoStep reports whether a step runs wo.
func isWoStep(step *yaml.Node) bool {
	run := scalar(mapValue(step, "run"))
	return regexp.MustCompile(`(^|\n)\s*wo (run|split|status) `).MatchString(run)
}

func noSecrets(t *testing.T, where string, env *yaml.Node) {
	t.Helper()
	if env == nil {
		return
	}
	for i := 0; i+1 < len(env.Content); i += 2 {
		if v := env.Content[i+1].Value; strings.Contains(v, "secrets.") || strings.Contains(v, "github.token") {
			t.Errorf("%s holds the secret %s: scope it to the wo step", where, env.Content[i].Value)
		}
	}
}

// mapValue is the value of key in a mapping node, or nil.
func mapValue(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

func scalar(n *yaml.Node) string {
	if n == nil {
		return ""
	}
	return n.Value
}
