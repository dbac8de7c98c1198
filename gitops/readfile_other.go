//go:build !unix

package gitops

import (
	"fmt"
	"os"
)

// openNoFollow opens path for reading when it is a regular file, not a
// link: outside unix there is no O_NOFOLLOW, so it is checked first.
func openNoFollow(path string) (*os.File, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is %s, not a regular file", path, fileKind(fi.Mode()))
	}
	return os.Open(path)
}

// openFollow opens path for reading when it leads to a regular file.
func openFollow(path string) (*os.File, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is %s, not a regular file", path, fileKind(fi.Mode()))
	}
	return os.Open(path)
}
