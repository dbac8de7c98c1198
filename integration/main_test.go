// Package integration holds the end-to-end tests: real git repositories and
// bare remotes in temporary folders, the wo binary, and the ArangoDB
// conformance run (skipped, with the reason, where no ArangoDB is reachable).
package integration

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"

	"github.com/testcontainers/testcontainers-go"

	"github.com/wo-runner/wo/store/storetest"
)

func TestMain(m *testing.M) {
	storetest.WorkerMain(openArangoWorker)
	// These tests spend most of their time waiting on the processes they
	// start (wo, git, the stand-in's reviewer), not on the CPU: more of
	// them run at once than there are cores, unless -parallel says.
	flag.Parse()
	parallelGiven := false
	flag.Visit(func(f *flag.Flag) { parallelGiven = parallelGiven || f.Name == "test.parallel" })
	if !parallelGiven {
		flag.Set("test.parallel", strconv.Itoa(4*runtime.GOMAXPROCS(0)))
	}
	cleanup, err := buildWo()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	cleanup()
	removeFixtureTemplates()
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
