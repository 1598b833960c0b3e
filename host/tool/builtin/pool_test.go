package builtin

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"halolang.dev/halo/errcode"
	"halolang.dev/halo/host/tool"
	"halolang.dev/halo/host/tool/pool"
	"halolang.dev/halo/internal/usertest"
)

// pooledFixture is a fixture whose plugins a pool keeps between the runs, as halo serve's
// are. Each test's pool is closed, and its processes stopped, when it ends.
func pooledFixture(t *testing.T, mode string) (*fixture, *pool.Pool) {
	t.Helper()
	pl := pool.New(pool.Options{})
	t.Cleanup(func() { pl.Close() })
	return fixtureWith(t, mode, pl), pl
}

// session opens a declaration as a run does and closes it when the run ends (end).
func (fx *fixture) session(t *testing.T, name, provider string, args []any, named map[string]any) (tool.Provider, func()) {
	t.Helper()
	p, err := fx.reg.Open(context.Background(), tool.Declaration{Name: name, Provider: provider, Args: args, Named: named, Dir: fx.work})
	if err != nil {
		t.Fatalf("open %s: %v\nlogs:\n%s", provider, err, fx.logs)
	}
	return p, func() { p.Close() }
}

func gone(pid int) bool {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if !alive(pid) {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	_, err := os.Stat("/proc/" + strconv.Itoa(pid))
	return err == nil && !zombie(pid)
}

// TestPooledPluginsOutliveARun: under a pool, a later run of the same declaration gets the
// plugin process an earlier run started (started on its first call, not when it was
// offered), while a declaration with another folder, or another name, gets a process of its
// own; closing the pool stops every one.
func TestPooledPluginsOutliveARun(t *testing.T) {
	for _, mode := range modes[:2] {
		t.Run("sandbox="+mode, func(t *testing.T) {
			fx, pl := pooledFixture(t, mode)
			ws, end := fx.session(t, "Files", "Workspace", []any{"."}, nil)
			ms, err := ws.Methods(context.Background())
			if err != nil || len(ms) != 3 {
				t.Fatalf("a read-only Workspace offers %d methods (%v), want its 3 reading ones", len(ms), err)
			}
			if pidOf(ws) != 0 {
				t.Fatal("listing the methods started the plugin")
			}
			var list struct{}
			mustCall(t, ws, "list", map[string]any{}, &list)
			first := pidOf(ws)
			end()
			if !alive(first) {
				t.Fatal("the plugin stopped when its run ended")
			}
			ws, end = fx.session(t, "Files", "Workspace", []any{"."}, nil)
			mustCall(t, ws, "list", map[string]any{}, &list)
			if pidOf(ws) != first {
				t.Errorf("the next run of the declaration started plugin %d, not the kept %d", pidOf(ws), first)
			}
			end()
			docs, end := fx.session(t, "Files", "Workspace", []any{"docs"}, nil)
			mustCall(t, docs, "list", map[string]any{}, &list)
			other, endOther := fx.session(t, "Notes", "Workspace", []any{"."}, nil)
			mustCall(t, other, "list", map[string]any{}, &list)
			if pidOf(docs) == first || pidOf(other) == first || pidOf(docs) == pidOf(other) {
				t.Errorf("declarations with another folder or name reached a kept plugin: %d %d %d", first, pidOf(docs), pidOf(other))
			}
			end()
			endOther()
			if err := pl.Close(); err != nil {
				t.Fatal(err)
			}
			for _, pid := range []int{first, pidOf(docs), pidOf(other)} {
				if pid != 0 && !gone(pid) {
					t.Errorf("plugin %d outlived the pool", pid)
				}
			}
			if left := pluginPIDs("workspace"); len(left) != 0 {
				t.Errorf("workspace plugins left running: %v", left)
			}
		})
	}
}

// TestPooledBashKeepsNothing: what one run's commands leave in the plugin's temporary folder
// is gone when the next run of the declaration gets the plugin; a run that leaves a process
// running (one that left the command's process group) has its plugin stopped, with that
// process, and the next run gets a new one. A pooled plugin's grants stay its declaration's:
// another cwd's files are not reachable from it.
func TestPooledBashKeepsNothing(t *testing.T) {
	for _, mode := range modes {
		t.Run("sandbox="+mode, func(t *testing.T) {
			fx, _ := pooledFixture(t, mode)
			sh, end := fx.session(t, "Shell", "Bash", nil, nil)
			r := run(t, sh, `echo left > "$TMPDIR/note" && echo "$TMPDIR"`)
			tmp := strings.TrimSpace(r.Stdout)
			first := pidOf(sh)
			end()
			sh, end = fx.session(t, "Shell", "Bash", nil, nil)
			if r := run(t, sh, `ls -A "$TMPDIR"; echo "$TMPDIR"`); r.Stdout != tmp+"\n" {
				t.Errorf("the next run found %q in the temporary folder", r.Stdout)
			}
			if pidOf(sh) != first {
				t.Errorf("a run that left nothing running did not hand its plugin on (%d, then %d)", first, pidOf(sh))
			}
			// setsid leaves the command's process group, which the plugin kills after each
			// command; the plugin's own PID namespace still holds it.
			// The command waits until its child has left the group (it writes the file after
			// setsid), or the plugin's kill of the group could still reach it.
			run(t, sh, `setsid sh -c 'echo $$ > "$TMPDIR/pid"; exec sleep 300' </dev/null >/dev/null 2>&1 & while [ ! -s "$TMPDIR/pid" ]; do sleep 0.01; done`)
			left := waitForDescendant(t, first, "sleep")
			end()
			if !gone(first) || !gone(left) {
				t.Fatalf("a plugin whose run left a process running was kept (plugin %d alive %v, sleep %d alive %v)", first, alive(first), left, alive(left))
			}
			sh, end = fx.session(t, "Shell", "Bash", nil, nil)
			run(t, sh, "true")
			if pidOf(sh) == first || pidOf(sh) == 0 {
				t.Errorf("the next run did not get a new plugin")
			}
			end()
			if mode == "none" {
				return
			}
			// Another cwd: another process, which cannot read the first one's folder.
			secretDir := filepath.Join(fx.work, "docs")
			os.WriteFile(filepath.Join(secretDir, "only-docs.md"), []byte("docs secret"), 0o644)
			inDocs, endDocs := fx.session(t, "Shell", "Bash", nil, map[string]any{"cwd": "docs"})
			run(t, inDocs, "true")
			elsewhere := filepath.Join(fx.home, "elsewhere")
			os.MkdirAll(elsewhere, 0o755)
			sh, end = fx.session(t, "Shell", "Bash", nil, map[string]any{"cwd": elsewhere})
			r = run(t, sh, "cat "+filepath.Join(secretDir, "only-docs.md"))
			if pidOf(sh) == pidOf(inDocs) || strings.Contains(r.Stdout, "docs secret") {
				t.Errorf("a Bash in %s reached the docs folder another declaration is granted: %+v", elsewhere, r)
			}
			end()
			endDocs()
		})
	}
	usertest.Rerun(t)
}

// TestPooledPluginFaults: a kept plugin killed between runs, or dying in the middle of a call,
// costs only the call that met it: the next call starts it again.
func TestPooledPluginFaults(t *testing.T) {
	fx, _ := pooledFixture(t, "sandbox")
	sh, end := fx.session(t, "Shell", "Bash", nil, nil)
	run(t, sh, "true")
	first := pidOf(sh)
	end()
	syscall.Kill(first, syscall.SIGKILL)
	if !gone(first) {
		t.Fatal("the plugin did not die")
	}
	sh, end = fx.session(t, "Shell", "Bash", nil, nil)
	defer end()
	if r := run(t, sh, "echo again"); r.Stdout != "again\n" || pidOf(sh) == first {
		t.Fatalf("a run after its kept plugin was killed: %+v, pid %d", r, pidOf(sh))
	}
	second := pidOf(sh)
	// The plugin is killed in the middle of a call.
	failed := make(chan error, 1)
	go func() { // the test waits for it below
		_, err := call(t, sh, "run", map[string]any{"command": "exec sleep 30"})
		failed <- err
	}()
	waitForDescendant(t, second, "sleep")
	syscall.Kill(second, syscall.SIGKILL)
	err := <-failed
	var te *tool.Error
	if !errors.As(err, &te) || errcode.Code(err) != tool.CodeToolCrashed || !te.Retryable {
		t.Fatalf("a call whose plugin died: %v, want a retryable %s", err, tool.CodeToolCrashed)
	}
	if r := run(t, sh, "echo after"); r.Stdout != "after\n" || pidOf(sh) == second {
		t.Fatalf("the call after the crash: %+v, pid %d (was %d)", r, pidOf(sh), second)
	}
}
