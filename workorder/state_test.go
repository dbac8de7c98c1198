package workorder

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// merge applies a patch as the stores do: objects merge at every level,
// everything else is replaced.
func merge(dst, patch map[string]any) {
	for k, v := range patch {
		if pm, ok := v.(map[string]any); ok {
			if dm, ok := dst[k].(map[string]any); ok {
				merge(dm, pm)
				continue
			}
		}
		dst[k] = Clone(v)
	}
}

func TestStatePatchNamesOnlyWhatChanged(t *testing.T) {
	before := NewState()
	after := before.Clone()
	after.CurrentStep = 2
	after.CompletedSteps = []int{1, 2}
	after.PRNumber = 7
	patch := StatePatch(before, after)
	st := patch["work_order"].(map[string]any)["state"].(map[string]any)
	keys := make([]string, 0, len(st))
	for k := range st {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if got := strings.Join(keys, ","); got != "completed_steps,current_step,pr_number" {
		t.Fatalf("patch names %s, want only the three changed fields", got)
	}
	if StatePatch(after, after.Clone()) != nil {
		t.Error("an unchanged state must give no patch at all")
	}
}

func TestStatePatchKeepsOtherToolsFieldsAndReachesTheNewState(t *testing.T) {
	d := doc(t, `{"_key": "t", "work_order": {"objective": "o", "state": {
		"version": 1, "current_step": 1, "completed_steps": [1], "review_iterations": 0,
		"pr_url": null, "worktree_path": null, "notes": ["a"],
		"approval": {"decision": "revise", "by": "ann", "at": "2026-01-01T00:00:00Z", "note": "smaller"},
		"loop_iterations": {"6": 1, "9": 2},
		"their_tool": {"kept": true}, "lease": {"holder": "r1", "expires_at": "2026-01-01T00:00:00Z"}}}}`)
	before, err := StateOf(d)
	if err != nil {
		t.Fatal(err)
	}
	after := before.Clone()
	after.Approval = &Approval{Decision: DecisionApproved, By: "bob", At: "2026-01-02T00:00:00Z"}
	after.LoopIterations["6"] = 2
	after.Notes = append(after.Notes, "b")
	after.Lease = &Lease{Holder: "someone else", ExpiresAt: time.Unix(0, 0)}
	patch := StatePatch(before, after)
	if _, has := patch["work_order"].(map[string]any)["state"].(map[string]any)["lease"]; has {
		t.Fatal("the patch builder wrote the lease, which only the lease may write")
	}
	merge(d, patch)
	got, err := StateOf(d)
	if err != nil {
		t.Fatal(err)
	}
	got.Lease, after.Lease = nil, nil
	if !reflect.DeepEqual(got, after) {
		t.Errorf("stored state after the patch:\n%+v\nwant\n%+v", got, after)
	}
	if got.Approval.Note != "" {
		t.Errorf("the old decision's note survived the new decision: %q", got.Approval.Note)
	}
	if v, _ := Lookup(d, "work_order.state.their_tool.kept"); v != true {
		t.Error("a field another tool keeps in the state was lost")
	}
	if String(d, "work_order.state.lease.holder") != "r1" {
		t.Error("the lease was changed by a state patch")
	}
}

func TestStateRegistry(t *testing.T) {
	want := []string{"worktree_path", "worktree_name", "branch", "base_sha", "source_sha", "commit_sha", "pushed_sha",
		"pr_url", "pr_number", "review_iterations", "review_result"}
	if got := LaterStateNames(); !reflect.DeepEqual(got, want) {
		t.Errorf("later names %v, want %v", got, want)
	}
	s := NewState()
	s.BaseSHA, s.SourceSHA, s.ReviewComments = "b", "s", []ReviewComment{{ID: 1}}
	if unknown := s.Forget("source_sha", "no_such_field"); s.SourceSHA != "" || s.BaseSHA != "b" || len(s.ReviewComments) != 1 ||
		!reflect.DeepEqual(unknown, []string{"no_such_field"}) {
		t.Errorf("forgetting source_sha: %+v, unknown %v", s, unknown)
	}
	s.LoopIterations = map[string]int{"9": 1}
	if unknown := s.Forget("loop_iterations", "base_sha", "review_comments"); len(unknown) != 0 || s.LoopIterations != nil || s.BaseSHA != "" || s.ReviewComments != nil {
		t.Errorf("forgetting three fields: %+v, unknown %v", s, unknown)
	}
	// Every field of the struct is in the registry under its JSON name.
	var names []string
	for _, f := range StateFields() {
		names = append(names, f.Name)
	}
	b, _ := json.Marshal(NewState())
	var m map[string]any
	json.Unmarshal(b, &m)
	for k := range m {
		if !slices.Contains(names, k) {
			t.Errorf("state field %s is missing from the registry", k)
		}
	}
}

func TestStateValidatorChecksEveryKnownField(t *testing.T) {
	cases := map[string]string{
		`"pr_url": 5`:                               "work_order.state.pr_url: must be a string or null, not a number",
		`"review_comments": [{"id": "x"}]`:          "work_order.state.review_comments.id: must be an integer, not a JSON string",
		`"fix_requested": "yes"`:                    "work_order.state.fix_requested: must be true or false, not a string",
		`"current_step": "2"`:                       "work_order.state.current_step: must be an integer, not a string",
		`"completed_steps": {}`:                     "work_order.state.completed_steps: must be an array, not an object",
		`"deliverables": {"1": 5}`:                  "work_order.state.deliverables: holds a JSON number where a string belongs",
		`"lease": {"holder": "a", "expires_at": 3}`: "work_order.state.lease.expires_at: must be an RFC 3339 time",
	}
	for field, want := range cases {
		d := doc(t, `{"_key": "t", "title": "a title", "status": "open", "work_order": {"version": "1.0", "objective": "o",
			"procedure": [{"step": 1, "action": "commit"}], "state": {`+field+`, "their_tool": "any shape"}}}`)
		r := Validate(d, Options{Actions: []string{"commit"}})
		found := false
		for _, p := range r.Errors() {
			if p.String() == want {
				found = true
			}
			if strings.Contains(p.Path, "their_tool") {
				t.Errorf("%s: another tool's field was judged: %v", field, p)
			}
		}
		if !found {
			t.Errorf("%s: errors %v, want %q", field, r.Errors(), want)
		}
	}
}

func TestManifestPathsStayOutOfTheRootAndEveryGitSpelling(t *testing.T) {
	for _, p := range []string{".", ".GIT/config", "a/.Git/hooks/pre-commit", "git~1/config", ".git./config", ".git /x", "a/.g\u200cit/x"} {
		if err := CheckRelativePath(p); err == nil {
			t.Errorf("%q accepted as a manifest path", p)
		}
	}
	for _, p := range []string{"a.git/x", "gitx", ".gitignore", "docs/.github/workflows/ci.yml"} {
		if err := CheckRelativePath(p); err != nil {
			t.Errorf("%q refused: %v", p, err)
		}
	}
}

func TestMergeStatesKeepsBothWriters(t *testing.T) {
	base := NewState()
	base.Notes = []string{"a"}
	base.PRNumber = 1
	theirs := base.Clone()
	theirs.Notes = append(theirs.Notes, "theirs")
	theirs.ReviewResult = "set by a person"
	theirs.PRNumber = 5 // both change it: the run's value wins
	theirs.Lease = &Lease{Holder: "them"}
	ours := base.Clone()
	ours.Notes = append(ours.Notes, "ours")
	ours.CurrentStep, ours.PRNumber = 3, 7
	got := MergeStates(base, theirs, ours)
	if fmt.Sprint(got.Notes) != "[a theirs ours]" || got.ReviewResult != "set by a person" || got.CurrentStep != 3 ||
		got.PRNumber != 7 || got.Lease == nil || got.Lease.Holder != "them" {
		t.Errorf("merged %+v", got)
	}
	// A field only they cleared stays cleared; one only we cleared too.
	base.BaseSHA, base.SourceSHA = "b", "s"
	theirs, ours = base.Clone(), base.Clone()
	theirs.BaseSHA, ours.SourceSHA = "", ""
	if got := MergeStates(base, theirs, ours); got.BaseSHA != "" || got.SourceSHA != "" {
		t.Errorf("cleared fields came back: %+v", got)
	}
}

func TestBlocksBothWaysIsACycle(t *testing.T) {
	a := doc(t, `{"_key": "task_a", "title": "A", "status": "open", "parent_key": "task_e", "work_order": {"version": "1.0",
		"objective": "The first of two", "dependencies": {"blocks": ["task_b"]}, "procedure": [{"step": 1, "action": "commit"}]}}`)
	others := map[string]Dependencies{
		"task_b": {Blocks: []string{"task_a"}, Parent: "task_e"},
		"task_c": {Parent: "task_other"},
		"task_d": {Parent: "task_e"},
	}
	opts := Options{Actions: []string{"commit"}, Lookup: func(k string) (Dependencies, bool) { d, ok := others[k]; return d, ok }}
	r := Validate(a, opts)
	if r.Valid() || !strings.Contains(fmt.Sprint(r.Errors()), "that is a cycle") {
		t.Errorf("A blocks B and B blocks A: %v", r.Problems)
	}
	a["work_order"].(map[string]any)["dependencies"] = map[string]any{"blocks": []any{"task_c", "task_d"}}
	r = Validate(a, opts)
	msgs := fmt.Sprint(r.Warnings())
	if !r.Valid() || !strings.Contains(msgs, "is not in the same epic, so wo will not make it wait") || !strings.Contains(msgs, "wo honours both sides within an epic") {
		t.Errorf("blocks across epics and within one: %v", r.Problems)
	}
}

func TestAnEmptyDocumentSaysSo(t *testing.T) {
	for _, in := range []string{"", "  \n\t"} {
		_, err := DecodeDocument("params.json", []byte(in))
		if err == nil || err.Error() != "params.json: empty input: expected a JSON object" {
			t.Errorf("%q: %v", in, err)
		}
	}
}
