package policy

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"halolang.dev/halo/host/policy/detect"
	"halolang.dev/halo/host/policy/internal/corpus"
)

// BenchmarkRedact64K measures, on the same 64 KB chunks of mixed prose, code and JSON, each
// holding an e-mail, an SSN, a card, a phone number and three API keys:
//
//   - scan: one detect.Scan for the redacted categories, the floor;
//   - Redact: Set.Redact with Redact(PII, APIKey, IPAddress) (goal: within 1.3x of scan);
//   - Input-Safe: Set.Input under the seed's Safe policy (Block and Redact), and scan-Safe its
//     floor;
//   - redact-pii: the npm package redact-pii, run by node beside it (goal: Redact at least 5x
//     its speed), and redact-pii-comparable with only its rules that Halo also has. They need
//     node and the install in .cache/npm/redact-pii that scripts/bench-redact.sh makes, and say so when
//     either is missing.
//
// scripts/bench-redact.sh runs it. Compare cpu-MB/s on a shared machine: it counts this
// process's (or node's) CPU time, not the crowd's.
func BenchmarkRedact64K(b *testing.B) {
	chunks := corpus.Chunks(64<<10, 16)
	size := 0
	for _, c := range chunks {
		size += len(c)
	}
	size /= len(chunks)
	r := Set{MustCompile("R", []RuleSpec{{Name: "Redact", Args: []any{Ident("PII"), Ident("APIKey"), Ident("IPAddress")}}})}
	safe := safe(b)
	for _, c := range chunks {
		out := r.Redact(c)
		for _, secret := range corpus.Secrets {
			if strings.Contains(out, secret) {
				b.Fatalf("secret %q not redacted", secret)
			}
		}
	}
	each := func(f func(string)) func(b *testing.B) {
		return func(b *testing.B) {
			k := 0
			corpus.Loop(b, size, func() {
				f(chunks[k%len(chunks)])
				k++
			})
		}
	}
	rmask, smask := r.mask(kRedact), safe.mask(kRedact)|safe.mask(kBlock)
	b.Run("scan", each(func(c string) { detect.Scan(c, rmask) }))
	b.Run("Redact", each(func(c string) { r.Redact(c) }))
	b.Run("scan-Safe", each(func(c string) { detect.Scan(c, smask) }))
	b.Run("Input-Safe", each(func(c string) { _, _ = safe.Input(c) }))
	var p *peer
	for _, mode := range []string{"all", "comparable"} {
		name := "redact-pii"
		if mode != "all" {
			name += "-" + mode
		}
		b.Run(name, func(b *testing.B) {
			if p == nil {
				p = startPeer(b, chunks)
			}
			p.run(b, mode)
		})
	}
	if p != nil {
		p.stop()
	}
}

// A peer is node running testdata/npm/bench.js: redact-pii over the benchmark's chunks, on
// command, so that node's start-up and module loading stay out of every measurement.
type peer struct {
	cmd     *exec.Cmd
	in      io.WriteCloser
	out     *bufio.Scanner
	cleanup func()
}

// startPeer starts the peer, or skips the benchmark saying what is missing.
func startPeer(b *testing.B, chunks []string) *peer {
	node, err := exec.LookPath("node")
	if err != nil {
		b.Skip("node is not on PATH: the redact-pii peer needs Node.js 20+ (see scripts/setup-test-deps.sh)")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		b.Fatal(err)
	}
	dir := filepath.Join(root, ".cache", "npm", "redact-pii")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "redact-pii", "package.json")); err != nil {
		b.Skip("redact-pii is not installed in .cache/npm/redact-pii: run scripts/setup-test-deps.sh")
	}
	tmp, err := os.MkdirTemp("", "halo-redact-peer")
	if err != nil {
		b.Fatal(err)
	}
	file := filepath.Join(tmp, "chunks.json")
	data, err := json.Marshal(chunks)
	if err == nil {
		err = os.WriteFile(file, data, 0o600)
	}
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(node, "testdata/npm/bench.js", dir, file)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatalf("start node: %v", err)
	}
	p := &peer{cmd: cmd, in: in, out: bufio.NewScanner(stdout), cleanup: func() { os.RemoveAll(tmp) }}
	if !p.out.Scan() || !strings.Contains(p.out.Text(), `"ready":true`) {
		p.stop()
		b.Fatalf("node bench.js did not start: %q %v", p.out.Text(), p.out.Err())
	}
	return p
}

// run has the peer redact b.N chunks and reports its time per chunk and throughput as this
// benchmark's.
func (p *peer) run(b *testing.B, mode string) {
	b.ResetTimer()
	if _, err := fmt.Fprintf(p.in, "%d %s\n", b.N, mode); err != nil {
		b.Fatalf("peer: %v", err)
	}
	if !p.out.Scan() {
		b.Fatalf("peer stopped: %v", p.out.Err())
	}
	b.StopTimer()
	var res struct {
		NS    float64 `json:"ns"`
		CPUNS float64 `json:"cpuNs"`
		Bytes float64 `json:"bytes"`
		Ops   int     `json:"ops"`
		Error string  `json:"error"`
	}
	if err := json.Unmarshal(p.out.Bytes(), &res); err != nil || res.Error != "" || res.Ops != b.N || res.NS <= 0 {
		b.Fatalf("peer answered %q: %v", p.out.Bytes(), err)
	}
	b.ReportMetric(res.NS/float64(b.N), "ns/op")
	b.ReportMetric(res.Bytes/res.NS*1e3, "MB/s")
	if res.CPUNS > 0 {
		b.ReportMetric(res.CPUNS/float64(b.N), "cpu-ns/op")
		b.ReportMetric(res.Bytes/res.CPUNS*1e3, "cpu-MB/s")
	}
}

// stop ends the peer and waits for it.
func (p *peer) stop() {
	p.in.Close() // node exits when its input ends
	if err := p.cmd.Wait(); err != nil {
		p.cmd.Process.Kill()
	}
	p.cleanup()
}
