package mcpserver

import (
	"context"
	"testing"

	"halolang.dev/halo/host/tool"
)

// TestAnnotations: a tool is read-only when every method its pipeline can reach only reads
// (its own stages, its agents' tools, the pipelines it calls), open-world when any acts
// outside the machine or cannot be known before a run (a provider that describes no methods).
func TestAnnotations(t *testing.T) {
	slow := newSlow()
	reg := slow.registry(t)
	if err := reg.Add(tool.Type{Name: "Opaque", Kind: tool.KindMCP, Open: func(context.Context, tool.Declaration) (tool.Provider, error) { return slow, nil }}); err != nil {
		t.Fatal(err)
	}
	if err := reg.Add(tool.Type{Name: "Sender", Kind: tool.KindBuiltin, Methods: []tool.Method{{Name: "send", Effect: tool.External}},
		Open: func(context.Context, tool.Declaration) (tool.Provider, error) { return slow, nil }}); err != nil {
		t.Fatal(err)
	}
	f := newFixtureTools(t, `
tool S : Slow()
tool O : Opaque()
tool One : Sender()
agent Plain [openai/gpt-4o-mini]
agent Hands [openai/gpt-4o-mini]
  equips S, One
agent Auto [openai/gpt-4o-mini, tools: auto]
  equips S

pipeline Reads() -> Result: "x" |> S.wait()
pipeline Writes() -> Result: "x" |> S.poke()
pipeline Sends() -> Result: "x" |> S.send()
pipeline Opaque() -> Result: "x" |> O.anything()
pipeline Thinks() -> Result: "x" |> Plain.think("Think.")
pipeline Lends() -> Result: "x" |> Hands.work("Work.", tools: [S])
pipeline LendsFirst() -> Result: "x" |> Hands.work("Work.", tool: One)
pipeline Equipped() -> Result: "x" |> Hands.work("Work.")
pipeline AutoTools() -> Result: "x" |> Auto.work("Work.")
pipeline NoTools() -> Result: "x" |> Auto.work("Work.", tools: none)
pipeline Calls() -> Result: "x" |> Writes()
pipeline FanOut() -> Result: "x" |* { S.wait(), Calls() }
pipeline Loop1() -> Result: "x" |> Loop2() |> S.wait()
pipeline Loop2() -> Result: "x" |> Loop1()
pipeline Branches(x: String) -> Result: x |> branch { "x == 'a'": S.wait(), else: S.poke() }
pipeline Each(xs: List) -> Result: xs |* each S.send()
`, nil, reg)
	want := map[string][2]bool{ // read-only, open-world
		"Reads": {true, false}, "Writes": {false, false}, "Sends": {false, true}, "Opaque": {false, true},
		"Thinks": {true, false}, "Lends": {false, true}, "LendsFirst": {false, true}, "Equipped": {true, false},
		"AutoTools": {false, true}, "NoTools": {true, false}, "Calls": {false, false}, "FanOut": {false, false},
		"Loop1": {true, false}, "Loop2": {true, false}, "Branches": {false, false}, "Each": {false, true},
	}
	for _, tl := range f.srv.Tools() {
		w, ok := want[tl.Name]
		if !ok {
			t.Errorf("unexpected tool %s", tl.Name)
			continue
		}
		a := tl.Annotations
		if *a.ReadOnlyHint != w[0] || *a.OpenWorldHint != w[1] {
			t.Errorf("%s: readOnly %v openWorld %v, want %v %v", tl.Name, *a.ReadOnlyHint, *a.OpenWorldHint, w[0], w[1])
		}
		if !w[0] && (a.DestructiveHint == nil || !*a.DestructiveHint) {
			t.Errorf("%s: not read-only, so destructiveHint should be true", tl.Name)
		}
	}
}
