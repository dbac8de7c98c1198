package gitops

import (
	"fmt"
	"io"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/storer"

	"github.com/wo-runner/wo/internal/gitname"
)

// An object's name is the hash of its content, but go-git does not hash
// what it reads: a loose object file overwritten with other content of the
// same type (an agent can write .git/objects) reads back as the object it
// replaced. What feeds a push, a gate or a rebuild is read through
// verifiedObjects, which hashes every object it hands out.

// ForgedObjectError says an object's content does not hash to its name:
// the repository's object store was changed behind git's back.
type ForgedObjectError struct {
	Hash plumbing.Hash // the object's name, as asked for
	Type plumbing.ObjectType
	Got  plumbing.Hash // what its content hashes to
	Dir  string        // the common git directory
}

func (e *ForgedObjectError) Error() string {
	return fmt.Sprintf("the %s object %s in %s does not hash to its name (its content hashes to %s): the object store was changed behind git's back, and wo neither pushes nor rebuilds from it; "+
		"look at it (git -C %s fsck), remove the object file (objects/%s/%s) and fetch the branch again",
		e.Type, e.Hash, e.Dir, gitname.Short(e.Got.String()), e.Dir, e.Hash.String()[:2], e.Hash.String()[2:])
}

// verifiedObjects reads objects through st and hashes each one; the first
// forged object it met is kept, for a caller whose error came back through
// a library (the pack encoder) to name it.
type verifiedObjects struct {
	storer.EncodedObjectStorer
	dir string

	mu     sync.Mutex
	forged *ForgedObjectError
}

func (r *Repo) verified() *verifiedObjects {
	return &verifiedObjects{EncodedObjectStorer: r.repo.Storer, dir: r.GitDir}
}

// EncodedObject reads the object h and checks that its content hashes to h.
func (v *verifiedObjects) EncodedObject(t plumbing.ObjectType, h plumbing.Hash) (plumbing.EncodedObject, error) {
	o, err := v.EncodedObjectStorer.EncodedObject(t, h)
	if err != nil {
		return nil, err
	}
	got, err := contentHash(o)
	if err != nil {
		return nil, fmt.Errorf("reading object %s: %w", h, err)
	}
	if got != h {
		e := &ForgedObjectError{Hash: h, Type: o.Type(), Got: got, Dir: v.dir}
		v.mu.Lock()
		if v.forged == nil {
			v.forged = e
		}
		v.mu.Unlock()
		return nil, e
	}
	return o, nil
}

// firstForged is the first forged object read, or nil.
func (v *verifiedObjects) firstForged() error {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.forged == nil {
		return nil
	}
	return v.forged
}

// contentHash hashes what o holds, as git names it: never o.Hash(), which
// go-git may take from the name it was asked for.
func contentHash(o plumbing.EncodedObject) (plumbing.Hash, error) {
	rd, err := o.Reader()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	defer rd.Close()
	h := plumbing.NewHasher(o.Type(), o.Size())
	n, err := io.Copy(h, rd)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if n != o.Size() {
		return plumbing.ZeroHash, fmt.Errorf("its content is %d bytes, its header says %d", n, o.Size())
	}
	return h.Sum(), nil
}

// Shallow passes the shallow clone's boundary through: the walks that
// choose what to send stop there.
func (v *verifiedObjects) Shallow() ([]plumbing.Hash, error) {
	if ss, ok := v.EncodedObjectStorer.(storer.ShallowStorer); ok {
		return ss.Shallow()
	}
	return nil, nil
}
