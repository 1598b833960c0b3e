package providers

import (
	"path/filepath"

	"halolang.dev/halo/cmd/halo/internal/cmdutil"
	"halolang.dev/halo/cmd/halo/internal/projconf"
	"halolang.dev/halo/host/tool"
	"halolang.dev/halo/host/tool/mcp"
	"halolang.dev/halo/host/tool/pool"
	"halolang.dev/halo/pkgmgr"
)

// PinStore returns where the project in projectDir pins its MCP servers' tools (halo.lock),
// or nil when its halo.json turns pinning off ("pinMcp": false).
func PinStore(projectDir string) (mcp.PinStore, error) {
	cfg, err := projconf.Read(projectDir)
	if err != nil {
		return nil, err
	}
	if !cfg.PinMCP {
		return nil, nil
	}
	return &pkgmgr.PinFile{Dir: projectDir}, nil
}

// pinMCP returns reg with every MCP provider type (MCP(...) and mcp packages) confined as
// declarations and halo.json ask (exe is the halo binary, the sandbox wrapper; folders where
// sandboxed servers get a folder of their own), its connections kept in pl when there is
// one, and held to the project's pins, unless the project turned pinning off.
func pinMCP(reg *tool.Registry, projectDir, exe, folders string, pl *pool.Pool) (*tool.Registry, error) {
	cfg, err := projconf.Read(projectDir)
	if err != nil {
		return nil, err
	}
	var store mcp.PinStore
	if cfg.PinMCP {
		store = &pkgmgr.PinFile{Dir: projectDir}
	}
	out := tool.NewRegistry()
	for _, t := range reg.Types() {
		if t.Kind == tool.KindMCP {
			t = mcp.Pooled(mcp.Confined(t, mcp.SandboxOptions{Executable: exe, Default: cfg.SandboxMCP, Folders: folders}), pl)
			if store != nil {
				t = mcp.Pinned(t, store)
			}
		}
		if err := out.Add(t); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// MCPFolders is where sandboxed MCP servers get a folder of their own: halo/mcp in the user's
// state folder, found from the environment handed in ($XDG_STATE_HOME, else
// $HOME/.local/state on Linux and BSD; $HOME/Library/Application Support on macOS;
// %LocalAppData% on Windows). "" when the environment names none.
func MCPFolders(env cmdutil.Env) string {
	dir := env.UserDir("XDG_STATE_HOME", filepath.Join(".local", "state"), "LocalAppData")
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, "halo", "mcp")
}
