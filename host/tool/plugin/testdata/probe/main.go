// Command probe is a test plugin for host/tool/plugin: it reports what it can see (its
// environment, its standard input, the host's /proc entries), echoes payloads for the
// benchmarks, sleeps with progress, starts a grandchild, and crashes on request.
//
// `probe read-environ PID` (no handshake) prints /proc/PID/environ or the error, for the
// control case of the secrets test. `probe --protocol=2` serves a future protocol version.
package main

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/hashicorp/go-plugin"

	pluginv1 "github.com/halo-lang/halo/proto/halo/plugin/v1"
	"github.com/halo-lang/halo/sdk"
)

type none struct{}

type echoParams struct {
	Data string `json:"data"`
}

type sleepParams struct {
	Ms int `json:"ms"`
}

type readParams struct {
	Path string `json:"path"`
}

func provider() sdk.Provider {
	return sdk.Provider{
		Name:        "Probe",
		Description: "Reports what a plugin can see",
		Methods: []sdk.Method{
			sdk.NewMethod("env", "The plugin's environment.", sdk.Read, func(*sdk.Call, none) ([]string, error) {
				return os.Environ(), nil
			}),
			sdk.NewMethod("info", "Process facts.", sdk.Read, func(*sdk.Call, none) (map[string]any, error) {
				stdin, _ := os.Readlink("/proc/self/fd/0")
				return map[string]any{"pid": os.Getpid(), "ppid": os.Getppid(), "stdin": stdin}, nil
			}),
			sdk.NewMethod("read", "Reads a file; a failure carries the error.", sdk.Read, func(_ *sdk.Call, p readParams) (string, error) {
				b, err := os.ReadFile(p.Path)
				if err != nil {
					return "", sdk.Fail("%v", err)
				}
				return string(b), nil
			}),
			sdk.NewMethod("echo", "Returns its argument.", sdk.Read, func(_ *sdk.Call, p echoParams) (echoParams, error) {
				return p, nil
			}),
			sdk.NewMethod("log", "Logs a line.", sdk.Read, func(c *sdk.Call, p echoParams) (bool, error) {
				c.Logger().Info(p.Data)
				return true, nil
			}),
			sdk.NewMethod("sleep", "Reports progress, then sleeps until cancelled or ms pass.", sdk.Read, func(c *sdk.Call, p sleepParams) (string, error) {
				c.Progress(0, 1, "sleeping")
				select {
				case <-c.Done():
					c.Logger().Info("sleep cancelled", "reason", c.Err())
					return "", c.Err()
				case <-time.After(time.Duration(p.Ms) * time.Millisecond):
					return "slept", nil
				}
			}),
			sdk.NewMethod("spawn", "Starts a long sleep as a grandchild of the host and returns its pid.", sdk.External, func(*sdk.Call, none) (int, error) {
				cmd := exec.Command("sleep", "300")
				if err := cmd.Start(); err != nil {
					return 0, err
				}
				go func() { _ = cmd.Wait() }()
				return cmd.Process.Pid, nil
			}),
			sdk.NewMethod("crash", "Exits the plugin in the middle of the call.", sdk.External, func(c *sdk.Call, _ none) (bool, error) {
				c.Progress(0, 1, "about to crash")
				time.Sleep(50 * time.Millisecond)
				os.Exit(3)
				return false, nil
			}),
			sdk.NewMethod("retry", "Always asks to be retried.", sdk.Read, func(*sdk.Call, none) (bool, error) {
				return false, sdk.Retry(1500*time.Millisecond, "busy")
			}),
		},
	}
}

func main() {
	if len(os.Args) == 3 && os.Args[1] == "read-environ" {
		b, err := os.ReadFile("/proc/" + os.Args[2] + "/environ")
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		fmt.Println(strings.ReplaceAll(string(b), "\x00", "\n"))
		return
	}
	if len(os.Args) == 3 && os.Args[1] == "raw-echo" {
		rawEcho(os.Args[2])
		return
	}
	if len(os.Args) == 2 && os.Args[1] == "--protocol=2" {
		p, _ := sdk.Plugin(provider())
		plugin.Serve(&plugin.ServeConfig{
			HandshakeConfig:  plugin.HandshakeConfig{ProtocolVersion: 2, MagicCookieKey: pluginv1.MagicCookieKey, MagicCookieValue: pluginv1.MagicCookieValue},
			VersionedPlugins: map[int]plugin.PluginSet{2: {pluginv1.PluginName: p}},
			GRPCServer:       plugin.DefaultGRPCServer,
		})
		return
	}
	sdk.Serve(provider())
}

// rawEcho is the floor of the benchmarks: it echoes length-prefixed frames on a Unix socket,
// the least work any plugin protocol can do for one request and reply.
func rawEcho(path string) {
	l, err := net.Listen("unix", path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println("ready")
	conn, err := l.Accept()
	if err != nil {
		os.Exit(1)
	}
	r := bufio.NewReader(conn)
	var hdr [4]byte
	buf := make([]byte, 0, 1<<16)
	for {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return
		}
		n := binary.BigEndian.Uint32(hdr[:])
		buf = buf[:n]
		if _, err := io.ReadFull(r, buf); err != nil {
			return
		}
		if _, err := conn.Write(append(hdr[:], buf...)); err != nil {
			return
		}
	}
}
