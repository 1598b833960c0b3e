package serve_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// echoServer is an MCP server over stdio whose one tool echoes its text: the test binary
// run as mcp-echo.
func echoServer() {
	s := server.NewMCPServer("echo", "1")
	s.AddTool(mcp.NewTool("echo", mcp.WithString("text", mcp.Required())),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("echo " + req.GetString("text", "")), nil
		})
	if err := server.ServeStdio(s); err != nil {
		os.Exit(1)
	}
	os.Exit(0)
}

const pooledFlows = `
tool Sh : Bash(cwd: ".")
tool Echo : MCP("mcp-echo")

pipeline Use(x: String) -> Result:
  x |> Sh.run(command: "echo ran") as a |> Echo.echo(text: x) as b |> System.Value(b)
`

// tree lists the processes below pid with their command lines, as /proc shows them.
func tree(pid int) map[int]string {
	children := map[int][]int{}
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		b, err := os.ReadFile(d + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(fields) < 2 || fields[0] == "Z" {
			continue
		}
		ppid, _ := strconv.Atoi(fields[1])
		n, _ := strconv.Atoi(filepath.Base(d))
		children[ppid] = append(children[ppid], n)
	}
	out := map[int]string{}
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(c) + "/cmdline")
			out[c] = strings.ReplaceAll(string(cmdline), "\x00", " ")
			queue = append(queue, c)
		}
	}
	return out
}

func living(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(fields) > 0 && fields[0] != "Z"
}

// TestServeKeepsToolsBetweenRuns: halo serve keeps a Bash plugin and an MCP stdio server for
// the next run of their declarations (the same processes serve both runs), and stopping it
// stops every one of them: no process it started is left.
func TestServeKeepsToolsBetweenRuns(t *testing.T) {
	dir := project(t)
	os.WriteFile(filepath.Join(dir, "flows.halo"), []byte(pooledFlows), 0o644)
	// Pinning writes halo.lock, whose change restarts the kept processes once: off here.
	os.WriteFile(filepath.Join(dir, "halo.json"), []byte(`{"pinMcp": false}`), 0o644)
	os.WriteFile(filepath.Join(dir, "mocks.json"), []byte(`{}`), 0o644)
	p := startServe(t, dir, nil)
	var seen []map[int]string
	for i := 0; i < 2; i++ {
		status, m := p.do("POST", "/api/runs?wait=30s", `{"pipeline": "Use", "inputs": {"x": "a"}}`)
		if status != 200 || m["status"] != "completed" || m["output"] != "echo a" {
			t.Fatalf("run %d: %d %v\n%s", i+1, status, m, p.stderr())
		}
		seen = append(seen, tree(p.cmd.Process.Pid))
	}
	kinds := func(procs map[int]string) (bash, echo []int) {
		for pid, cmd := range procs {
			switch {
			case strings.Contains(cmd, "__plugin bash"):
				bash = append(bash, pid)
			case strings.Contains(cmd, "mcp-echo"):
				echo = append(echo, pid)
			}
		}
		return
	}
	b1, e1 := kinds(seen[0])
	b2, e2 := kinds(seen[1])
	if len(b1) != 1 || len(e1) != 1 || len(b2) != 1 || len(e2) != 1 || b1[0] != b2[0] || e1[0] != e2[0] {
		t.Fatalf("the processes after each run: %v, then %v", seen[0], seen[1])
	}
	syscall.Kill(p.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		t.Fatal("halo serve did not stop")
	}
	for pid, cmd := range seen[1] {
		deadline := time.Now().Add(5 * time.Second)
		for living(pid) && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if living(pid) {
			t.Errorf("process %d (%s) outlived halo serve", pid, cmd)
		}
	}
	if code := p.cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("exit status %d\n%s", code, p.stderr())
	}
}
