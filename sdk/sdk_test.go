package sdk_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"halolang.dev/halo/sdk"
	"halolang.dev/halo/sdk/sdktest"
)

// The provider of the package doc, kept here so the example is known to work.
type shoutParams struct {
	Text  string `json:"text" jsonschema:"description=What to shout"`
	Times int    `json:"times,omitempty" jsonschema:"description=How many times (default 1),minimum=1,maximum=10"`
}

type shoutResult struct {
	Shout string `json:"shout"`
}

func shout(c *sdk.Call, p shoutParams) (shoutResult, error) {
	if strings.TrimSpace(p.Text) == "" {
		return shoutResult{}, sdk.Fail("nothing to shout; pass some text")
	}
	c.Logger().Debug("shouting", "chars", len(p.Text))
	n := max(p.Times, 1)
	return shoutResult{Shout: strings.Repeat(strings.ToUpper(p.Text)+"! ", n)}, nil
}

func shoutProvider() sdk.Provider {
	return sdk.Provider{
		Name:        "Shout",
		Description: "Makes text loud",
		Methods:     []sdk.Method{sdk.NewMethod("shout", "Upper-cases text and adds an exclamation mark.", sdk.Read, shout)},
	}
}

func TestPackageDocExample(t *testing.T) {
	loud := sdktest.Start(t, shoutProvider()).Tool("Shout", nil)
	var got shoutResult
	if err := loud.Call("shout", map[string]any{"text": "hi", "times": 2}).Decode(&got); err != nil {
		t.Fatal(err)
	}
	if got.Shout != "HI! HI! " {
		t.Errorf("shout = %q", got.Shout)
	}
	if out := loud.Call("shout", map[string]any{"text": " "}); out.Failure == "" || string(out.Detail) != `{"error":"nothing to shout; pass some text"}` {
		t.Errorf("empty text: %s", out)
	}
}

func TestSchemaFollowsTheStruct(t *testing.T) {
	m := sdk.NewMethod("shout", "d", sdk.Read, shout)
	var s map[string]any
	if err := json.Unmarshal(m.Schema, &s); err != nil {
		t.Fatal(err)
	}
	want := `{"additionalProperties":false,"properties":{"text":{"description":"What to shout","type":"string"},"times":{"description":"How many times (default 1)","maximum":10,"minimum":1,"type":"integer"}},"required":["text"],"type":"object"}`
	got, _ := json.Marshal(s)
	if string(got) != want {
		t.Errorf("schema =\n%s\nwant\n%s", got, want)
	}
}

func TestArgumentsAreChecked(t *testing.T) {
	loud := sdktest.Start(t, shoutProvider()).Tool("Shout", nil)
	for _, tt := range []struct {
		args any
		want string
	}{
		{map[string]any{}, "missing required argument text"},
		{map[string]any{"text": 3}, "cannot unmarshal number"},
		{map[string]any{"text": "a", "loud": true}, `unknown argument loud`},
		// A misspelt argument is named as unknown, with the nearest one, rather than
		// reported as the required argument it missed.
		{map[string]any{"txt": "a"}, "unknown argument txt; did you mean text?"},
		{map[string]any{"text": "a", "tims": 2}, "unknown argument tims; did you mean times?"},
		{map[string]any{"txt": "a", "tiems": 2}, "unknown arguments tiems, txt; did you mean times for tiems, text for txt?"},
		{map[string]any{"text": "a", "x\ny": 1}, `unknown argument "x\ny"`},
		{[]int{1}, "must be a JSON object"},
	} {
		out := loud.Call("shout", tt.args)
		if out.Code != "TOOL_ARGUMENT" || !strings.Contains(out.Message, tt.want) {
			t.Errorf("shout(%v) = %s, want TOOL_ARGUMENT with %q", tt.args, out, tt.want)
		}
	}
}

type none struct{}

func TestOutcomes(t *testing.T) {
	var mu sync.Mutex
	cancelled := false
	p := sdk.Provider{
		Name: "Outcomes",
		Methods: []sdk.Method{
			sdk.NewMethod("detail", "", sdk.Read, func(*sdk.Call, none) (any, error) {
				return nil, sdk.FailWith("no such file", map[string]any{"error": "no such file; try list", "near": []string{"a.txt"}})
			}),
			sdk.NewMethod("retry", "", sdk.Read, func(*sdk.Call, none) (any, error) {
				return nil, sdk.Retry(2*time.Second, "rate limited")
			}),
			sdk.NewMethod("argument", "", sdk.Read, func(*sdk.Call, none) (any, error) {
				return nil, sdk.ArgumentError("start is after end")
			}),
			sdk.NewMethod("fatal", "", sdk.External, func(*sdk.Call, none) (any, error) {
				return nil, errors.New("disk on fire")
			}),
			sdk.NewMethod("panic", "", sdk.External, func(*sdk.Call, none) (any, error) {
				panic("oops")
			}),
			sdk.NewMethod("unencodable", "", sdk.Read, func(*sdk.Call, none) (any, error) {
				return func() {}, nil
			}),
			sdk.NewMethod("progress", "", sdk.Read, func(c *sdk.Call, _ none) (int, error) {
				for i := range 3 {
					c.Progress(float64(i+1), 3, "step")
				}
				return 3, nil
			}),
			sdk.NewMethod("wait", "", sdk.Read, func(c *sdk.Call, _ none) (bool, error) {
				<-c.Done()
				mu.Lock()
				cancelled = true
				mu.Unlock()
				return false, c.Err()
			}),
		},
	}
	tl := sdktest.Start(t, p).Tool("Outcomes", nil)

	if out := tl.Call("detail", nil); out.Failure != "no such file" || string(out.Detail) != `{"error":"no such file; try list","near":["a.txt"]}` {
		t.Errorf("detail: %s", out)
	}
	if out := tl.Call("retry", nil); !out.Retry || out.RetryAfter != 2*time.Second || out.Message != "rate limited" {
		t.Errorf("retry: %s", out)
	}
	if out := tl.Call("argument", nil); out.Code != "TOOL_ARGUMENT" {
		t.Errorf("argument: %s", out)
	}
	if out := tl.Call("fatal", nil); out.Code != "TOOL_ERROR" || out.Message != "disk on fire" {
		t.Errorf("fatal: %s", out)
	}
	if out := tl.Call("panic", nil); out.Code != "TOOL_ERROR" || !strings.Contains(out.Message, "panicked: oops") {
		t.Errorf("panic: %s", out)
	}
	if out := tl.Call("fatal", nil); out.Code != "TOOL_ERROR" {
		t.Errorf("the plugin should still serve after a panic: %s", out)
	}
	if out := tl.Call("unencodable", nil); out.Code != "TOOL_ERROR" || !strings.Contains(out.Message, "JSON") {
		t.Errorf("unencodable: %s", out)
	}
	out := tl.Call("progress", nil)
	if !out.OK() || len(out.Progress) != 3 || out.Progress[2].Filled != 3 || out.Progress[2].Total != 3 {
		t.Errorf("progress: %s %+v", out, out.Progress)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if out := tl.CallContext(ctx, "wait", nil); out.Code != "CANCELLED" {
		t.Errorf("wait: %s", out)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		c := cancelled
		mu.Unlock()
		if c {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the method's context was not cancelled")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

type workspaceConfig struct {
	Root  string `json:"root"`
	Write bool   `json:"write"`
}

func configured() sdk.Provider {
	return sdk.Provider{
		Name: "Files",
		Methods: []sdk.Method{
			sdk.NewMethod("root", "", sdk.Read, func(c *sdk.Call, _ none) (string, error) {
				return sdk.StateOf[workspaceConfig](c).Root + " as " + c.Tool(), nil
			}),
			sdk.NewMethod("write", "", sdk.Write, func(*sdk.Call, none) (bool, error) { return true, nil }),
		},
		Configure: func(_ context.Context, d sdk.Declaration) (sdk.Instance, error) {
			var cfg workspaceConfig
			if err := d.Decode(&cfg, "root"); err != nil {
				return sdk.Instance{}, err
			}
			if cfg.Root == "" {
				return sdk.Instance{}, errors.New("Files needs a root folder: Files(\"./notes\")")
			}
			inst := sdk.Instance{State: cfg}
			if !cfg.Write {
				inst.Methods = []string{"root"}
			}
			return inst, nil
		},
	}
}

func TestConfigurePerDeclaration(t *testing.T) {
	c := sdktest.Start(t, configured())
	ro := c.Tool("Files", nil, "./notes")
	rw := c.Tool("Files", map[string]any{"root": "./src", "write": true})

	if names := methodNames(ro.Methods()); names != "root" {
		t.Errorf("read-only methods = %s", names)
	}
	if names := methodNames(rw.Methods()); names != "root,write" {
		t.Errorf("read-write methods = %s", names)
	}
	if out := ro.Call("root", nil); string(out.Result) != `"./notes as TestFiles"` {
		t.Errorf("root = %s", out)
	}
	if out := ro.Call("write", nil); out.Code != "TOOL_UNKNOWN_METHOD" {
		t.Errorf("a hidden method must not be callable: %s", out)
	}
	if out := rw.Call("root", nil); string(out.Result) != `"./src as TestFiles"` {
		t.Errorf("root = %s", out)
	}

	for _, tt := range []struct {
		named map[string]any
		args  []any
		want  string
	}{
		{nil, nil, "needs a root folder"},
		{map[string]any{"root": "a"}, []any{"b"}, "given both by position and by name"},
		{nil, []any{"a", "b"}, "at most 1 positional argument(s) (root), got 2"},
		{map[string]any{"root": "a", "colour": "red"}, nil, `unknown field "colour"`},
		{map[string]any{"root": "a", "write": "yes"}, nil, "cannot unmarshal string"},
	} {
		_, err := c.Configure("Files", tt.named, tt.args...)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Configure(%v, %v) = %v, want %q", tt.named, tt.args, err, tt.want)
		}
	}
	if _, err := c.Configure("Nope", nil); err == nil || !strings.Contains(err.Error(), `no provider "Nope"`) {
		t.Errorf("unknown provider: %v", err)
	}
}

func methodNames(ms []sdktest.MethodInfo) string {
	var names []string
	for _, m := range ms {
		names = append(names, m.Name)
	}
	return strings.Join(names, ",")
}

func TestPluginChecksProviders(t *testing.T) {
	m := sdk.NewMethod("a", "", sdk.Read, func(*sdk.Call, none) (bool, error) { return true, nil })
	for _, tt := range []struct {
		ps   []sdk.Provider
		want string
	}{
		{nil, "at least one provider"},
		{[]sdk.Provider{{}}, "needs a name"},
		{[]sdk.Provider{{Name: "A"}, {Name: "A"}}, "served twice"},
		{[]sdk.Provider{{Name: "A", Methods: []sdk.Method{m, m}}}, "defined twice"},
		{[]sdk.Provider{{Name: "A", Methods: []sdk.Method{{Name: "hand-made"}}}}, "use sdk.NewMethod"},
	} {
		if _, err := sdk.Plugin(tt.ps...); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Plugin(%v) = %v, want %q", tt.ps, err, tt.want)
		}
	}
}

func TestNewMethodRefusesNonStructParams(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "must be a struct") {
			t.Errorf("recover = %v", r)
		}
	}()
	sdk.NewMethod("bad", "", sdk.Read, func(*sdk.Call, string) (bool, error) { return true, nil })
}
