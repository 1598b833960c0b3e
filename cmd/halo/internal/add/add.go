// Package add implements `halo add SPEC`: install a package from the registry (name or
// name@version), a folder, a .halotool file or an https URL, pin it in halo.lock, and print
// what it installed and what the package can reach.
package add

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"halolang.dev/halo/cmd/halo/internal/cmdutil"
	"halolang.dev/halo/cmd/halo/internal/complete"
	"halolang.dev/halo/cmd/halo/internal/pkgcmd"
	"halolang.dev/halo/cmd/halo/internal/providers"
	"halolang.dev/halo/cmd/halo/internal/termsafe"
	"halolang.dev/halo/host/tool/packages"
	"halolang.dev/halo/pkgmgr"
)

// Options are `halo add`'s inputs.
type Options struct {
	Factory  *cmdutil.Factory
	Spec     string
	Trust    bool
	Registry string
	JSON     bool
	ctx      context.Context

	// AcceptKey is --accept-key: a publisher's key id, accepted on first sight.
	AcceptKey string
}

// NewCmdAdd builds `halo add`. runF, when not nil, replaces addRun (tests).
func NewCmdAdd(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{Factory: f}
	cmd := &cobra.Command{
		Use:   "add SPEC",
		Short: "Install a tool package and pin it in halo.lock",
		Example: `  halo add stripe
  halo add stripe@1.0.0 --json
  halo add world-time --trust
  halo add ./my-tool
  halo add acme --registry https://tools.example.com/index.json --accept-key 1A2B3C4D5E6F7081`,
		Long: `Install a tool package into .halo/tools/<name>/ and pin its version and sha256 in halo.lock.
SPEC is a registry package (stripe, stripe@1.0.0), a package folder (./my-tool), a packed
file (my-tool-1.0.0.halotool) or an https:// URL of one (plain http:// only on localhost).
A package that runs code (a module, or an mcp command) needs --trust, which records its
sha256 for this project folder in your own trust file ($XDG_CONFIG_HOME/halo/trust.json, by
default ~/.config/halo/trust.json), never in the project. A folder or file outside the
project is recorded by its absolute path, with a warning: halo install elsewhere needs the
same path (copy it under the project, e.g. vendor/, and add it from there). Nothing changes
on disk when anything fails.`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: complete.RegistryPackages(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Spec, opts.ctx = args[0], cmd.Context()
			if runF != nil {
				return runF(opts)
			}
			return addRun(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Trust, "trust", false, "allow a package that runs code, and trust its exact sha256 in this project folder (kept in your own trust file)")
	cmd.Flags().StringVar(&opts.Registry, "registry", "", "registry index for a name: a path or an https URL")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the result as JSON")
	cmd.Flags().StringVar(&opts.AcceptKey, "accept-key", "", "trust the signing key `ID` of a publisher seen for the first time (halo add says which)")
	return cmd
}

// Result is the --json output.
type Result struct {
	Name        string             `json:"name"`
	Version     string             `json:"version"`
	Source      string             `json:"source"`
	SHA256      string             `json:"sha256"`
	Providers   []string           `json:"providers"`
	Permissions pkgmgr.Permissions `json:"permissions"`
	Trusted     bool               `json:"trusted"`
	// Signature is who signed the package, with which key; none when it is unsigned.
	Signature *pkgmgr.Signature `json:"signature,omitempty"`
	// Warning says why the lock may not install elsewhere: a package added from outside the
	// project is recorded by its absolute path (printed on stderr too).
	Warning string `json:"warning,omitempty"`
}

// outsideWarning is the warning for a package recorded by a path outside the project (the
// lock keeps a file or folder outside it as given, absolute), or "" for any other source.
func outsideWarning(name, source string) string {
	if !filepath.IsAbs(source) {
		return ""
	}
	base := filepath.Base(source)
	vendored := "vendor/" + base
	cp := "cp "
	if !strings.HasSuffix(base, ".halotool") {
		cp = "cp -R "
	}
	return fmt.Sprintf("halo.lock records %s by its path outside this project, %s: halo install on another machine (a colleague's, CI) finds it only at that same path, and fails with PACKAGE_NOT_FOUND there. To make the lock travel, keep the package in the project and add it from there:\n    mkdir -p vendor && %s%s %s && halo add %s",
		name, source, cp, cmdutil.ShellQuote(source), cmdutil.ShellQuote(vendored), cmdutil.ShellQuote(vendored))
}

func addRun(opts *Options) error {
	f := opts.Factory
	loc, err := pkgcmd.RegistryLocation(f, opts.Registry)
	if err != nil {
		return err
	}
	pr, err := pkgcmd.NewProject(f, loc)
	if err != nil {
		return err
	}
	// A module must run here and serve the providers its manifest names: its plugin is started
	// (sandboxed) once the package may be installed and before anything is written, and what
	// it serves is kept beside the package for halo tools.
	var desc *pkgmgr.Description
	check := func(ctx context.Context, pkg *pkgmgr.Package) error {
		d, err := packages.Describe(ctx, pkg, providers.ModuleConfig(f))
		desc = d
		return err
	}
	ip, err := pr.Add(opts.ctx, opts.Spec, pkgmgr.AddOptions{Trust: opts.Trust, Check: check, AcceptKey: opts.AcceptKey})
	if err != nil {
		var pe *pkgmgr.Error
		if errors.As(err, &pe) && pe.Permissions != nil {
			ew := termsafe.Writer(f.IO.ErrOut) // hosts and variables come from the package
			fmt.Fprintf(ew, "✗ %s was not installed. What it can reach:\n", opts.Spec)
			pkgcmd.PrintPermissions(ew, *pe.Permissions, "    ")
		}
		return err
	}
	if desc != nil {
		if err := pkgmgr.WriteDescription(ip.Dir, desc); err != nil {
			f.Logger.Warn("could not keep the package's description; halo tools starts its plugin instead", "package", ip.Name, "error", err)
		}
	}
	e := ip.Entry
	trusted := false
	if t, err := pr.Trust(); err == nil {
		trusted = e.Permissions.NeedsTrust() && t.Trusts(ip.Name, e.SHA256)
	}
	res := Result{Name: ip.Name, Version: e.Version, Source: e.Source, SHA256: e.SHA256, Providers: e.Providers, Permissions: e.Permissions, Trusted: trusted, Signature: e.Signature}
	if res.Warning = outsideWarning(ip.Name, e.Source); res.Warning != "" {
		fmt.Fprintf(termsafe.Writer(f.IO.ErrOut), "warning: %s\n", res.Warning)
	}
	if opts.JSON {
		return pkgcmd.WriteJSON(f.IO.Out, res)
	}
	w := termsafe.Writer(f.IO.Out) // names, hosts and variables come from the package
	fmt.Fprintf(w, "✓ %s@%s → %s\n", ip.Name, e.Version, pkgcmd.Declarations(ip.Package.Manifest))
	pkgcmd.PrintPermissions(w, e.Permissions, "    ")
	if res.Trusted {
		fmt.Fprintf(w, "    trusted by you in this project: sha256 %s\n", e.SHA256)
	}
	if e.Signature != nil {
		fmt.Fprintf(w, "    signed by %s: key %s\n", e.Signature.Publisher, e.Signature.KeyID)
	} else {
		fmt.Fprintf(w, "    signed: no\n")
	}
	return nil
}
