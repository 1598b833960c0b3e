package policy

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/halo-lang/halo/host/policy/detect"
	"github.com/halo-lang/halo/host/policy/internal/corpus"
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
//     node and scripts/setup-test-deps.sh's install in .cache/npm/redact-pii, and say so when
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
	b.Run("redact-pii", func(b *testing.B) { peer(b, chunks, "") })
	b.Run("redact-pii-comparable", func(b *testing.B) { peer(b, chunks, "comparable") })
}

// peer runs testdata/npm/bench.js: redact-pii over the chunks, b.N of them, and reports
// its time per chunk and throughput as this benchmark's.
func peer(b *testing.B, chunks []string, mode string) {
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
	file := filepath.Join(b.TempDir(), "chunks.json")
	data, err := json.Marshal(chunks)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(file, data, 0o600); err != nil {
		b.Fatal(err)
	}
	args := []string{"testdata/npm/bench.js", dir, file, strconv.Itoa(b.N)}
	if mode != "" {
		args = append(args, mode)
	}
	out, err := exec.Command(node, args...).Output()
	if err != nil {
		b.Fatalf("node bench.js: %v", err)
	}
	var res struct {
		NS    float64 `json:"ns"`
		CPUNS float64 `json:"cpuNs"`
		Bytes float64 `json:"bytes"`
		Ops   int     `json:"ops"`
	}
	if err := json.Unmarshal(out, &res); err != nil || res.Ops != b.N || res.NS <= 0 {
		b.Fatalf("node bench.js printed %q: %v", out, err)
	}
	b.ReportMetric(res.NS/float64(b.N), "ns/op")
	b.ReportMetric(res.Bytes/res.NS*1e3, "MB/s")
	if res.CPUNS > 0 {
		b.ReportMetric(res.CPUNS/float64(b.N), "cpu-ns/op")
		b.ReportMetric(res.Bytes/res.CPUNS*1e3, "cpu-MB/s")
	}
}
