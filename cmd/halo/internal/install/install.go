// Package install implements `halo install`: reinstall every package halo.lock pins, at its
// version and sha256, refusing packages that run code unless they are trusted (--trust).
package install

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"halolang.dev/halo/cmd/halo/internal/cmdutil"
	"halolang.dev/halo/cmd/halo/internal/pkgcmd"
	"halolang.dev/halo/cmd/halo/internal/providers"
	"halolang.dev/halo/cmd/halo/internal/termsafe"
	"halolang.dev/halo/host/tool/packages"
	"halolang.dev/halo/pkgmgr"
)

// Options are `halo install`'s inputs.
type Options struct {
	Factory *cmdutil.Factory
	Trust   bool
	JSON    bool
	ctx     context.Context

	// AcceptKeys is --accept-key: publisher key ids accepted on first sight.
	AcceptKeys []string
}

// NewCmdInstall builds `halo install`. runF, when not nil, replaces installRun (tests).
func NewCmdInstall(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{Factory: f}
	cmd := &cobra.Command{
		Use:   "install",
		Short: "Install every package halo.lock pins",
		Example: `  halo install
  halo install --trust
  halo install --accept-key 1A2B3C4D5E6F7081 --json`,
		Long: `Make .halo/tools match halo.lock: every package at its pinned version and sha256, fetched
again from its source when the installed copy is missing or differs, unpacked afresh when
its files were edited. Folders of packages no longer in the lock are deleted, but only when
they hold a package Halo installed; anything else is left alone, with a warning. A .halo or
.halo/tools that is a symbolic link is refused (STATE_DIR_UNSAFE), never followed. A package
that runs code must be trusted by you, in this folder, at the checksum the lock pins: --trust
trusts every such package in the lock, so read the lock's permissions and sources first.
Nothing changes on disk when anything fails.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ctx = cmd.Context()
			if runF != nil {
				return runF(opts)
			}
			return installRun(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Trust, "trust", false, "trust every package in halo.lock that runs code, at its pinned sha256")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the result as JSON")
	cmd.Flags().StringArrayVar(&opts.AcceptKeys, "accept-key", nil, "trust the publisher key `ID` halo.lock's signatures name, seen for the first time (repeatable)")
	return cmd
}

// Result is the --json output.
type Result struct {
	Packages []Package `json:"packages"`
	// Kept lists folders in .halo/tools that are not in halo.lock and were left alone,
	// because they do not hold a package Halo installed.
	Kept []string `json:"kept,omitempty"`
}

// A Package is one installed package.
type Package struct {
	Name      string `json:"name"`
	Version   string `json:"version"`
	SHA256    string `json:"sha256"`
	Fetched   bool   `json:"fetched"`
	Rewritten bool   `json:"rewritten"`
	Trusted   bool   `json:"trusted"`
}

func installRun(opts *Options) error {
	f := opts.Factory
	pr, err := pkgcmd.NewProject(f, "")
	if err != nil {
		return err
	}
	rep, err := pr.Install(opts.ctx, pkgmgr.InstallOptions{Trust: opts.Trust, AcceptKeys: opts.AcceptKeys})
	if err != nil {
		return err
	}
	in := func(list []string, n string) bool {
		for _, x := range list {
			if x == n {
				return true
			}
		}
		return false
	}
	// trusted is whether you trust the package at its pinned checksum now, whether this
	// install or an earlier command recorded it.
	trust, err := pr.Trust()
	if err != nil {
		return err
	}
	res := Result{Packages: []Package{}, Kept: rep.Kept}
	for _, k := range rep.Kept {
		fmt.Fprintf(f.IO.ErrOut, "halo: warning: left .halo/tools/%s alone: it is not in halo.lock, and it does not hold a package Halo installed\n", termsafe.String(k))
	}
	for _, p := range rep.Packages {
		res.Packages = append(res.Packages, Package{
			Name: p.Name, Version: p.Entry.Version, SHA256: p.Entry.SHA256,
			Fetched: in(rep.Fetched, p.Name), Rewritten: in(rep.Rewritten, p.Name),
			Trusted: p.Entry.Permissions.NeedsTrust() && trust.Trusts(p.Name, p.Entry.SHA256),
		})
		// A module's methods are described once and kept beside it, for halo tools. Install
		// refused every package that is not trusted, so its plugin may start here.
		if pkgmgr.ReadDescription(p.Dir, p.Entry.SHA256) == nil {
			d, err := packages.DescribeInstalled(opts.ctx, p, providers.ModuleConfig(f))
			if err == nil && d != nil {
				err = pkgmgr.WriteDescription(p.Dir, d)
			}
			if err != nil {
				f.Logger.Warn("could not describe the package's plugin; halo tools starts it when a tool declares it", "package", p.Name, "error", err)
			}
		}
	}
	if opts.JSON {
		return pkgcmd.WriteJSON(f.IO.Out, res)
	}
	w := termsafe.Writer(f.IO.Out) // names and versions come from halo.lock
	if len(res.Packages) == 0 {
		fmt.Fprintln(w, "halo.lock pins no packages")
		return nil
	}
	for _, p := range res.Packages {
		how := "already installed"
		switch {
		case p.Fetched:
			how = "installed"
		case p.Rewritten:
			how = "restored"
		}
		if in(rep.Trusted, p.Name) { // trusted by this command
			how += ", trusted"
		}
		fmt.Fprintf(w, "✓ %s@%s (%s)\n", p.Name, p.Version, how)
	}
	return nil
}
