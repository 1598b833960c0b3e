package test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"halolang.dev/halo/cmd/halo/internal/cmdutil"
	"halolang.dev/halo/host/tool"
)

// gate is a tool whose calls each wait until want calls are running at once.
type gate struct {
	mu      sync.Mutex
	running int
	most    int
	want    int
	all     chan struct{}
}

func (g *gate) Methods(context.Context) ([]tool.Method, error) {
	return []tool.Method{{Name: "wait", Effect: tool.Read}}, nil
}

func (g *gate) Call(ctx context.Context, _ tool.Request) (json.RawMessage, error) {
	g.mu.Lock()
	g.running++
	g.most = max(g.most, g.running)
	if g.running == g.want {
		close(g.all)
	}
	g.mu.Unlock()
	defer func() { g.mu.Lock(); g.running--; g.mu.Unlock() }()
	select {
	case <-g.all:
		return json.RawMessage(`"through"`), nil
	case <-time.After(10 * time.Second):
		return nil, errors.New("the other cases did not run at the same time")
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (g *gate) Close() error { return nil }

func write(t *testing.T, dir, name, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func run(t *testing.T, dir string, reg func(*cmdutil.Factory, string) (*tool.Registry, error), args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	f := &cmdutil.Factory{IO: cmdutil.IOStreams{Out: &out, ErrOut: &errOut}, Dir: dir, Env: cmdutil.Env{}, Now: time.Now}
	err := testRun(context.Background(), &Options{F: f, Paths: args, Parallel: 3, Registry: reg})
	return out.String(), errOut.String(), err
}

// TestCasesRunInParallel: three cases whose tool calls each wait for the other two pass only
// when they run at once.
func TestCasesRunInParallel(t *testing.T) {
	dir := t.TempDir()
	g := &gate{want: 3, all: make(chan struct{})}
	reg := func(*cmdutil.Factory, string) (*tool.Registry, error) {
		r := tool.NewRegistry()
		err := r.Add(tool.Type{Name: "Gate", Kind: tool.KindBuiltin, Methods: []tool.Method{{Name: "wait", Effect: tool.Read}},
			Open: func(context.Context, tool.Declaration) (tool.Provider, error) { return g, nil }})
		return r, err
	}
	write(t, dir, "g.halo", `
tool G : Gate()
pipeline P(x: String) -> Result:
  x |> G.wait()
`)
	write(t, dir, "g.test.json", `[
  {"inputs": {"x": "1"}, "expect": {"output": "through"}},
  {"inputs": {"x": "2"}, "expect": {"output": "through"}},
  {"inputs": {"x": "3"}, "expect": {"output": "through"}}
]`)
	out, errOut, err := run(t, dir, reg)
	if err != nil || !strings.HasSuffix(out, "3 passed, 0 failed\n") {
		t.Fatalf("err %v\n%s%s", err, out, errOut)
	}
	if g.most != 3 {
		t.Errorf("at most %d cases ran at once", g.most)
	}
}

func TestDiff(t *testing.T) {
	got := diff([]string{"a", "b", "c", "d"}, []string{"a", "x", "c", "d", "e"})
	want := "  a\n- b\n+ x\n  c\n  d\n+ e\n"
	if got != want {
		t.Errorf("diff:\n%s\nwant:\n%s", got, want)
	}
	if got := diff(nil, []string{"x"}); got != "+ x\n" {
		t.Errorf("diff of nothing: %q", got)
	}
}

// TestCaseFileProblems: each problem names the key at fault.
func TestCaseFileProblems(t *testing.T) {
	for text, want := range map[string]string{
		`{"pipeline": "P", "pipeline": "Q"}`:            `key "pipeline" is written twice`,
		`{"inputs": [1]}`:                               `inputs: want an object`,
		`{"mocks": 3}`:                                  `mocks: want an object of targets and answers`,
		`{"mocks": "missing.json"}`:                     `mocks: the mocks file missing.json: cannot read it`,
		`{"expect": {"calls": "A.b"}}`:                  `expect.calls: want a list`,
		`{"expect": {"violations": [{"rule": 1}]}}`:     `expect.violations[0].rule: want a string`,
		`{"expect": {"error": ""}}`:                     `expect.error: want the failed run's error code`,
		`{"expect": {"outputSchema": {"type": 12}}}`:    `expect.outputSchema:`,
		`{"expect": {"outputSchema": "x"}}`:             `expect.outputSchema: want a JSON Schema object`,
		`[]`:                                            `an empty list: no test case`,
		`{} {}`:                                         `text after the object`,
		`[{"name": 1}]`:                                 `case 1: name: want a non-empty string`,
		`{"expect": {"status": "done"}}`:                `expect.status: want completed, failed or paused`,
		`{"expect": {"output": 1, "outputSchemas": 1}}`: `expect: unknown key "outputSchemas"`,
	} {
		dir := t.TempDir()
		write(t, dir, "c.test.json", text)
		cases, probs := readCaseFile(dir, "c.test.json")
		var msgs []string
		for _, p := range probs {
			msgs = append(msgs, p.String())
		}
		if !strings.Contains(strings.Join(msgs, "\n"), want) {
			t.Errorf("%s: problems %q, want %q (cases %d)", text, msgs, want, len(cases))
		}
	}
}
