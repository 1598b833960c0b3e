package version

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestFromBuild(t *testing.T) {
	settings := func(kv ...string) []debug.BuildSetting {
		var out []debug.BuildSetting
		for i := 0; i < len(kv); i += 2 {
			out = append(out, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return out
	}
	const rev = "be1bc1929a2b6d0c6a1f1e0b0c0d0e0f01020304"
	cases := []struct {
		name                  string
		bi                    *debug.BuildInfo
		ld, ldCommit, release string
		version, commit       string
		modified              bool
		line                  string
	}{
		{name: "no build information", version: "devel", line: "halo devel (commit unknown, "},
		{name: "go build in a checkout, without VCS stamping",
			bi: &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "halolang.dev/halo", Version: "(devel)"}}, version: "devel"},
		{name: "go build in a checkout with changes",
			bi:      &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}, Settings: settings("vcs.revision", rev, "vcs.modified", "true")},
			version: "devel", commit: rev, modified: true, line: "halo devel (commit be1bc1929a2b, modified, go1.26.8 "},
		{name: "go build stamps a pseudo-version: a commit, not a release",
			bi:      &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.0.0-20261201193900-be1bc1929a2b+dirty"}},
			version: "devel", commit: "be1bc1929a2b", modified: true},
		{name: "a pseudo-version after a tag",
			bi:      &debug.BuildInfo{Main: debug.Module{Version: "v0.2.1-0.20261201193900-be1bc1929a2b"}},
			version: "devel", commit: "be1bc1929a2b"},
		{name: "go install halolang.dev/halo/cmd/halo@v0.2.0",
			bi:      &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "halolang.dev/halo", Version: "v0.2.0"}},
			release: rev, version: "0.2.0", commit: rev, line: "halo 0.2.0 (commit be1bc1929a2b, go1.26.8 "},
		{name: "a pre-release", bi: &debug.BuildInfo{Main: debug.Module{Version: "v0.3.0-rc.1"}}, version: "0.3.0-rc.1"},
		{name: "scripts/release.sh sets both",
			bi: &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}},
			ld: "0.2.0", ldCommit: rev, version: "0.2.0", commit: rev},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := FromBuild(c.bi, c.ld, c.ldCommit, c.release)
			if got.Version != c.version || got.Commit != c.commit || got.Modified != c.modified {
				t.Errorf("got version %q commit %q modified %v, want %q %q %v", got.Version, got.Commit, got.Modified, c.version, c.commit, c.modified)
			}
			if got.PluginProtocol != 1 || got.SDK == "" || got.OS == "" {
				t.Errorf("got %+v", got)
			}
			if line := got.String(); !strings.HasPrefix(line, c.line) || !strings.HasSuffix(line, ", plugin protocol 1)") {
				t.Errorf("line %q, want it to start %q", line, c.line)
			}
		})
	}
}
