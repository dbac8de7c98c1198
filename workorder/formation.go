package workorder

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"
)

// A task formed from an incoming event (a chat message, a voice request)
// carries what formation decided, as top-level fields of the task object:
//
//	source_event_id       the event it was formed from (one task per event)
//	task_type             ephemeral (no change committed) or stateful
//	project_id            the project it changes (may be null when ephemeral)
//	systems_affected[]    the subsystems or resources it touches
//	artifact_ref          its work plan (ephemeral) or task sheet (stateful)
//	patch_ref             the patch it commits (stateful only)
//	formation_confidence  0..1
//	evidence[]            the assumptions formation checked, with sources
//
// and, in the work order, what a person approving it is shown
// (work_order.approval.summary, .confidence, .evidence) and how to take it
// back (work_order.rollback_hints[]). wo keeps, validates and shows them;
// it never writes them except when it creates the task.

// Task types.
const (
	TaskEphemeral = "ephemeral"
	TaskStateful  = "stateful"
)

// EvidenceStatuses are the states of a checked assumption.
var EvidenceStatuses = []string{"validated", "unresolved", "conflicting"}

// Evidence is one assumption formation checked.
type Evidence struct {
	Claim   string   `json:"claim"`
	Status  string   `json:"status"`
	Sources []Source `json:"sources,omitempty"`
	Notes   string   `json:"notes,omitempty"`
}

// Source is where a claim was checked.
type Source struct {
	Title       string `json:"title"`
	URL         string `json:"url"`
	RetrievedAt string `json:"retrieved_at"`
}

// Formation is the formation part of a task object, typed for showing.
type Formation struct {
	SourceEventID       string     `json:"source_event_id,omitempty"`
	TaskType            string     `json:"task_type,omitempty"`
	ProjectID           *string    `json:"project_id,omitempty"`
	SystemsAffected     []string   `json:"systems_affected,omitempty"`
	ArtifactRef         string     `json:"artifact_ref,omitempty"`
	PatchRef            string     `json:"patch_ref,omitempty"`
	FormationConfidence *float64   `json:"formation_confidence,omitempty"`
	Evidence            []Evidence `json:"evidence,omitempty"`
}

// Empty reports whether the task carries no formation fields.
func (f Formation) Empty() bool {
	return f.SourceEventID == "" && f.TaskType == "" && f.ProjectID == nil && len(f.SystemsAffected) == 0 &&
		f.ArtifactRef == "" && f.PatchRef == "" && f.FormationConfidence == nil && len(f.Evidence) == 0
}

// FormationOf reads the formation fields of a valid document.
func FormationOf(doc Document) Formation {
	var f Formation
	b, err := json.Marshal(map[string]any{
		"source_event_id": doc["source_event_id"], "task_type": doc["task_type"], "project_id": doc["project_id"],
		"systems_affected": doc["systems_affected"], "artifact_ref": doc["artifact_ref"], "patch_ref": doc["patch_ref"],
		"formation_confidence": doc["formation_confidence"], "evidence": doc["evidence"],
	})
	if err == nil {
		json.Unmarshal(b, &f) // a field of the wrong type, which validation reports, stays empty
	}
	return f
}

// formation checks the formation fields of the task object, when present.
func (v *validator) formation() {
	d := v.doc
	for _, f := range []string{"source_event_id", "artifact_ref", "patch_ref"} {
		v.optString(d, "", f)
	}
	if x, ok := d["project_id"]; ok && x != nil {
		v.str("project_id", x)
	}
	taskType, hasType := v.optString(d, "", "task_type")
	if hasType && !slices.Contains([]string{TaskEphemeral, TaskStateful}, taskType) {
		v.errorf("task_type", "%s is not a task type: use ephemeral (nothing committed) or stateful", quote(taskType))
	}
	if p, ok := d["patch_ref"].(string); ok && p != "" && taskType == TaskEphemeral {
		v.errorf("patch_ref", "an ephemeral task commits nothing, so it has no patch: drop patch_ref or make the task stateful")
	}
	if x, ok := d["systems_affected"]; ok && x != nil {
		list, _ := v.strings("systems_affected", x)
		for i, s := range list {
			if strings.TrimSpace(s) == "" {
				v.errorf(fmt.Sprintf("systems_affected[%d]", i), "is empty: name the system or resource")
			}
		}
	}
	v.confidence(d, "", "formation_confidence")
	if x, ok := d["evidence"]; ok && x != nil {
		v.evidence("evidence", x)
	}
}

// approvalRequest checks what an approval request shows a person.
func (v *validator) approvalRequest(m map[string]any) {
	const base = "work_order.approval"
	v.optString(m, base, "summary")
	v.confidence(m, base, "confidence")
	if x, ok := m["evidence"]; ok && x != nil {
		v.evidence(base+".evidence", x)
	}
}

// rollbackHints checks work_order.rollback_hints: how to take the change back.
func (v *validator) rollbackHints(wo map[string]any) {
	if x, ok := wo["rollback_hints"]; ok && x != nil {
		v.strings("work_order.rollback_hints", x)
	}
}

func (v *validator) confidence(m map[string]any, base, name string) {
	x, ok := m[name]
	if !ok || x == nil {
		return
	}
	f, isNum := AsFloat(x)
	if !isNum {
		v.errorf(join(base, name), "must be a number from 0 to 1, not %s", jsonKind(x))
	} else if f < 0 || f > 1 {
		v.errorf(join(base, name), "is %v but a confidence is from 0 to 1", f)
	}
}

func (v *validator) evidence(path string, x any) {
	list, ok := x.([]any)
	if !ok {
		v.errorf(path, "must be an array of checked claims, not %s", jsonKind(x))
		return
	}
	for i, item := range list {
		p := fmt.Sprintf("%s[%d]", path, i)
		e, ok := v.object(p, item)
		if !ok {
			continue
		}
		if c, _ := e["claim"].(string); strings.TrimSpace(c) == "" {
			v.errorf(p+".claim", "required: the assumption that was checked")
		}
		if s, ok := v.optString(e, p, "status"); !ok {
			v.errorf(p+".status", "required: one of %s", strings.Join(EvidenceStatuses, ", "))
		} else if !slices.Contains(EvidenceStatuses, s) {
			v.errorf(p+".status", "%s is not one of %s", quote(s), strings.Join(EvidenceStatuses, ", "))
		}
		v.optString(e, p, "notes")
		sources, _ := e["sources"].([]any)
		if x, ok := e["sources"]; ok && x != nil && sources == nil {
			v.errorf(p+".sources", "must be an array, not %s", jsonKind(x))
		}
		for j, sx := range sources {
			sp := fmt.Sprintf("%s.sources[%d]", p, j)
			s, ok := v.object(sp, sx)
			if !ok {
				continue
			}
			if t, _ := s["title"].(string); t == "" {
				v.errorf(sp+".title", "required")
			}
			if u, _ := s["url"].(string); !webURL(u) {
				v.errorf(sp+".url", "%s is not an http(s) URL", quote(u))
			}
			if r, _ := s["retrieved_at"].(string); r != "" {
				if _, err := time.Parse(time.RFC3339Nano, r); err != nil {
					v.errorf(sp+".retrieved_at", "%s is not an RFC 3339 time", quote(r))
				}
			} else {
				v.errorf(sp+".retrieved_at", "required: when the source was read (RFC 3339)")
			}
		}
		if e["status"] == "validated" && len(sources) == 0 {
			v.warnf(p+".sources", "a validated claim names no source: cite where it was checked")
		}
	}
}

func webURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != "" && !strings.ContainsAny(s, " \t\n")
}
