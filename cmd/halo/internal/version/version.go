// Package version implements `halo version` and `halo --version`: which Halo this is (its
// release, or devel), the commit it was built from, the Go version and platform, and the
// plugin protocol version its plugins must speak. The other commands read the release from
// Current (MCP's serverInfo, halo serve's metrics, trace resources).
package version

import (
	"encoding/json"
	"fmt"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"halolang.dev/halo/cmd/halo/internal/cmdutil"
	pluginv1 "halolang.dev/halo/proto/halo/plugin/v1"
	"halolang.dev/halo/sdk"
)

// Version and Commit are set by scripts/release.sh's builds with -ldflags -X. A build by `go
// install halolang.dev/halo/cmd/halo@vX.Y.Z` gets its version from the module it was built
// from (and its commit from release.go, which the release writes into that module); a build
// in a checkout is devel, with the commit Go stamps when it builds with VCS information.
var (
	Version = ""
	Commit  = ""
)

// Devel is the version of a build that is not of a release.
const Devel = "devel"

// Info describes the build.
type Info struct {
	// Version is the release ("0.2.0"), or "devel".
	Version string `json:"version"`
	// Commit is the commit the build is of, when it is known; Modified says the work tree had
	// changes the commit does not hold.
	Commit   string `json:"commit,omitempty"`
	Modified bool   `json:"modified,omitempty"`
	Go       string `json:"go"`
	OS       string `json:"os"`
	Arch     string `json:"arch"`
	// PluginProtocol is the plugin protocol version this halo speaks (proto/halo/plugin/v1).
	PluginProtocol int `json:"pluginProtocol"`
	// SDK is the version of the Go SDK this halo was built with; `halo plugin init` requires it.
	SDK string `json:"sdk"`
}

// Current returns this build's Info.
func Current() Info {
	bi, _ := debug.ReadBuildInfo()
	return FromBuild(bi, Version, Commit, releaseCommit)
}

// pseudo matches the end of a Go pseudo-version (v0.0.0-20261201193900-be1bc1929a2b), which Go
// stamps as the main module's version when it builds in a checkout: a commit, not a release.
var pseudo = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(^|[-.])(\d{14})-([0-9a-f]{12})$`) })

// FromBuild works out the Info of a build from what Go recorded (bi, nil when there is none),
// the -X values ldVersion and ldCommit, and the commit a released module holds (relCommit).
func FromBuild(bi *debug.BuildInfo, ldVersion, ldCommit, relCommit string) Info {
	info := Info{Version: Devel, Go: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH, PluginProtocol: pluginv1.ProtocolVersion, SDK: sdk.Version}
	var vcsCommit, pseudoCommit string
	if bi != nil {
		info.Go = bi.GoVersion
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				vcsCommit = s.Value
			case "vcs.modified":
				info.Modified = s.Value == "true"
			}
		}
		v, dirty := strings.CutSuffix(bi.Main.Version, "+dirty")
		info.Modified = info.Modified || dirty
		switch m := pseudo().FindStringSubmatch(v); {
		case v == "" || v == "(devel)":
		case m != nil:
			pseudoCommit = m[3]
		default:
			info.Version = strings.TrimPrefix(v, "v")
		}
	}
	if ldVersion != "" {
		info.Version = ldVersion
	}
	for _, c := range []string{ldCommit, relCommit, vcsCommit, pseudoCommit} {
		if c != "" {
			info.Commit = c
			break
		}
	}
	return info
}

// String is the one line `halo version` prints:
// halo 0.2.0 (commit 1a2b3c4d5e6f, go1.26.8 linux/amd64, plugin protocol 1).
func (i Info) String() string {
	commit := "commit unknown"
	if i.Commit != "" {
		commit = "commit " + i.Commit
		if len(i.Commit) > 12 {
			commit = "commit " + i.Commit[:12]
		}
		if i.Modified {
			commit += ", modified"
		}
	}
	return fmt.Sprintf("halo %s (%s, %s %s/%s, plugin protocol %d)", i.Version, commit, i.Go, i.OS, i.Arch, i.PluginProtocol)
}

// NewCmdVersion builds `halo version`.
func NewCmdVersion(f *cmdutil.Factory) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the halo version, commit, Go version and plugin protocol version",
		Long: `Print which halo this is: its release (devel for a build that is not of a release),
the commit it was built from, the Go version and platform, and the plugin protocol version
its plugins must speak. halo --version prints the same line.`,
		Example: `  halo version
  halo --version
  halo version --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			info := Current()
			if asJSON {
				enc := json.NewEncoder(f.IO.Out)
				enc.SetIndent("", "  ")
				return enc.Encode(info)
			}
			fmt.Fprintln(f.IO.Out, info.String())
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}
