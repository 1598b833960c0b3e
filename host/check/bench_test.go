package check

import (
	"bytes"
	"fmt"
	"syscall"
	"testing"
	"time"

	"halolang.dev/halo/host/lang"
)

// genProgram writes a valid program of about size bytes: blocks of policies, tools, agents,
// schemas and pipelines with every stage shape, each with its own names.
func genProgram(size int) []byte {
	var b bytes.Buffer
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, `# block %[1]d
policy Rules%[1]d : AllowTools("Code%[1]d.*", "Sh%[1]d.run")
  & DenyArgs("Code%[1]d.write", "path", "\\.test\\.")
  & DenyArgs("Sh%[1]d.run", "command", "^(?!bun test[\\w ./-]*$)")
  & Block(PII, APIKey) & MaxWords(300) & ApproveEffects(write)

tool Code%[1]d : Workspace("{{workdir}}", write: true)
tool Sh%[1]d   : Bash(cwd: "{{workdir}}", timeout_ms: 120000, env: ["HOME"])
tool Docs%[1]d : MCP(url: "https://docs.example.com/mcp", headers: { "X-Org": "acme" }, apiKey: Env.DOCS_KEY)

schema Item%[1]d { id: String, tags: Array<String>, total: Number }

agent Fixer%[1]d [anthropic/claude-sonnet-4-5, temp: 0.0, max_steps: 40]
  system "You fix the project until the tests pass."
  equips Code%[1]d, Sh%[1]d
  requires Rules%[1]d

pipeline Fix%[1]d(workdir: String, item: Item%[1]d) -> Result:
  workdir
    |> Fixer%[1]d.fix("Make the tests pass for {{workdir}}.", item, tools: [Code%[1]d, Sh%[1]d]) as report
    |> Sh%[1]d.run(command: "bun test 2>&1 | tail -40") as result
    |<> loop(Fixer%[1]d, "context.data.result.exitCode != 0", max: 3)
    |* { Docs%[1]d.search(query: workdir), Docs%[1]d.get-page(id: "x") } as docs @retry(2) @timeout(20000)
    |? System.Value(context.data.report)
    |! yield("Ship it?")
    |> System.Value(context.data.report)

`, i)
	}
	return b.Bytes()
}

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
	start := cpuTime()
	return func() {
		if used := cpuTime() - start; used > 0 && b.N > 0 {
			b.ReportMetric(float64(size)*float64(b.N)/used.Seconds()/1e6, "cpu-MB/s")
		}
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
