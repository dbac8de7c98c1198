package workorder

import (
	"fmt"
	"strings"
)

// CheckBranchName applies the rules of git check-ref-format --branch: the
// name, as refs/heads/<name>, must be a valid reference, and it must not
// be a name git reserves (HEAD, or one starting with '-').
func CheckBranchName(name string) error {
	why := ""
	if name == "HEAD" {
		why = "HEAD names the checked-out commit, not a branch"
	} else {
		why = refProblem(name)
	}
	if why == "" {
		return nil
	}
	return fmt.Errorf("%q is not a branch name git accepts: %s; choose a name such as review/01-foundation", name, why)
}

// refProblem says why git's check-ref-format refuses a branch name, "" when
// it accepts it: the one list of those rules, for CheckRefName and
// CheckBranchName.
func refProblem(name string) string {
	switch {
	case name == "":
		return "it is empty"
	case name == "@":
		return `"@" alone is reserved`
	case strings.HasPrefix(name, "-"):
		return "it starts with '-'"
	case strings.HasSuffix(name, "/"):
		return "it ends with '/'"
	case strings.HasSuffix(name, "."):
		return "it ends with '.'"
	case strings.Contains(name, ".."):
		return "it contains '..'"
	case strings.Contains(name, "@{"):
		return "it contains '@{'"
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f || strings.ContainsRune(" ~^:?*[\\", r) {
			return fmt.Sprintf("it contains %q", r)
		}
	}
	for _, part := range strings.Split(name, "/") {
		switch {
		case part == "":
			return "it has an empty component ('/' at the start, or '//')"
		case strings.HasPrefix(part, "."):
			return fmt.Sprintf("the component %q starts with '.'", part)
		case strings.HasSuffix(part, ".lock"):
			return fmt.Sprintf("the component %q ends with '.lock'", part)
		}
	}
	return ""
}

// SameBranch reports whether the work branch would land on other (a base
// or source branch as a work order names it: main, refs/heads/main,
// origin/main, refs/remotes/origin/main) when pushed to remote.
func SameBranch(work, other, remote string) bool {
	if remote == "" {
		remote = "origin"
	}
	work = strings.TrimPrefix(work, "refs/heads/")
	for _, prefix := range []string{"refs/heads/", "refs/remotes/" + remote + "/", remote + "/"} {
		if o, ok := strings.CutPrefix(other, prefix); ok && o == work {
			return true
		}
	}
	return other == work
}

// CheckWorkBranch refuses a work branch that is the base or the source
// branch: committing there would put the change straight onto the branch
// it is meant to be reviewed against (and push it there), or onto the
// branch it is copied from.
func CheckWorkBranch(work, base, source, remote string) error {
	for _, b := range []struct{ field, name string }{{"base_branch", base}, {"source_branch", source}} {
		if work != "" && b.name != "" && SameBranch(work, b.name, remote) {
			return fmt.Errorf("branch_name %q is the %s %q: the change would be committed and pushed onto it without review; choose a new branch such as review/%s",
				work, b.field, b.name, strings.ReplaceAll(strings.TrimPrefix(work, "refs/heads/"), "/", "-"))
		}
	}
	return nil
}

// workBranch checks inputs.branch_name against the rules that need the
// context too: git's branch rules beyond a reference's, and a work branch
// that is neither the base nor the source branch.
func (v *validator) workBranch(facts CommandFacts) {
	// Each name comes from the work order's own fields, else from what its
	// commands name: wo works with the same names the run will use.
	pick := func(field, fact string, named string) (value, path string) {
		if s := String(v.doc, field); s != "" {
			return s, field
		}
		if named != "" {
			return named, fmt.Sprintf("work_order.procedure[%d].command", facts.Steps[fact]-1)
		}
		return "", field
	}
	work, path := pick("work_order.inputs.branch_name", "branch", facts.Branch)
	if work == "" {
		return
	}
	if CheckRefName(work) == nil { // its own errors are reported already
		if err := CheckBranchName(work); err != nil {
			v.errorf(path, "%v", err)
		}
	} else if path != "work_order.inputs.branch_name" {
		v.errorf(path, "%v", CheckRefName(work))
	}
	base, _ := pick("work_order.context.base_branch", "base", facts.Base)
	remote, _ := pick("work_order.context.remote", "remote", facts.Remote)
	source := String(v.doc, "work_order.context.source_branch")
	if err := CheckWorkBranch(work, base, source, remote); err != nil {
		v.errorf(path, "%v", err)
	}
}
