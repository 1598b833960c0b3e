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

// PinStore returns where the project in projectDir pins its MCP servers' tools (halo.lock),
// or nil when its halo.json turns pinning off ("pinMcp": false).
func PinStore(projectDir string) (mcp.PinStore, error) {
	b, err := os.ReadFile(filepath.Join(projectDir, "halo.json"))
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("halo.json: %w", err)
	default:
		var cfg struct {
			PinMCP *bool `json:"pinMcp"`
		}
		if err := json.Unmarshal(b, &cfg); err != nil {
			return nil, fmt.Errorf("halo.json: %w", err)
		}
		if cfg.PinMCP != nil && !*cfg.PinMCP {
			return nil, nil
		}
	}
	return &pkgmgr.PinFile{Dir: projectDir}, nil
}

// pinMCP returns reg with every MCP provider type (MCP(...) and mcp packages) held to the
// project's pins, unless the project turned pinning off.
func pinMCP(reg *tool.Registry, projectDir string) (*tool.Registry, error) {
	store, err := PinStore(projectDir)
	if err != nil || store == nil {
		return reg, err
	}
	out := tool.NewRegistry()
	for _, t := range reg.Types() {
		if t.Kind == tool.KindMCP {
			t = mcp.Pinned(t, store)
		}
		if err := out.Add(t); err != nil {
			return nil, err
		}
	}
	return out, nil
}
