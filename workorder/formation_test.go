package workorder

import (
	"strings"
	"testing"
)

func formed(t *testing.T, fields string) Report {
	t.Helper()
	d := doc(t, `{"_key": "task_f", "title": "A formed task", "status": "open", "description": "Formed from a chat message",
		`+fields+`, "work_order": {"version": "1.0", "objective": "Do what the message asked",
		"procedure": [{"step": 1, "action": "commit"}],
		"approval": {"required": true, "summary": "Adds retries", "confidence": 0.8},
		"rollback_hints": ["revert the merge commit"]}}`)
	return Validate(d, Options{Actions: []string{"commit"}})
}

func TestFormationFieldsAreChecked(t *testing.T) {
	good := `"source_event_id": "chat-1", "task_type": "stateful", "project_id": "hermes", "systems_affected": ["api", "db"],
		"artifact_ref": "sheets/1", "patch_ref": "patches/1", "formation_confidence": 0.9,
		"evidence": [{"claim": "the API retries", "status": "validated", "sources": [{"title": "docs", "url": "https://example.com/a", "retrieved_at": "2026-11-01T00:00:00Z"}]}]`
	if r := formed(t, good); !r.Valid() || len(r.Warnings()) != 0 {
		t.Fatalf("a well-formed task: %v", r.Problems)
	}
	bad := map[string]string{
		`"task_type": "maybe"`:                           `task_type: "maybe" is not a task type`,
		`"task_type": "ephemeral", "patch_ref": "p/1"`:   "patch_ref: an ephemeral task commits nothing",
		`"formation_confidence": 1.5`:                    "formation_confidence: is 1.5 but a confidence is from 0 to 1",
		`"formation_confidence": "high"`:                 "formation_confidence: must be a number from 0 to 1",
		`"systems_affected": ["api", " "]`:               "systems_affected[1]: is empty",
		`"evidence": [{"status": "validated"}]`:          "evidence[0].claim: required",
		`"evidence": [{"claim": "x", "status": "sure"}]`: `evidence[0].status: "sure" is not one of validated, unresolved, conflicting`,
		`"evidence": [{"claim": "x", "status": "unresolved", "sources": [{"title": "t", "url": "ftp://x", "retrieved_at": "yesterday"}]}]`: `evidence[0].sources[0].url: "ftp://x" is not an http(s) URL`,
	}
	for fields, want := range bad {
		r := formed(t, fields)
		found := false
		for _, p := range r.Errors() {
			if strings.HasPrefix(p.String(), want) {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: errors %v, want %q", fields, r.Errors(), want)
		}
	}
	r := formed(t, `"evidence": [{"claim": "x", "status": "validated"}]`)
	if !r.Valid() || len(r.Warnings()) != 1 || !strings.Contains(r.Warnings()[0].Message, "names no source") {
		t.Errorf("a validated claim without a source: %v", r.Problems)
	}
	d := doc(t, `{"_key": "task_f", "task_type": "stateful", "systems_affected": ["api"], "formation_confidence": 0.5}`)
	if f := FormationOf(d); f.TaskType != "stateful" || len(f.SystemsAffected) != 1 || f.FormationConfidence == nil || *f.FormationConfidence != 0.5 || f.Empty() {
		t.Errorf("FormationOf: %+v", f)
	}
	if !FormationOf(doc(t, `{"_key": "task_g"}`)).Empty() {
		t.Error("a task without formation fields is not empty")
	}
}

func TestApprovalRequestAndRollbackHintsAreChecked(t *testing.T) {
	d := doc(t, `{"_key": "task_f", "title": "A formed task", "status": "open", "description": "Formed from a chat message",
		"work_order": {"version": "1.0", "objective": "Do what the message asked", "procedure": [{"step": 1, "action": "commit"}],
		"approval": {"required": true, "summary": 3, "confidence": -1, "evidence": [{"claim": "c"}]},
		"rollback_hints": "revert"}}`)
	r := Validate(d, Options{Actions: []string{"commit"}})
	for _, want := range []string{"work_order.approval.summary", "work_order.approval.confidence", "work_order.approval.evidence[0].status", "work_order.rollback_hints"} {
		found := false
		for _, p := range r.Errors() {
			if p.Path == want {
				found = true
			}
		}
		if !found {
			t.Errorf("no error at %s: %v", want, r.Errors())
		}
	}
}

func TestValueAtFindsWhatAProblemIsAbout(t *testing.T) {
	d := doc(t, `{"a": {"b": [{"c": "x"}, {"c": ["y", "z"]}]}, "s": "top"}`)
	cases := map[string]any{"s": "top", "a.b[0].c": "x", "a.b[1].c[1]": "z", "a.b[2].c": nil, "a.x": nil, "s.t": nil, "a.b[x]": nil}
	for path, want := range cases {
		if got := ValueAt(d, path); got != want {
			t.Errorf("ValueAt(%s) = %v, want %v", path, got, want)
		}
	}
}
