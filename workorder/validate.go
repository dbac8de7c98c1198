package workorder

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/wo-runner/wo/internal/fileparts"
)

// Severity says whether a problem stops the document (error) or is advice
// (warning), as task creation has them.
type Severity string

const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
)

// Problem is one finding, located by a field path such as
// "work_order.procedure[2].loop_to".
type Problem struct {
	Path    string `json:"field"`
	Message string `json:"reason"`
	// Value is the value the problem is about, when the caller asks for it
	// (wo create names the value it refused).
	Value    any      `json:"value,omitempty"`
	Severity Severity `json:"severity"`
	// Kind says whose a problem is, when the caller tells them apart
	// (wo validate does): the document's, or this machine's.
	Kind ProblemKind `json:"kind,omitempty"`
}

// ProblemKind says what a problem is about. A document's problem is wrong
// wherever it runs; a machine's (its repository, branches, worktree folder,
// token) is what wo run would refuse here, and the same document may run
// on another machine.
type ProblemKind string

const (
	OfDocument ProblemKind = "document"
	OfMachine  ProblemKind = "machine"
)

// String names the field, a step's by its step number (the number a
// person reads in wo show), not by its place in the array.
func (p Problem) String() string {
	if n := StepOf(p.Path); n > 0 {
		where := fmt.Sprintf("step %d", n)
		if rest := strings.TrimPrefix(stepPath.ReplaceAllString(p.Path, ""), "."); rest != "" {
			where += " " + rest
		}
		return where + ": " + p.Message
	}
	return p.Path + ": " + p.Message
}

// MarshalJSON adds the step number of a step's problem, as "step".
func (p Problem) MarshalJSON() ([]byte, error) {
	type plain Problem
	return json.Marshal(struct {
		plain
		Step int `json:"step,omitempty"`
	}{plain(p), StepOf(p.Path)})
}

// Report is every problem found in one document.
type Report struct {
	Key string `json:"key"`
	// Document names a document that came without a _key (the key in Key
	// is the one an import would give it, new at every try): its file,
	// place and title.
	Document string    `json:"document,omitempty"`
	Problems []Problem `json:"problems"`
}

// Name is how messages name the document: its key, or, for one that came
// without a key, where it is.
func (r Report) Name() string {
	switch {
	case r.Document != "":
		return r.Document
	case r.Key == "":
		return "(no _key)"
	}
	return r.Key
}

// Unkeyed names a document that has no _key yet: its place in its source
// and its title.
func Unkeyed(source string, index, of int, title string) string {
	name := source
	if of > 1 {
		name = fmt.Sprintf("%s, document %d", source, index+1)
	}
	if title != "" {
		name += fmt.Sprintf(" (%s)", quote(title))
	}
	return name
}

// Errors returns the problems that make the document invalid.
func (r Report) Errors() []Problem { return r.filter(SeverityError) }

// Warnings returns the advisory problems.
func (r Report) Warnings() []Problem { return r.filter(SeverityWarning) }

// Valid reports whether there are no errors.
func (r Report) Valid() bool { return len(r.Errors()) == 0 }

func (r Report) filter(s Severity) []Problem {
	var out []Problem
	for _, p := range r.Problems {
		if p.Severity == s {
			out = append(out, p)
		}
	}
	return out
}

// InvalidError is returned when documents fail validation; it carries every
// error of every document, not just the first.
type InvalidError struct {
	Reports []Report
}

func (e *InvalidError) Error() string {
	return fmt.Sprintf("invalid document: %d problem(s)", ErrorCount(e.Reports)) + ProblemLines(e.Reports)
}

// ErrorCount is how many errors the reports hold.
func ErrorCount(reports []Report) int {
	n := 0
	for _, r := range reports {
		n += len(r.Errors())
	}
	return n
}

// ProblemLines lists the reports' errors, then their warnings, a line
// each, every line indented under a headline.
func ProblemLines(reports []Report) string {
	var b strings.Builder
	for _, r := range reports {
		for _, p := range r.Errors() {
			fmt.Fprintf(&b, "\n  %s %s", r.Name(), p)
		}
	}
	// The warnings of the same documents often say what was meant (a
	// misspelt field): they come after the errors, marked.
	for _, r := range reports {
		for _, p := range r.Warnings() {
			fmt.Fprintf(&b, "\n  warning: %s %s", r.Name(), p)
		}
	}
	return b.String()
}

// Options tell Validate about the world around the document.
type Options struct {
	// Actions and Conditions are the procedure vocabulary that the engine
	// implements.
	Actions    []string
	Conditions []string
	// Lookup returns another task's dependencies, and whether it exists.
	// Nil skips the checks that need other tasks (existence, cycles).
	Lookup func(key string) (Dependencies, bool)
	// LaterNames are placeholders that steps fill in while running
	// (pr_number, commit_sha, …): a template may use them before they exist.
	LaterNames []string
	// Offline checks the documents alone, away from the store and from the
	// machine that will run them: a task that Lookup does not know may be
	// in the store (a warning, not an error), and the files a document
	// names are not looked for.
	Offline bool
	// BaseDir resolves relative relevant_files when the document has no
	// repo_path or client_cwd of its own.
	BaseDir string
	// ReadBy names the actions that read the field at a path of Fields
	// (none: any step may carry it); a step field on a step whose action
	// does not read it gets a warning. Nil turns that check off.
	ReadBy func(path string) []string
	// Advice adds what the engine knows of a document that its shape does
	// not say (a wait shorter than its reviewer usually takes); nil adds
	// nothing.
	Advice func(Document) []Problem
}

// Validate checks a document against Persephone's schema, the task-creation rules
// and the work-order structure. It never stops at the first problem.
func Validate(doc Document, opts Options) Report {
	v := &validator{doc: doc, opts: opts}
	// A team's tasks.json has its own schema, which it passed on import:
	// the task-creation lengths are advice for what came from one.
	_, v.fromTasksJSON = doc[TasksJSONField].(map[string]any)
	v.top()
	v.formation()
	if wo, ok := doc["work_order"]; ok {
		if m, ok := v.object("work_order", wo); ok {
			if IsWorkOrder(doc) {
				v.workOrder(m)
			} else {
				v.stateOnly(m)
			}
		}
	}
	if tc, ok := doc["task_context"]; ok {
		if m, ok := v.object("task_context", tc); ok {
			v.taskContext(m)
		}
	}
	v.fields()
	if opts.Advice != nil {
		// An action's rule that a field is required says nothing new
		// where the field already has an error (a condition of "", a
		// loop_to of null): each problem is listed once.
		erred := map[string]bool{}
		for _, p := range v.problems {
			if p.Severity == SeverityError {
				erred[p.Path] = true
			}
		}
		for _, p := range opts.Advice(doc) {
			if p.Severity != SeverityError || !erred[p.Path] {
				v.problems = append(v.problems, p)
			}
		}
	}
	return Report{Key: Key(doc), Problems: v.problems}
}

type validator struct {
	doc           Document
	opts          Options
	problems      []Problem
	fromTasksJSON bool
}

func (v *validator) errorf(path, format string, args ...any) {
	v.problems = append(v.problems, Problem{Path: path, Message: fmt.Sprintf(format, args...), Severity: SeverityError})
}

func (v *validator) warnf(path, format string, args ...any) {
	v.problems = append(v.problems, Problem{Path: path, Message: fmt.Sprintf(format, args...), Severity: SeverityWarning})
}

func (v *validator) object(path string, x any) (map[string]any, bool) {
	m, ok := x.(map[string]any)
	if !ok {
		v.errorf(path, "must be an object, not %s", jsonKind(x))
	}
	return m, ok
}

func (v *validator) str(path string, x any) (string, bool) {
	s, ok := x.(string)
	if !ok {
		v.errorf(path, "must be a string, not %s", jsonKind(x))
	}
	return s, ok
}

// optString reads m[name] as a string when present and not null.
func (v *validator) optString(m map[string]any, base, name string) (string, bool) {
	x, ok := m[name]
	if !ok || x == nil {
		return "", false
	}
	return v.str(join(base, name), x)
}

func (v *validator) integer(path string, x any) (int64, bool) {
	n, ok := AsInt(x)
	if !ok {
		v.errorf(path, "must be a whole number, not %s", describe(x))
	}
	return n, ok
}

func (v *validator) strings(path string, x any) ([]string, bool) {
	list, ok := x.([]any)
	if !ok {
		v.errorf(path, "must be an array of strings, not %s", jsonKind(x))
		return nil, false
	}
	out := make([]string, 0, len(list))
	good := true
	for i, item := range list {
		s, ok := item.(string)
		if !ok {
			v.errorf(fmt.Sprintf("%s[%d]", path, i), "must be a string, not %s", jsonKind(item))
			good = false
			continue
		}
		out = append(out, s)
	}
	return out, good
}

func (v *validator) enum(path, value string, allowed []string) {
	if !slices.Contains(allowed, value) {
		v.errorf(path, "%q is not one of %s", value, strings.Join(allowed, ", "))
	}
}

func (v *validator) top() {
	d := v.doc
	if x, ok := d["_key"]; !ok {
		v.errorf("_key", "required")
	} else if s, ok := v.str("_key", x); ok {
		if err := CheckKey(s); err != nil {
			v.errorf("_key", "%v", err)
		}
	}
	if s, ok := v.optString(d, "", "title"); ok && strings.TrimSpace(s) == "" {
		v.errorf("title", "must not be empty")
	}
	v.description()
	status, hasStatus := v.optString(d, "", "status")
	if !hasStatus {
		if _, present := d["status"]; !present {
			v.errorf("status", "required: one of %s", strings.Join(StatusNames(), ", "))
		}
	} else {
		v.enum("status", status, StatusNames())
	}
	if Status(status) == StatusBlocked {
		if r, _ := d["block_reason"].(string); strings.TrimSpace(r) == "" {
			v.errorf("block_reason", "required when status is blocked: say what blocks the task")
		}
	}
	if s, ok := v.optString(d, "", "priority"); ok {
		if _, ok := CanonicalPriority(s); !ok {
			v.errorf("priority", "Must be P0, P1, P2, or P3 (or %s), not %q", strings.Join(Priorities, ", "), s)
		}
	}
	if s, ok := v.optString(d, "", "type"); ok {
		v.enum("type", s, Types)
	}
	if x, ok := d["labels"]; ok && x != nil {
		v.strings("labels", x)
	}
	for _, f := range []string{"created_at", "updated_at"} {
		if s, ok := v.optString(d, "", f); ok {
			if _, err := time.Parse(time.RFC3339Nano, s); err != nil {
				v.errorf(f, "%q is not an RFC 3339 time such as 2025-10-29T12:34:56Z", s)
			}
		}
	}
	if s, ok := v.optString(d, "", "parent_key"); ok && s != "" {
		if err := CheckKey(s); err != nil {
			v.errorf("parent_key", "%v", err)
		} else if s == Key(d) {
			v.errorf("parent_key", "a task cannot be its own parent")
		} else if v.opts.Lookup != nil {
			if _, exists := v.opts.Lookup(s); !exists && v.opts.Offline {
				v.warnf("parent_key", "names task %q, which is not among the documents checked (offline: the store was not read)", s)
			} else if !exists {
				v.warnf("parent_key", "names task %q, which does not exist (yet)", s)
			}
		}
	}
}

// description applies the task-creation rule for the task description; a work
// order's objective stands in for a missing description.
func (v *validator) description() {
	d := v.doc
	if s, ok := v.optString(d, "", "description"); ok {
		v.describeLength("description", s)
		return
	}
	if _, ok := Lookup(d, "work_order.objective"); ok {
		return // checked with the work order
	}
	v.errorf("description", "required (10-500 characters): say what the task is for, or give work_order.objective")
}

func (v *validator) describeLength(path, s string) {
	n := len([]rune(strings.TrimSpace(s)))
	report := v.errorf
	if v.fromTasksJSON {
		report = v.warnf
	}
	switch {
	case n < 10:
		report(path, "Must be at least 10 characters")
	case n > 500:
		report(path, "Must be at most 500 characters")
	}
}

func (v *validator) workOrder(wo map[string]any) {
	switch x, ok := wo["version"]; {
	case !ok:
		v.errorf("work_order.version", `required: "1.0"`)
	case x != "1.0":
		v.errorf("work_order.version", `%s is not a version this wo reads: use "1.0"`, describe(x))
	}
	if x, ok := wo["objective"]; !ok {
		v.errorf("work_order.objective", "required: one sentence saying what the work order achieves")
	} else if s, ok := v.str("work_order.objective", x); ok {
		v.describeLength("work_order.objective", s)
	}
	var ctx map[string]any
	if x, ok := wo["context"]; ok {
		ctx, _ = v.object("work_order.context", x)
		v.context(ctx)
	}
	if x, ok := wo["inputs"]; ok {
		if m, ok := v.object("work_order.inputs", x); ok {
			v.inputs(m)
		}
	}
	if x, ok := wo["dependencies"]; ok {
		if m, ok := v.object("work_order.dependencies", x); ok {
			v.dependencies(m)
		}
	}
	steps := 0
	if x, ok := wo["procedure"]; !ok {
		v.errorf("work_order.procedure", "required: the ordered steps to run")
	} else {
		steps = v.procedure(x)
		facts := v.commandFacts()
		v.workBranch(facts)
	}
	if x, ok := wo["success_criteria"]; ok {
		// The task-creation limits apply; its "measurable" advice does not, because
		// wo checks the criteria it can itself and lists the rest.
		v.list("work_order.success_criteria", x, criterionRule)
	}
	if x, ok := wo["approval"]; ok && x != nil {
		if m, ok := v.object("work_order.approval", x); ok {
			if r, present := m["required"]; present {
				if _, isBool := r.(bool); !isBool {
					v.errorf("work_order.approval.required", "must be true or false, not %s", describe(r))
				}
			}
			v.approvalRequest(m)
		}
	}
	v.rollbackHints(wo)
	if x, ok := wo["state"]; ok && x != nil {
		if m, ok := v.object("work_order.state", x); ok {
			v.state(m, steps)
		}
	}
}

func (v *validator) context(ctx map[string]any) {
	const base = "work_order.context"
	if ctx == nil {
		return
	}
	if s, ok := v.optString(ctx, base, "repo"); ok && !repoPattern.MatchString(s) {
		v.errorf(base+".repo", "%q is not a GitHub repository: use owner/name", s)
	}
	if x, ok := ctx["target_pr"]; ok && x != nil {
		if n, ok := v.integer(base+".target_pr", x); ok && n <= 0 {
			v.errorf(base+".target_pr", "must be a pull request number (a positive integer), not %d", n)
		}
	}
	repoPath, _ := v.optString(ctx, base, "repo_path")
	if repoPath != "" && !filepath.IsAbs(repoPath) {
		v.errorf(base+".repo_path", "%q must be an absolute path", repoPath)
	}
	for _, f := range []string{"base_branch", "source_branch"} {
		if s, ok := v.optString(ctx, base, f); ok {
			if err := CheckRefName(s); err != nil {
				v.errorf(base+"."+f, "%v", err)
			}
		}
	}
	if s, ok := v.optString(ctx, base, "worktree_root"); ok {
		clean := filepath.Clean(s)
		switch {
		case !filepath.IsAbs(s):
			v.errorf(base+".worktree_root", "%q must be an absolute path", s)
		case slices.Contains(strings.Split(clean, string(filepath.Separator)), ".git"):
			v.errorf(base+".worktree_root", "%q is inside a .git directory: choose a folder outside the repository's metadata", s)
		case repoPath != "" && (clean == filepath.Clean(repoPath)):
			v.errorf(base+".worktree_root", "%q is the repository itself: choose a separate folder", s)
		}
	}
	if s, ok := v.optString(ctx, base, "remote"); ok && strings.TrimSpace(s) == "" {
		v.errorf(base+".remote", "must not be empty: omit it to use origin")
	}
	v.reviewers(ctx["reviewers"])
	v.fixGate(ctx)
	for _, f := range []string{"resolve_threads", "outdated_threads_count"} {
		if x, ok := ctx[f]; ok && x != nil {
			if _, isBool := x.(bool); !isBool {
				v.errorf(base+"."+f, "must be true or false, not %s", jsonKind(x))
			}
		}
	}
}

// reviewers checks context.reviewers: a login or a list of logins that the
// review loop waits for. A name that is not one would make it wait for
// nobody, or for anybody.
func (v *validator) reviewers(x any) {
	const path = "work_order.context.reviewers"
	var names []string
	switch r := x.(type) {
	case nil:
		return
	case string:
		names = []string{r}
	default:
		var ok bool
		if names, ok = v.strings(path, x); !ok {
			return
		}
	}
	for i, name := range names {
		if strings.TrimSpace(name) == "" || strings.ContainsAny(name, " \t\n/@") {
			v.errorf(fmt.Sprintf("%s[%d]", path, i), "%q is not a GitHub login: name the reviewer as GitHub does (coderabbitai[bot], alice)", name)
		}
	}
}

func (v *validator) inputs(in map[string]any) {
	const base = "work_order.inputs"
	if s, ok := v.optString(in, base, "branch_name"); ok {
		if err := CheckRefName(s); err != nil {
			v.errorf(base+".branch_name", "%v", err)
		}
	}
	// The rule of gitops.Repo.Worktree, which wo run would meet only as
	// this machine's problem.
	if s, ok := v.optString(in, base, "worktree_name"); ok && (strings.ContainsAny(s, `/\`) || s == "." || s == "..") {
		v.errorf(base+".worktree_name", "%q must be one folder's name, such as pr-01-foundation: the worktree is <worktree_root>/<worktree_name>", s)
	}
	if x, ok := in["pr_number"]; ok && x != nil {
		if n, ok := v.integer(base+".pr_number", x); ok && n <= 0 {
			v.errorf(base+".pr_number", "must be a positive integer, not %d", n)
		}
	}
	var manifest []string
	if x, ok := in["delete_manifest"]; ok {
		list, _ := v.strings(base+".delete_manifest", x)
		for i, p := range list {
			if err := CheckRelativePath(p); err != nil {
				v.errorf(fmt.Sprintf("%s.delete_manifest[%d]", base, i), "%v", err)
			}
		}
	}
	if x, ok := in["file_manifest"]; ok {
		list, _ := v.strings(base+".file_manifest", x)
		seen := map[string]bool{}
		for i, p := range list {
			path := fmt.Sprintf("%s.file_manifest[%d]", base, i)
			if err := CheckRelativePath(p); err != nil {
				v.errorf(path, "%v", err)
				continue
			}
			if seen[p] {
				v.warnf(path, "%q is listed twice", p)
			}
			seen[p] = true
			manifest = append(manifest, p)
		}
	}
	if x, ok := in["file_count"]; ok {
		if n, ok := v.integer(base+".file_count", x); ok && manifest != nil && int(n) != len(manifest) {
			v.warnf(base+".file_count", "says %d but file_manifest lists %d files", n, len(manifest))
		}
	}
	v.fileParts(in, manifest)
	if x, ok := in["line_count"]; ok {
		if n, ok := v.integer(base+".line_count", x); ok && n < 0 {
			v.errorf(base+".line_count", "must not be negative")
		}
	}
}

// fileParts checks inputs.file_parts: each a file of the manifest, with
// well-formed line ranges.
func (v *validator) fileParts(in map[string]any, manifest []string) {
	const base = "work_order.inputs"
	if x, ok := in["file_parts"]; ok && x != nil {
		parts, _ := v.object(base+".file_parts", x)
		names := make([]string, 0, len(parts))
		for p := range parts {
			names = append(names, p)
		}
		slices.Sort(names)
		for _, p := range names {
			path := fmt.Sprintf("%s.file_parts[%q]", base, p)
			ranges, ok := parts[p].(string)
			switch {
			case !slices.Contains(manifest, p):
				v.errorf(path, "%q is not in file_manifest: a part is of a file the task brings", p)
			case !ok:
				v.errorf(path, "must be line ranges such as \"1-12,30-41\"")
			default:
				if err := fileparts.Check(ranges); err != nil {
					v.errorf(path, "%v", err)
				}
			}
		}
	}
}

func (v *validator) dependencies(deps map[string]any) {
	const base = "work_order.dependencies"
	self := Key(v.doc)
	var lists Dependencies
	for _, f := range []string{"blocked_by", "blocks"} {
		x, ok := deps[f]
		if !ok || x == nil {
			continue
		}
		keys, _ := v.strings(base+"."+f, x)
		for i, k := range keys {
			path := fmt.Sprintf("%s.%s[%d]", base, f, i)
			if err := CheckKey(k); err != nil {
				v.errorf(path, "%v", err)
				continue
			}
			if k == self {
				v.errorf(path, "a task cannot depend on itself")
				continue
			}
			if v.opts.Lookup != nil && !v.otherSide(path, f, k, self) {
				continue
			}
			if f == "blocked_by" {
				lists.BlockedBy = append(lists.BlockedBy, k)
			} else {
				lists.Blocks = append(lists.Blocks, k)
			}
		}
	}
	for _, k := range lists.BlockedBy {
		if slices.Contains(lists.Blocks, k) {
			v.errorf(base, "%q is both in blocked_by and in blocks: that is a cycle", k)
		}
	}
	if v.opts.Lookup != nil && self != "" {
		if cycle := findCycle(self, lists, v.opts.Lookup); cycle != nil {
			v.errorf(base+".blocked_by", "dependency cycle: %s", strings.Join(cycle, " → "))
		}
	}
}

// otherSide checks dependency k (in list f, at path) against task k as
// the store has it: that it exists, and that its own lists agree. It
// reports false when k does not exist and the dependency is refused.
func (v *validator) otherSide(path, f, k, self string) bool {
	other, exists := v.opts.Lookup(k)
	switch {
	case !exists && v.opts.Offline:
		v.warnf(path, "names task %q, which is not among the documents checked (offline: the store was not read)", k)
	case !exists && f == "blocks":
		// A task may name the tasks it will block before they exist.
		v.warnf(path, "names task %q, which does not exist yet: it will wait for this task once it does", k)
	case !exists:
		v.errorf(path, "names task %q, which does not exist", k)
		return false
	case f == "blocks" && slices.Contains(other.Blocks, self):
		v.errorf(path, "task %q blocks this task, and this task blocks it: that is a cycle", k)
	case f == "blocks" && !slices.Contains(other.BlockedBy, self) && !sameEpic(v.doc, other):
		v.warnf(path, "task %q does not list %q in its blocked_by and is not in the same epic, so wo will not make it wait: add %q to its blocked_by", k, self, self)
	case f == "blocks" && !slices.Contains(other.BlockedBy, self):
		v.warnf(path, "task %q does not list %q in its blocked_by; wo honours both sides within an epic, so it waits for this task", k, self)
	case f == "blocked_by" && len(other.Blocks) > 0 && !slices.Contains(other.Blocks, self):
		v.warnf(path, "task %q lists what it blocks without %q; wo honours both sides, so this task waits for it", k, self)
	}
	return true
}

// findCycle follows "waits for" edges (blocked_by) from self and returns a
// path back to self, if any. A task in self's blocks waits for self, so
// reaching one of them also closes a cycle.
func findCycle(self string, deps Dependencies, lookup func(string) (Dependencies, bool)) []string {
	targets := map[string]bool{self: true}
	for _, b := range deps.Blocks {
		targets[b] = true
	}
	visited := map[string]bool{}
	var path []string
	var walk func(k string) bool
	walk = func(k string) bool {
		if targets[k] {
			path = append(path, k)
			return true
		}
		if visited[k] {
			return false
		}
		visited[k] = true
		d, ok := lookup(k)
		if !ok {
			return false
		}
		path = append(path, k)
		for _, next := range d.BlockedBy {
			if walk(next) {
				return true
			}
		}
		path = path[:len(path)-1]
		return false
	}
	for _, k := range deps.BlockedBy {
		path = []string{self}
		if walk(k) {
			if last := path[len(path)-1]; last != self {
				path = append(path, self) // last waits for self through blocks
			}
			return path
		}
	}
	return nil
}

func (v *validator) procedure(x any) int {
	const base = "work_order.procedure"
	list, ok := x.([]any)
	if !ok {
		v.errorf(base, "must be an array of steps, not %s", jsonKind(x))
		return 0
	}
	if len(list) == 0 {
		v.errorf(base, "must have at least one step")
		return 0
	}
	for i, item := range list {
		path := fmt.Sprintf("%s[%d]", base, i)
		step, ok := v.object(path, item)
		if !ok {
			continue
		}
		v.step(path, i+1, step)
	}
	return len(list)
}

// maxWaitMinutes bounds a step's wait: a week.
const maxWaitMinutes = 7 * 24 * 60

func (v *validator) step(path string, want int, s map[string]any) {
	num := v.stepNumber(path, want, s)
	if x, ok := s["action"]; !ok {
		v.errorf(path+".action", "required: one of %s", strings.Join(v.opts.Actions, ", "))
	} else if a, ok := v.str(path+".action", x); ok {
		if !slices.Contains(v.opts.Actions, a) {
			v.errorf(path+".action", "unknown action %q%s; known actions are %s", a, meant(a, v.opts.Actions), strings.Join(v.opts.Actions, ", "))
		}
	}
	for _, f := range []string{"command", "description", "fix_action"} {
		v.optString(s, path, f)
	}
	v.stepText(path, s)
	v.stepCommand(path, s)
	cond, hasCond := v.optString(s, path, "condition")
	if hasCond && !slices.Contains(v.opts.Conditions, cond) {
		v.errorf(path+".condition", "unknown condition %q%s; known conditions are %s", cond, meant(cond, v.opts.Conditions), strings.Join(v.opts.Conditions, ", "))
	}
	if _, hasLoop := s["loop_to"]; hasLoop {
		if n, ok := v.integer(path+".loop_to", s["loop_to"]); ok && (n < 1 || n >= num) {
			v.errorf(path+".loop_to", "is %d but must point to an earlier existing step (1..%d)", n, num-1)
		}
	}
	v.stepWait(path, s)
	v.stepDelivery(path, s)
	if x, ok := s["max_iterations"]; ok && x != nil {
		if n, ok := v.integer(path+".max_iterations", x); ok && n < 1 {
			v.errorf(path+".max_iterations", "must be at least 1")
		}
	}
}

// stepNumber checks that the step is numbered want, and returns its
// number (want when it has none that can be read).
func (v *validator) stepNumber(path string, want int, s map[string]any) int64 {
	x, ok := s["step"]
	if !ok {
		v.errorf(path+".step", "required: steps are numbered 1..n in order (this is step %d)", want)
		return int64(want)
	}
	n, ok := v.integer(path+".step", x)
	if !ok {
		return int64(want)
	}
	if int(n) != want {
		v.errorf(path+".step", "is %d but steps must be numbered 1..n in order: expected %d", n, want)
		return int64(want)
	}
	return n
}

// stepCommand checks that the placeholders of the step's command resolve
// against this document (or name what a later step sets).
func (v *validator) stepCommand(path string, s map[string]any) {
	cmd, ok := s["command"].(string)
	if !ok {
		return
	}
	var unknown *UnknownPlaceholderError
	if _, err := NewScope(v.doc).Render(cmd); errors.As(err, &unknown) {
		unknown.Names = slices.DeleteFunc(unknown.Names, func(n string) bool { return slices.Contains(v.opts.LaterNames, n) })
		if len(unknown.Names) > 0 {
			v.errorf(path+".command", "%v", unknown)
		}
	}
}

// stepWait checks duration_minutes: a positive number, at most a week.
func (v *validator) stepWait(path string, s map[string]any) {
	x, ok := s["duration_minutes"]
	if !ok || x == nil {
		return
	}
	if f, ok := AsFloat(x); !ok || f <= 0 {
		v.errorf(path+".duration_minutes", "must be a positive number of minutes, not %s", describe(x))
	} else if f > maxWaitMinutes {
		// A longer wait is a mistake, and one of 1e12 minutes is no
		// time.Duration at all (it wraps to a negative wait).
		v.errorf(path+".duration_minutes", "is %g minutes, more than a week (%d): wait that long with wo run --review-wait 0 and a review event instead", f, maxWaitMinutes)
	}
}

// stepDelivery checks delivery: an array of {target, content}.
func (v *validator) stepDelivery(path string, s map[string]any) {
	x, ok := s["delivery"]
	if !ok || x == nil {
		return
	}
	list, isList := x.([]any)
	if !isList {
		v.errorf(path+".delivery", "must be an array of {target, content}, not %s", jsonKind(x))
	}
	for i, item := range list {
		p := fmt.Sprintf("%s.delivery[%d]", path, i)
		m, ok := v.object(p, item)
		if !ok {
			continue
		}
		if t, _ := m["target"].(string); !slices.Contains(DeliveryTargets, t) {
			v.errorf(p+".target", "%s is not a delivery target: use %s", describe(m["target"]), strings.Join(DeliveryTargets, ", "))
		}
		v.optString(m, p, "content")
	}
}

// state checks work_order.state against State's description of each
// field (statefields.go): its type, and its rule against the procedure's
// steps.
func (v *validator) state(st map[string]any, steps int) {
	checkState(st, steps, func(field, msg string) { v.errorf("work_order.state."+field, "%s", msg) })
}

// The task-creation limits for list fields. These rules and their messages are the
// only ones: wo create judges the documents it builds from parameters here
// too (FromCreateParams, ParamPath).
type listRule struct {
	maxItems int
	maxLen   int
	minLen   int
	noun     string
}

var (
	deliverableRule = listRule{maxItems: 20, maxLen: 200, minLen: 10, noun: "Deliverable"}
	criterionRule   = listRule{maxItems: 15, maxLen: 200, minLen: 10, noun: "Criterion"}
	constraintRule  = listRule{maxItems: 15, maxLen: 200, minLen: 10, noun: "Constraint"}
)

// measurableWords and constraintWords are the task-creation keyword lists.
var (
	measurableWords = []string{"pass", "complete", "under", "above", "equal", "verify", "test", "validate", "all", "no", "zero"}
	constraintWords = []string{"do not", "must not", "never", "must use", "required to", "only use", "cannot"}
)

func (v *validator) list(path string, x any, rule listRule) []string {
	items, _ := v.strings(path, x)
	items = CleanList(items)
	if len(items) > rule.maxItems {
		v.errorf(path, "Maximum %d items allowed", rule.maxItems)
	}
	for i, item := range items {
		p := fmt.Sprintf("%s[%d]", path, i)
		n := len([]rune(item))
		if n > rule.maxLen {
			v.errorf(p, "Each item must be at most %d characters", rule.maxLen)
		}
		if n < rule.minLen {
			v.warnf(p, "%s is very short: %q. Consider being more specific.", rule.noun, item)
		}
	}
	return items
}

func (v *validator) criteria(path string, x any) {
	for i, item := range v.list(path, x, criterionRule) {
		if !containsAny(strings.ToLower(item), measurableWords) {
			v.warnf(fmt.Sprintf("%s[%d]", path, i), "Criterion may not be measurable: %q. Consider adding quantifiable metrics.", item)
		}
	}
}

// taskContext checks the task_context as stored in the task registry's shape.
func (v *validator) taskContext(tc map[string]any) {
	const base = "task_context"
	if s, ok := v.optString(tc, base, "background_context"); ok {
		n := len([]rune(strings.TrimSpace(s)))
		if n > 5000 {
			v.errorf(base+".background_context", "Must be at most 5000 characters")
		} else if n < 50 {
			v.warnf(base+".background_context", "Background context is very short (<50 chars). Consider adding more detail.")
		}
	}
	if x, ok := nested(tc, "expected_deliverables", "items"); ok {
		v.list(base+".expected_deliverables.items", x, deliverableRule)
	}
	if x, ok := nested(tc, "success_criteria", "criteria"); ok {
		v.criteria(base+".success_criteria.criteria", x)
	}
	if x, ok := nested(tc, "constraints", "rules"); ok {
		path := base + ".constraints.rules"
		for i, item := range v.list(path, x, constraintRule) {
			if !containsAny(strings.ToLower(item), constraintWords) {
				v.warnf(fmt.Sprintf("%s[%d]", path, i), "Constraint should start with imperative: %q", item)
			}
		}
	}
	baseDir := v.opts.BaseDir
	if s, _ := tc["client_cwd"].(string); s != "" {
		baseDir = s
	} else if s := String(v.doc, "work_order.context.repo_path"); s != "" {
		baseDir = s
	}
	if x, ok := tc["relevant_files"]; ok && x != nil {
		files, _ := v.strings(base+".relevant_files", x)
		files = CleanList(files)
		if len(files) > 50 {
			v.errorf(base+".relevant_files", "Maximum 50 files allowed")
		}
		for _, f := range files {
			if path, ok := v.exists(baseDir, f); !ok {
				v.warnf(base+".relevant_files", "File not found: %q - will be skipped by agents", path)
			}
		}
	}
	if x, ok := tc["related_documentation"]; ok && x != nil {
		docs, _ := v.strings(base+".related_documentation", x)
		docs = CleanList(docs)
		if len(docs) > 20 {
			v.errorf(base+".related_documentation", "Maximum 20 items allowed")
		}
		for _, d := range docs {
			if strings.HasPrefix(d, "http://") || strings.HasPrefix(d, "https://") {
				if strings.Contains(d, " ") {
					v.warnf(base+".related_documentation", "URL contains spaces: %q", d)
				}
			} else if path, ok := v.exists(baseDir, d); !ok {
				v.warnf(base+".related_documentation", "Documentation file not found: %q", path)
			}
		}
	}
}

// nested reads m[outer][inner], also accepting a bare list at m[outer] (the
// task-creation parameters are lists; its registry shape wraps them).
func nested(m map[string]any, outer, inner string) (any, bool) {
	x, ok := m[outer]
	if !ok || x == nil {
		return nil, false
	}
	if o, ok := x.(map[string]any); ok {
		y, ok := o[inner]
		return y, ok && y != nil
	}
	return x, true
}

// CleanList trims items, drops empty ones and removes duplicates, keeping
// the first occurrence (as task creation does).
func CleanList(items []string) []string {
	out := make([]string, 0, len(items))
	seen := map[string]bool{}
	for _, s := range items {
		s = strings.TrimSpace(s)
		if s == "" || seen[s] {
			continue
		}
		seen[s] = true
		out = append(out, s)
	}
	return out
}

// exists resolves p against baseDir and reports whether it is there; the
// resolved path is what a message names. Offline, the files are on the
// machine that will run the task, not this one: no claim either way.
func (v *validator) exists(baseDir, p string) (string, bool) {
	if v.opts.Offline {
		return p, true
	}
	if !filepath.IsAbs(p) {
		if baseDir == "" {
			return p, true // nothing to resolve against: no claim either way
		}
		p = filepath.Join(baseDir, p)
	}
	_, err := os.Stat(p)
	return p, err == nil
}

func containsAny(s string, words []string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

func join(base, name string) string {
	if base == "" {
		return name
	}
	return base + "." + name
}

func describe(x any) string {
	switch t := x.(type) {
	case string:
		return fmt.Sprintf("%q", t)
	case nil:
		return "null"
	default:
		if _, ok := AsFloat(x); ok {
			return fmt.Sprint(t)
		}
		return jsonKind(x)
	}
}

// sameEpic reports whether the document and another task share an epic.
func sameEpic(doc Document, other Dependencies) bool {
	p := String(doc, "parent_key")
	return p != "" && p == other.Parent
}

// IsWorkOrder reports whether a document carries a work order: a
// work_order with more than the state. wo keeps state on documents that
// are not work orders too (an epic's: GitHub's stacks of it, its land), as
// a work_order holding only a state; such a document is still a plain
// task, and its state need only be one this wo reads.
func IsWorkOrder(doc Document) bool {
	wo, ok := doc["work_order"].(map[string]any)
	if !ok {
		_, present := doc["work_order"]
		return present // not an object: the checks of a work order say so
	}
	for k := range wo {
		if k != "state" {
			return true
		}
	}
	return false
}

// stateOnly checks the state of a document that is not a work order.
func (v *validator) stateOnly(wo map[string]any) {
	if st, ok := v.object("work_order.state", wo["state"]); ok {
		v.state(st, -1) // no procedure to hold the steps to: the types alone
	}
}
