package store

import "testing"

// A detail name goes into a JSON path inside a query: only letters,
// digits and underscores, each range checked at both ends and just past
// them.
func TestDetailNamesArePlain(t *testing.T) {
	for name, want := range map[string]bool{
		"a": true, "z": true, "A": true, "Z": true, "0": true, "9": true, "_": true, "duration_ms": true,
		"": false, "`": false, "{": false, "@": false, "[": false, "/": false, ":": false,
		"a.b": false, "a b": false, "repo') OR 1=1 --": false, "é": false,
	} {
		if got := plainName(name); got != want {
			t.Errorf("plainName(%q) = %v, want %v", name, got, want)
		}
	}
}
