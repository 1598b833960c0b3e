// Package bigprog writes large valid .halo programs for the benchmarks of `halo validate`
// (host/check's BenchmarkParseValidate, cmd/halo's BenchmarkValidate1MB and
// scripts/bench-validate.sh): blocks of policies with DenyArgs, tools, schemas, agents and
// pipelines with every stage shape, each block with names of its own.
package bigprog

import (
	"bytes"
	"strconv"
	"strings"
)

// block is one block of declarations; {n} stands for the block's number.
const block = `# block {n}
policy Rules{n} : AllowTools("Code{n}.*", "Sh{n}.run")
  & DenyArgs("Code{n}.write", "path", "\\.test\\.")
  & DenyArgs("Sh{n}.run", "command", "^(?!bun test[\\w ./-]*$)")
  & Block(PII, APIKey) & MaxWords(300) & ApproveEffects(write)

tool Code{n} : Workspace("{{workdir}}", write: true)
tool Sh{n}   : Bash(cwd: "{{workdir}}", timeout_ms: 120000, env: ["HOME"])
tool Docs{n} : MCP(url: "https://docs.example.com/mcp", headers: { "X-Org": "acme" }, apiKey: Env.DOCS_KEY)

schema Item{n} { id: String, tags: Array<String>, total: Number }

agent Fixer{n} [anthropic/claude-sonnet-4-5, temp: 0.0, max_steps: 40]
  system "You fix the project until the tests pass."
  equips Code{n}, Sh{n}
  requires Rules{n}

pipeline Fix{n}(workdir: String, item: Item{n}) -> Result:
  workdir
    |> Fixer{n}.fix("Make the tests pass for {{workdir}}.", item, tools: [Code{n}, Sh{n}]) as report
    |> Sh{n}.run(command: "bun test 2>&1 | tail -40") as result
    |<> loop(Fixer{n}, "context.data.result.exitCode != 0", max: 3)
    |* { Docs{n}.search(query: workdir), Docs{n}.get-page(id: "x") } as docs @retry(2) @timeout(20000)
    |? System.Value(context.data.report)
    |! yield("Ship it?")
    |> System.Value(context.data.report)

`

// Generate returns a valid program of at least size bytes (it stops after the block that
// reaches size).
func Generate(size int) []byte {
	var b bytes.Buffer
	b.Grow(size + len(block) + 64)
	for i := 0; b.Len() < size; i++ {
		b.WriteString(strings.ReplaceAll(block, "{n}", strconv.Itoa(i)))
	}
	return b.Bytes()
}
