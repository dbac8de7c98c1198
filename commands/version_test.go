package commands

import (
	"encoding/json"
	"runtime/debug"
	"testing"
)

func TestDescribeVersion(t *testing.T) {
	t.Parallel()
	vcs := []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "24f0fd59f64f8f3be4ae3c8862da0184b79a004a"},
		{Key: "vcs.time", Value: "2026-11-23T16:24:13Z"}, {Key: "vcs.modified", Value: "false"}}
	dirty := append(vcs[:3:3], debug.BuildSetting{Key: "vcs.modified", Value: "true"})
	for _, tc := range []struct {
		name, set string
		info      *debug.BuildInfo
		want      string
	}{
		{"nothing recorded", "dev", nil, "dev"},
		{"a checkout's build", "dev", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs},
			"dev (commit 24f0fd59f64f, 2026-11-23T16:24:13Z)"},
		{"uncommitted changes", "dev", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: dirty},
			"dev (commit 24f0fd59f64f-dirty, 2026-11-23T16:24:13Z)"},
		{"go install @version", "dev", &debug.BuildInfo{Main: debug.Module{Version: "v1.4.0"}}, "v1.4.0"},
		{"-ldflags wins over the module version", "v2.0.0-rc1", &debug.BuildInfo{Main: debug.Module{Version: "v1.4.0"}, Settings: vcs},
			"v2.0.0-rc1 (commit 24f0fd59f64f, 2026-11-23T16:24:13Z)"},
	} {
		if got := describeVersion(tc.set, tc.info, tc.info != nil); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestVersionFlagAndEnvelopeAgree(t *testing.T) {
	t.Parallel()
	info, ok := debug.ReadBuildInfo()
	want := describeVersion(Version, info, ok)
	for _, flag := range []string{"--version", "-v"} {
		r := runWo(t, "", "", flag)
		if r.code != 0 || r.stdout != "wo version "+want+"\n" || r.stderr != "" {
			t.Errorf("wo %s: exit %d, stdout %q, stderr %q; want %q", flag, r.code, r.stdout, r.stderr, "wo version "+want+"\n")
		}
	}
	r := runWo(t, newDB(t), "", "list", "--json")
	var env Envelope
	if err := json.Unmarshal([]byte(r.stdout), &env); err != nil || env.Metadata.WoVersion != want {
		t.Errorf("wo list --json: wo_version %v, want %q (%v)", env.Metadata.WoVersion, want, err)
	}
}
