package mcpserver

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"halolang.dev/halo/host/runtime"
)

const flow = `
agent Greeter [openai/gpt-4o-mini]

# Say hello to someone.
#
# The greeting is one sentence.
pipeline Hello(name: String) -> String:
  name |> Greeter.greet("Say hello to {{name}}.")

schema Report { title: String, score: Number, tags: Array<String> }

pipeline Review(doc: Report, times: Integer, loud: Boolean, weights: Map<Number>, extra: JSON, items: List) -> Report:
  doc |> System.Value(doc)

pipeline Publish(draft: String) -> JSON:
  draft
    |> Greeter.shout("Shout it.") as text
    |! yield("Publish {{text}}?") as answer
    |> System.Value({ text: text, answer: answer })

pipeline Broken() -> String:
  "x" |> System.Fail("out of coffee")

pipeline Pair(a: Number, b: Number) -> JSON:
  a |> System.Value({ sum: a, b: b })

pipeline Bad() -> Report:
  "x" |> System.Value({ title: "t" })
`

func greeter() map[string]runtime.MockFunc {
	return map[string]runtime.MockFunc{
		"Greeter.greet": func(r runtime.MockRequest) (any, error) { return "Hello, " + r.Input.(string) + "!", nil },
		"Greeter.shout": func(r runtime.MockRequest) (any, error) { return strings.ToUpper(r.Input.(string)), nil },
	}
}

// TestToolList: one tool per pipeline in source order, the doc comment as description (a
// default one without), parameters as the input schema (all required, nothing else), the
// output schema of a schema result, and annotations.
func TestToolList(t *testing.T) {
	f := newFixture(t, flow, greeter())
	for _, version := range []string{"", "2025-06-18"} {
		c := f.stdio(t, version)
		res, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		byName := map[string]mcp.Tool{}
		for _, tl := range res.Tools {
			names = append(names, tl.Name)
			byName[tl.Name] = tl
		}
		if got := strings.Join(names, " "); got != "Hello Review Publish Broken Pair Bad" && got != "Bad Broken Hello Pair Publish Review" {
			t.Errorf("tools %q", got)
		}
		if d := byName["Hello"].Description; d != "Say hello to someone.\n\nThe greeting is one sentence." {
			t.Errorf("Hello's description %q", d)
		}
		if d := byName["Broken"].Description; d != "Runs the Halo pipeline Broken(none) -> String." {
			t.Errorf("Broken's description %q", d)
		}
		var in map[string]any
		raw, _ := json.Marshal(byName["Review"].InputSchema)
		if len(byName["Review"].RawInputSchema) > 0 {
			raw = byName["Review"].RawInputSchema
		}
		json.Unmarshal(raw, &in)
		want := map[string]any{
			"type":                 "object",
			"additionalProperties": false,
			"required":             []any{"doc", "times", "loud", "weights", "extra", "items"},
			"properties": map[string]any{
				"doc": map[string]any{"type": "object", "title": "Report", "required": []any{"title", "score", "tags"}, "properties": map[string]any{
					"title": map[string]any{"type": "string"}, "score": map[string]any{"type": "number"},
					"tags": map[string]any{"type": "array", "items": map[string]any{"type": "string"}}}},
				"times":   map[string]any{"type": "integer"},
				"loud":    map[string]any{"type": "boolean"},
				"weights": map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "number"}},
				"extra":   map[string]any{},
				"items":   map[string]any{"type": "array"},
			},
		}
		if !reflect.DeepEqual(in, want) {
			got, _ := json.MarshalIndent(in, "", " ")
			t.Errorf("Review's input schema:\n%s", got)
		}
		out, _ := json.Marshal(byName["Review"].OutputSchema)
		if len(byName["Review"].RawOutputSchema) > 0 {
			out = byName["Review"].RawOutputSchema
		}
		if !strings.Contains(string(out), `"required":["title","score","tags"]`) {
			t.Errorf("Review's output schema %s", out)
		}
		if o := byName["Hello"].OutputSchema; o.Type != "" || len(byName["Hello"].RawOutputSchema) > 0 {
			t.Errorf("Hello has an output schema %+v", o)
		}
		if a := byName["Hello"].Annotations; a.ReadOnlyHint == nil || !*a.ReadOnlyHint || a.OpenWorldHint == nil || *a.OpenWorldHint {
			t.Errorf("Hello's annotations %+v: an agent call without tools only reads", a)
		}
	}
}

// TestCallResults: each run status as the client sees it, over stdio and HTTP.
func TestCallResults(t *testing.T) {
	f := newFixture(t, flow, greeter())
	clients := map[string]func() *client.Client{
		"stdio":        func() *client.Client { return f.stdio(t, "") },
		"stdio-legacy": func() *client.Client { return f.stdio(t, "2025-03-26") },
		"http":         func() *client.Client { return f.httpClient(t, HTTPConfig{}, "") },
		"http-legacy":  func() *client.Client { return f.httpClient(t, HTTPConfig{}, "2024-11-05") },
	}
	for name, mk := range clients {
		t.Run(name, func(t *testing.T) {
			c := mk()
			res := callTool(t, c, "Hello", map[string]any{"name": "Ada"})
			if res.IsError || textOfResult(res) != "Hello, Ada!" || res.StructuredContent != nil {
				t.Errorf("Hello: %+v %q", res, textOfResult(res))
			}
			runID, _ := res.Meta.AdditionalFields["halo/runId"].(string)
			if runID == "" || f.record(t, runID).Status != runtime.Completed {
				t.Errorf("Hello's run id %q is not a completed run record", runID)
			}

			res = callTool(t, c, "Pair", map[string]any{"a": 2, "b": 3})
			if res.IsError || textOfResult(res) != `{"b":3,"sum":2}` {
				t.Errorf("Pair: %q", textOfResult(res))
			}
			if sc, _ := json.Marshal(res.StructuredContent); string(sc) != `{"b":3,"sum":2}` {
				t.Errorf("Pair's structured content %s", sc)
			}

			res = callTool(t, c, "Review", map[string]any{
				"doc": map[string]any{"title": "t", "score": 1, "tags": []any{"a"}}, "times": 2, "loud": true,
				"weights": map[string]any{"x": 1.5}, "extra": nil, "items": []any{1, "two"}})
			if res.IsError || !strings.Contains(textOfResult(res), `"title":"t"`) {
				t.Errorf("Review: %q", textOfResult(res))
			}

			res = callTool(t, c, "Broken", nil)
			txt := textOfResult(res)
			if !res.IsError || !strings.Contains(txt, "out of coffee [PIPELINE_FAILED]") || !strings.Contains(txt, "at flow.halo:") || !strings.Contains(txt, "Run id: run") {
				t.Errorf("Broken: isError %v, %q", res.IsError, txt)
			}

			res = callTool(t, c, "Bad", nil)
			if txt := textOfResult(res); !res.IsError || !strings.Contains(txt, "does not fit Report: missing field score (Number) [BAD_OUTPUT]") {
				t.Errorf("Bad: isError %v, %q", res.IsError, txt)
			}

			// Without elicitation, a yield pauses the run: the client is told how to go on.
			res = callTool(t, c, "Publish", map[string]any{"draft": "hi"})
			txt = textOfResult(res)
			runID, _ = res.Meta.AdditionalFields["halo/runId"].(string)
			if res.IsError || !strings.HasPrefix(txt, "Paused waiting for yield, run id "+runID+": Publish HI?") ||
				!strings.Contains(txt, "halo resume flow.halo "+runID+" --payload <answer>") {
				t.Errorf("Publish: isError %v, %q", res.IsError, txt)
			}
			if f.record(t, runID).Status != runtime.Paused {
				t.Errorf("run %s is not saved paused", runID)
			}
		})
	}
}
