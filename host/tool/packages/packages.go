// Package packages turns a project's installed tool packages into provider types: it has
// pkgmgr verify every package in halo.lock (checksum, trust, names; edited files rewritten
// from the verified package), then registers each provider by kind — http through httppkg,
// mcp through the MCP client with the manifest's command or URL fixed, module through the
// plugin client with the executable pinned to its sha256 and only the manifest's variables.
package packages

import (
	"context"
	"net/http"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"halolang.dev/halo/host/tool"
	"halolang.dev/halo/host/tool/httppkg"
	"halolang.dev/halo/host/tool/mcp"
	"halolang.dev/halo/host/tool/plugin"
	"halolang.dev/halo/host/tool/pool"
	"halolang.dev/halo/host/tool/sandbox"
	"halolang.dev/halo/pkgmgr"
)

// Config is what opening package providers needs from the command.
type Config struct {
	// Getenv reads the environment the CLI handed in.
	Getenv func(string) (string, bool)
	// Logger receives plugin and MCP server logs; nil discards them.
	Logger hclog.Logger
	// HTTPClient sends http packages' requests; nil means a client with a 60-second timeout.
	HTTPClient *http.Client
	// Platform is the GOOS/GOARCH whose module executable runs; "" means this one.
	Platform string
	// TrustFile is the user's trust file (pkgmgr.Project.TrustFile); empty trusts nothing.
	TrustFile string
	// Warn receives warnings about the project's packages; nil drops them.
	Warn func(msg string)
	// Executable is the halo binary. Set, it turns the sandbox on: module plugins start
	// confined to their package folder (ModulePolicy), from a confined thread of the host
	// (the binary is no longer re-executed as a wrapper for them). Empty means they start
	// unconfined.
	Executable string
	// Pool, when not nil, keeps each module declaration's plugin process for later runs of a
	// declaration with the same configuration and pinned executable, and each MCP
	// declaration's connection; nil gives each opened provider its own.
	Pool *pool.Pool
}

// Register verifies the packages installed in the project at dir and adds their providers
// to reg. Names already in reg are reserved: a package provider that takes one is a
// PACKAGE_CONFLICT. A project without halo.lock adds nothing.
func Register(reg *tool.Registry, dir string, cfg Config) error {
	types, err := Types(context.Background(), dir, reg.Has, cfg)
	if err != nil {
		return err // coded (PACKAGE_INTEGRITY: run halo install); the command prints the code
	}
	for _, t := range types {
		if err := reg.Add(t); err != nil {
			return err
		}
	}
	return nil
}

// Declared returns the provider types halo.lock in dir names, as names only: read with pkgmgr's
// lock reader, as Register reads it, but nothing is verified, unpacked or started, so `halo
// validate` checks a project whose packages are not installed (in CI, say). Opening one says
// to run halo install. A lock that cannot be read is a coded error (PACKAGE_INTEGRITY).
func Declared(dir string) ([]tool.Type, error) {
	l, err := pkgmgr.ReadLock(dir)
	if err != nil {
		return nil, err
	}
	var out []tool.Type
	for _, pkg := range l.Names() {
		for _, name := range l.Tools[pkg].Providers {
			out = append(out, tool.Type{
				Name: name, Package: pkg,
				Open: func(context.Context, tool.Declaration) (tool.Provider, error) {
					return nil, tool.Errorf(tool.CodeToolConfig, "package %s is named by halo.lock but not loaded; run halo install", pkg)
				},
			})
		}
	}
	return out, nil
}

// Types verifies the project's packages and returns their provider types.
func Types(ctx context.Context, dir string, reserved func(string) bool, cfg Config) ([]tool.Type, error) {
	cfg = cfg.withDefaults()
	pr := &pkgmgr.Project{Dir: dir, Reserved: reserved, TrustFile: cfg.TrustFile, Warn: cfg.Warn}
	installed, err := pr.Load(ctx)
	if err != nil {
		return nil, err
	}
	var out []tool.Type
	for _, ip := range installed {
		m := ip.Package.Manifest
		for _, name := range m.ProviderNames() {
			spec := m.Providers[name]
			switch spec.Kind {
			case pkgmgr.KindHTTP:
				out = append(out, httppkg.Type(m.Name, name, spec, cfg.HTTPClient))
			case pkgmgr.KindMCP:
				out = append(out, mcpType(m.Name, name, spec, cfg))
			case pkgmgr.KindModule:
				t, err := moduleType(ip, name, spec, cfg)
				if err != nil {
					return nil, err
				}
				out = append(out, t)
			}
		}
	}
	return out, nil
}

func (cfg Config) withDefaults() Config {
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 60 * time.Second}
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	if cfg.Platform == "" {
		cfg.Platform = runtime.GOOS + "/" + runtime.GOARCH
	}
	return cfg
}

func mcpType(pkgName, name string, spec *pkgmgr.Provider, cfg Config) tool.Type {
	pkg := mcp.Package{Command: spec.Command, URL: spec.URL, Env: spec.Env}
	return tool.Type{
		Name: name, Description: spec.Description, Kind: tool.KindMCP, Package: pkgName,
		Open: func(ctx context.Context, d tool.Declaration) (tool.Provider, error) {
			if d.Getenv == nil {
				d.Getenv = cfg.Getenv
			}
			c, err := mcp.PackageConfig(pkg, d)
			if err != nil {
				return nil, err
			}
			if c.Logger == nil {
				c.Logger = cfg.Logger
			}
			return mcp.Open(ctx, c)
		},
	}
}

// moduleType runs the package's plugin executable for this platform, pinned to the sha256 of
// the file in the verified package, with only the manifest's variables.
func moduleType(ip *pkgmgr.InstalledPackage, name string, spec *pkgmgr.Provider, cfg Config) (tool.Type, error) {
	m := ip.Package.Manifest
	rel, ok := spec.Executables[cfg.Platform]
	if !ok {
		// The provider stays declarable (validate, tools), but cannot run on this machine.
		return tool.Type{
			Name: name, Description: spec.Description, Kind: tool.KindModule, Package: m.Name,
			Open: func(context.Context, tool.Declaration) (tool.Provider, error) {
				return nil, tool.Errorf(tool.CodeToolConfig, "package %s has no %s executable for %s (it has %s)", m.Name, name, cfg.Platform, strings.Join(platformsOf(spec), ", "))
			},
		}, nil
	}
	cmd, err := moduleCommand(ip.Package, ip.Dir, rel, name, cfg)
	if err != nil {
		return tool.Type{}, err
	}
	cmd.Getenv = nil // each declaration's, below
	// What each key's declaration offers, once a plugin has said so: a later run's offer needs
	// no process then (the key holds the pinned executable's sha256 and every argument).
	var described sync.Map
	return tool.Type{
		Name: name, Description: spec.Description, Kind: tool.KindModule, Package: m.Name,
		Open: func(ctx context.Context, d tool.Declaration) (tool.Provider, error) {
			c := cmd
			c.Getenv = d.Getenv
			if c.Getenv == nil {
				c.Getenv = cfg.Getenv
			}
			key, err := pool.Key("module", m.Name, name, d.Name, c.Path, c.SHA256, d.Args, d.Named, d.Dir,
				pool.Env(append([]string{"PATH", "HOME"}, c.Env...), c.Getenv), c.Sandbox != nil)
			if err != nil {
				return nil, tool.Errorf(tool.CodeToolConfig, "tool %s: %v", d.Name, err)
			}
			// Each call may take DefaultCallTimeout unless the declaration says timeout_ms:.
			opts := plugin.Options{Logger: cfg.Logger, CallTimeout: plugin.DefaultCallTimeout, TimeoutArg: "timeout_ms"}
			// The executable is hashed against its pin at every start; one that changed on
			// disk also stops the process a pool kept.
			lease, err := cfg.Pool.Lease(pool.Spec{
				Key: key, Name: name, Files: []string{c.Path}, Batch: d.Batch,
				New: func() (pool.Resource, error) { return plugin.New(c, opts), nil },
				Provider: func(r pool.Resource) (tool.Provider, error) {
					client := r.(*plugin.Client)
					p, err := client.Declare(d)
					if err != nil {
						return nil, err
					}
					o := &owned{Provider: p, client: client}
					if ms, ok := described.Load(key); ok {
						o.methods = ms.([]tool.Method)
					}
					return o, nil
				},
				// A provider that asks for a process per run (sdk.Provider.PerRun) is stopped.
				Reusable: func(r pool.Resource) bool { return !r.(*plugin.Client).PerRun() },
			})
			if err != nil {
				return nil, err
			}
			if _, ok := described.Load(key); ok {
				return lease, nil
			}
			// Configured now, as an unpooled declaration always was: a wrong argument is a
			// TOOL_CONFIG error when the tool opens, not at its first call.
			ms, err := lease.Methods(ctx)
			if err != nil {
				lease.Close()
				return nil, err
			}
			described.Store(key, ms)
			return lease, nil
		},
	}, nil
}

// ModulePolicy is what a module's plugin may reach under the sandbox: its own package folder
// and the system's libraries and time-zone data, read-only; the network only when its
// manifest lists hosts. Nothing else: not the project, not the user's home.
func ModulePolicy(pkgDir string, spec *pkgmgr.Provider) sandbox.Policy {
	ro := append([]string{pkgDir}, sandbox.SystemReadOnly...)
	return sandbox.Policy{ReadOnly: ro, Network: len(spec.Network) > 0}
}

// ModuleSandbox is the plugin.Command.Sandbox of the module executable exe in the package
// folder pkgDir: the host starts it from a thread confined to ModulePolicy, so the module is
// confined from its first instruction.
func ModuleSandbox(pkgDir, exe string, spec *pkgmgr.Provider) func(env []string) error {
	if real, err := filepath.EvalSymlinks(pkgDir); err == nil {
		pkgDir = real // granted with its links resolved, as every folder is (sandbox.Resolve)
	}
	pol := ModulePolicy(pkgDir, spec)
	return func(env []string) error { return sandbox.ConfineThread(pol, exe, env) }
}

func platformsOf(spec *pkgmgr.Provider) []string {
	out := make([]string, 0, len(spec.Executables))
	for p := range spec.Executables {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// owned is one run's module provider: its declaration on the plugin process. Closing it
// releases the declaration; the lease around it decides whether the process stops.
type owned struct {
	tool.Provider
	client *plugin.Client
	// methods, when not nil, is what the declaration offers, as its plugin said in an
	// earlier run: Methods returns it without starting the plugin.
	methods []tool.Method
}

// Methods returns what the declaration offers.
func (o *owned) Methods(ctx context.Context) ([]tool.Method, error) {
	if o.methods != nil {
		return append([]tool.Method(nil), o.methods...), nil
	}
	return o.Provider.Methods(ctx)
}

// PID returns the plugin's process id, 0 when none runs.
func (o *owned) PID() int { return o.client.PID() }
