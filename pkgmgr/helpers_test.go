package pkgmgr

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"halolang.dev/halo/internal/treestate"
)

// writeTree writes files (slash paths) under dir.
func writeTree(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// hashTree returns one line per file, folder and symlink under dir with its mode and sha256,
// so a test can assert that a failed operation changed nothing at all.
func hashTree(t testing.TB, dir string) string {
	t.Helper()
	desc, err := treestate.Describe(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	return desc
}

// rawPackage builds a .halotool by hand, for hostile packages PackDir would never make.
func rawPackage(t testing.TB, manifest string, files []wireFile) []byte {
	t.Helper()
	for i := range files {
		if files[i].Data == "" {
			files[i].Data = base64.StdEncoding.EncodeToString([]byte("x"))
		}
	}
	b, err := json.Marshal(wirePackage{Format: Format, Manifest: json.RawMessage(manifest), Files: files})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func httpManifest(name, version, provider string) string {
	return `{"name":"` + name + `","version":"` + version + `","description":"The ` + name + ` API","publisher":"Tests","files":["README.md"],
	"providers":{"` + provider + `":{"kind":"http","description":"d","baseUrl":"https://api.` + name + `.example/v1",
	"auth":{"type":"bearer","env":"` + strings.ToUpper(strings.ReplaceAll(name, "-", "_")) + `_KEY"},
	"methods":[{"name":"get_thing","description":"Get a thing.","effect":"read","http":{"method":"GET","path":"/things/{id}"}}]}}}`
}

func mcpCommandManifest(name, version, provider string) string {
	return `{"name":"` + name + `","version":"` + version + `","description":"d","files":["README.md"],
	"providers":{"` + provider + `":{"kind":"mcp","description":"d","command":"docker run -i --rm img","env":["TOKEN"]}}}`
}
