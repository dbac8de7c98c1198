package workorder

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

var allActions = []string{"create_worktree", "create_branch", "checkout_files", "commit", "push", "create_pr",
	"wait_for_review", "check_review", "conditional_loop", "cleanup_worktree", "update_task", "agent"}

var fieldOptions = Options{Actions: allActions, Conditions: []string{"review_comments_exist"}}

// set writes value at a field's path pattern in doc, making the objects
// on the way; [] becomes the first element, a commit step.
func set(t *testing.T, doc Document, f Field, value any) string {
	t.Helper()
	parts := strings.Split(f.Path, ".")
	cur := doc
	var concrete []string
	for i, part := range parts {
		name, each := strings.CutSuffix(part, "[]")
		last := i == len(parts)-1
		if last && !each {
			cur[name] = value
			concrete = append(concrete, name)
			break
		}
		if each {
			list, _ := cur[name].([]any)
			if len(list) == 0 {
				list = []any{map[string]any{}}
				cur[name] = list
			}
			if last {
				list[0] = value
				concrete = append(concrete, name+"[0]")
				break
			}
			concrete = append(concrete, name+"[0]")
			cur = list[0].(map[string]any)
			if name == "procedure" {
				// Which action reads a field is the engine's to say; the
				// shape of a step field is checked on any step.
				cur["step"], cur["action"] = json.Number("1"), "commit"
			}
			continue
		}
		next, ok := cur[name].(map[string]any)
		if !ok {
			next = map[string]any{}
			cur[name] = next
		}
		concrete = append(concrete, name)
		cur = next
	}
	return strings.Join(concrete, ".")
}

func wrongValue(k Kind) any {
	switch k {
	case KindString, KindObject, KindArray, KindStrings:
		return json.Number("12345")
	case KindStringOrList:
		return map[string]any{"a": "b"}
	default:
		return "not-this-kind"
	}
}

// The reference is generated from Fields; this is what makes it true:
// every field it gives a type is refused with another.
func TestEveryFieldOfTheReferenceRefusesAValueOfAnotherKind(t *testing.T) {
	for _, f := range Fields {
		if f.Kind == KindAnything {
			continue
		}
		d := doc(t, baseTask)
		path := set(t, d, f, wrongValue(f.Kind))
		r := Validate(d, fieldOptions)
		found := false
		for _, p := range r.Errors() {
			if p.Path == path || strings.HasPrefix(p.Path, path+"[") || strings.HasPrefix(p.Path, path+".") {
				found = true
			}
		}
		if !found {
			t.Errorf("%s (%s) set to %v: no error at %s; got %q", f.Path, f.Kind, wrongValue(f.Kind), path, findings(r))
		}
	}
}

func TestEveryFieldWithValuesRefusesAnother(t *testing.T) {
	for _, f := range Fields {
		if len(f.Values) == 0 {
			continue
		}
		d := doc(t, baseTask)
		path := set(t, d, f, "surely-not-a-value")
		r := Validate(d, fieldOptions)
		if !slices.ContainsFunc(r.Errors(), func(p Problem) bool { return p.Path == path }) {
			t.Errorf("%s = surely-not-a-value: no error at %s; got %q", f.Path, path, findings(r))
		}
	}
}

func TestMisspeltFieldsAreNamedWithWhatWasMeant(t *testing.T) {
	for _, c := range []struct {
		patch, path, want string
	}{
		{`{"work_order": {"steps": []}}`, "work_order.steps", "is not a field of work_order: did you mean procedure?"},
		{`{"work_order": {"inputs": {"files": ["a.go"]}}}`, "work_order.inputs.files", "no template names <files>: did you mean file_manifest?"},
		{`{"work_order": {"context": {"repo_pth": "/srv/x"}}}`, "work_order.context.repo_pth", "did you mean repo_path?"},
		{`{"work_order": {"context": {"base_branch": "main", "nitpick": "fix"}}}`, "work_order.context.nitpick", "no template names <nitpick>: wo keeps it as it is"},
		{`{"work_order": {"procedure": [{"step": 1, "action": "commit", "mesage": "m"}]}}`, "work_order.procedure[0].mesage", "is not a field of a step: did you mean message?"},
		{`{"work_order": {"procedure": [{"step": 1, "action": "commit", "loop": 1}]}}`, "work_order.procedure[0].loop", "is not a field of a step: wo ignores it"},
		{`{"objective": "Do the thing for real"}`, "objective", "it belongs in work_order"},
		{`{"statuss": "open"}`, "statuss", "did you mean status?"},
		{`{"work_order": {"dependencies": {"blocked-by": ["x"]}}}`, `work_order.dependencies["blocked-by"]`, "did you mean blocked_by?"},
	} {
		r := Validate(patched(t, c.patch), fieldOptions)
		var got []string
		for _, p := range r.Warnings() {
			if p.Path == c.path {
				got = append(got, p.Message)
			}
		}
		if len(got) != 1 || !strings.Contains(got[0], c.want) {
			t.Errorf("%s: warnings at %s %q, want one saying %q; all: %q", c.patch, c.path, got, c.want, findings(r))
		}
	}
}

func TestFieldsOfOtherToolsAndTemplatesAreLeftAlone(t *testing.T) {
	d := patched(t, `{"assignee": "alice", "acceptance": "done when merged",
		"work_order": {"inputs": {"ticket": "OPS-1"}, "state": {"their_tool": 1},
			"procedure": [{"step": 1, "action": "commit", "message": "<ticket>: m"}]}}`)
	if got := findings(Validate(d, fieldOptions)); len(got) != 0 {
		t.Errorf("fields of other tools, and an input a template names, drew %q", got)
	}
}

func TestAnUnknownActionNamesTheOneMeant(t *testing.T) {
	d := patched(t, `{"work_order": {"procedure": [{"step": 1, "action": "make_worktree"}]}}`)
	got := findings(Validate(d, fieldOptions))
	if len(got) != 1 || !strings.Contains(got[0], `unknown action "make_worktree" (did you mean create_worktree?); known actions are`) {
		t.Errorf("got %q", got)
	}
}

func TestSuggest(t *testing.T) {
	known := []string{"procedure", "objective", "context", "inputs"}
	for name, want := range map[string]string{
		"procedur": "procedure", "steps": "procedure", "Objective": "objective", "input": "inputs",
		"zzz": "", "context": "", "ctx": "",
	} {
		if got := Suggest(name, known); got != want {
			t.Errorf("Suggest(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestStepOf(t *testing.T) {
	for path, want := range map[string]int{"work_order.procedure[8].loop_to": 9, "work_order.procedure[0]": 1, "work_order.inputs": 0, "x.work_order.procedure[1]": 0} {
		if got := StepOf(path); got != want {
			t.Errorf("StepOf(%q) = %d, want %d", path, got, want)
		}
	}
}

func TestRenderLeavingKeepsNamesStepsFillInLater(t *testing.T) {
	scope := NewScope(patched(t, `{"work_order": {"inputs": {"repo_name": "acme/x"}}}`))
	got, err := scope.RenderLeaving("gh api repos/<repo_name>/pulls/<pr_number>/comments", []string{"pr_number"})
	if err != nil || got != "gh api repos/acme/x/pulls/<pr_number>/comments" {
		t.Errorf("got %q, %v", got, err)
	}
	if _, err := scope.RenderLeaving("<nowhere> <pr_number>", []string{"pr_number"}); err == nil || !strings.Contains(err.Error(), "<nowhere>") || strings.Contains(err.Error(), "<pr_number>,") {
		t.Errorf("an unknown name: %v", err)
	}
}

// A field's name comes from the document: an odd one is quoted and
// escaped in the path, a huge one cut short and not compared.
func TestAnUnknownFieldsNameIsQuotedInItsPath(t *testing.T) {
	d := patched(t, `{"work_order": {"procedure": [{"step": 1, "action": "commit", "\u001b[31mred": 1}]}}`)
	d["work_order"].(map[string]any)["procedure"].([]any)[0].(map[string]any)[strings.Repeat("x", 100000)] = 1
	var paths []string
	for _, p := range Validate(d, fieldOptions).Warnings() {
		paths = append(paths, p.Path)
	}
	joined := strings.Join(paths, "\n")
	if strings.Contains(joined, "\x1b") || len(joined) > 1000 || !strings.Contains(joined, `work_order.procedure[0]["\x1b[31mred"]`[:len(`work_order.procedure[0]["`)]) {
		t.Errorf("paths: %q", paths)
	}
}
