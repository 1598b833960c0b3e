package halo_test

import (
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

var updateSnapshots = flag.Bool("update-grammar", false, "rewrite editors/vscode/test/snap from the examples")

// tmgrammarBin is where scripts/setup-test-deps.sh installs vscode-tmgrammar-test (pinned by
// scripts/npm/tmgrammar/package-lock.json).
const tmgrammarBin = ".cache/npm/tmgrammar/node_modules/vscode-tmgrammar-test/dist"

// The VS Code extension's TextMate grammar, tested with vscode-tmgrammar-test: the scope
// assertions of editors/vscode/test/*.halo, and a snapshot of the scopes of every example
// (editors/vscode/test/snap; go test -run VSCodeGrammar -update-grammar rewrites them after an
// example or the grammar changes: review the diff).
func TestVSCodeGrammar(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("the grammar tests need Node.js 20+ and npm (Debian: apt-get install -y nodejs npm), then ./scripts/setup-test-deps.sh: %v", err)
	}
	bin, err := filepath.Abs(tmgrammarBin)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(bin, "unit.js")); err != nil {
		t.Fatalf("vscode-tmgrammar-test is not installed: run ./scripts/setup-test-deps.sh (%v)", err)
	}
	grammar, _ := filepath.Abs("editors/vscode/syntaxes/halo.tmLanguage.json")
	run := func(dir string, args ...string) string {
		t.Helper()
		cmd := exec.Command(node, args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("%s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	run("editors/vscode", filepath.Join(bin, "unit.js"), "-g", grammar, "test/*.halo")

	// The snapshots are of copies of the examples, beside the committed snapshots.
	tmp := t.TempDir()
	examples, _ := filepath.Glob("examples/*.halo")
	if len(examples) == 0 {
		t.Fatal("no examples")
	}
	for _, ex := range examples {
		copyFile(t, ex, filepath.Join(tmp, filepath.Base(ex)))
		if !*updateSnapshots {
			copyFile(t, filepath.Join("editors/vscode/test/snap", filepath.Base(ex)+".snap"), filepath.Join(tmp, filepath.Base(ex)+".snap"))
		}
	}
	args := []string{filepath.Join(bin, "snapshot.js"), "-g", grammar, "-s", "source.halo", "*.halo"}
	if *updateSnapshots {
		args = append(args, "-u")
	}
	run(tmp, args...)
	if *updateSnapshots {
		snaps, _ := filepath.Glob(filepath.Join(tmp, "*.snap"))
		for _, s := range snaps {
			copyFile(t, s, filepath.Join("editors/vscode/test/snap", filepath.Base(s)))
		}
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatalf("%v (a new example? go test -run VSCodeGrammar -update-grammar writes its snapshot)", err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
