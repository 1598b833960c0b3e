package lspcmd_test

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"halolang.dev/halo/cmd/halo/internal/cmdutil"
	"halolang.dev/halo/cmd/halo/internal/lspcmd"
	"halolang.dev/halo/cmd/halo/internal/root"
	"halolang.dev/halo/host/lsp"
	"halolang.dev/halo/host/lsp/lsptest"
)

// TestMain lets the tests run this test binary as `halo`.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"halo": func() { os.Exit(root.Main(os.Args[1:], root.ProcessSystem())) },
	})
}

// A proc is a real `halo lsp` process and a client speaking JSON-RPC to it.
type proc struct {
	cmd    *exec.Cmd
	c      *lsptest.Client
	stdin  io.WriteCloser
	stderr bytes.Buffer
}

func startLSP(t *testing.T, dir string) *proc {
	t.Helper()
	halo, err := exec.LookPath("halo")
	if err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: exec.Command(halo, "lsp", "--stdio")}
	p.cmd.Dir = dir
	p.cmd.Env = append(os.Environ(), "NO_COLOR=1", "GORACE=atexit_sleep_ms=0")
	p.cmd.Stderr = &p.stderr
	if p.stdin, err = p.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p.c = lsptest.New(out, p.stdin)
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		p.cmd.Wait()
	})
	if _, err := p.c.Initialize(string(lsp.PathURI(dir))); err != nil {
		t.Fatalf("initialize: %v\n%s", err, p.stderr.String())
	}
	return p
}

// The real halo lsp process: diagnostics of a file with an error, checked against the
// providers halo.lock lists as halo validate reads it (a lock halo run would refuse is a
// diagnostic too), and a clean exit when the client says exit.
func TestHaloLSPProcess(t *testing.T) {
	dir := t.TempDir()
	lock := `{"tools": {"stripe": {"version": "1.0.0", "source": "registry:default#stripe@1.0.0", "sha256": "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", "providers": ["Stripe"]}}}`
	if err := os.WriteFile(filepath.Join(dir, "halo.lock"), []byte(lock), 0o644); err != nil {
		t.Fatal(err)
	}
	p := startLSP(t, dir)
	uri := lsp.PathURI(filepath.Join(dir, "pay.halo"))
	text := "tool Pay : Stripe()\ntool Files : Workspac(root: \".\")\n"
	if err := p.c.Open(uri, 1, text); err != nil {
		t.Fatal(err)
	}
	diags, err := p.c.Diagnostics(uri, 1, 30*time.Second)
	if err != nil {
		t.Fatalf("%v\n%s", err, p.stderr.String())
	}
	if len(diags) != 1 || diags[0].Code != "UNKNOWN_PROVIDER" || !strings.Contains(diags[0].Message, "unknown provider Workspac\nhelp: did you mean Workspace?") || diags[0].Range.Start.Line != 1 || diags[0].Range.Start.Character != 13 || diags[0].Range.End.Character != 21 {
		t.Fatalf("diagnostics: %+v", diags)
	}

	// A lock that halo run would refuse (an entry without its checksum).
	if err := os.WriteFile(filepath.Join(dir, "halo.lock"), []byte(`{"tools": {"stripe": {"providers": ["Stripe"]}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	p.c.Change(uri, 2, "tool Files : Workspace(root: \".\")\n")
	diags, err = p.c.Diagnostics(uri, 2, 30*time.Second)
	if err != nil || len(diags) != 1 || diags[0].Code != "PACKAGE_INTEGRITY" || !strings.HasPrefix(diags[0].Message, "halo.lock: ") {
		t.Fatalf("a refused lock: %+v %v", diags, err)
	}

	p.c.Close()
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("halo lsp exited with %v after exit; stderr:\n%s", err, p.stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Errorf("halo lsp did not exit after exit")
	}
}

// halo lsp ends when its stdin closes, as when the editor goes away.
func TestHaloLSPEndsWithStdin(t *testing.T) {
	p := startLSP(t, t.TempDir())
	p.stdin.Close()
	done := make(chan struct{})
	go func() { p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Errorf("halo lsp did not exit when its stdin closed")
	}
}

func TestNewCmdLSPFlags(t *testing.T) {
	f := &cmdutil.Factory{}
	var got *lspcmd.Options
	cmd := lspcmd.NewCmdLSP(f, func(o *lspcmd.Options) error { got = o; return nil })
	cmd.SetArgs([]string{"--stdio"})
	if err := cmd.Execute(); err != nil || got == nil || !got.Stdio {
		t.Fatalf("%v %+v", err, got)
	}
	cmd = lspcmd.NewCmdLSP(f, func(o *lspcmd.Options) error { return nil })
	cmd.SetArgs([]string{"file.halo"})
	cmd.SetErr(io.Discard)
	if err := cmd.Execute(); err == nil {
		t.Error("halo lsp took an argument")
	}
}
