package studio_test

import (
	"encoding/json"
	"html"
	"net/url"
	"strings"
	"testing"

	"halolang.dev/halo/host/model"
)

// approvingSrc puts the clerk's writes to a person, and keeps it from secret files.
const approvingSrc = `
policy Asking : AllowTools("Files.*") & DenyArgs("Files.write", "path", "^secret") & ApproveTools("Files.write")

tool Files : Notes()

agent Clerk [openai/gpt-4o-mini]
  equips Files
  requires Asking

pipeline Tidy(task: String) -> Result:
  task |> Clerk.work("Tidy the notes: {{task}}", tools: [Files])
`

// TestHostileArgumentsInStudio is issue 27 item 2 in Studio: the model gives "path" twice,
// the second time null. Policies that kept the last value saw no path (so DenyArgs let it
// by), Studio asked the person about {"path":null,...}, and approving wrote secret.md (the
// Notes tool decodes into a struct, where null changes nothing). Now the call is refused
// before it is put to anyone; the run waits only on the model's next call, whose every
// argument Studio shows, as the one value the policies checked.
func TestHostileArgumentsInStudio(t *testing.T) {
	e := newEnv(t, opts{token: "tok-hostile-0123456789", src: approvingSrc})
	long := strings.Repeat("filler ", 3000)
	e.script = func(step int, req model.Request) model.Response {
		switch step {
		case 1:
			return calls(0, model.ToolCall{ID: "w1", Name: "Files__write", Args: json.RawMessage(`{"path":"secret.md","text":"keys","path":null}`)})
		case 2:
			b, _ := json.Marshal(map[string]any{"text": long, "path": "drafts/outside.md"})
			return calls(0, model.ToolCall{ID: "w2", Name: "Files__write", Args: b})
		}
		return model.Response{Text: "done"}
	}
	res := e.run("Tidy", map[string]any{"task": "t"})
	id := str(res["runId"])
	if res["status"] != "paused" {
		t.Fatalf("%v", res)
	}
	c := e.signedIn()
	st, body, _ := e.page(c, "GET", "/runs/"+id, nil)
	if st != 200 {
		t.Fatalf("%d\n%s", st, body)
	}
	page := html.UnescapeString(body)
	for _, want := range []string{"This run waits for your approval", `"path": "drafts/outside.md"`, `"path":"drafts/outside.md"`, `…" (21000 characters)`} {
		if !strings.Contains(page, want) {
			t.Errorf("the page does not show %q", want)
		}
	}
	st, body, _ = e.page(c, "POST", "/runs/"+id+"/answer", url.Values{"channel": {"approval"}, "decision": {"decline"}})
	if st >= 400 {
		t.Fatalf("decline: %d\n%s", st, body)
	}
	e.waitStatus(id, "completed")
	e.notes.mu.Lock()
	defer e.notes.mu.Unlock()
	if len(e.notes.calls) != 0 || e.notes.files["secret.md"] != "" {
		t.Errorf("the tool ran: %v", e.notes.calls)
	}
	evs := e.api("GET", "/api/runs/"+id+"/events", nil, 200)
	found := false
	for _, ev := range evs["events"].([]any) {
		m := ev.(map[string]any)
		if m["type"] == "agent_tool" && m["decision"] == "refused" {
			errInfo, _ := m["error"].(map[string]any)
			found = errInfo["code"] == "DUPLICATE_KEY" && m["args"] == `{"path":"secret.md","text":"keys","path":null}`
		}
	}
	if !found {
		t.Errorf("no refused agent_tool event with DUPLICATE_KEY and the arguments as sent: %v", evs["events"])
	}
}
