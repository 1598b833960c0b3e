package lspcmd_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// End to end with a real editor: Neovim (Debian's package, which scripts/setup-test-deps.sh
// installs), headless, opens a file with an error, starts halo lsp as its language server,
// and shows the diagnostic the server sent, where it is.
func TestNeovimShowsTheDiagnostic(t *testing.T) {
	nvim, err := exec.LookPath("nvim")
	if err != nil {
		t.Fatal("nvim not found: install Neovim (scripts/setup-test-deps.sh does, as root: apt-get install -y neovim)")
	}
	halo, err := exec.LookPath("halo")
	if err != nil {
		t.Fatal(err)
	}
	script, err := filepath.Abs("testdata/nvim.lua")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "bad.halo")
	if err := os.WriteFile(file, []byte("tool Docs : Workspace(root: \".\")\nagent Librarian [openai/gpt-4o]\n  equips Doc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "diagnostics.txt")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, nvim, "--headless", "--clean", "-n", "-i", "NONE", "-u", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HALO_NVIM_OUT="+out, "HALO_NVIM_FILE="+file, "HALO_BIN="+halo, "XDG_STATE_HOME="+dir, "XDG_DATA_HOME="+dir, "XDG_CACHE_HOME="+dir)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("nvim: %v\n%s", err, b)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want := "2:9-12 UNDECLARED undeclared tool Doc | help: did you mean Docs?\n"
	if string(got) != want {
		t.Errorf("Neovim shows:\n%s\nwant:\n%s", got, want)
	}
	if strings.Contains(string(got), "TIMEOUT") {
		t.Error("Neovim got no diagnostic from halo lsp within 30 s")
	}
}
