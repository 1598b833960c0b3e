package pkgmgr

import (
	"encoding/json"
	"errors"
	"io/fs"
	"path/filepath"
	"sync"

	"halolang.dev/halo/internal/safefile"
)

// An MCPTool is one MCP server tool as halo.lock pins it: the sha256 of its canonical
// definition (name, title, description, input schema, annotations), and the definition
// itself, so a change can be shown as a diff and reviewed in the lock's history.
type MCPTool struct {
	SHA256      string          `json:"sha256"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"inputSchema,omitempty"`
	Annotations json.RawMessage `json:"annotations,omitempty"`
}

// MCPPins are halo.lock's "mcp" section: per MCP declaration (the tool's declared name),
// its tools by name, pinned the first time they were listed (trust on first use).
type MCPPins map[string]map[string]*MCPTool

// A PinFile reads and writes the "mcp" section of a project's halo.lock, leaving every
// other part of the file as it is. It is safe for concurrent use within one process.
type PinFile struct {
	Dir string
	mu  sync.Mutex
}

// Pinned returns what halo.lock pins for the declaration decl, and whether it pins anything
// for it at all.
func (f *PinFile) Pinned(decl string) (map[string]*MCPTool, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	raw, err := f.read()
	if err != nil {
		return nil, false, err
	}
	pins, err := pinsOf(raw)
	if err != nil {
		return nil, false, err
	}
	tools, ok := pins[decl]
	return tools, ok, nil
}

// Pin replaces the pins of decl (nil tools removes them) in halo.lock.
func (f *PinFile) Pin(decl string, tools map[string]*MCPTool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	raw, err := f.read()
	if err != nil {
		return err
	}
	pins, err := pinsOf(raw)
	if err != nil {
		return err
	}
	if pins == nil {
		pins = MCPPins{}
	}
	if tools == nil {
		delete(pins, decl)
	} else {
		pins[decl] = tools
	}
	if raw == nil {
		raw = map[string]json.RawMessage{"tools": json.RawMessage(`{}`)}
	}
	if len(pins) == 0 {
		delete(raw, "mcp")
	} else {
		b, err := json.Marshal(pins)
		if err != nil {
			return err
		}
		raw["mcp"] = b
	}
	out, err := json.MarshalIndent(raw, "", "  ")
	if err != nil {
		return err
	}
	return writeAtomic(filepath.Join(f.Dir, LockFile), append(out, '\n'), 0o644)
}

// read returns halo.lock's top-level keys, or nil when there is no lock.
func (f *PinFile) read() (map[string]json.RawMessage, error) {
	b, err := safefile.Read(filepath.Join(f.Dir, LockFile), MaxLockBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, &Error{Code: CodeIntegrity, Message: "halo.lock is not valid JSON", Err: err}
	}
	return raw, nil
}

func pinsOf(raw map[string]json.RawMessage) (MCPPins, error) {
	var pins MCPPins
	if m, ok := raw["mcp"]; ok {
		if err := json.Unmarshal(m, &pins); err != nil {
			return nil, &Error{Code: CodeIntegrity, Message: "halo.lock: the mcp section is not valid", Err: err}
		}
	}
	return pins, nil
}
