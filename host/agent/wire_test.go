package agent

import (
	"bytes"
	"context"
	"encoding/json"
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

	"github.com/halo-lang/halo/host/model"
	"github.com/halo-lang/halo/host/policy"
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

// TestWire drives a three-step conversation on each provider's wire format: a reply with two
// tool calls, then one with one call, then an answer. max_steps is 2, so the third request
// turns tools off (OpenAI-compatible tool_choice "none", Anthropic {"type": "none"}, Gemini
// mode NONE; Ollama has no way and gets the note alone). Each archive in testdata/wire holds
// the provider's replies, in the shape its API documentation gives, and the exact requests
// expected; go test -run TestWire -update rewrites the requests for review.
func TestWire(t *testing.T) {
	cases := []struct {
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
	for _, tc := range cases {
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
