// Package lock implements `halo lock [--update NAME]...`: pin the tools of every MCP tool the
// project declares in halo.lock (trust on first use), report the tools held back because
// they are new or changed, and accept them with --update.
package lock

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"halolang.dev/halo/cmd/halo/internal/cmdutil"
	"halolang.dev/halo/cmd/halo/internal/pkgcmd"
	"halolang.dev/halo/cmd/halo/internal/providers"
	"halolang.dev/halo/cmd/halo/internal/termsafe"
	"halolang.dev/halo/cmd/halo/internal/tools"
	"halolang.dev/halo/host/lang"
	"halolang.dev/halo/host/tool"
	"halolang.dev/halo/host/tool/mcp"
)

// Options are `halo lock`'s inputs.
type Options struct {
	Factory *cmdutil.Factory
	// Update names the declarations whose current tools are accepted (--update).
	Update []string
	JSON   bool
	// Timeout bounds each server's listing.
	Timeout time.Duration
	ctx     context.Context
}

// NewCmdLock builds `halo lock`. runF, when not nil, replaces lockRun (tests).
func NewCmdLock(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{Factory: f, Timeout: 60 * time.Second}
	cmd := &cobra.Command{
		Use:   "lock [--update NAME]...",
		Short: "Pin the tools of the project's MCP servers in halo.lock",
		Example: `  halo lock
  halo lock --update Git
  halo lock --json`,
		Long: `Start (or connect to) the server of every MCP tool declared in the .halo files of this
folder, and pin each of its tools in halo.lock: a sha256 of its name, description, input
schema and annotations, with the definition itself. halo tools and halo run pin a
declaration's tools the same way the first time they list them (trust on first use, like
SSH's known_hosts).

Later, a tool that is new or whose definition changed is neither offered to agents nor
callable from pipelines (MCP_TOOLS_CHANGED, with a diff) until you accept it:
halo lock --update NAME accepts the tools NAME's server offers now. halo lock without
--update exits 1 when any tool is held back. "pinMcp": false in halo.json turns pinning off.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ctx = cmd.Context()
			if runF != nil {
				return runF(opts)
			}
			return lockRun(opts)
		},
	}
	cmd.Flags().StringArrayVar(&opts.Update, "update", nil, "accept the tools the MCP tool `NAME` offers now (repeatable)")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print [{ tool, pinned, updated, held, gone, warnings, error }] as JSON")
	return cmd
}

// Result is one declaration's line of --json.
type Result struct {
	Tool string `json:"tool"`
	// Pinned lists tools pinned now (first listing, or --update).
	Pinned []string `json:"pinned,omitempty"`
	// Updated is set when --update replaced the declaration's pins.
	Updated  bool             `json:"updated,omitempty"`
	Held     []tools.HeldTool `json:"held,omitempty"`
	Gone     []string         `json:"gone,omitempty"`
	Warnings []string         `json:"warnings,omitempty"`
	Error    string           `json:"error,omitempty"`
}

func lockRun(opts *Options) error {
	f := opts.Factory
	ctx := opts.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	store, err := providers.PinStore(f.Dir)
	if err != nil {
		return err
	}
	if store == nil {
		return fmt.Errorf("halo.json has \"pinMcp\": false: MCP tools are not pinned in this project")
	}
	prog, diags := lang.Load(f.Dir, []string{"."})
	if err := diags.Err(); err != nil {
		for _, d := range diags {
			fmt.Fprintln(f.IO.ErrOut, d.String())
		}
		return cmdutil.Silent(cmdutil.ExitFailed)
	}
	set, err := providers.Build(f, f.Dir)
	if err != nil {
		return err
	}
	update := map[string]bool{}
	for _, n := range opts.Update {
		update[n] = true
	}
	var results []Result
	seen := map[string]bool{}
	for _, decl := range prog.Decls() {
		td, ok := decl.(*lang.ToolDecl)
		if !ok || td.Name == nil || td.Provider == nil {
			continue
		}
		t, ok := set.Registry.Lookup(td.Provider.Name)
		if !ok || t.Kind != tool.KindMCP {
			continue
		}
		seen[td.Name.Name] = true
		results = append(results, lockOne(ctx, f, set.Registry, td, store, update[td.Name.Name], opts.Timeout))
	}
	var unknown []string
	for n := range update {
		if !seen[n] {
			unknown = append(unknown, n)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return cmdutil.FlagError("--update %s: no MCP tool of that name is declared in this folder's .halo files", strings.Join(unknown, ", "))
	}
	sort.Slice(results, func(i, j int) bool { return results[i].Tool < results[j].Tool })
	failed := false
	for _, r := range results {
		failed = failed || r.Error != "" || len(r.Held) > 0
	}
	if opts.JSON {
		if results == nil {
			results = []Result{}
		}
		if err := pkgcmd.WriteJSON(f.IO.Out, results); err != nil {
			return err
		}
	} else {
		print(f, results)
	}
	if failed {
		return cmdutil.Silent(cmdutil.ExitFailed)
	}
	return nil
}

func lockOne(ctx context.Context, f *cmdutil.Factory, reg *tool.Registry, td *lang.ToolDecl, store mcp.PinStore, update bool, timeout time.Duration) Result {
	r := Result{Tool: td.Name.Name}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	p, err := tools.OpenDeclaration(ctx, f, reg, td)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	defer p.Close()
	pp, ok := p.(*mcp.PinnedProvider)
	if !ok {
		r.Error = "its tools are not pinned"
		return r
	}
	if update {
		defs, err := mcp.ListDefinitions(ctx, pp.Inner())
		if err != nil {
			r.Error = err.Error()
			return r
		}
		if err := store.Pin(td.Name.Name, defs); err != nil {
			r.Error = err.Error()
			return r
		}
		r.Updated = true
		for n := range defs {
			r.Pinned = append(r.Pinned, n)
		}
		sort.Strings(r.Pinned)
	}
	methods, err := pp.Methods(ctx)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	st := pp.Status()
	if !update {
		r.Pinned = st.Pinned
	}
	r.Gone = st.Gone
	for _, c := range st.Changed {
		r.Held = append(r.Held, tools.HeldTool{Name: c.Name, New: c.New, Diff: c.Diff})
	}
	r.Warnings = tools.InjectionWarnings(td.Name.Name, methods)
	return r
}

func print(f *cmdutil.Factory, results []Result) {
	w := termsafe.Writer(f.IO.Out)
	if len(results) == 0 {
		fmt.Fprintln(w, "no MCP tool is declared in this folder's .halo files")
		return
	}
	for _, r := range results {
		switch {
		case r.Error != "":
			fmt.Fprintf(w, "✗ %s: cannot list its tools: %s\n", r.Tool, r.Error)
			continue
		case r.Updated:
			fmt.Fprintf(w, "✓ %s: accepted the %d tools its server offers now\n", r.Tool, len(r.Pinned))
		case len(r.Pinned) > 0:
			fmt.Fprintf(w, "✓ %s: pinned %d tools\n", r.Tool, len(r.Pinned))
		case len(r.Held) == 0:
			fmt.Fprintf(w, "✓ %s: every tool matches halo.lock\n", r.Tool)
		}
		for _, h := range r.Held {
			what := "changed since it was pinned"
			if h.New {
				what = "new, not pinned"
			}
			fmt.Fprintf(w, "! %s.%s is %s: not offered or callable until halo lock --update %s [%s]\n", r.Tool, h.Name, what, r.Tool, mcp.CodeToolsChanged)
			for _, line := range strings.Split(h.Diff, "\n") {
				if line != "" {
					fmt.Fprintf(w, "    %s\n", line)
				}
			}
		}
		if len(r.Gone) > 0 {
			fmt.Fprintf(w, "  %s: pinned but no longer offered: %s\n", r.Tool, strings.Join(r.Gone, ", "))
		}
		for _, warn := range r.Warnings {
			fmt.Fprintf(w, "! warning: %s\n", warn)
		}
	}
}
