package workorder

import "testing"

func TestFixGateContextFieldsAreChecked(t *testing.T) {
	checkFieldCases(t, []fieldCase{
		{`{"work_order": {"context": {"fix_paths": null, "fix_max_file_bytes": null}}}`, nil},
		{`{"work_order": {"context": {"fix_paths": "pkg/**/*_test.go"}}}`, nil},
		{`{"work_order": {"context": {"fix_paths": ["docs/*.md", "{a,b}/x.go", "x[0-9].txt"]}}}`, nil},
		{`{"work_order": {"context": {"fix_paths": 7}}}`, []string{"error work_order.context.fix_paths: must be an array of strings, not a number"}},
		{`{"work_order": {"context": {"fix_paths": ["a", 7]}}}`, []string{"error work_order.context.fix_paths[1]: must be a string, not a number"}},
		{`{"work_order": {"context": {"fix_paths": [" "]}}}`, []string{"error work_order.context.fix_paths[0]: must not be empty: name paths as pkg/**/*_test.go does"}},
		{`{"work_order": {"context": {"fix_paths": "/etc/*"}}}`, []string{`error work_order.context.fix_paths[0]: "/etc/*" must be a pattern of slash-separated paths from the repository's top, such as pkg/**/*_test.go`}},
		{`{"work_order": {"context": {"fix_paths": ["a\\b"]}}}`, []string{`error work_order.context.fix_paths[0]: "a\\b" must be a pattern of slash-separated paths from the repository's top, such as pkg/**/*_test.go`}},
		{`{"work_order": {"context": {"fix_paths": ["x[0-9"]}}}`, []string{`error work_order.context.fix_paths[0]: "x[0-9" is not a glob pattern (an unclosed [ or {?)`}},
		{`{"work_order": {"context": {"fix_paths": ["pkg/../x"]}}}`, []string{`error work_order.context.fix_paths[0]: "pkg/../x" has a ".." component: name paths from the repository's top`}},
		{`{"work_order": {"context": {"fix_paths": ["./x"]}}}`, []string{`error work_order.context.fix_paths[0]: "./x" has a "." component: name paths from the repository's top`}},
		{`{"work_order": {"context": {"fix_max_file_bytes": 1}}}`, nil},
		{`{"work_order": {"context": {"fix_max_file_bytes": 0}}}`, []string{"error work_order.context.fix_max_file_bytes: must be a positive number of bytes, not 0"}},
		{`{"work_order": {"context": {"fix_max_file_bytes": "10MiB"}}}`, []string{"error work_order.context.fix_max_file_bytes: must be a whole number, not \"10MiB\""}},
	}, baseOptions)
}
