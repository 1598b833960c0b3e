package pkgmgr

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
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
	var lines []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) {
				return nil
			}
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		info, err := d.Info()
		if err != nil {
			return err
		}
		line := rel + " " + info.Mode().String()
		if info.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			s := sha256.Sum256(b)
			line += " " + hex.EncodeToString(s[:])
		}
		lines = append(lines, line)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
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
	return `{"name":"` + name + `","version":"` + version + `","description":"The ` + name + ` API","publisher":"Tests",
	"providers":{"` + provider + `":{"kind":"http","description":"d","baseUrl":"https://api.` + name + `.example/v1",
	"auth":{"type":"bearer","env":"` + strings.ToUpper(strings.ReplaceAll(name, "-", "_")) + `_KEY"},
	"methods":[{"name":"get_thing","description":"Get a thing.","effect":"read","http":{"method":"GET","path":"/things/{id}"}}]}}}`
}

func mcpCommandManifest(name, version, provider string) string {
	return `{"name":"` + name + `","version":"` + version + `","description":"d",
	"providers":{"` + provider + `":{"kind":"mcp","description":"d","command":"docker run -i --rm img","env":["TOKEN"]}}}`
}
