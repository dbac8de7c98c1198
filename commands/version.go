package commands

import (
	"runtime/debug"
	"strings"
	"sync"
)

// Version is wo's version when the build sets it:
//
//	go build -ldflags "-X github.com/wo-runner/wo/commands.Version=v1.2.0"
//
// Left at "dev", wo reports the module version and VCS revision that Go
// recorded in the binary (go install …@v1.2.0, or a build in a checkout).
var Version = "dev"

// versionString is what wo --version and the envelope's wo_version say.
var versionString = sync.OnceValue(func() string {
	info, ok := debug.ReadBuildInfo()
	return describeVersion(Version, info, ok)
})

// describeVersion is the version set at build time, else the module's,
// followed by the VCS revision, "-dirty" when the checkout had changes, and
// the commit time, as far as the build recorded them.
func describeVersion(set string, info *debug.BuildInfo, ok bool) string {
	version := set
	var revision, when string
	var dirty bool
	if ok && info != nil {
		if version == "dev" && info.Main.Version != "" && info.Main.Version != "(devel)" {
			version = info.Main.Version
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				revision = s.Value
			case "vcs.time":
				when = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
	}
	if revision == "" {
		return version
	}
	if len(revision) > 12 {
		revision = revision[:12]
	}
	if dirty {
		revision += "-dirty"
	}
	return version + " (" + strings.Join(nonEmpty("commit "+revision, when), ", ") + ")"
}

func nonEmpty(values ...string) []string {
	var out []string
	for _, v := range values {
		if v != "" {
			out = append(out, v)
		}
	}
	return out
}
