// Package integration holds the end-to-end tests: real git repositories and
// bare remotes in temporary folders, the wo binary, and the ArangoDB
// conformance run (skipped, with the reason, where no ArangoDB is reachable).
package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/testcontainers/testcontainers-go"

	"github.com/wo-runner/wo/store/storetest"
)

func TestMain(m *testing.M) {
	storetest.WorkerMain(openArangoWorker)
	cleanup, err := buildWo()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	cleanup()
	for _, repo := range []string{bigRepo, splitRepo, realDir, plainWo} {
		if repo != "" {
			os.RemoveAll(filepath.Dir(repo))
		}
	}
	if container != nil {
		testcontainers.TerminateContainer(container)
	}
	os.Exit(code)
}
