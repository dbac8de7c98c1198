package integration

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// The example workflows in docs/ci pass actionlint, which the tools module
// pins (go tool runs it from the module cache).
func TestExampleWorkflowsPassActionlint(t *testing.T) {
	files, err := filepath.Glob("../docs/ci/*.yml")
	if err != nil || len(files) < 2 {
		t.Fatalf("workflows in docs/ci: %v (%v)", files, err)
	}
	for i, f := range files {
		abs, _ := filepath.Abs(f)
		files[i] = abs
	}
	cmd := exec.Command("go", append([]string{"tool", "actionlint"}, files...)...)
	cmd.Dir = "../tools"
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("actionlint: %v\n%s", err, out)
	}
}
