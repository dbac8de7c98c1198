package workorder

import (
	"fmt"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// fixGate checks what the fix gate reads from the context: fix_paths, glob
// patterns of the paths a review fix may change beyond the manifest (one
// pattern or a list), fix_executable, those it may make executable, and
// fix_max_file_bytes, the largest file a fix may push.
func (v *validator) fixGate(ctx map[string]any) {
	const base = "work_order.context"
	v.pathPatterns(ctx, "fix_paths")
	v.pathPatterns(ctx, "fix_executable")
	if x, ok := ctx["fix_max_file_bytes"]; ok && x != nil {
		if n, ok := v.integer(base+".fix_max_file_bytes", x); ok && n <= 0 {
			v.errorf(base+".fix_max_file_bytes", "must be a positive number of bytes, not %d", n)
		}
	}
}

// pathPatterns checks context.NAME: one glob pattern of paths from the
// repository's top, or a list of them.
func (v *validator) pathPatterns(ctx map[string]any, name string) {
	const base = "work_order.context"
	var patterns []string
	switch x := ctx[name].(type) {
	case nil:
	case string:
		patterns = []string{x}
	default:
		patterns, _ = v.strings(base+"."+name, x)
	}
	for i, p := range patterns {
		path := fmt.Sprintf("%s.%s[%d]", base, name, i)
		switch {
		case strings.TrimSpace(p) == "":
			v.errorf(path, "must not be empty: name paths as pkg/**/*_test.go does")
		case strings.HasPrefix(p, "/") || strings.Contains(p, `\`):
			v.errorf(path, "%q must be a pattern of slash-separated paths from the repository's top, such as pkg/**/*_test.go", p)
		case !doublestar.ValidatePattern(p):
			v.errorf(path, "%q is not a glob pattern (an unclosed [ or {?)", p)
		default:
			for _, part := range strings.Split(p, "/") {
				if part == ".." || part == "." {
					v.errorf(path, "%q has a %q component: name paths from the repository's top", p, part)
					break
				}
			}
		}
	}
}
