//go:build !linux

package gitops

import (
	"os"

	"github.com/go-git/go-git/v5/plumbing/format/index"
)

// fillStat keeps the times and size; git rehashes entries whose other stat
// fields do not match, which is slower but still correct.
func fillStat(e *index.Entry, fi os.FileInfo) {
	e.ModifiedAt = fi.ModTime()
	e.CreatedAt = fi.ModTime()
	e.Size = uint32(fi.Size())
}
