package store

// Merge applies patch to doc the way ArangoDB's UPDATE does with
// mergeObjects and keepNull: objects merge at every level, everything else
// (arrays, scalars, null) replaces the old value. doc is changed in place and
// returned. Backends that cannot merge server-side use it.
func Merge(doc, patch map[string]any) map[string]any {
	if doc == nil {
		doc = map[string]any{}
	}
	for k, pv := range patch {
		po, pIsObj := pv.(map[string]any)
		dobj, dIsObj := doc[k].(map[string]any)
		if pIsObj && dIsObj {
			doc[k] = Merge(dobj, po)
			continue
		}
		if pIsObj {
			// A fresh object: copy it so later merges never alias the patch.
			doc[k] = Merge(map[string]any{}, po)
			continue
		}
		doc[k] = pv
	}
	return doc
}

// Nest turns a dotted path and a value into a patch object:
// Nest("work_order.state.current_step", 3) is
// {"work_order": {"state": {"current_step": 3}}}.
func Nest(path string, value any) map[string]any {
	parts := splitPath(path)
	out := map[string]any{parts[len(parts)-1]: value}
	for i := len(parts) - 2; i >= 0; i-- {
		out = map[string]any{parts[i]: out}
	}
	return out
}

func splitPath(path string) []string {
	var parts []string
	start := 0
	for i := 0; i < len(path); i++ {
		if path[i] == '.' {
			parts = append(parts, path[start:i])
			start = i + 1
		}
	}
	return append(parts, path[start:])
}
