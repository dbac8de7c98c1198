package integration

import (
	"fmt"
	"os"

	"github.com/wo-runner/wo/integration/ghstandin"
)

// Every stand-in these tests start (through withGitHub or ghstandin.New
// directly) checks its traffic against GitHub's OpenAPI description: a
// request wo sends that GitHub does not document is answered 422, an answer
// the stand-in gives that GitHub does not document becomes a 500, so that
// any drift of the double fails the test that met it.
func init() {
	c, err := ghstandin.LoadContract(contractPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, "integration:", err)
		os.Exit(1)
	}
	ghstandin.DefaultContract = c
}
