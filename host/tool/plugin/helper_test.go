package plugin_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"halolang.dev/halo/errcode"
	"halolang.dev/halo/host/tool"
	"halolang.dev/halo/host/tool/plugin"
)

// Some proofs need a host process of their own: one whose exec-time environment holds a
// secret (what /proc/<pid>/environ shows; os.Setenv does not change it), or one the test can
// kill. The test binary re-executes itself with helperEnv set to the mode; TestMain sends it
// here instead of running tests.
const (
	helperEnv   = "HALO_PLUGIN_TEST_HELPER"
	secretName  = "HALO_TEST_SECRET"
	secretValue = "sk-this-must-not-leak-4f1e"
	allowedName = "HALO_TEST_ALLOWED"
)

func runHelper() int {
	switch os.Getenv(helperEnv) {
	case "secrets":
		return helperSecrets()
	case "orphans":
		return helperOrphans()
	case "tty":
		return helperTTY()
	}
	fmt.Println("unknown helper mode")
	return 2
}

// helperSecrets starts the probe and the world-time plugin the way the CLI does (handing the
// whole host environment to Getenv) and reports what each could see. Each line it prints is
// "ok: ..." or "FAIL: ...".
func helperSecrets() int {
	failed := false
	check := func(ok bool, format string, args ...any) {
		prefix := "ok: "
		if !ok {
			prefix, failed = "FAIL: ", true
		}
		fmt.Printf(prefix+format+"\n", args...)
	}
	probe, worldtime := os.Getenv("PROBE_BIN"), os.Getenv("WORLDTIME_BIN")
	self := strconv.Itoa(os.Getpid())

	// Control: before the first plugin starts, the host is dumpable and a plain child can read
	// the secret, so the checks below would catch a leak.
	out, _ := exec.Command(probe, "read-environ", self).Output()
	check(strings.Contains(string(out), secretValue), "control: a plain child reads the secret from /proc/%s/environ before hardening", self)

	logger := hclog.New(&hclog.LoggerOptions{Level: hclog.Warn, Output: os.Stderr})
	ctx := context.Background()
	for _, bin := range []struct{ name, path, provider string }{{"Probe", probe, "Probe"}, {"WorldTime", worldtime, "WorldTime"}} {
		c := plugin.New(plugin.Command{Name: bin.name, Path: bin.path, Env: []string{allowedName}, Getenv: os.LookupEnv}, plugin.Options{Logger: logger})
		defer c.Close()
		p, err := c.Open(ctx, tool.Declaration{Name: "T", Provider: bin.provider})
		if err != nil {
			check(false, "%s: open: %v", bin.name, err)
			continue
		}
		pid := c.PID()
		// Seen from outside: the plugin's environment and standard input.
		environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		check(err == nil && !strings.Contains(string(environ), secretValue), "%s: its environment does not hold the secret", bin.name)
		check(strings.Contains(string(environ), allowedName+"=visible"), "%s: its environment holds the variable its declaration lists", bin.name)
		stdin, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/0", pid))
		check(stdin == "/dev/null", "%s: its standard input is /dev/null (got %q)", bin.name, stdin)
		if bin.name != "Probe" {
			continue
		}
		// Seen from inside: what the plugin's own code can reach.
		res, err := p.Call(ctx, tool.Request{Method: "env"})
		check(err == nil && !strings.Contains(string(res), secretValue) && strings.Contains(string(res), allowedName), "Probe: os.Environ() inside the plugin has the allowed variable and not the secret")
		_, err = p.Call(ctx, tool.Request{Method: "read", Args: json.RawMessage(`{"path":"/proc/` + self + `/environ"}`)})
		check(err != nil && errcode.Code(err) == tool.CodeToolError, "Probe: reading /proc/%s/environ (the host's) fails: %v", self, err)
		_, err = p.Call(ctx, tool.Request{Method: "read", Args: json.RawMessage(`{"path":"/proc/` + self + `/mem"}`)})
		check(err != nil, "Probe: reading /proc/%s/mem (the host's) fails: %v", self, err)
		res, err = p.Call(ctx, tool.Request{Method: "info"})
		check(err == nil && strings.Contains(string(res), `"stdin":"/dev/null"`), "Probe: its own fd 0 is /dev/null: %s", res)
	}
	if failed {
		return 1
	}
	return 0
}

// helperOrphans starts the probe, has it start a grandchild, prints both pids and waits to be
// killed.
func helperOrphans() int {
	c := plugin.New(plugin.Command{Name: "Probe", Path: os.Getenv("PROBE_BIN"), Getenv: os.LookupEnv}, plugin.Options{})
	p, err := c.Open(context.Background(), tool.Declaration{Name: "T", Provider: "Probe"})
	if err != nil {
		fmt.Println("open:", err)
		return 1
	}
	if _, err := p.Call(context.Background(), tool.Request{Method: "spawn"}); err != nil {
		fmt.Println("spawn:", err)
		return 1
	}
	kids := childrenOf(c.PID())
	if len(kids) != 1 {
		fmt.Println("want one grandchild, found", kids)
		return 1
	}
	fmt.Printf("plugin=%d grandchild=%d\n", c.PID(), kids[0])
	time.Sleep(time.Minute)
	return 0
}

// childrenOf lists the processes whose parent is pid, as the host's /proc shows them (the
// plugin's own PID namespace numbers them differently).
func childrenOf(pid int) []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// The fields after the command name (which may hold spaces) start after the last ')'.
		fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(fields) > 1 && fields[1] == strconv.Itoa(pid) {
			out = append(out, n)
		}
	}
	return out
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return len(fields) > 0 && fields[0] != "Z"
}
