package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"halolang.dev/halo/host/model"
	"halolang.dev/halo/host/policy"
)

var update = flag.Bool("update", false, "rewrite the request files of testdata/wire (review the diff against the vendor's documentation)")

// A wire server answers with the replies of a testdata/wire archive in order and keeps
// every request body.
type wire struct {
	mu      sync.Mutex
	replies [][]byte
	paths   []string
	bodies  [][]byte
}

func (w *wire) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.paths = append(w.paths, r.Method+" "+r.URL.Path)
	w.bodies = append(w.bodies, body)
	rw.Header().Set("Content-Type", "application/json")
	if len(w.bodies) > len(w.replies) {
		rw.WriteHeader(http.StatusInternalServerError)
		io.WriteString(rw, `{"error": {"message": "no more replies in the archive"}}`)
		return
	}
	rw.Write(w.replies[len(w.bodies)-1])
}

// wireCases are the providers of testdata/wire: the archive, the model, the environment that
// points the provider at the test server, and the path its requests go to.
var wireCases = []struct {
	archive, ref string
	env          func(url string) map[string]string
	path         string
}{
	{"openai.txtar", "openai/gpt-4o-mini", func(u string) map[string]string {
		return map[string]string{"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": u + "/v1"}
	}, "POST /v1/chat/completions"},
	{"openrouter.txtar", "openrouter/qwen/qwen3-coder", func(u string) map[string]string {
		return map[string]string{"OPENROUTER_API_KEY": "sk-or-test", "OPENROUTER_BASE_URL": u + "/api/v1"}
	}, "POST /api/v1/chat/completions"},
	{"together.txtar", "together/meta-llama/Llama-3.3-70B-Instruct-Turbo", func(u string) map[string]string {
		return map[string]string{"TOGETHER_API_KEY": "tg-test", "TOGETHER_BASE_URL": u + "/v1"}
	}, "POST /v1/chat/completions"},
	{"anthropic.txtar", "anthropic/claude-sonnet-4-5", func(u string) map[string]string {
		return map[string]string{"ANTHROPIC_API_KEY": "sk-ant-test", "ANTHROPIC_BASE_URL": u}
	}, "POST /v1/messages"},
	{"gemini.txtar", "google/gemini-2.5-flash", func(u string) map[string]string {
		return map[string]string{"GEMINI_API_KEY": "g-test", "GEMINI_BASE_URL": u + "/"}
	}, "POST /v1beta/models/gemini-2.5-flash:generateContent"},
	{"ollama.txtar", "ollama/llama3.1", func(u string) map[string]string {
		return map[string]string{"OLLAMA_HOST": u}
	}, "POST /api/chat"},
}

// TestWire drives a three-step conversation on each provider's wire format: a reply with two
// tool calls, then one with one call, then an answer. max_steps is 2, so the third request
// turns tools off (OpenAI-compatible tool_choice "none", Anthropic {"type": "none"}, Gemini
// mode NONE; Ollama has no way and gets the note alone). Each archive in testdata/wire holds
// the provider's replies, in the shape its API documentation gives, and the exact requests
// expected; go test -run TestWire -update rewrites the requests for review.
func TestWire(t *testing.T) {
	for _, tc := range wireCases {
		t.Run(strings.TrimSuffix(tc.archive, ".txtar"), func(t *testing.T) {
			name := filepath.Join("testdata", "wire", tc.archive)
			ar, err := txtar.ParseFile(name)
			if err != nil {
				t.Fatal(err)
			}
			parts := map[string][]byte{}
			for _, f := range ar.Files {
				parts[f.Name] = f.Data
			}
			w := &wire{}
			for _, r := range []string{"reply1.json", "reply2.json", "reply3.json"} {
				if parts[r] == nil {
					t.Fatalf("%s has no %s", name, r)
				}
				w.replies = append(w.replies, parts[r])
			}
			srv := httptest.NewServer(w)
			defer srv.Close()
			prov, id, err := model.Open(tc.ref, model.Config{Env: tc.env(srv.URL), MaxAttempts: 1})
			if err != nil {
				t.Fatal(err)
			}
			var ran []Call
			c, err := New(Config{
				Agent: "Fixer", Model: prov, Prompt: "Make the tests pass.",
				Request:  model.Request{Model: id, System: "You fix the project."},
				Tools:    files(),
				MaxSteps: 2,
				Policies: policy.Set{pol(t, "FixerTools", rule("AllowTools", "Files.*", "Tests.run"))},
				Run: func(_ context.Context, call Call) (any, error) {
					ran = append(ran, call)
					switch call.Target {
					case "Tests.run":
						return "1 fail: parses offsets", nil
					case "Files.write":
						return map[string]any{"written": 20}, nil
					}
					var a struct{ Path string }
					json.Unmarshal(call.Args, &a)
					return map[string]any{"path": a.Path, "content": "export const x = 1;\n"}, nil
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			out, err := c.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if out != "The offsets parse now; the tests pass." {
				t.Errorf("answer %q", out)
			}
			if len(ran) != 3 || ran[0].Target != "Files.read" || compact(ran[0].Args) != `{"path":"src/date.ts"}` ||
				ran[1].Target != "Tests.run" || ran[2].Target != "Files.write" {
				t.Errorf("calls ran: %+v", ran)
			}
			if len(w.bodies) != 3 {
				t.Fatalf("%d requests", len(w.bodies))
			}
			for i, body := range w.bodies {
				if w.paths[i] != tc.path {
					t.Errorf("request %d: %s, want %s", i+1, w.paths[i], tc.path)
				}
				fname := []string{"request1.json", "request2.json", "request3.json"}[i]
				if *update {
					setFile(ar, fname, indentJSON(t, body))
					continue
				}
				assertJSON(t, fname, body, parts[fname])
			}
			if strings.HasPrefix(tc.archive, "gemini") {
				// The model's parts go back byte for byte: the signature exactly as it came.
				for i, sig := range []string{`"thoughtSignature":"c2lnbmF0dXJlLW9uZQ=="`, `"thoughtSignature":"c2lnbmF0dXJlLXR3bw=="`} {
					for _, body := range w.bodies[i+1:] {
						if !strings.Contains(compact(body), sig) {
							t.Errorf("a request after reply %d lacks %s", i+1, sig)
						}
					}
				}
			}
			if *update {
				if err := os.WriteFile(name, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

func compact(b []byte) string {
	var out bytes.Buffer
	if json.Compact(&out, b) != nil {
		return string(b)
	}
	return out.String()
}

func setFile(ar *txtar.Archive, name string, data []byte) {
	for i := range ar.Files {
		if ar.Files[i].Name == name {
			ar.Files[i].Data = data
			return
		}
	}
	ar.Files = append(ar.Files, txtar.File{Name: name, Data: data})
}

func indentJSON(t *testing.T, b []byte) []byte {
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		t.Fatalf("request is not JSON: %v\n%s", err, b)
	}
	out.WriteByte('\n')
	return out.Bytes()
}

func assertJSON(t *testing.T, name string, got, want []byte) {
	t.Helper()
	if want == nil {
		t.Errorf("no %s in the archive (go test -update writes it)", name)
		return
	}
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("%s: request is not JSON: %v\n%s", name, err, got)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatalf("%s: bad expected JSON: %v", name, err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("%s differs\n got: %s\nwant: %s", name, indentJSON(t, got), want)
	}
}

// TestWirePauseResume runs the conversation of TestWire again on each provider's wire
// format, but two of its calls wait for a person: Tests.run, the second call of the first
// turn, and Files.write, the only call of the second. At each the conversation stops, its
// State is saved as a run record saves it (indented JSON) and read back, and a new provider
// (as in a new process) resumes it. The requests on the wire are exactly those of the
// uninterrupted run (the archive's), the calls that ran before a pause do not run again,
// and the model is asked three times in all.
func TestWirePauseResume(t *testing.T) {
	for _, tc := range wireCases {
		t.Run(strings.TrimSuffix(tc.archive, ".txtar"), func(t *testing.T) {
			name := filepath.Join("testdata", "wire", tc.archive)
			ar, err := txtar.ParseFile(name)
			if err != nil {
				t.Fatal(err)
			}
			parts := map[string][]byte{}
			for _, f := range ar.Files {
				parts[f.Name] = f.Data
			}
			w := &wire{}
			for _, r := range []string{"reply1.json", "reply2.json", "reply3.json"} {
				w.replies = append(w.replies, parts[r])
			}
			srv := httptest.NewServer(w)
			defer srv.Close()
			var ran []string
			var asked []ApprovalRequest
			waiting := errors.New("waiting for a person")
			cfg := func() Config {
				prov, id, err := model.Open(tc.ref, model.Config{Env: tc.env(srv.URL), MaxAttempts: 1})
				if err != nil {
					t.Fatal(err)
				}
				return Config{
					Agent: "Fixer", Model: prov, Prompt: "Make the tests pass.",
					Request:  model.Request{Model: id, System: "You fix the project."},
					Tools:    files(),
					MaxSteps: 2,
					Policies: policy.Set{pol(t, "FixerTools", rule("AllowTools", "Files.*", "Tests.run"), rule("ApproveTools", "Tests.run", "Files.write"))},
					Run: func(_ context.Context, call Call) (any, error) {
						ran = append(ran, call.Target)
						switch call.Target {
						case "Tests.run":
							return "1 fail: parses offsets", nil
						case "Files.write":
							return map[string]any{"written": 20}, nil
						}
						var a struct{ Path string }
						json.Unmarshal(call.Args, &a)
						return map[string]any{"path": a.Path, "content": "export const x = 1;\n"}, nil
					},
					// The first time a call is put to a person no one answers; the run stops.
					Approve: func(_ context.Context, r ApprovalRequest) (Approval, error) {
						asked = append(asked, r)
						if len(asked)%2 == 1 {
							return Approval{}, waiting
						}
						return Approval{Approved: true}, nil
					},
				}
			}
			c, err := New(cfg())
			if err != nil {
				t.Fatal(err)
			}
			var out any
			pauses := 0
			for {
				out, err = c.Run(context.Background())
				if !errors.Is(err, waiting) {
					break
				}
				pauses++
				saved, merr := json.MarshalIndent(map[string]any{"conversation": c.State()}, "", "  ")
				if merr != nil {
					t.Fatal(merr)
				}
				var rec struct{ Conversation State }
				if err := json.Unmarshal(saved, &rec); err != nil {
					t.Fatal(err)
				}
				if c, err = Resume(cfg(), rec.Conversation); err != nil {
					t.Fatal(err)
				}
			}
			if err != nil || out != "The offsets parse now; the tests pass." {
				t.Fatalf("Run = %v, %v", out, err)
			}
			if pauses != 2 || len(asked) != 4 || asked[0].Call.Target != "Tests.run" || asked[2].Call.Target != "Files.write" {
				t.Errorf("%d pauses, asked %+v", pauses, asked)
			}
			if strings.Join(ran, " ") != "Files.read Tests.run Files.write" {
				t.Errorf("calls ran: %v", ran)
			}
			if len(w.bodies) != 3 {
				t.Fatalf("%d requests, want 3", len(w.bodies))
			}
			for i, body := range w.bodies {
				assertJSON(t, []string{"request1.json", "request2.json", "request3.json"}[i], body, parts[[]string{"request1.json", "request2.json", "request3.json"}[i]])
			}
		})
	}
}

// TestStateKeepsBytes: a State saved as JSON (indented, as run records are, or compact) and
// read back holds the model's arguments and native messages byte for byte: whitespace,
// characters encoding/json would escape, and arguments that were not JSON.
func TestStateKeepsBytes(t *testing.T) {
	args := json.RawMessage("{ \"path\" : \"a<b>&c.md\",\n  \"n\": 1e3 }")
	notJSON := json.RawMessage(`"{\"path\": "`)
	native := json.RawMessage("{\"parts\": [ {\"functionCall\": {\"name\": \"Files__read\"}, \"thoughtSignature\": \"c2ln\u003c\"} ]}")
	st := State{
		Messages: []model.Message{
			{Role: model.User, Text: "go <now>"},
			{Role: model.Assistant, ToolCalls: []model.ToolCall{{ID: "1", Name: "Files__read", Args: args}, {ID: "2", Name: "Files__read", Args: notJSON}},
				Native: &model.Native{Provider: "gemini", Data: native}},
		},
		Requests: 1, Steps: 1,
		Pending: []model.ToolCall{{ID: "1", Name: "Files__read", Args: args}, {ID: "2", Name: "Files__read", Args: notJSON}},
		Results: []model.ToolResult{{CallID: "1", Name: "Files__read", Content: "x & y"}},
	}
	for _, indent := range []bool{true, false} {
		var b []byte
		var err error
		if indent {
			b, err = json.MarshalIndent(map[string]any{"s": st}, "", "  ")
		} else {
			b, err = json.Marshal(map[string]any{"s": st})
		}
		if err != nil {
			t.Fatal(err)
		}
		var back struct{ S State }
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back.S, st) {
			t.Errorf("indent %v: read back\n%+v\nwant\n%+v", indent, back.S, st)
		}
	}
}
