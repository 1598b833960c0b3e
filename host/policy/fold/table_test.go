package fold

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// The committed table is what the generator writes from the pinned Unicode data.
func TestTableUpToDate(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the table regeneration (it builds and runs internal/gen)")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH to run the generator")
	}
	out := filepath.Join(t.TempDir(), "table.go")
	cmd := exec.Command(goTool, "run", "./internal/gen", "-o", out)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("generator: %v\n%s", err, msg)
	}
	want, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	have, err := os.ReadFile("table.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(have, want) {
		t.Fatal("table.go is stale: run go generate ./host/policy/fold")
	}
}
