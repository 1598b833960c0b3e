package serve_test

import (
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"halolang.dev/halo/host/runtime"
)

// fakeOpenAI is an OpenAI chat API on 127.0.0.1 that answers with replies in order, each
// as the model wrote it (a key given twice included), and keeps the request bodies.
type fakeOpenAI struct {
	mu      sync.Mutex
	replies []string
	bodies  []string
}

func (f *fakeOpenAI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.bodies = append(f.bodies, string(b))
	w.Header().Set("Content-Type", "application/json")
	if len(f.bodies) > len(f.replies) {
		w.WriteHeader(500)
		io.WriteString(w, `{"error": {"message": "no more replies"}}`)
		return
	}
	io.WriteString(w, f.replies[len(f.bodies)-1])
}

// openAICall is a chat.completion reply that calls one function with args, as written.
func openAICall(n int, name, args string) string {
	a, _ := json.Marshal(args)
	return fmt.Sprintf(`{"id":"c%d","object":"chat.completion","created":%d,"model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":null,
	  "tool_calls":[{"id":"call_%d","type":"function","function":{"name":%q,"arguments":%s}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}`, n, n, n, name, a)
}

func openAIAnswer(text string) string {
	return fmt.Sprintf(`{"id":"a","object":"chat.completion","created":9,"model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":%q},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":1,"total_tokens":11}}`, text)
}

// TestHostileArgumentsAtTheLink is issue 27 items 2 and 3 at halo serve's approval
// surfaces: the pause message (the API), the approval link's page and the webhook. The model
// first gives "path" twice, the second time null: the person used to be asked about
// {"path":null,"text":"evil"}, and approving wrote the first path. Now that call is refused
// before anything pauses. Its next call has a long text before the path: every surface
// shows the path, and the text's length.
func TestHostileArgumentsAtTheLink(t *testing.T) {
	long := strings.Repeat("x", 5000)
	args, _ := json.Marshal(map[string]any{"text": long, "path": "../../.bashrc"})
	model := &fakeOpenAI{replies: []string{
		openAICall(1, "Files__write", `{"path":"../../.bashrc","text":"evil","path":null}`),
		openAICall(2, "Files__write", string(args)),
		openAIAnswer("done"),
	}}
	ms := httptest.NewServer(model)
	defer ms.Close()
	hooks := make(chan map[string]any, 4)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m map[string]any
		json.NewDecoder(r.Body).Decode(&m)
		hooks <- m
	}))
	defer hook.Close()
	e := newEnv(t, opts{src: clerkSrc, webhook: hook.URL, env: map[string]string{"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": ms.URL + "/v1"}})
	writes := 0
	e.mocks.SetFunc("Files.write", func(req runtime.MockRequest) (any, error) { writes++; return "written", nil })

	m := e.do("POST", "/api/runs?wait=10s", map[string]any{"pipeline": "Tidy", "inputs": map[string]any{"task": "t"}}, 200)
	p, _ := m["paused"].(map[string]any)
	if m["status"] != "paused" || p["waitingFor"] != "approval" {
		t.Fatalf("%v", m)
	}
	id, link := m["runId"].(string), p["link"].(string)
	wantShown := []string{`"path":"../../.bashrc"`, `…" (5000 characters)`}
	question, _ := p["question"].(string)
	for _, w := range wantShown {
		if !strings.Contains(question, w) {
			t.Errorf("the pause message does not show %s: %s", w, question)
		}
	}
	status, page, _ := e.page("GET", link, nil)
	page = html.UnescapeString(page)
	for _, w := range wantShown {
		if status != 200 || !strings.Contains(page, w) {
			t.Errorf("the approval page (%d) does not show %s:\n%s", status, w, page)
		}
	}
	select {
	case h := <-hooks:
		text, _ := h["text"].(string)
		for _, w := range wantShown {
			if !strings.Contains(text, w) {
				t.Errorf("the webhook's text does not show %s: %s", w, text)
			}
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no webhook POST")
	}
	if status, _, _ := e.page("POST", link, map[string][]string{"decision": {"decline"}}); status != 200 {
		t.Fatalf("decline: %d", status)
	}
	e.waitStatus(id, runtime.Completed)
	if writes != 0 {
		t.Errorf("Files.write ran %d times", writes)
	}
	select {
	case h := <-hooks:
		t.Errorf("a second webhook POST: the refused call paused the run too: %v", h["text"])
	default:
	}
	evs := e.do("GET", "/api/runs/"+id+"/events", nil, 200)
	var refused []string
	for _, ev := range evs["events"].([]any) {
		ev := ev.(map[string]any)
		if ev["type"] == "agent_tool" && ev["decision"] == "refused" {
			refused = append(refused, fmt.Sprint(ev["args"], " ", ev["error"]))
		}
	}
	if len(refused) != 1 || !strings.Contains(refused[0], `"path":null`) || !strings.Contains(refused[0], "DUPLICATE_KEY") {
		t.Errorf("refused calls: %q", refused)
	}
	model.mu.Lock()
	defer model.mu.Unlock()
	if len(model.bodies) < 2 || !strings.Contains(model.bodies[1], `give the key \"path\" twice`) {
		t.Errorf("the model was not told why")
	}
}
