package lang

import (
	"fmt"
	"testing"
)

// TestSettingsOf: an agent's brackets, overridden by the call's named options; tools: auto
// is every tool the agent equips, a list names some, none offers none; a setting that is not
// a number literal is not set (and a temp written so clears the bracket's).
func TestSettingsOf(t *testing.T) {
	src := `tool Files : Workspace("./notes")
tool Web : HTTP()
agent A [openai/gpt-4o, temp: 0.2, max_tokens: 500, max_steps: 4, tools: auto] equips Files, Web

pipeline P(x: String) -> String:
  x |> A.one("One.") |> A.two("Two.", max_steps: 9, tool_result_chars: 300, tools: [Web]) |> A.three("Three.", tools: none, temp: x)
`
	f, diags := Parse("s.halo", []byte(src))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	var a *AgentDecl
	var p *PipelineDecl
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *AgentDecl:
			a = d
		case *PipelineDecl:
			p = d
		}
	}
	show := func(s CallSettings) string {
		temp := "nil"
		if s.Temp != nil {
			temp = fmt.Sprint(*s.Temp)
		}
		return fmt.Sprintf("temp=%s tokens=%d steps=%d chars=%d tools=%v", temp, s.MaxTokens, s.MaxSteps, s.ResultChars, s.Tools)
	}
	for i, want := range []string{
		"temp=0.2 tokens=500 steps=4 chars=0 tools=[Files Web]",
		"temp=0.2 tokens=500 steps=9 chars=300 tools=[Web]",
		"temp=nil tokens=500 steps=4 chars=0 tools=[]",
	} {
		if got := show(a.SettingsOf(p.Stages[i].Call)); got != want {
			t.Errorf("call %d: %s, want %s", i+1, got, want)
		}
	}
	if got := show(a.SettingsOf(nil)); got != "temp=0.2 tokens=500 steps=4 chars=0 tools=[Files Web]" {
		t.Errorf("the brackets alone: %s", got)
	}
}
