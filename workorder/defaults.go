package workorder

import "time"

// Now is the clock used for timestamps; tests replace it.
var Now = func() time.Time { return time.Now().UTC() }

// Timestamp formats t as Persephone stores times: RFC 3339 in UTC.
func Timestamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// ApplyDefaults fills what a new document may leave out and normalises what
// Persephone stores in one spelling only. It changes doc in place and never
// overwrites a field the author set, except to turn P0..P3 into the
// Persephone word.
func ApplyDefaults(doc Document) {
	if _, ok := doc["_key"]; !ok {
		doc["_key"] = NewKey()
	}
	setDefault(doc, "status", string(StatusOpen))
	setDefault(doc, "type", "task")
	if p, ok := doc["priority"].(string); ok {
		if word, ok := CanonicalPriority(p); ok {
			doc["priority"] = word
		}
	} else if _, present := doc["priority"]; !present {
		doc["priority"] = "medium"
	}
	now := Timestamp(Now())
	setDefault(doc, "created_at", now)
	setDefault(doc, "updated_at", now)
	if wo, ok := doc["work_order"].(map[string]any); ok {
		if st, present := wo["state"]; !present || st == nil {
			wo["state"] = InitialState()
		}
	}
}

// InitialState is the state of a work order that has not started, as a
// document holds it.
func InitialState() map[string]any { return stateMap(NewState()) }

func setDefault(doc Document, field string, value any) {
	if _, ok := doc[field]; !ok {
		doc[field] = value
	}
}
