package serve_test

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	"halolang.dev/halo/host/runtime"
)

const clerkSrc = `
policy Careful : AllowTools("Files.*") & ApproveTools("Files.write")
tool Files : Workspace("./notes", write: true)
agent Clerk [openai/gpt-4o]
  equips Files
  requires Careful
pipeline Tidy(task: String) -> Result:
  task |> Clerk.work(tools: [Files])
`

// A tool call an agent chooses that needs a person's approval pauses the run on channel
// "approval"; its link approves it (the call runs, the agent answers) or declines it with a
// reason the model is told. serve knows nothing of approvals: the link is the pause's.
func TestApprovalOfToolCall(t *testing.T) {
	for _, decision := range []string{"approve", "decline"} {
		t.Run(decision, func(t *testing.T) {
			e := newEnv(t, opts{src: clerkSrc})
			var told []string
			e.mocks.SetFunc("Clerk.work", func(req runtime.MockRequest) (any, error) {
				if req.Step == 1 {
					return runtime.UseTool("Files.write", map[string]any{"path": "a.md", "text": "x"}), nil
				}
				last := req.Messages[len(req.Messages)-1]
				for _, r := range last.ToolResults {
					told = append(told, fmt.Sprint(r.Content))
				}
				return "done", nil
			})
			writes := 0
			e.mocks.SetFunc("Files.write", func(req runtime.MockRequest) (any, error) { writes++; return "written", nil })
			m := e.do("POST", "/api/runs?wait=10s", map[string]any{"pipeline": "Tidy", "inputs": map[string]any{"task": "t"}}, 200)
			p, _ := m["paused"].(map[string]any)
			if m["status"] != "paused" || p["waitingFor"] != "approval" {
				t.Fatalf("%v", m)
			}
			link := p["link"].(string)
			status, page, _ := e.page("GET", link, nil)
			if status != 200 || !strings.Contains(page, "Files.write") {
				t.Errorf("page %d: %s", status, page)
			}
			status, _, _ = e.page("POST", link, url.Values{"decision": {decision}, "reason": {"write to drafts/ instead"}})
			if status != 200 {
				t.Fatalf("answer: %d", status)
			}
			done := e.waitStatus(m["runId"].(string), runtime.Completed)
			if done["output"] != "done" {
				t.Errorf("%v", done)
			}
			switch decision {
			case "approve":
				if writes != 1 {
					t.Errorf("approved call ran %d times", writes)
				}
			case "decline":
				if writes != 0 || !strings.Contains(strings.Join(told, " "), "write to drafts/ instead") {
					t.Errorf("declined: %d writes; the model was told %q", writes, told)
				}
			}
		})
	}
}
