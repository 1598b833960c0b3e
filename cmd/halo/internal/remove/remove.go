// Package remove implements `halo remove NAME`: uninstall a package and drop it from
// halo.lock and from the user's trust in the project.
package remove

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"halolang.dev/halo/cmd/halo/internal/cmdutil"
	"halolang.dev/halo/cmd/halo/internal/complete"
	"halolang.dev/halo/cmd/halo/internal/pkgcmd"
	"halolang.dev/halo/cmd/halo/internal/termsafe"
)

// Options are `halo remove`'s inputs.
type Options struct {
	Factory *cmdutil.Factory
	Name    string
	JSON    bool
}

// NewCmdRemove builds `halo remove`. runF, when not nil, replaces removeRun (tests).
func NewCmdRemove(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{Factory: f}
	cmd := &cobra.Command{
		Use:   "remove NAME",
		Short: "Uninstall a tool package and drop it from halo.lock",
		Example: `  halo remove stripe
  halo remove world-time --json`,
		Long: `Uninstall the package NAME: remove its folder in .halo/tools, its entry in halo.lock,
and your trust in it for this project folder. A name halo.lock does not list is
PACKAGE_NOT_FOUND; a folder in .halo/tools that does not hold the package Halo installed is
left alone (PACKAGE_CONFLICT). Nothing changes on disk when anything fails.`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: complete.InstalledPackages(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			if runF != nil {
				return runF(opts)
			}
			return removeRun(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the result as JSON")
	return cmd
}

// Result is the --json output.
type Result struct {
	Name      string   `json:"name"`
	Version   string   `json:"version"`
	Providers []string `json:"providers"`
}

func removeRun(opts *Options) error {
	f := opts.Factory
	pr, err := pkgcmd.NewProject(f, "")
	if err != nil {
		return err
	}
	e, err := pr.Remove(opts.Name)
	if err != nil {
		return err
	}
	if opts.JSON {
		return pkgcmd.WriteJSON(f.IO.Out, Result{Name: opts.Name, Version: e.Version, Providers: e.Providers})
	}
	fmt.Fprintf(termsafe.Writer(f.IO.Out), "✓ removed %s@%s (%s)\n", opts.Name, e.Version, strings.Join(e.Providers, ", "))
	return nil
}
