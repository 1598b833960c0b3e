package pkgmgr

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Pins go into halo.lock's "mcp" section beside the packages, and each side keeps the other:
// pinning leaves "tools" as it was, and halo add keeps the pins.
func TestPinFileKeepsTheLock(t *testing.T) {
	w := newSignWorld(t)
	f := &PinFile{Dir: w.proj}
	if _, ok, err := f.Pinned("Git"); ok || err != nil {
		t.Fatalf("pins in no lock: %v %v", ok, err)
	}
	if err := f.Pin("Git", map[string]*MCPTool{"list": {SHA256: "aa", Description: "List."}}); err != nil {
		t.Fatal(err)
	}
	w.publish("plain", "1.0.0", "Plain Co", nil)
	if _, err := w.pr.Add(context.Background(), "plain", AddOptions{}); err != nil {
		t.Fatal(err)
	}
	got, ok, err := f.Pinned("Git")
	if err != nil || !ok || got["list"].SHA256 != "aa" {
		t.Fatalf("pins after halo add: %+v %v %v", got, ok, err)
	}
	if err := f.Pin("Other", map[string]*MCPTool{}); err != nil {
		t.Fatal(err)
	}
	lock, err := ReadLock(w.proj)
	if err != nil || lock.Tools["plain"] == nil || len(lock.MCP) != 2 {
		t.Fatalf("lock after pinning: %+v %v", lock, err)
	}
	if _, ok, _ := f.Pinned("Other"); !ok {
		t.Errorf("a declaration pinned with no tools is not pinned")
	}
	if err := f.Pin("Other", nil); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(w.proj, LockFile), []byte(`{"tools":{},"mcp":[1]}`), 0o644)
	if _, _, err := f.Pinned("Git"); Code(err) != CodeIntegrity || !strings.Contains(err.Error(), "mcp section") {
		t.Errorf("a bad mcp section: %v", err)
	}
}
