package check

import (
	"bytes"
	"strconv"
	"testing"

	"halolang.dev/halo/host/lang"
	"halolang.dev/halo/internal/bigprog"
	"halolang.dev/halo/internal/cputime"
)

// genProgram writes a valid program of about size bytes (internal/bigprog): blocks of
// policies, tools, agents, schemas and pipelines with every stage shape, each with its own
// names.
func genProgram(size int) []byte { return bigprog.Generate(size) }

func TestGeneratedProgramValidates(t *testing.T) {
	src := genProgram(20 << 10)
	f, diags := lang.Parse("gen.halo", src)
	diags = append(diags, Check(&lang.Program{Files: []*lang.File{f}}, Config{})...)
	for _, d := range diags {
		t.Errorf("%s", d)
	}
}

// BenchmarkParseValidate parses and checks a generated 1 MB file. The floor beside it is
// bytes.Count over the same input: the cost of reading every byte once.
func BenchmarkParseValidate(b *testing.B) {
	src := genProgram(1 << 20)
	b.Run("floor-bytes.Count", func(b *testing.B) {
		b.SetBytes(int64(len(src)))
		for b.Loop() {
			bytes.Count(src, []byte("\n"))
		}
	})
	b.Run("parse", func(b *testing.B) {
		b.SetBytes(int64(len(src)))
		defer reportCPU(b, len(src))()
		for b.Loop() {
			if _, diags := lang.Parse("gen.halo", src); len(diags) > 0 {
				b.Fatal(diags[0])
			}
		}
	})
	b.Run("parse+check", func(b *testing.B) {
		b.SetBytes(int64(len(src)))
		defer reportCPU(b, len(src))()
		for b.Loop() {
			f, diags := lang.Parse("gen.halo", src)
			diags = append(diags, Check(&lang.Program{Files: []*lang.File{f}}, Config{})...)
			if len(diags) > 0 {
				b.Fatal(diags[0])
			}
		}
	})
}

// reportCPU adds a cpu-MB/s metric: throughput per second of CPU time the process used
// (user + system, GC included). On a shared, loaded machine wall-clock MB/s understates
// the parser; this figure does not depend on how much of the CPU the benchmark was given.
func reportCPU(b *testing.B, size int) func() {
	start := cputime.Self()
	return func() {
		if used := cputime.Self() - start; used > 0 && b.N > 0 {
			b.ReportMetric(float64(size)*float64(b.N)/used.Seconds()/1e6, "cpu-MB/s")
		}
	}
}

// BenchmarkCheckParts checks the parsed 1 MB program in one run and in two at once (what
// Check does with two cores); the second pays only when a core is free.
func BenchmarkCheckParts(b *testing.B) {
	src := genProgram(1 << 20)
	f, _ := lang.Parse("gen.halo", src)
	decls := (&lang.Program{Files: []*lang.File{f}}).Decls()
	for _, parts := range []int{1, 2} {
		b.Run(strconv.Itoa(parts), func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			defer reportCPU(b, len(src))()
			for b.Loop() {
				checkInParts(decls, Config{}, parts)
			}
		})
	}
}
