// Package search implements `halo search [term]`: the registry's packages whose name,
// description or publisher match, with their homepage and license and each version's
// providers and permissions, so they can be read before installing.
package search

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"halolang.dev/halo/cmd/halo/internal/cmdutil"
	"halolang.dev/halo/cmd/halo/internal/complete"
	"halolang.dev/halo/cmd/halo/internal/pkgcmd"
	"halolang.dev/halo/cmd/halo/internal/termsafe"
	"halolang.dev/halo/pkgmgr"
)

// Options are `halo search`'s inputs.
type Options struct {
	Factory  *cmdutil.Factory
	Term     string
	Registry string
	JSON     bool
	ctx      context.Context
}

// NewCmdSearch builds `halo search`. runF, when not nil, replaces searchRun (tests).
func NewCmdSearch(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{Factory: f}
	cmd := &cobra.Command{
		Use:   "search [term]",
		Short: "List the registry's tool packages, with what each can reach",
		Example: `  halo search
  halo search issues
  halo search acme --registry https://tools.example.com/index.json --json`,
		Long: `List the packages of the registry whose name, description or publisher contain the term
(all of them without one), with every version's providers and permissions: the hosts it
sends requests to, the variables it reads, the programs it starts, and whether it runs its
own code. The registry is --registry, else HALO_REGISTRY, else "registry" in halo.json,
else the one that ships with Halo.`,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: complete.RegistryPackages(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ctx = cmd.Context()
			if len(args) == 1 {
				opts.Term = args[0]
			}
			if runF != nil {
				return runF(opts)
			}
			return searchRun(opts)
		},
	}
	cmd.Flags().StringVar(&opts.Registry, "registry", "", "registry index: a path or an https URL")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the result as JSON")
	return cmd
}

// Result is the --json output.
type Result struct {
	Registry string    `json:"registry"`
	Packages []Package `json:"packages"`
}

// A Package is one match.
type Package struct {
	Name        string    `json:"name"`
	Description string    `json:"description"`
	Publisher   string    `json:"publisher,omitempty"`
	Homepage    string    `json:"homepage,omitempty"`
	License     string    `json:"license,omitempty"`
	Latest      string    `json:"latest"`
	Versions    []Version `json:"versions"`
}

// A Version is one published version, newest first.
type Version struct {
	Version     string             `json:"version"`
	Providers   []string           `json:"providers"`
	Permissions pkgmgr.Permissions `json:"permissions"`
	SHA256      string             `json:"sha256"`
	PublishedAt string             `json:"publishedAt"`
}

func searchRun(opts *Options) error {
	f := opts.Factory
	loc, err := pkgcmd.RegistryLocation(f, opts.Registry)
	if err != nil {
		return err
	}
	reg, err := pkgcmd.OpenRegistry(f, loc)
	if err != nil {
		return err
	}
	idx, err := reg.Index(opts.ctx)
	if err != nil {
		return err
	}
	res := Result{Registry: reg.Source, Packages: []Package{}}
	term := strings.ToLower(opts.Term)
	names := make([]string, 0, len(idx.Packages))
	for n := range idx.Packages {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		p := idx.Packages[n]
		if term != "" && !strings.Contains(strings.ToLower(n+"\n"+p.Description+"\n"+p.Publisher), term) {
			continue
		}
		out := Package{Name: n, Description: p.Description, Publisher: p.Publisher, Homepage: p.Homepage, License: p.License, Latest: p.Latest}
		for v, iv := range p.Versions {
			out.Versions = append(out.Versions, Version{Version: v, Providers: iv.Providers, Permissions: iv.Permissions, SHA256: iv.SHA256, PublishedAt: iv.PublishedAt})
		}
		sort.Slice(out.Versions, func(i, j int) bool {
			return pkgmgr.CompareVersions(out.Versions[i].Version, out.Versions[j].Version) > 0
		})
		res.Packages = append(res.Packages, out)
	}
	if opts.JSON {
		return pkgcmd.WriteJSON(f.IO.Out, res)
	}
	w := termsafe.Writer(f.IO.Out) // everything below comes from the registry
	if len(res.Packages) == 0 {
		if opts.Term != "" {
			fmt.Fprintf(w, "no package in registry %s matches %q\n", reg.Source, opts.Term)
		} else {
			fmt.Fprintf(w, "registry %s has no packages\n", reg.Source)
		}
		return nil
	}
	for i, p := range res.Packages {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s  %s\n", p.Name, p.Description)
		for _, field := range [][2]string{{"publisher", p.Publisher}, {"homepage", p.Homepage}, {"license", p.License}} {
			if field[1] != "" {
				fmt.Fprintf(w, "  %s: %s\n", field[0], field[1])
			}
		}
		for _, v := range p.Versions {
			latest := ""
			if v.Version == p.Latest {
				latest = " (latest)"
			}
			fmt.Fprintf(w, "  %s%s  providers: %s\n", v.Version, latest, strings.Join(v.Providers, ", "))
			pkgcmd.PrintPermissions(w, v.Permissions, "      ")
		}
	}
	return nil
}
