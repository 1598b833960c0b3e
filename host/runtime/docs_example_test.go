package runtime_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"halolang.dev/halo/host/runtime"
)

// source is the program of docs/testing.md's "From Go" example: examples/approvals.halo's clerk.
const source = `
policy Careful : AllowTools("Files.*") & ApproveEffects(write)

tool Files : Workspace("./notes", write: true)

agent Clerk [openai/gpt-4o]
  equips Files
  requires Careful

pipeline Tidy(task: String) -> Result:
  task |> Clerk.work(tools: [Files])
`

// TestClerk is docs/testing.md's example, word for word (the repository's TestDocsGoSnippets
// checks that the guide still shows this code).
func TestClerk(t *testing.T) {
	rt, err := runtime.Load("tidy.halo", source, runtime.Config{})
	if err != nil {
		t.Fatal(err) // every validation error, file:line:col
	}
	rt.Mock("Files.read", map[string]any{"path": "notes.md", "content": "a\nb\n"})
	rt.MockFunc("Clerk.work", func(req runtime.MockRequest) (any, error) {
		if !strings.Contains(req.Prompt, "duplicates") {
			return nil, fmt.Errorf("unexpected prompt %q", req.Prompt)
		}
		return "Merged 2 notes.", nil
	})
	res, err := rt.Run(context.Background(), "Tidy", map[string]any{"task": "merge duplicates"})
	if err != nil {
		t.Fatal(err) // the run could not start: unknown pipeline, bad inputs
	}
	if res.Status != runtime.Completed || res.Output != "Merged 2 notes." {
		t.Fatalf("%s %v %+v", res.Status, res.Output, res.Error)
	}
	if len(res.Meta.Violations) != 0 {
		t.Errorf("violations: %+v", res.Meta.Violations)
	}
}

// TestClerkUsesTools is docs/agents.md's mock of an agent with tools (TestDocsGoSnippets
// checks that the guide still shows this code): the first step reads a file, the second
// answers.
func TestClerkUsesTools(t *testing.T) {
	rt, err := runtime.Load("tidy.halo", source, runtime.Config{})
	if err != nil {
		t.Fatal(err)
	}
	rt.Mock("Files.read", map[string]any{"text": "a\nb\n"})
	var steps []int
	rt.MockFunc("Clerk.work", func(r runtime.MockRequest) (any, error) {
		steps = append(steps, r.Step)
		if r.Step == 1 {
			return runtime.UseTool("Files.read", map[string]any{"path": "notes.md"}), nil
		}
		return "Merged 2 notes.", nil
	})
	res, err := rt.Run(context.Background(), "Tidy", map[string]any{"task": "merge duplicates"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != runtime.Completed || res.Output != "Merged 2 notes." || len(steps) != 2 {
		t.Fatalf("%s %v %+v, steps %v", res.Status, res.Output, res.Error, steps)
	}
}
