package split

import (
	"testing"
)

// FuzzParseHandPlan reads arbitrary plan files and checks the accepted
// ones against a small change.
func FuzzParseHandPlan(f *testing.F) {
	for _, s := range []string{
		`{"prs": [{"title": "one", "globs": ["a/**"]}, {"title": "two", "globs": ["b/*.go"]}], "exclude": ["docs/**"]}`,
		`{"prs": [{"title": "x", "globs": ["[", "{a,b"]}]}`,
		`{"prs": [], "exclude": []}`,
		`{"prs": [{"title": "` + "\x1b[2J" + `", "globs": ["**/../**"]}], "extra": 1}`,
	} {
		f.Add([]byte(s))
	}
	change := &Change{Files: []File{
		{Path: "a/x.go", Kind: "modified", Lines: 10},
		{Path: "b/y.go", Kind: "added", Lines: 5, Imports: []string{"example.com/m/a"}},
		{Path: "docs/z.md", Kind: "deleted", Lines: 1},
	}, Module: "example.com/m"}
	f.Fuzz(func(t *testing.T, data []byte) {
		hp, err := ParseHandPlan(data)
		if err != nil {
			if n := len(err.Error()); n > 2000 {
				t.Fatalf("error message of %d bytes", n)
			}
			return
		}
		if len(hp.PRs) == 0 {
			t.Fatal("accepted a plan without PRs")
		}
		plan, err := FromHand(change, hp)
		if err == nil && plan == nil {
			t.Fatal("no plan and no error")
		}
	})
}
