package plugin_test

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"io"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/halo-lang/halo/host/tool"
	"github.com/halo-lang/halo/host/tool/plugin"
)

var payloads = []struct {
	name string
	size int
}{{"1KB", 1 << 10}, {"16KB", 16 << 10}}

// echoArgs is a JSON arguments object of exactly size bytes.
func echoArgs(size int) json.RawMessage {
	const frame = `{"data":""}`
	return json.RawMessage(`{"data":"` + strings.Repeat("x", size-len(frame)) + `"}`)
}

// BenchmarkRoundTrip measures one warm call carrying a payload each way: through the plugin
// (gRPC over the Unix socket, JSON in and out, the SDK's decoding) and, as the floor, the same
// bytes echoed by a bare process over a raw Unix socket.
func BenchmarkRoundTrip(b *testing.B) {
	for _, pl := range payloads {
		args := echoArgs(pl.size)
		b.Run("plugin/"+pl.name, func(b *testing.B) {
			c := newClient(b, plugin.Command{Name: "Probe", Path: bins.probe}, plugin.Options{Logger: hclog.NewNullLogger()})
			p, err := c.Open(context.Background(), tool.Declaration{Name: "P", Provider: "Probe"})
			if err != nil {
				b.Fatal(err)
			}
			req := tool.Request{Method: "echo", Args: args}
			ctx := context.Background()
			b.SetBytes(int64(2 * pl.size))
			b.ResetTimer()
			for b.Loop() {
				res, err := p.Call(ctx, req)
				if err != nil || len(res) != pl.size {
					b.Fatalf("echo: %d bytes, %v", len(res), err)
				}
			}
		})
		b.Run("raw-unix-socket/"+pl.name, func(b *testing.B) {
			sock := filepath.Join(b.TempDir(), "s")
			cmd := exec.Command(bins.probe, "raw-echo", sock)
			out, err := cmd.StdoutPipe()
			if err != nil {
				b.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
			if _, err := bufio.NewReader(out).ReadString('\n'); err != nil {
				b.Fatal(err)
			}
			conn, err := net.Dial("unix", sock)
			if err != nil {
				b.Fatal(err)
			}
			defer conn.Close()
			frame := make([]byte, 4+pl.size)
			binary.BigEndian.PutUint32(frame, uint32(pl.size))
			copy(frame[4:], args)
			reply := make([]byte, 4+pl.size)
			r := bufio.NewReader(conn)
			b.SetBytes(int64(2 * pl.size))
			b.ResetTimer()
			for b.Loop() {
				if _, err := conn.Write(frame); err != nil {
					b.Fatal(err)
				}
				if _, err := io.ReadFull(r, reply); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkColdStart measures a plugin's start to the end of its first call (launch with the
// clean environment and namespaces, handshake, configure, one call), then its shutdown, with
// and without AutoMTLS, and without the namespaces. The per-op time covers start to first answer; close is timed apart.
func BenchmarkColdStart(b *testing.B) {
	for _, v := range []struct {
		name string
		opts plugin.Options
	}{
		{"plain", plugin.Options{}},
		{"automtls", plugin.Options{AutoMTLS: true}},
		{"no-namespaces", plugin.Options{NoNamespaces: true}},
	} {
		b.Run(v.name, func(b *testing.B) {
			opts := v.opts
			opts.Logger = hclog.NewNullLogger()
			args := echoArgs(100)
			var closing time.Duration
			// CPU time of the plugins (reaped children) is a figure a loaded machine distorts
			// less than wall time.
			cpuBefore := childCPU()
			for b.Loop() {
				c := plugin.New(plugin.Command{Name: "Probe", Path: bins.probe, Getenv: hostEnv(nil)}, opts)
				p, err := c.Open(context.Background(), tool.Declaration{Name: "P", Provider: "Probe"})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := p.Call(context.Background(), tool.Request{Method: "echo", Args: args}); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				start := time.Now()
				_ = c.Close()
				closing += time.Since(start)
				b.StartTimer()
			}
			b.ReportMetric(float64(closing.Microseconds())/float64(b.N)/1000, "ms-close/op")
			b.ReportMetric(float64((childCPU()-cpuBefore).Microseconds())/float64(b.N)/1000, "ms-plugin-cpu/op")
		})
	}
}

// childCPU is the user and system CPU time of every reaped child process so far.
func childCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
