package plugin_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"halolang.dev/halo/host/tool"
	"halolang.dev/halo/host/tool/plugin"
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
// (its calls socket, JSON in and out, the SDK's decoding) and, as the floor, the same
// bytes echoed by a bare process over a raw Unix socket. Beside the wall time it reports the
// CPU time each side used per call (host-µs-cpu/op, the whole test process; plugin-µs-cpu/op),
// which a machine shared with other work distorts less.
//
// HALO_BENCH_PROBE names another build of the probe plugin to measure beside this one (say,
// one built from an older commit: its SDK is what differs), as plugin-other/.
func BenchmarkRoundTrip(b *testing.B) {
	probes := []struct{ name, path string }{{"plugin", bins.probe}}
	if other := os.Getenv("HALO_BENCH_PROBE"); other != "" {
		probes = append(probes, struct{ name, path string }{"plugin-other", other})
	}
	for _, pl := range payloads {
		args := echoArgs(pl.size)
		for _, probe := range probes {
			b.Run(probe.name+"/"+pl.name, func(b *testing.B) { benchPlugin(b, probe.path, args, pl.size) })
		}
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
			cpu := startCPU(b, cmd.Process.Pid)
			for b.Loop() {
				if _, err := conn.Write(frame); err != nil {
					b.Fatal(err)
				}
				if _, err := io.ReadFull(r, reply); err != nil {
					b.Fatal(err)
				}
			}
			cpu.report(b)
		})
	}
}

// benchPlugin is one warm round trip through the probe plugin at path.
func benchPlugin(b *testing.B, path string, args json.RawMessage, size int) {
	c := newClient(b, plugin.Command{Name: "Probe", Path: path}, plugin.Options{Logger: hclog.NewNullLogger()})
	p, err := c.Open(context.Background(), tool.Declaration{Name: "P", Provider: "Probe"})
	if err != nil {
		b.Fatal(err)
	}
	req := tool.Request{Method: "echo", Args: args}
	ctx := context.Background()
	b.SetBytes(int64(2 * size))
	cpu := startCPU(b, c.PID())
	for b.Loop() {
		res, err := p.Call(ctx, req)
		if err != nil || len(res) != size {
			b.Fatalf("echo: %d bytes, %v", len(res), err)
		}
	}
	cpu.report(b)
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

// cpuMeter measures the CPU time of this process and of a plugin over a benchmark's loop.
type cpuMeter struct {
	pid         int
	self, other time.Duration
}

func startCPU(b *testing.B, pid int) *cpuMeter {
	b.Helper()
	if pid == 0 {
		b.Fatal("no plugin process")
	}
	return &cpuMeter{pid: pid, self: selfCPU(), other: processCPU(pid)}
}

func (m *cpuMeter) report(b *testing.B) {
	self, other := selfCPU()-m.self, processCPU(m.pid)-m.other
	if self > 0 {
		b.ReportMetric(float64(self.Nanoseconds())/1e3/float64(b.N), "host-µs-cpu/op")
	}
	if other > 0 {
		b.ReportMetric(float64(other.Nanoseconds())/1e3/float64(b.N), "plugin-µs-cpu/op")
	}
}

func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// processCPU is the user and system CPU time of a running process, all its threads, from
// /proc (clock ticks, so it needs a loop of a second or more to mean much); 0 where there is
// no /proc.
func processCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The fields after the command name (which may hold spaces) start after the last ')';
	// utime and stime are the 14th and 15th of the line.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * time.Second / clockTicks
}

// clockTicks is USER_HZ, the unit of /proc's CPU times: 100 on every Linux platform Go runs on.
const clockTicks = 100

// childCPU is the user and system CPU time of every reaped child process so far.
func childCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
