package workorder

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/agnivade/levenshtein"
)

// Kind is the JSON type a field holds, as the reference and the messages
// name it.
type Kind string

const (
	KindString       Kind = "string"
	KindInteger      Kind = "integer"
	KindNumber       Kind = "number"
	KindBool         Kind = "boolean"
	KindStrings      Kind = "array of strings"
	KindObject       Kind = "object"
	KindArray        Kind = "array of objects"
	KindStringOrList Kind = "string or array of strings"
	KindAnything     Kind = "any JSON value"
)

// Field is one field of a task document that wo reads or writes. The
// table of them, Fields, is the one description of the document: the
// validator checks every field's type and values against it and warns of
// fields it does not list, and docs/work-order.md is generated from it, so
// the reference cannot drift from what wo accepts.
type Field struct {
	// Path is dotted; [] stands for every element of an array
	// (work_order.procedure[].action).
	Path string
	Kind Kind
	// Values are the only values a string field may take.
	Values []string
	// Required says when the field must be there ("yes", or a condition);
	// empty when it is optional.
	Required string
	// Default is what an absent field means.
	Default string
	// Writer names who writes the field when the author does not ("wo
	// import", "wo split", "wo run"): a field wo writes is not the
	// author's to set.
	Writer string
	// Doc says what the field means, in a sentence or two.
	Doc string
	// Open marks an object whose other fields belong to the author or
	// other tools: only a likely misspelling of a listed one is pointed
	// out. Templated marks one whose other fields are the author's for
	// templates (context, inputs): one that no template names is.
	Open      bool
	Templated bool
}

// Name is the last element of the path.
func (f Field) Name() string {
	p := strings.TrimSuffix(f.Path, "[]")
	return p[strings.LastIndexByte(p, '.')+1:]
}

// Parent is the path of the object the field is in ("" for the task).
func (f Field) Parent() string {
	i := strings.LastIndexByte(f.Path, '.')
	if i < 0 {
		return ""
	}
	return f.Path[:i]
}

// Fields is every field of a task document that wo knows, in the order
// the reference lists them.
var Fields = []Field{
	// The task.
	{Path: "_key", Kind: KindString, Required: "yes", Writer: "wo import and wo create (task_ and 6 hex digits)",
		Doc: "The task's key: letters, digits and _-:.@()+,=;$!*'% , at most 254 bytes. Every command names the task by it."},
	{Path: "title", Kind: KindString, Doc: "A short title, at most 256 characters; a pull request's title when nothing else gives one."},
	{Path: "description", Kind: KindString, Required: "unless work_order.objective is given",
		Doc: "What the task is for, 10 to 500 characters."},
	{Path: "status", Kind: KindString, Values: []string{"open", "in_progress", "in_review", "closed", "blocked"}, Required: "yes", Default: "open (on import)",
		Doc: "Persephone's status. wo moves it only through Persephone's transitions: open→in_progress→in_review→closed, blocked with a block_reason."},
	{Path: "block_reason", Kind: KindString, Required: "when status is blocked", Doc: "What blocks the task."},
	{Path: "priority", Kind: KindString, Values: []string{"critical", "high", "medium", "low", "P0", "P1", "P2", "P3"}, Default: "medium",
		Doc: "P0..P3 are accepted and stored as critical..low."},
	{Path: "type", Kind: KindString, Values: Types, Default: "task", Doc: "An epic groups the tasks whose parent_key names it."},
	{Path: "parent_key", Kind: KindString, Doc: "The epic this task belongs to: wo run --epic, wo status and wo undo --epic work on an epic's children."},
	{Path: "labels", Kind: KindStrings},
	{Path: "created_at", Kind: KindString, Writer: "wo import and wo create", Doc: "RFC 3339, such as 2025-10-29T12:34:56Z."},
	{Path: "updated_at", Kind: KindString, Writer: "wo, at every write", Doc: "RFC 3339."},
	{Path: "source_event_id", Kind: KindString, Doc: "The event the task was formed from: wo create --source-event-id never makes two tasks of one event."},
	{Path: "task_type", Kind: KindString, Values: []string{TaskEphemeral, TaskStateful}, Doc: "ephemeral: nothing is committed; stateful: a change is."},
	{Path: "project_id", Kind: KindString, Doc: "The project the task changes (may be null for an ephemeral task)."},
	{Path: "systems_affected", Kind: KindStrings, Doc: "The subsystems or resources the task touches."},
	{Path: "artifact_ref", Kind: KindString, Doc: "The task's work plan (ephemeral) or task sheet (stateful)."},
	{Path: "patch_ref", Kind: KindString, Doc: "The patch a stateful task commits."},
	{Path: "formation_confidence", Kind: KindNumber, Doc: "How sure whoever formed the task was, from 0 to 1."},
	{Path: "evidence", Kind: KindArray, Doc: "The assumptions formation checked: claim, status (validated, unresolved, conflicting), sources (title, url, retrieved_at), notes."},
	{Path: "task_context", Kind: KindObject, Open: true,
		Doc: "The agent context that wo create stores in the task registry's shape and wo prompt puts before the objective."},
	{Path: "task_context.background_context", Kind: KindString, Doc: "Why the task exists, up to 5000 characters (a warning under 50)."},
	{Path: "task_context.expected_deliverables", Kind: KindObject, Doc: "{items: up to 20 strings of 10-200 characters, validation_added}."},
	{Path: "task_context.success_criteria", Kind: KindObject, Doc: "{criteria: up to 15 measurable strings, all_required}."},
	{Path: "task_context.constraints", Kind: KindObject, Doc: "{rules: up to 15 imperative strings (Do not…, Never…), enforcement_level}."},
	{Path: "task_context.relevant_files", Kind: KindStrings, Doc: "Up to 50 files the agent should read, relative to client_cwd or context.repo_path (a warning for one not found)."},
	{Path: "task_context.related_documentation", Kind: KindStrings, Doc: "Up to 20 URLs or files."},
	{Path: "task_context.client_cwd", Kind: KindString, Doc: "The folder relevant_files are relative to."},
	{Path: TasksJSONField, Kind: KindObject, Open: true, Writer: "wo import --format tasks-json", Doc: "The fields of the tasks.json a task came from, kept for wo export --format tasks-json."},
	{Path: "split", Kind: KindObject, Open: true, Writer: "wo split", Doc: "On an epic wo split made: base, source, their commits, mode, number of PRs, excluded files."},

	// The work order.
	{Path: "work_order", Kind: KindObject, Doc: "What to do and how far it got. A task without one can be listed and shown, not run."},
	{Path: "work_order.version", Kind: KindString, Values: []string{"1.0"}, Required: "yes"},
	{Path: "work_order.objective", Kind: KindString, Required: "yes", Doc: "One sentence saying what the work order achieves (10 to 500 characters); the start of the pull request's body and the agent's prompt."},
	{Path: "work_order.context", Kind: KindObject, Templated: true, Doc: "Where the work happens. Other fields are yours: a template can name any of them."},
	{Path: "work_order.inputs", Kind: KindObject, Templated: true, Doc: "What this work order works on. Other fields are yours: a template can name any of them."},
	{Path: "work_order.dependencies", Kind: KindObject, Doc: "Tasks this one waits for and tasks that wait for it."},
	{Path: "work_order.procedure", Kind: KindArray, Required: "yes", Doc: "The steps, numbered 1..n, run in order from where the last run stopped."},
	{Path: "work_order.success_criteria", Kind: KindStrings, Doc: "Up to 15 items; wo checks the ones it can (PR open against the base, no unresolved review, worktree removed, status) and lists the others."},
	{Path: "work_order.approval", Kind: KindObject, Doc: "An approval gate: wo run stops before the first step that changes git or GitHub until wo approve."},
	{Path: "work_order.rollback_hints", Kind: KindStrings, Doc: "How to take the change back, shown in the dry run, the approval request and wo undo --dry-run."},
	{Path: "work_order.state", Kind: KindObject, Open: true, Writer: "wo run, after every step",
		Doc: "How far the work order got, and what a resumed run needs: its fields are under work_order.state below. Fields other tools keep here are left alone."},

	// work_order.context
	{Path: "work_order.context.repo_path", Kind: KindString, Default: "wo run --repo",
		Doc: "The repository's main checkout, an absolute path. Every git step needs it."},
	{Path: "work_order.context.repo", Kind: KindString,
		Doc: "The GitHub repository, owner/name. Without it the GitHub steps have nowhere to go."},
	{Path: "work_order.context.base_branch", Kind: KindString, Default: "the base the procedure's git worktree add command names",
		Doc: "The branch the pull request targets and the worktree starts from."},
	{Path: "work_order.context.base_commit", Kind: KindString,
		Doc: "Pin the worktree's start to this commit; it must be on base_branch, else the run stops before anything changes."},
	{Path: "work_order.context.source_branch", Kind: KindString,
		Doc: "The branch the manifest's files are copied from."},
	{Path: "work_order.context.worktree_root", Kind: KindString,
		Doc: "The absolute folder the worktree goes in, outside the repository and its .git; the worktree is <worktree_root>/<worktree_name>."},
	{Path: "work_order.context.remote", Kind: KindString, Default: "origin", Doc: "The remote to push to."},
	{Path: "work_order.context.target_pr", Kind: KindInteger,
		Doc: "The pull request an agent step's pr_body and pr_comment deliveries go to when the work order opened none."},
	{Path: "work_order.context.reviewers", Kind: KindStringOrList, Default: "the review bots wo knows that show up, or a repository writer",
		Doc: "The GitHub logins whose review the loop waits for (coderabbitai[bot], alice); wo run --reviewer replaces them."},
	{Path: "work_order.context.review", Kind: KindObject, Doc: "How review findings count."},
	{Path: "work_order.context.review.nitpicks", Kind: KindString, Values: []string{"fix", "report", "ignore"}, Default: "report",
		Doc: "A reviewer's nitpicks: fix (counted and sent to the agent), report (shown, not counted) or ignore."},
	{Path: "work_order.context.resolve_threads", Kind: KindBool, Default: "false",
		Doc: "Resolve the review threads a fix addressed (by default the reviewer resolves them)."},
	{Path: "work_order.context.outdated_threads_count", Kind: KindBool, Default: "false",
		Doc: "Count outdated unresolved threads as comments to fix."},
	{Path: "work_order.context.fix_paths", Kind: KindStringOrList,
		Doc: "Glob patterns from the repository's top (pkg/**/*_test.go) of files a review fix may change beyond the manifest."},
	{Path: "work_order.context.fix_executable", Kind: KindStringOrList,
		Doc: "Glob patterns of files a review fix may make executable (a fix that sets a file's executable bit elsewhere is refused)."},
	{Path: "work_order.context.fix_max_file_bytes", Kind: KindInteger, Default: "10 MiB",
		Doc: "The largest file a review fix may push."},
	{Path: "work_order.context.split_mode", Kind: KindString, Values: []string{"independent", "stacked"}, Writer: "wo split",
		Doc: "stacked: the task may start once its blocker has pushed, not merged."},

	// work_order.inputs
	{Path: "work_order.inputs.branch_name", Kind: KindString,
		Default: "the branch the procedure's git checkout -b command names", Doc: "The review branch wo creates and pushes."},
	{Path: "work_order.inputs.worktree_name", Kind: KindString,
		Default: "the last element of the path the procedure's git worktree add command names, else the branch with / turned into -", Doc: "The worktree's folder under worktree_root."},
	{Path: "work_order.inputs.file_manifest", Kind: KindStrings,
		Doc: "The files copied from source_branch: clean paths relative to the repository's top. A review fix may change these (and context.fix_paths)."},
	{Path: "work_order.inputs.delete_manifest", Kind: KindStrings, Writer: "wo split",
		Doc: "Files the change deletes (and old names of renamed files): they are removed from the branch."},
	{Path: "work_order.inputs.file_parts", Kind: KindObject, Writer: "wo split",
		Doc: "Files of file_manifest of which the task brings only some lines: path → the source file's line ranges (\"1-12,30-41\"). wo split writes it for files that use each other in a cycle too large for one PR; the last PR with a file brings it whole."},
	{Path: "work_order.inputs.pr_title", Kind: KindString, Default: "the task's title",
		Doc: "The commit message and pull request title when the steps give none."},
	{Path: "work_order.inputs.pr_number", Kind: KindInteger, Writer: "wo split",
		Doc: "The PR's place in a split series, never GitHub's number."},
	{Path: "work_order.inputs.file_count", Kind: KindInteger, Writer: "wo split", Doc: "How many files the manifest lists (a warning when it disagrees)."},
	{Path: "work_order.inputs.line_count", Kind: KindInteger, Writer: "wo split", Doc: "How many lines the change has."},
	{Path: "work_order.inputs.packages", Kind: KindStrings, Writer: "wo split", Doc: "The Go packages in the PR."},

	// work_order.dependencies
	{Path: "work_order.dependencies.blocked_by", Kind: KindStrings,
		Doc: "Keys of the tasks this one waits for: wo run stops (exit 3) until each is closed. They must exist and form no cycle."},
	{Path: "work_order.dependencies.blocks", Kind: KindStrings,
		Doc: "Keys of the tasks that wait for this one; within an epic, wo honours either side."},

	// A step.
	{Path: "work_order.procedure[].step", Kind: KindInteger, Required: "yes", Doc: "The step's number: 1..n in order."},
	{Path: "work_order.procedure[].action", Kind: KindString, Required: "yes", Doc: "What the step does: one of the actions below."},
	{Path: "work_order.procedure[].description", Kind: KindString, Doc: "What the step is for, in words, for wo show and the log."},
	{Path: "work_order.procedure[].command", Kind: KindString,
		Doc: "The command a person would type, a template. wo never runs it: it is shown by wo show and the dry run, and read for what the step leaves out (the worktree path, base, branch, remote, -m, --title, --body)."},
	{Path: "work_order.procedure[].message", Kind: KindString, Default: "the command's -m '…', else inputs.pr_title, else the title",
		Doc: "The commit message, a template."},
	{Path: "work_order.procedure[].title", Kind: KindString, Default: "the command's --title '…', else inputs.pr_title, else the title",
		Doc: "The pull request's title, a template."},
	{Path: "work_order.procedure[].body", Kind: KindString, Default: "the command's --body '…', else <body>: the objective and the file list",
		Doc: "The pull request's body, a template."},
	{Path: "work_order.procedure[].duration_minutes", Kind: KindNumber, Default: "the reviewer's usual time (CodeRabbit: 25)",
		Doc: "How long to wait for a review of the pushed commit; wo run --review-wait replaces it."},
	{Path: "work_order.procedure[].condition", Kind: KindString, Required: "by its action",
		Doc: "What the loop tests: review_comments_exist holds while a counted comment, finding or request for changes is open."},
	{Path: "work_order.procedure[].loop_to", Kind: KindInteger, Required: "by its action",
		Doc: "The earlier step to go back to after a fix (usually the step that waits for the review)."},
	{Path: "work_order.procedure[].fix_action", Kind: KindString,
		Doc: "What the fix should do, in words: it goes into the agent's prompt."},
	{Path: "work_order.procedure[].max_iterations", Kind: KindInteger, Default: "wo run --max-iterations (5)",
		Doc: "The most fix rounds before the run stops (exit 3)."},
	{Path: "work_order.procedure[].delivery", Kind: KindArray,
		Doc: "Where an agent step's <deliverable> goes; with none, the agent's output goes to the log only."},
	{Path: "work_order.procedure[].delivery[].target", Kind: KindString, Values: DeliveryTargets, Required: "yes",
		Doc: "pr_body (the pull request's description), pr_comment (one comment, posted once) or task_note (the state's notes)."},
	{Path: "work_order.procedure[].delivery[].content", Kind: KindString,
		Doc: "Deliver this text instead of asking the agent."},

	// work_order.approval
	{Path: "work_order.approval.required", Kind: KindBool, Default: "false",
		Doc: "Stop before the first step that changes git or GitHub until wo approve (exit 3 meanwhile)."},
	{Path: "work_order.approval.summary", Kind: KindString, Doc: "What the person deciding is shown first."},
	{Path: "work_order.approval.confidence", Kind: KindNumber, Doc: "From 0 to 1."},
	{Path: "work_order.approval.evidence", Kind: KindArray, Doc: "As the task's evidence."},
}

// FieldAt returns the field a path pattern names; for an element of an
// array of objects (work_order.procedure[]), an object field.
func FieldAt(path string) (Field, bool) {
	array, each := strings.CutSuffix(path, "[]")
	for _, f := range Fields {
		switch {
		case f.Path == path:
			return f, true
		case each && f.Path == array && f.Kind == KindArray:
			return Field{Path: path, Kind: KindObject}, true
		}
	}
	return Field{}, false
}

// childrenOf are the fields directly inside the object at parent.
func childrenOf(parent string) []Field {
	var out []Field
	for _, f := range Fields {
		if f.Parent() == parent {
			out = append(out, f)
		}
	}
	return out
}

// instance is one place a field pattern matches in a document.
type instance struct {
	path   string // concrete: work_order.procedure[2].action
	value  any
	parent map[string]any
}

// instances finds every value a path pattern names in doc.
func instances(doc map[string]any, pattern string) []instance {
	type at struct {
		path string
		obj  map[string]any
	}
	parts := strings.Split(pattern, ".")
	cur := []at{{"", doc}}
	var out []instance
	for i, part := range parts {
		name, each := strings.CutSuffix(part, "[]")
		last := i == len(parts)-1
		var next []at
		for _, c := range cur {
			x, ok := c.obj[name]
			if !ok {
				continue
			}
			p := join(c.path, name)
			if last && !each {
				out = append(out, instance{p, x, c.obj})
				continue
			}
			if each {
				list, _ := x.([]any)
				for j, item := range list {
					ip := fmt.Sprintf("%s[%d]", p, j)
					if last {
						out = append(out, instance{ip, item, nil})
					} else if m, ok := item.(map[string]any); ok {
						next = append(next, at{ip, m})
					}
				}
				continue
			}
			if m, ok := x.(map[string]any); ok {
				next = append(next, at{p, m})
			}
		}
		cur = next
	}
	return out
}

// fields checks the document against the table: each field's type and
// values where no other check spoke of it, fields a step's action does
// not read, and fields the table does not know (with what was meant).
func (v *validator) fields() {
	reported := func(path string) bool {
		for _, p := range v.problems {
			if p.Path == path || strings.HasPrefix(p.Path, path+".") || strings.HasPrefix(p.Path, path+"[") {
				return true
			}
		}
		return false
	}
	for _, f := range Fields {
		for _, in := range instances(v.doc, f.Path) {
			if in.value == nil || reported(in.path) {
				continue
			}
			if msg := kindProblem(f.Kind, in.value); msg != "" {
				v.errorf(in.path, "%s", msg)
				continue
			}
			if s, ok := in.value.(string); ok && len(f.Values) > 0 && !slices.Contains(f.Values, s) {
				v.errorf(in.path, "%s is not one of %s%s", quote(s), strings.Join(f.Values, ", "), didYouMean(s, f.Values))
			}
		}
	}
	v.stepFields()
	v.unknownFields()
}

// kindProblem says how a value fails to be of a kind, or "".
func kindProblem(k Kind, x any) string {
	ok := true
	switch k {
	case KindString:
		_, ok = x.(string)
	case KindInteger:
		_, ok = AsInt(x)
	case KindNumber:
		_, ok = AsFloat(x)
	case KindBool:
		_, ok = x.(bool)
	case KindObject:
		_, ok = x.(map[string]any)
	case KindArray:
		_, ok = x.([]any)
	case KindStrings, KindStringOrList:
		if _, isString := x.(string); isString && k == KindStringOrList {
			return ""
		}
		list, isList := x.([]any)
		ok = isList
		for _, item := range list {
			if _, s := item.(string); !s {
				ok = false
			}
		}
	}
	if ok {
		return ""
	}
	article := "a "
	if strings.HasPrefix(string(k), "a") || strings.HasPrefix(string(k), "i") || strings.HasPrefix(string(k), "o") {
		article = "an "
	}
	if k == KindStrings || k == KindArray || k == KindStringOrList || k == KindAnything {
		article = ""
	}
	return fmt.Sprintf("must be %s%s, not %s", article, k, describe(x))
}

// stepFields warns of a step field that the step's action does not read:
// a title on a commit step, a loop_to on a wait.
func (v *validator) stepFields() {
	steps, _ := Get(v.doc, "work_order.procedure").([]any)
	for i, item := range steps {
		s, ok := item.(map[string]any)
		if !ok {
			continue
		}
		action, _ := s["action"].(string)
		if !slices.Contains(v.opts.Actions, action) || v.opts.ReadBy == nil {
			continue
		}
		for _, f := range childrenOf("work_order.procedure[]") {
			readers := v.opts.ReadBy(f.Path)
			if s[f.Name()] == nil || len(readers) == 0 || slices.Contains(readers, action) {
				continue
			}
			v.warnf(fmt.Sprintf("work_order.procedure[%d].%s", i, f.Name()), "a %s step does not read %s (only %s steps do): it is ignored",
				action, f.Name(), strings.Join(readers, ", "))
		}
	}
}

// unknownFields warns of fields the table does not list. In objects wo
// owns (the work order, a step, the dependencies) every one is named; in
// context and inputs, whose other fields are the author's, one that no
// template names; on the task and in objects other tools share, only one
// that looks like a misspelt field of wo's.
func (v *validator) unknownFields() {
	templates := v.templateNames()
	for _, parent := range objectPaths() {
		pf, _ := FieldAt(parent)
		open := parent == "" || pf.Open
		known := childrenOf(parent)
		names := make([]string, len(known))
		for i, f := range known {
			names[i] = f.Name()
		}
		for _, in := range objectInstances(v.doc, parent) {
			for name := range in.obj {
				if slices.Contains(names, name) || parent == "" && strings.HasPrefix(name, "_") {
					continue // known, or the store's own (_id, _rev)
				}
				path := fieldPath(in.path, name)
				hint := didYouMean(name, names)
				if hint == "" {
					hint = elsewhere(name, parent)
				}
				switch {
				case pf.Templated && templates[name]:
					// a template names it
				case open && hint == "":
					// another tool's field
				case open:
					v.warnf(path, "is not a field wo reads%s", hint)
				case pf.Templated:
					v.warnf(path, "is not a field wo reads, and no template names <%s>%s", name, orKept(hint, ": wo keeps it as it is"))
				default:
					v.warnf(path, "is not a field of %s%s", describeParent(parent), orKept(hint, ": wo ignores it"))
				}
			}
		}
	}
}

// elsewhere says where a field of that name belongs, when it is one of
// another object's.
func elsewhere(name, parent string) string {
	for _, f := range Fields {
		if f.Name() == name && f.Parent() != parent && !strings.Contains(f.Parent(), "[]") {
			where := f.Parent()
			if where == "" {
				where = "the task itself"
			}
			return fmt.Sprintf(": it belongs in %s", where)
		}
	}
	return ""
}

func orKept(hint, otherwise string) string {
	if hint != "" {
		return hint
	}
	return otherwise
}

func describeParent(parent string) string {
	if parent == "work_order.procedure[]" {
		return "a step"
	}
	return parent
}

// objectPaths are the objects whose fields the table lists: the task
// itself ("") and every object field that has fields of its own.
func objectPaths() []string {
	out := []string{""}
	for _, f := range Fields {
		if (f.Kind == KindObject || f.Kind == KindArray) && len(childrenOf(f.Path+arraySuffix(f))) > 0 {
			out = append(out, f.Path+arraySuffix(f))
		}
	}
	return out
}

func arraySuffix(f Field) string {
	if f.Kind == KindArray {
		return "[]"
	}
	return ""
}

type objectInstance struct {
	path string
	obj  map[string]any
}

func objectInstances(doc map[string]any, pattern string) []objectInstance {
	if pattern == "" {
		return []objectInstance{{"", doc}}
	}
	var out []objectInstance
	for _, in := range instances(doc, pattern) {
		if m, ok := in.value.(map[string]any); ok {
			out = append(out, objectInstance{in.path, m})
		}
	}
	return out
}

// templateNames are the <names> the document's templates use.
func (v *validator) templateNames() map[string]bool {
	names := map[string]bool{}
	steps, _ := Get(v.doc, "work_order.procedure").([]any)
	for _, item := range steps {
		s, _ := item.(map[string]any)
		for _, f := range []string{"command", "message", "title", "body", "description", "fix_action"} {
			t, _ := s[f].(string)
			for _, m := range placeholderPattern.FindAllStringSubmatch(t, -1) {
				names[m[1]] = true
			}
		}
	}
	return names
}

// aliases are names people write for wo's (another tool's word, a verb
// wo spells differently) that edit distance would not find.
var aliases = map[string]string{
	"steps": "procedure", "step_list": "procedure", "procedures": "procedure",
	"files": "file_manifest", "manifest": "file_manifest", "paths": "file_manifest",
	"branch": "branch_name", "head": "branch_name", "head_branch": "branch_name",
	"base": "base_branch", "target_branch": "base_branch", "source": "source_branch",
	"repository": "repo", "repo_dir": "repo_path", "path": "repo_path", "worktree": "worktree_name",
	"dependencies": "blocked_by", "depends_on": "blocked_by", "deps": "dependencies",
	"goal": "objective", "summary": "objective", "criteria": "success_criteria",
	"timeout_minutes": "duration_minutes", "minutes": "duration_minutes", "wait_minutes": "duration_minutes",
	"commit_message": "message", "pr_body": "body", "pr_title": "title", "goto": "loop_to",
	"reviewer": "reviewers",
}

// verbs are the first words of action names people write for wo's.
var verbs = map[string]string{"make": "create", "add": "create", "new": "create", "open": "create",
	"remove": "cleanup", "delete": "cleanup", "clean": "cleanup", "await": "wait_for", "wait": "wait_for",
	"read": "check", "get": "check", "fix": "conditional", "loop": "conditional"}

// didYouMean returns ": did you mean X?" for the known name closest to
// name, or "" when none is close.
func didYouMean(name string, known []string) string {
	if s := Suggest(name, known); s != "" {
		return fmt.Sprintf(": did you mean %s?", s)
	}
	return ""
}

// meant returns " (did you mean X?)" for the known name closest to name,
// or "".
func meant(name string, known []string) string {
	if s := Suggest(name, known); s != "" {
		return fmt.Sprintf(" (did you mean %s?)", s)
	}
	return ""
}

// fieldPath is the path of a field whose name comes from the document:
// an odd or long name is quoted, escaped and cut short.
func fieldPath(base, name string) string {
	if p := pathKey(name); !strings.HasPrefix(p, ".") {
		return base + p
	}
	return join(base, name)
}

// Suggest returns the known name that name most likely meant, or "".
func Suggest(name string, known []string) string {
	if len(name) > quoteLimit {
		return "" // nothing wo knows is that long, and comparing costs
	}
	lower := strings.ToLower(name)
	if a, ok := aliases[lower]; ok && slices.Contains(known, a) && a != name {
		return a
	}
	if verb, rest, ok := strings.Cut(lower, "_"); ok {
		if v, ok := verbs[verb]; ok && slices.Contains(known, v+"_"+rest) {
			return v + "_" + rest
		}
	}
	best, bestD := "", 0
	for _, k := range known {
		if k == name {
			return ""
		}
		d := levenshtein.ComputeDistance(lower, strings.ToLower(k))
		if best == "" || d < bestD {
			best, bestD = k, d
		}
	}
	if best != "" && bestD <= max(1, min(3, len(name)/3)) {
		return best
	}
	return ""
}

// stepPath matches the path of a step's field.
var stepPath = regexp.MustCompile(`^work_order\.procedure\[(\d+)\]`)

// StepOf returns the step number a problem's path is in (its index + 1),
// or 0 when it is not in a step.
func StepOf(path string) int {
	m := stepPath.FindStringSubmatch(path)
	if m == nil {
		return 0
	}
	i, _ := strconv.Atoi(m[1])
	return i + 1
}
