// Package providers builds the tool.Registry every command that opens tools uses: the
// built-in providers (Workspace and Bash as sandboxed plugins), MCP, and the providers of a
// project's installed packages. It is the one place that list is assembled; a new kind of
// provider adds a line to Build.
package providers

import (
	"halolang.dev/halo/cmd/halo/internal/cmdutil"
	"halolang.dev/halo/cmd/halo/internal/pkgcmd"
	"halolang.dev/halo/cmd/halo/internal/projconf"
	"halolang.dev/halo/host/model"
	"halolang.dev/halo/host/store"
	"halolang.dev/halo/host/tool"
	"halolang.dev/halo/host/tool/builtin"
	"halolang.dev/halo/host/tool/mcp"
	"halolang.dev/halo/host/tool/packages"
	"halolang.dev/halo/host/tool/pool"
	"halolang.dev/halo/host/tool/sandbox"
)

// A Set is a command's registry and what was learned building it.
type Set struct {
	// Registry holds every provider type the project can declare.
	Registry *tool.Registry
	// Sandbox says what the plugin sandbox enforces on this system.
	Sandbox sandbox.Status
}

// Build returns the providers available to the project in projectDir (an absolute folder).
// Opened providers belong to whoever opens them (each Provider's Close stops its process).
func Build(f *cmdutil.Factory, projectDir string) (*Set, error) {
	return BuildPooled(f, projectDir, nil)
}

// Pooled is the RegistryFunc of BuildPooled with pl: halo serve, halo mcp and halo run keep
// the plugin processes and MCP connections of their runs in pl, which they close when they
// stop.
func Pooled(pl *pool.Pool) RegistryFunc {
	return func(f *cmdutil.Factory, dir string) (*tool.Registry, error) {
		set, err := BuildPooled(f, dir, pl)
		if err != nil {
			return nil, err
		}
		return set.Registry, nil
	}
}

// BuildPooled is Build with each declaration's plugin process and MCP connection kept in pl
// for the later runs of the same declaration (nil keeps nothing: each opened provider's
// Close stops its process).
func BuildPooled(f *cmdutil.Factory, projectDir string, pl *pool.Pool) (*Set, error) {
	reg := tool.NewRegistry()
	b := builtin.New(builtin.Config{Executable: f.Executable, Getenv: f.Env.Lookup, Logger: f.Logger, Pool: pl})
	for _, t := range b.Types() {
		if err := reg.Add(t); err != nil {
			return nil, err
		}
	}
	if err := reg.Add(mcp.Type(f.Logger)); err != nil {
		return nil, err
	}
	if err := addStores(reg, f, projectDir); err != nil {
		return nil, err
	}
	// Installed packages add their providers here (host/tool's package glue).
	var err error
	if err = packages.Register(reg, projectDir, packages.Config{Getenv: f.Env.Lookup, Logger: f.Logger, Executable: sandboxExecutable(f, b), TrustFile: pkgcmd.TrustFile(f.Env), Warn: pkgcmd.Warn(f), Pool: pl}); err != nil {
		return nil, err
	}
	// MCP servers' tools are pinned in halo.lock on first listing, and stdio servers are
	// confined when asked (issue 18).
	if reg, err = pinMCP(reg, projectDir, f.Executable, MCPFolders(f.Env), pl); err != nil {
		return nil, err
	}
	return &Set{Registry: reg, Sandbox: b.SandboxStatus()}, nil
}

// Declared returns the providers a program in each of dirs may declare, for checking it
// without loading any package: the built-ins and MCP, as Build adds them, and the provider
// names each folder's halo.lock lists (packages.Declared). `halo validate` checks with it, and
// every command that runs checks the same way with Build's registry (runtime.Validate).
func Declared(f *cmdutil.Factory, dirs ...string) (*tool.Registry, error) {
	reg := tool.NewRegistry()
	// Nothing runs, so the sandbox is not probed.
	b := builtin.New(builtin.Config{Executable: f.Executable, Getenv: f.Env.Lookup, Logger: f.Logger, Status: &sandbox.Status{}})
	for _, t := range b.Types() {
		if err := reg.Add(t); err != nil {
			return nil, err
		}
	}
	if err := reg.Add(mcp.Type(f.Logger)); err != nil {
		return nil, err
	}
	if err := addStores(reg, f, f.Dir); err != nil {
		return nil, err
	}
	for _, dir := range dirs {
		if err := AddDeclared(reg, dir); err != nil {
			return nil, err
		}
	}
	return reg, nil
}

// AddDeclared adds to reg the provider names dir's halo.lock lists (see Declared). A name reg
// already has is left as it is: two folders may name one package, and a conflict is for
// halo install to report.
func AddDeclared(reg *tool.Registry, dir string) error {
	types, err := packages.Declared(dir)
	if err != nil {
		return err
	}
	for _, t := range types {
		if !reg.Has(t.Name) {
			if err := reg.Add(t); err != nil {
				return err
			}
		}
	}
	return nil
}

// sandboxExecutable is the halo binary module plugins start through, or "" where the
// sandbox is not used (not Linux). Where the kernel cannot enforce Landlock the wrapper still
// runs, drops capabilities and says so, as it does for the built-ins.
func sandboxExecutable(f *cmdutil.Factory, b *builtin.Builtins) string {
	if !b.Sandboxed() {
		return ""
	}
	return f.Executable
}

// ModuleConfig is the packages.Config module plugins start with outside a project's load:
// halo pack and halo add start a package's plugin to check what it serves, sandboxed as a run
// would start it.
func ModuleConfig(f *cmdutil.Factory) packages.Config {
	b := builtin.New(builtin.Config{Executable: f.Executable, Getenv: f.Env.Lookup, Logger: f.Logger})
	return packages.Config{Getenv: f.Env.Lookup, Logger: f.Logger, Executable: sandboxExecutable(f, b)}
}

// addStores adds File and VectorStore. Runs open their stores through the runtime's
// store.Set (Stores); the registry's types describe them, check declarations (a pattern that
// matches no file in projectDir is a warning) and open them for anything else.
func addStores(reg *tool.Registry, f *cmdutil.Factory, projectDir string) error {
	for _, t := range store.Types(Stores(f, projectDir, false)) {
		if err := reg.Add(t); err != nil {
			return err
		}
	}
	return nil
}

// Stores returns the store.Set a command's runs share, for the project in projectDir: keys
// from the environment the CLI read, the project's default store from halo.json ("stores":
// {"store": "postgres://..."}), mock embeddings and mock databases when mock is set (halo
// test, --mock). A halo.json that cannot be read leaves the default as SQLite: the command
// reports that file's problem where it reads its own settings.
func Stores(f *cmdutil.Factory, projectDir string, mock bool) *store.Set {
	cfg, _ := projconf.Read(projectDir)
	return store.NewSet(store.Config{Dir: projectDir, Mock: mock, Postgres: cfg.Stores, Logger: f.Logger,
		Model: model.Config{Env: f.Env, Logger: f.Logger}})
}
