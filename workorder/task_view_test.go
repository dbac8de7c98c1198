package workorder

import (
	"strings"
	"testing"
)

func TestParseGivesTheTypedViewOrTheFirstMismatch(t *testing.T) {
	task, err := Parse(patched(t, `{"work_order": {"approval": {"required": true, "confidence": 0.25}}}`))
	if err != nil {
		t.Fatal(err)
	}
	w := task.WorkOrder
	if task.Key != "task_base" || task.Status != StatusOpen || w == nil || len(w.Procedure) != 2 ||
		w.Procedure[1].Action != "push" || w.Approval == nil || !w.Approval.Required || *w.Approval.Confidence != 0.25 {
		t.Errorf("typed view %+v", task)
	}
	_, err = Parse(patched(t, steps(`{"step": "two", "action": "push"}`)))
	if err == nil || !strings.HasPrefix(err.Error(), "task task_base: ") || !strings.Contains(err.Error(), "step") {
		t.Errorf("a step numbered with a word: %v", err)
	}
}

func TestCommandFactsReadEveryBranchCreatingFlag(t *testing.T) {
	cases := map[string]string{
		"git checkout -b feature/a":             "feature/a",
		"git checkout -B feature/b origin/main": "feature/b",
		"git switch -c feature/c":               "feature/c",
		"git switch -C feature/d":               "feature/d",
		"git checkout feature/e":                "", // an existing branch: nothing created
		"git checkout -b":                       "", // no name given
		"git switch --detach -c feature/f":      "feature/f",
	}
	for cmd, want := range cases {
		d := patched(t, steps(`{"step": 2, "action": "push", "command": "`+cmd+`"}`))
		if f := FactsOf(d); f.Branch != want || (want != "" && f.Steps["branch"] != 2) {
			t.Errorf("%s: branch %q from step %d, want %q from step 2", cmd, f.Branch, f.Steps["branch"], want)
		}
	}
}

func TestTheBodyListsTheManifestOnlyWhenThereIsOne(t *testing.T) {
	for manifest, want := range map[string]string{
		`[]`:               "Check one field at a time",
		`["a.go", "b.go"]`: "Check one field at a time\n\nFiles in this PR:\n- a.go\n- b.go",
	} {
		d := patched(t, `{"work_order": {"inputs": {"file_manifest": `+manifest+`}}}`)
		if got, err := NewScope(d).Render("<body>"); err != nil || got != want {
			t.Errorf("manifest %s: body %q, %v; want %q", manifest, got, err, want)
		}
	}
}

func TestApplyDefaultsKeepsAStateAndFillsAMissingOne(t *testing.T) {
	d := patched(t, `{"work_order": {"state": {"current_step": 1, "completed_steps": [1]}}}`)
	ApplyDefaults(d)
	if got := Get(d, "work_order.state.current_step"); got == nil || got.(interface{ String() string }).String() != "1" {
		t.Errorf("a run's state was replaced: %v", Get(d, "work_order.state"))
	}
	for _, patch := range []string{`{"work_order": {"state": null}}`, ``} {
		d := patched(t, patch)
		ApplyDefaults(d)
		if st, ok := Get(d, "work_order.state").(map[string]any); !ok || len(st) == 0 {
			t.Errorf("%q: state %v, want the initial state", patch, Get(d, "work_order.state"))
		}
	}
}

func TestStatusPathToAStatusPersephoneDoesNotHaveIsNone(t *testing.T) {
	if p := StatusPath(StatusOpen, Status("cancelled")); p != nil {
		t.Errorf("path %v", p)
	}
}
