// Package pack implements `halo pack DIR`: check a package folder's manifest, build a
// module's plugin executables when the manifest says how, and write name-version.halotool.
package pack

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"halolang.dev/halo/cmd/halo/internal/cmdutil"
	"halolang.dev/halo/cmd/halo/internal/pkgcmd"
	"halolang.dev/halo/cmd/halo/internal/providers"
	"halolang.dev/halo/host/tool/packages"
	"halolang.dev/halo/pkgmgr"
)

// Options are `halo pack`'s inputs.
type Options struct {
	Factory *cmdutil.Factory
	Dir     string
	Out     string
	// Platforms, when not empty, keeps only these of a module's platforms.
	Platforms []string
	JSON      bool
	ctx       context.Context
}

// NewCmdPack builds `halo pack`. runF, when not nil, replaces packRun (tests).
func NewCmdPack(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{Factory: f}
	cmd := &cobra.Command{
		Use:   "pack DIR",
		Short: "Pack a tool package folder into a .halotool file",
		Example: `  halo pack ./my-tool
  halo pack ./my-tool --out dist --json
  halo pack ./my-module --platform linux/amd64 --platform darwin/arm64`,
		Long: `Check DIR's halo-tool.json (every problem is listed, with its JSON path) and write
<name>-<version>.halotool: the manifest, a module's plugin executables, and the files and
folders the manifest's "files" names (a README, an mcp server's script), nothing else of the
folder: not its sources, tests, go.mod or go.sum. A module whose manifest has a build entry
has its Go plugin built for each listed platform, stripped (CGO_ENABLED=0, -trimpath,
-ldflags="-s -w"), one line a platform on stderr as it builds ([2/4] linux/arm64), and stored
gzip-compressed; --platform keeps only the platforms named (the packed manifest lists only
those). A module must have an executable for this machine's platform, and its plugin is
started (sandboxed) to check that it serves every provider the manifest names. Prints the
file's sha256 and what the package can reach.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Dir, opts.ctx = args[0], cmd.Context()
			if runF != nil {
				return runF(opts)
			}
			return packRun(opts)
		},
	}
	cmd.Flags().StringVar(&opts.Out, "out", "", "folder to write the file to (default: the current folder)")
	cmd.Flags().StringSliceVar(&opts.Platforms, "platform", nil, "pack only this platform of a module (GOOS/GOARCH, repeatable; default: every platform the manifest lists)")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the result as JSON")
	return cmd
}

// Result is the --json output.
type Result struct {
	File        string             `json:"file"`
	Name        string             `json:"name"`
	Version     string             `json:"version"`
	SHA256      string             `json:"sha256"`
	Size        int                `json:"size"`
	Providers   []string           `json:"providers"`
	Permissions pkgmgr.Permissions `json:"permissions"`
}

func packRun(opts *Options) error {
	f := opts.Factory
	// One line a build, on stderr (stdout holds the result): a plugin takes seconds to build
	// for each platform.
	progress := func(i, n int, provider, platform string) {
		fmt.Fprintf(f.IO.ErrOut, "[%d/%d] %s (%s)\n", i, n, platform, provider)
	}
	pkg, err := pkgmgr.PackDir(opts.ctx, f.Abs(opts.Dir), pkgmgr.PackOptions{Build: pkgmgr.GoBuilder("go", f.Env.List()), Platforms: opts.Platforms, Progress: progress})
	if err != nil {
		return err
	}
	// A module must run here and serve the providers its manifest names: start its plugin
	// (sandboxed, as a run would) before anything is written.
	if _, err := packages.Describe(opts.ctx, pkg, providers.ModuleConfig(f)); err != nil {
		return err
	}
	out := opts.Out
	if out == "" {
		out = "."
	}
	if err := os.MkdirAll(f.Abs(out), 0o755); err != nil {
		return err
	}
	file := filepath.Join(out, pkg.FileName())
	if err := os.WriteFile(f.Abs(file), pkg.Bytes, 0o644); err != nil {
		return err
	}
	res := Result{File: filepath.ToSlash(file), Name: pkg.Manifest.Name, Version: pkg.Manifest.Version, SHA256: pkg.SHA256, Size: len(pkg.Bytes), Providers: pkg.Manifest.ProviderNames(), Permissions: pkg.Permissions()}
	if opts.JSON {
		return pkgcmd.WriteJSON(f.IO.Out, res)
	}
	w := f.IO.Out
	fmt.Fprintf(w, "✓ packed %s (%d bytes)\n", res.File, res.Size)
	fmt.Fprintf(w, "    sha256: %s\n", res.SHA256)
	pkgcmd.PrintPermissions(w, res.Permissions, "    ")
	return nil
}
