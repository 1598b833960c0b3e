package plan_test

import (
	"os"
	"path/filepath"
	"testing"

	"halolang.dev/halo/host/lang"
	"halolang.dev/halo/host/plan"
	"halolang.dev/halo/host/runtime"
)

// FuzzPlan plans every pipeline of every program that validates: the planner must never
// panic, and a worst case is never negative.
func FuzzPlan(f *testing.F) {
	for _, glob := range []string{"../../examples/*.halo", "../lang/testdata/*/*.halo"} {
		files, _ := filepath.Glob(glob)
		for _, name := range files {
			if b, err := os.ReadFile(name); err == nil {
				f.Add(b)
			}
		}
	}
	f.Add([]byte("agent S [openai/small, max_steps: 3]\ntool F : Fake()\npipeline P(x: List) -> Result:\n  x |* each S.a(tools: [F]) @retry(2) |? S.b() |> S.c() |<> loop(S, \"true\", max: 9) |> branch { \"x\": S.d() |<> loop(S, \"true\") , else: P() }"))
	f.Fuzz(func(t *testing.T, src []byte) {
		file, diags := lang.Parse("f.halo", src)
		if diags.HasErrors() {
			return
		}
		prog := &lang.Program{Files: []*lang.File{file}}
		if runtime.Validate(prog, registry()).HasErrors() {
			return
		}
		for _, d := range prog.Decls() {
			pd, ok := d.(*lang.PipelineDecl)
			if !ok {
				continue
			}
			p, err := plan.Pipeline(prog, pd.Name.Name, plan.Config{Tools: registry(), Prices: prices, Items: 7})
			if err != nil {
				t.Fatalf("%s: %v", pd.Name.Name, err)
			}
			c := p.Total
			if c.Requests < 0 || c.InputTokens < 0 || c.OutputTokens < 0 || c.USD < 0 {
				t.Fatalf("%s: negative worst case %+v", pd.Name.Name, c)
			}
		}
	})
}
