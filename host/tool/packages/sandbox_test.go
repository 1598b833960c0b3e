package packages

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"halolang.dev/halo/host/tool"
	"halolang.dev/halo/host/tool/plugin"
	"halolang.dev/halo/host/tool/sandbox"
	"halolang.dev/halo/pkgmgr"
)

// A module plugin runs inside ModulePolicy: it reads its own package folder, and nothing of
// the user's home or the project beside it.
func TestModulePluginIsSandboxed(t *testing.T) {
	status := sandbox.Detect()
	if !status.Enforced() {
		t.Skipf("skipped: this kernel cannot enforce the sandbox (%s)", status.Reason)
	}
	root := t.TempDir()
	pkgDir := filepath.Join(root, "project", ".halo", "tools", "probe")
	home := filepath.Join(root, "home")
	for _, d := range []string{pkgDir, filepath.Join(home, ".ssh")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	probe := filepath.Join(pkgDir, "probe")
	if out, err := exec.Command("go", "build", "-o", probe, "../plugin/testdata/probe").CombinedOutput(); err != nil {
		t.Fatalf("go build probe: %v\n%s", err, out)
	}
	own := filepath.Join(pkgDir, "data.txt")
	secret := filepath.Join(home, ".ssh", "id_ed25519")
	project := filepath.Join(root, "project", ".env")
	for f, text := range map[string]string{own: "package data", secret: "PRIVATE KEY", project: "OPENAI_API_KEY=sk-x"} {
		if err := os.WriteFile(f, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	cmd := plugin.Command{
		Name: "Probe", Path: probe, Dir: pkgDir,
		Getenv: func(k string) (string, bool) {
			if k == "PATH" {
				return os.Getenv("PATH"), true
			}
			if k == "HOME" {
				return home, true
			}
			return "", false
		},
		Sandbox: ModuleSandbox(pkgDir, probe, &pkgmgr.Provider{Kind: pkgmgr.KindModule}),
	}
	client := plugin.New(cmd, plugin.Options{})
	defer client.Close()
	ctx := context.Background()
	p, err := client.Open(ctx, tool.Declaration{Name: "P", Provider: "Probe"})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	defer p.Close()
	read := func(path string) (string, error) {
		args, _ := json.Marshal(map[string]string{"path": path})
		out, err := p.Call(ctx, tool.Request{Method: "read", Args: args})
		var s string
		_ = json.Unmarshal(out, &s)
		return s, err
	}
	if got, err := read(own); err != nil || got != "package data" {
		t.Fatalf("reading its own package folder: %q, %v", got, err)
	}
	for _, f := range []string{secret, project, "/proc/1/environ"} {
		if got, err := read(f); err == nil {
			t.Errorf("the module plugin read %s: %q", f, got)
		} else if !strings.Contains(err.Error(), "permission denied") && !strings.Contains(err.Error(), "operation not permitted") {
			t.Errorf("reading %s failed, but not by the sandbox: %v", f, err)
		}
	}
}

func TestModulePolicyNetwork(t *testing.T) {
	if ModulePolicy("/p", &pkgmgr.Provider{}).Network {
		t.Error("a module that lists no hosts got the network")
	}
	if !ModulePolicy("/p", &pkgmgr.Provider{Network: []string{"api.example.com"}}).Network {
		t.Error("a module that lists hosts has no network")
	}
}
