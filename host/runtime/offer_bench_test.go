package runtime_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"halolang.dev/halo/host/runtime"
	"halolang.dev/halo/host/tool"
	"halolang.dev/halo/host/tool/builtin"
	"halolang.dev/halo/host/tool/pool"
	"halolang.dev/halo/internal/cputime"
)

// BenchmarkOfferTwenty is a run whose agent is offered 20 tool methods (five declarations:
// three writable Workspaces, two Bash) and calls none, over a loopback fake OpenAI model
// that answers at once, with the declarations' plugins kept in a pool as halo serve keeps
// them; the floor beside it is the same run with tools: none. Offering starts no plugin
// (the executable named here does not exist), so the difference is what offering costs:
// opening the declarations (their folders resolved, the sandbox policy made), describing
// their methods and sending them with the request. cpu-µs/op is the process's processor time
// per run (the fake model's included), which a busy machine moves less than ns/op.
func BenchmarkOfferTwenty(b *testing.B) {
	dir := b.TempDir()
	for _, d := range []string{"src", "docs"} {
		os.Mkdir(filepath.Join(dir, d), 0o755)
	}
	reg, env := offering(b, dir)
	src := `
agent Quick [openai/gpt-4o-mini]
  equips W1, W2, W3, B1, B2
tool W1 : Workspace(".", write: true)
tool W2 : Workspace("src", write: true)
tool W3 : Workspace("docs", write: true)
tool B1 : Bash(cwd: ".")
tool B2 : Bash(cwd: "src")

pipeline Offer(task: String) -> String:
  task |> Quick.fix("Fix the project: {{task}}", tools: [W1, W2, W3, B1, B2])

pipeline Bare(task: String) -> String:
  task |> Quick.fix("Fix the project: {{task}}", tools: none)
`
	in := map[string]any{"task": "the date tests"}
	for _, run := range []struct {
		name, pipeline string
		store          bool
	}{{"Bare", "Bare", false}, {"Offer", "Offer", false}, {"Bare+record", "Bare", true}, {"Offer+record", "Offer", true}} {
		cfg := runtime.Config{Tools: reg, Env: env, Dir: dir}
		if run.store {
			// The run record encoded as a store encodes it (the memory store of the tests:
			// the encoding, not the write, is what a run's offered methods add).
			cfg.Store = newStore()
		}
		rt := load(b, src, cfg)
		pipeline := run.pipeline
		b.Run(run.name, func(b *testing.B) {
			b.ReportAllocs()
			before := cputime.Self()
			for b.Loop() {
				res, err := rt.Run(context.Background(), pipeline, in)
				if err != nil || res.Status != runtime.Completed {
					b.Fatalf("%v %+v", err, res)
				}
			}
			b.ReportMetric(float64(cputime.Self()-before)/float64(b.N)/1e3, "cpu-µs/op")
		})
	}
}

// offering is what BenchmarkOfferTwenty's runs and TestOfferResolvesTheProjectEachRun need:
// a loopback fake OpenAI model that answers "done" at once, and a registry of the built-ins
// whose plugins a pool keeps, watching the files halo serve's pool watches (the executable
// does not exist: offering starts nothing).
// Both end with the test.
func offering(tb testing.TB, home string) (*tool.Registry, map[string]string) {
	tb.Helper()
	fake := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"c","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"done"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1}}`)
	}))
	tb.Cleanup(fake.Close)
	pl := pool.New(pool.Options{})
	tb.Cleanup(func() { pl.Close() })
	// What halo serve watches: a change retires the kept plugins (looked at on each lease).
	pl.Watch(filepath.Join(home, "halo.lock"), filepath.Join(home, "flow.halo"))
	env := map[string]string{"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": fake.URL + "/v1", "PATH": "/usr/bin:/bin", "HOME": home}
	reg := tool.NewRegistry()
	for _, ty := range builtin.New(builtin.Config{Executable: filepath.Join(home, "halo-not-started"), Pool: pl,
		Getenv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }}).Types() {
		if err := reg.Add(ty); err != nil {
			tb.Fatal(err)
		}
	}
	return reg, env
}
