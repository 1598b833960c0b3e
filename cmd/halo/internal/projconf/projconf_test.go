package projconf_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"halolang.dev/halo/cmd/halo/internal/projconf"
	"halolang.dev/halo/errcode"
)

// TestRead: every key halo.json may hold, its default when left out, and a clear
// PROJECT_CONFIG error naming the key when its value has the wrong type.
func TestRead(t *testing.T) {
	defaults := projconf.Config{MCP: true, PinMCP: true, ToolIdleTimeout: projconf.DefaultToolIdleTimeout}
	for _, tc := range []struct {
		json string // "" for no halo.json
		want projconf.Config
		err  string
	}{
		{"", defaults, ""},
		{`{}`, defaults, ""},
		{`{"name": "x", "unknown": [1]}`, projconf.Config{Name: "x", MCP: true, PinMCP: true, ToolIdleTimeout: projconf.DefaultToolIdleTimeout}, ""},
		{`{"registry": "https://r.example/index.json", "publicUrl": "https://h.example", "notify": {"webhook": "https://hooks.example/x"}, "mcp": false, "pinMcp": false, "sandboxMcp": true, "toolIdleTimeout": "90s"}`,
			projconf.Config{Registry: "https://r.example/index.json", PublicURL: "https://h.example", Webhook: "https://hooks.example/x", SandboxMCP: true, ToolIdleTimeout: 90 * time.Second}, ""},
		{`{"toolIdleTimeout": "0s"}`, projconf.Config{MCP: true, PinMCP: true}, ""},
		{`{"toolIdleTimeout": 300}`, defaults, `"toolIdleTimeout" is 300: want a duration such as "5m"`},
		{`{"toolIdleTimeout": "soon"}`, defaults, `"toolIdleTimeout" is "soon": want a duration such as "5m"`},
		{`{"toolIdleTimeout": "-1m"}`, defaults, `"toolIdleTimeout" is "-1m": want a duration`},
		{`{"serve": {"maxConnections": 500, "maxUnauthenticated": 8}}`, projconf.Config{MCP: true, PinMCP: true, MaxConns: 500, MaxUnauthenticated: 8, ToolIdleTimeout: projconf.DefaultToolIdleTimeout}, ""},
		{`{"serve": 5}`, defaults, `"serve" is 5: want an object`},
		{`{"serve": {"maxConnections": 0}}`, defaults, `serve.maxConnections is 0: want a whole number above 0`},
		{`{"serve": {"maxUnauthenticated": 2.5}}`, defaults, `serve.maxUnauthenticated is 2.5: want a whole number above 0`},
		{`{"serve": {"maxConnections": "many"}}`, defaults, `serve.maxConnections is "many"`},
		{`{"stores": {"store": "postgres://halo@db/halo"}}`, projconf.Config{MCP: true, PinMCP: true, Stores: "postgres://halo@db/halo", ToolIdleTimeout: projconf.DefaultToolIdleTimeout}, ""},
		{`{"stores": {"store": ""}}`, defaults, ""},
		{`{"stores": "postgres://x"}`, defaults, `"stores" is "postgres://x": want an object`},
		{`{"stores": {"store": 5}}`, defaults, `stores.store is 5: want a string`},
		{`{"stores": {"store": "mysql://u:secret@h/db"}}`, defaults, `stores.store: want a postgres:// URL`},
		{`{"mcp": "no"}`, defaults, `halo.json: "mcp" is "no": want true or false`},
		{`{"mcp": null}`, defaults, `"mcp" is null`},
		{`{"mcp": 0}`, defaults, `"mcp" is 0`},
		{`{"pinMcp": "false"}`, defaults, `"pinMcp" is "false": want true or false`},
		{`{"sandboxMcp": 1}`, defaults, `"sandboxMcp" is 1`},
		{`{"registry": 7}`, defaults, `"registry" is 7: want a string`},
		{`{"publicUrl": {"x": 1}}`, defaults, `"publicUrl" is {"x": 1}: want a string`},
		{`{"notify": "https://x"}`, defaults, `"notify" is "https://x": want an object`},
		{`{"notify": {"webhook": 3}}`, defaults, `notify.webhook is 3: want a string`},
		{`{"notify": {"webhook": "ftp://x"}}`, defaults, `notify.webhook "ftp://x": want an http:// or https:// URL`},
		{`{"name": "` + strings.Repeat("é", 40) + `"`, defaults, "not a JSON object"},
		{`[1]`, defaults, "not a JSON object"},
		{`null`, defaults, "not a JSON object"},
		{`{"mcp": fal`, defaults, "not a JSON object"},
	} {
		dir := t.TempDir()
		if tc.json != "" {
			if err := os.WriteFile(filepath.Join(dir, "halo.json"), []byte(tc.json), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		got, err := projconf.Read(dir)
		if tc.err == "" {
			if err != nil || got != tc.want {
				t.Errorf("halo.json %s: %+v, %v; want %+v", tc.json, got, err, tc.want)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.err) || errcode.Code(err) != projconf.CodeProjectConfig {
			t.Errorf("halo.json %s: error %v [%s]; want %q [PROJECT_CONFIG]", tc.json, err, errcode.Code(err), tc.err)
		}
	}
}

// TestReadNotAFile: a halo.json that cannot be read (here a folder) is PROJECT_CONFIG too.
func TestReadNotAFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "halo.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := projconf.Read(dir); errcode.Code(err) != projconf.CodeProjectConfig {
		t.Errorf("a folder named halo.json: %v [%s]", err, errcode.Code(err))
	}
}
