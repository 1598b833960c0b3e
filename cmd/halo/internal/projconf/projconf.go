// Package projconf owns halo.json, the project's settings file: every command that reads a
// setting reads it through Read, so one file has one set of rules and one kind of error.
package projconf

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"halolang.dev/halo/errcode"
	"halolang.dev/halo/internal/safefile"
)

// CodeProjectConfig: halo.json cannot be read, is not a JSON object, or holds a known key
// with a value of the wrong type.
const CodeProjectConfig = "PROJECT_CONFIG"

// FileName is the settings file's name, in the project folder.
const FileName = "halo.json"

// Config is what halo.json says, with the defaults of the keys it leaves out. Keys Halo does
// not know are left alone: a newer Halo's settings do not break an older one.
type Config struct {
	// Name is the project's name.
	Name string
	// Registry is the registry for package names, after --registry and HALO_REGISTRY.
	Registry string
	// PublicURL is where people reach halo serve; Webhook gets its approval links.
	PublicURL, Webhook string
	// MCP is false when halo serve is not to serve /mcp (default true).
	MCP bool
	// PinMCP is false when MCP tool definitions are not pinned (default true).
	PinMCP bool
	// SandboxMCP starts every stdio MCP server sandboxed (default false).
	SandboxMCP bool
	// MaxConns and MaxUnauthenticated are halo serve's limits ("serve": {"maxConnections",
	// "maxUnauthenticated"}); 0 means its defaults.
	MaxConns, MaxUnauthenticated int
	// Stores is where File and VectorStore keep their indexes when a declaration says
	// nothing: "" for SQLite under .halo/stores, or a postgres:// URL ("stores": {"store":
	// "postgres://..."}).
	Stores string
	// ToolIdleTimeout is how long halo serve and halo mcp keep a plugin process or MCP
	// server that no run uses (default DefaultToolIdleTimeout); 0 stops each when its run
	// ends.
	ToolIdleTimeout time.Duration
}

// DefaultToolIdleTimeout is ToolIdleTimeout when halo.json does not say.
const DefaultToolIdleTimeout = 5 * time.Minute

// maxBytes is the largest halo.json Read reads: a repository's may be anything (a named pipe,
// which is refused too, is read without waiting).
const maxBytes = 1 << 20

// Read reads halo.json in dir. No file means every default.
func Read(dir string) (Config, error) {
	cfg := Config{MCP: true, PinMCP: true, ToolIdleTimeout: DefaultToolIdleTimeout}
	b, err := safefile.Read(filepath.Join(dir, FileName), maxBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return cfg, nil
	}
	if err != nil {
		return cfg, errcode.Wrap(CodeProjectConfig, err, "%s: %v", FileName, err)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil || raw == nil {
		if err == nil {
			err = errors.New("null")
		}
		return cfg, errcode.Wrap(CodeProjectConfig, err, "%s: not a JSON object: %v", FileName, err)
	}
	var notify, serve, stores map[string]json.RawMessage
	var idle string
	for _, k := range []struct {
		key  string
		dest any
		want string
	}{
		{"name", &cfg.Name, "a string"},
		{"registry", &cfg.Registry, "a string"},
		{"publicUrl", &cfg.PublicURL, "a string"},
		{"notify", &notify, `an object, such as {"webhook": "https://..."}`},
		{"serve", &serve, `an object, such as {"maxConnections": 4096}`},
		{"mcp", &cfg.MCP, "true or false (false turns /mcp off)"},
		{"pinMcp", &cfg.PinMCP, "true or false (false turns pinning MCP tools off)"},
		{"sandboxMcp", &cfg.SandboxMCP, "true or false (true sandboxes every stdio MCP server)"},
		{"stores", &stores, `an object, such as {"store": "postgres://..."}`},
		{"toolIdleTimeout", &idle, `a duration such as "5m" or "30s" ("0s" stops a tool's process when its run ends)`},
	} {
		v, ok := raw[k.key]
		if !ok {
			continue
		}
		if err := decode(v, k.dest); err != nil {
			return cfg, errcode.Wrap(CodeProjectConfig, err, "%s: %q is %s: want %s", FileName, k.key, shorten(v), k.want)
		}
	}
	if _, ok := raw["toolIdleTimeout"]; ok {
		d, err := time.ParseDuration(idle)
		if err != nil || d < 0 {
			if err == nil {
				err = errors.New("negative")
			}
			return cfg, errcode.Wrap(CodeProjectConfig, err, "%s: \"toolIdleTimeout\" is %q: want a duration such as \"5m\" or \"30s\" (\"0s\" stops a tool's process when its run ends)", FileName, idle)
		}
		cfg.ToolIdleTimeout = d
	}
	if v, ok := notify["webhook"]; ok {
		if err := decode(v, &cfg.Webhook); err != nil {
			return cfg, errcode.Wrap(CodeProjectConfig, err, "%s: notify.webhook is %s: want a string", FileName, shorten(v))
		}
		if !strings.HasPrefix(cfg.Webhook, "https://") && !strings.HasPrefix(cfg.Webhook, "http://") {
			return cfg, errcode.New(CodeProjectConfig, "%s: notify.webhook %q: want an http:// or https:// URL", FileName, cfg.Webhook)
		}
	}
	for _, k := range []struct {
		key  string
		dest *int
	}{
		{"maxConnections", &cfg.MaxConns},
		{"maxUnauthenticated", &cfg.MaxUnauthenticated},
	} {
		v, ok := serve[k.key]
		if !ok {
			continue
		}
		if err := decode(v, k.dest); err != nil || *k.dest < 1 {
			if err == nil {
				err = errors.New("not positive")
			}
			return cfg, errcode.Wrap(CodeProjectConfig, err, "%s: serve.%s is %s: want a whole number above 0", FileName, k.key, shorten(v))
		}
	}
	if v, ok := stores["store"]; ok {
		if err := decode(v, &cfg.Stores); err != nil {
			return cfg, errcode.Wrap(CodeProjectConfig, err, "%s: stores.store is %s: want a string", FileName, shorten(v))
		}
		if cfg.Stores != "" && !strings.HasPrefix(cfg.Stores, "postgres://") && !strings.HasPrefix(cfg.Stores, "postgresql://") {
			return cfg, errcode.New(CodeProjectConfig, "%s: stores.store: want a postgres:// URL, or \"\" for SQLite under .halo/stores", FileName)
		}
	}
	return cfg, nil
}

// decode decodes v into dest, refusing null (which json.Unmarshal would take for "leave it").
func decode(v json.RawMessage, dest any) error {
	if bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
		return errors.New("null")
	}
	return json.Unmarshal(v, dest)
}

// shorten is v as written, cut to 40 bytes.
func shorten(v json.RawMessage) string {
	s := string(bytes.TrimSpace(v))
	if len(s) > 40 {
		return strings.ToValidUTF8(s[:40], "") + "…"
	}
	return s
}
