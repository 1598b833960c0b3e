package plugin_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"halolang.dev/halo/host/tool"
	"halolang.dev/halo/host/tool/plugin"
	"halolang.dev/halo/host/tool/sandbox"
	pluginv1 "halolang.dev/halo/proto/halo/plugin/v1"
)

// procStatus reads the fields of /proc/<pid>/status.
func procStatus(t *testing.T, pid int) map[string]string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			out[k] = strings.TrimSpace(v)
		}
	}
	return out
}

func namespace(t *testing.T, pid, kind string) string {
	t.Helper()
	link, err := os.Readlink("/proc/" + pid + "/ns/" + kind)
	if err != nil {
		t.Fatal(err)
	}
	return link
}

// TestPluginIsolation checks the namespaces and privileges each kind of start gives a
// plugin: a root host starts it in a PID namespace alone, from a thread whose programs hold
// no capability; any other host (or Options.UserNamespace) adds a user namespace mapping
// the host's ids to themselves; a sandboxed plugin is confined by Landlock from its start.
func TestPluginIsolation(t *testing.T) {
	requireLinux(t)
	root := os.Geteuid() == 0
	allowed := filepath.Join(t.TempDir(), "allowed")
	outside := filepath.Join(t.TempDir(), "outside.txt")
	for _, f := range []string{filepath.Join(allowed, "in.txt"), outside} {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte("data"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	confine := func(env []string) error {
		return sandbox.ConfineThread(sandbox.Policy{ReadOnly: []string{allowed}}, bins.probe, env)
	}
	for _, c := range []struct {
		name    string
		userNS  bool
		sandbox func([]string) error
	}{
		{"plain", false, nil},
		{"plain+userns", true, nil},
		{"sandbox", false, confine},
		{"sandbox+userns", true, confine},
	} {
		t.Run(c.name, func(t *testing.T) {
			client := newClient(t, plugin.Command{Name: "Probe", Path: bins.probe, Sandbox: c.sandbox}, plugin.Options{UserNamespace: c.userNS})
			p := openProbe(t, client)
			pid := fmt.Sprint(client.PID())
			st := procStatus(t, client.PID())

			// Process 1 of its own PID namespace, whatever the host.
			if nspid := strings.Fields(st["NSpid"]); len(nspid) != 2 || nspid[1] != "1" {
				t.Errorf("NSpid = %q: want the plugin to be process 1 of a PID namespace of its own", st["NSpid"])
			}
			ownUserNS := namespace(t, pid, "user") != namespace(t, "self", "user")
			if wantUserNS := c.userNS || !root; ownUserNS != wantUserNS {
				t.Errorf("user namespace of its own: %v, want %v", ownUserNS, wantUserNS)
			}
			if ownUserNS {
				// The host's ids, mapped to themselves before any request arrives.
				b, err := os.ReadFile("/proc/" + pid + "/uid_map")
				if want := fmt.Sprintf("%d %d 1", os.Getuid(), os.Getuid()); err != nil || strings.Join(strings.Fields(string(b)), " ") != want {
					t.Errorf("uid_map = %q (%v), want %q", b, err, want)
				}
				res, err := call(t, p, "info", `{}`)
				if err != nil || !strings.Contains(string(res), `"stdin":"/dev/null"`) {
					t.Errorf("info = %s, %v", res, err)
				}
			} else {
				// Root without its capabilities, and unable to gain any.
				for _, set := range []string{"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"} {
					if strings.Trim(st[set], "0") != "" {
						t.Errorf("%s = %s, want none", set, st[set])
					}
				}
				if st["NoNewPrivs"] != "1" {
					t.Errorf("NoNewPrivs = %s, want 1", st["NoNewPrivs"])
				}
			}

			if c.sandbox == nil || !sandbox.Detect().Enforced() {
				return
			}
			// Landlock holds from the plugin's first instruction: it reads the folder it was
			// granted and nothing else.
			if res, err := call(t, p, "read", `{"path":"`+filepath.Join(allowed, "in.txt")+`"}`); err != nil || string(res) != `"data"` {
				t.Errorf("reading a granted file: %s, %v", res, err)
			}
			res, err := call(t, p, "read", `{"path":"`+outside+`"}`)
			var te *tool.Error
			if !errors.As(err, &te) || !strings.Contains(string(te.Detail), "permission denied") {
				t.Errorf("reading a file outside the sandbox: %s, %v", res, err)
			}
		})
	}
}

// TestSandboxFailureStartsNothing: a sandbox that cannot be applied fails the start, and no
// process is left.
func TestSandboxFailureStartsNothing(t *testing.T) {
	requireLinux(t)
	before := len(childrenOf(os.Getpid()))
	c := newClient(t, plugin.Command{Name: "Probe", Path: bins.probe, Sandbox: func([]string) error {
		return errors.New("no sandbox today")
	}}, plugin.Options{})
	_, err := c.Open(context.Background(), tool.Declaration{Name: "P", Provider: "Probe"})
	if err == nil || !strings.Contains(err.Error(), "no sandbox today") {
		t.Fatalf("open = %v, want the sandbox's error", err)
	}
	if n := len(childrenOf(os.Getpid())); n != before {
		t.Fatalf("%d child processes after a failed start, want %d", n, before)
	}
	if c.PID() != 0 {
		t.Fatalf("a plugin runs: pid %d", c.PID())
	}
}

// TestSandboxSeesThePluginEnvironment: the sandbox is given the plugin's whole environment,
// where go-plugin names the socket folder the sandbox must grant.
func TestSandboxSeesThePluginEnvironment(t *testing.T) {
	var seen []string
	c := newClient(t, plugin.Command{Name: "Probe", Path: bins.probe, Env: []string{"HALO_X"},
		Getenv:  hostEnv(map[string]string{"HALO_X": "1", "PATH": os.Getenv("PATH")}),
		Sandbox: func(env []string) error { seen = env; return nil },
	}, plugin.Options{})
	p := openProbe(t, c)
	res, err := call(t, p, "env", `{}`)
	if err != nil {
		t.Fatal(err)
	}
	var env []string
	if err := json.Unmarshal(res, &env); err != nil {
		t.Fatal(err)
	}
	// The plugin has removed its connection secret from its environment; the sandbox saw
	// it, and nothing else differs.
	var started []string
	for _, kv := range seen {
		if !strings.HasPrefix(kv, pluginv1.TokenEnv+"=") {
			started = append(started, kv)
		}
	}
	if len(started) != len(seen)-1 || strings.Join(started, "\n") != strings.Join(env, "\n") {
		t.Fatalf("the sandbox saw\n%s\nthe plugin has\n%s", strings.Join(seen, "\n"), strings.Join(env, "\n"))
	}
	if !strings.Contains(strings.Join(seen, "\n"), sandbox.SocketDirEnv+"=") {
		t.Fatalf("no %s in %q", sandbox.SocketDirEnv, seen)
	}
}
