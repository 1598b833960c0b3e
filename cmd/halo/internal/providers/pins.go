package providers

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/halo-lang/halo/host/tool"
	"github.com/halo-lang/halo/host/tool/mcp"
	"github.com/halo-lang/halo/pkgmgr"
)

// settings are the keys of halo.json this file reads.
type settings struct {
	// PinMCP: false turns pinning MCP tools off.
	PinMCP *bool `json:"pinMcp"`
	// SandboxMCP: true confines every stdio MCP server whose declaration does not say
	// sandbox: false.
	SandboxMCP bool `json:"sandboxMcp"`
}

func readSettings(projectDir string) (settings, error) {
	var cfg settings
	b, err := os.ReadFile(filepath.Join(projectDir, "halo.json"))
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return cfg, fmt.Errorf("halo.json: %w", err)
	default:
		if err := json.Unmarshal(b, &cfg); err != nil {
			return cfg, fmt.Errorf("halo.json: %w", err)
		}
	}
	return cfg, nil
}

// PinStore returns where the project in projectDir pins its MCP servers' tools (halo.lock),
// or nil when its halo.json turns pinning off ("pinMcp": false).
func PinStore(projectDir string) (mcp.PinStore, error) {
	cfg, err := readSettings(projectDir)
	if err != nil {
		return nil, err
	}
	if cfg.PinMCP != nil && !*cfg.PinMCP {
		return nil, nil
	}
	return &pkgmgr.PinFile{Dir: projectDir}, nil
}

// pinMCP returns reg with every MCP provider type (MCP(...) and mcp packages) confined as
// declarations and halo.json ask (exe is the halo binary, the sandbox wrapper) and held to
// the project's pins, unless the project turned pinning off.
func pinMCP(reg *tool.Registry, projectDir, exe string) (*tool.Registry, error) {
	cfg, err := readSettings(projectDir)
	if err != nil {
		return nil, err
	}
	store, err := PinStore(projectDir)
	if err != nil {
		return nil, err
	}
	out := tool.NewRegistry()
	for _, t := range reg.Types() {
		if t.Kind == tool.KindMCP {
			t = mcp.Confined(t, mcp.SandboxOptions{Executable: exe, Default: cfg.SandboxMCP})
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
