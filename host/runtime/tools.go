package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"

	"halolang.dev/halo/errcode"
	"halolang.dev/halo/host/lang"
	"halolang.dev/halo/host/store"
	"halolang.dev/halo/host/tool"
)

// A toolSet holds the providers one run opened. A declaration is opened on its first call
// that no mock answers, so a fully mocked run starts no process and needs no server; every
// provider opened is closed when the run ends.
type toolSet struct {
	r      *Runtime
	inputs map[string]any
	// rec, when set, records the run's calls and tool descriptions (see Recording); replay,
	// when set, answers them from a recording instead, and no provider is opened.
	rec    *recorder
	replay *replayer

	mu    sync.Mutex
	open  map[string]*openTool
	order []string
	// ownStores holds the stores this run opened when the Runtime shares none.
	ownStores *store.Set
}

type openTool struct {
	once    sync.Once
	p       tool.Provider
	err     error
	mu      sync.Mutex
	methods []tool.Method
}

// declaration evaluates td for this run: {{templates}} from the inputs, Env.NAME from the
// environment.
func (ts *toolSet) declaration(td *lang.ToolDecl) (tool.Declaration, error) {
	env := ts.r.cfg.Env
	d := tool.Declaration{
		Name: td.Name.Name, Provider: td.Provider.Name, Named: make(map[string]any, len(td.Args)), Dir: ts.r.cfg.Dir,
		Getenv: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
	}
	// {{templates}} name the run's inputs only: other names are not known when tools open.
	// The scope is made for the first string that has one (most declarations have none).
	var sc *scope
	fill := func(s string) (string, error) {
		if sc == nil {
			sc = &scope{inputs: ts.inputs, st: &state{data: map[string]any{}}, env: env}
		}
		return sc.fill(s)
	}
	denv := lang.DeclEnv{Getenv: d.Getenv, Fill: fill}
	for _, a := range td.Args {
		v, err := lang.DeclValue(a.Value, denv)
		if err != nil {
			return d, tool.Errorf(tool.CodeToolConfig, "tool %s: %v", td.Name.Name, err)
		}
		if a.Name == nil {
			d.Args = append(d.Args, v)
		} else {
			d.Named[a.Name.Name] = v
		}
	}
	return d, nil
}

func (ts *toolSet) provider(ctx context.Context, td *lang.ToolDecl) (*openTool, error) {
	ot := ts.entry(td)
	ot.once.Do(func() { ts.openTool(ctx, td, ot, nil) })
	return ot, ot.err
}

// openTogether opens those of tds this run has not opened yet as one tool.Batch: what their
// openings share (the project folder's resolution) is worked out once for them, now. Errors
// stay with each tool, for provider to return.
func (ts *toolSet) openTogether(ctx context.Context, tds []*lang.ToolDecl) {
	if len(tds) < 2 || ts.replay != nil {
		return
	}
	batch := &tool.Batch{}
	for _, td := range tds {
		ot := ts.entry(td)
		ot.once.Do(func() { ts.openTool(ctx, td, ot, batch) })
	}
}

// entry is td's openTool, made the first time it is asked for.
func (ts *toolSet) entry(td *lang.ToolDecl) *openTool {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ot := ts.open[td.Name.Name]
	if ot == nil {
		if ts.open == nil {
			// Made by the first tool opened: a run that opens none makes no map.
			ts.open = map[string]*openTool{}
		}
		ot = &openTool{}
		ts.open[td.Name.Name] = ot
		ts.order = append(ts.order, td.Name.Name)
	}
	return ot
}

// openTool opens td's provider into ot, in batch when it is not nil; ot.once calls it.
func (ts *toolSet) openTool(ctx context.Context, td *lang.ToolDecl, ot *openTool, batch *tool.Batch) {
	if ts.replay != nil {
		static, _ := ts.staticMethods(td)
		ot.p = &replayProvider{rp: ts.replay, name: td.Name.Name, static: static}
		return
	}
	d, err := ts.declaration(td)
	if err != nil {
		ot.err = err
		return
	}
	if store.IsStore(d.Provider) {
		// A store is opened once per process (its index, its vectors), and serves the
		// run through a Meter that prices each embedding for its caller.
		var st *store.Store
		if st, ot.err = ts.stores().Open(ctx, d); ot.err == nil {
			ot.p = store.Tool(st, store.Op{Meter: meterStore})
		}
		return
	}
	d.Batch = batch
	ot.p, ot.err = ts.r.cfg.Tools.Open(ctx, d)
}

func (ot *openTool) list(ctx context.Context) ([]tool.Method, error) {
	ot.mu.Lock()
	defer ot.mu.Unlock()
	if ot.methods != nil {
		return ot.methods, nil
	}
	ms, err := ot.p.Methods(ctx)
	if err != nil {
		return nil, err
	}
	ot.methods = ms
	return ms, nil
}

// A prepared call is one method of an opened provider with its arguments bound.
type prepared struct {
	ot     *openTool
	method tool.Method
	args   json.RawMessage
}

// prepare opens td's provider, finds the method (method "" for an agent's tool: T means the
// provider's only method) and binds the arguments: raw, when given, is the arguments object
// as an agent's model sent it; otherwise pos and named are bound by tool.BindArgs. implicit
// says pos is only the flowing value, which a method that cannot take it (no parameter for
// a value, no fields for an object) does not get.
func (ts *toolSet) prepare(ctx context.Context, td *lang.ToolDecl, method string, raw json.RawMessage, pos []any, implicit bool, named map[string]any) (prepared, error) {
	ot, err := ts.provider(ctx, td)
	if err != nil {
		return prepared{}, err
	}
	methods, err := ot.list(ctx)
	if err != nil {
		return prepared{}, fmt.Errorf("tool %s: list methods: %w", td.Name.Name, err)
	}
	ts.recordMethods(td, methods)
	if method == "" {
		var callable []string
		for _, m := range methods {
			if !m.PipelineOnly {
				callable = append(callable, m.Name)
			}
		}
		if len(callable) != 1 {
			return prepared{}, tool.Errorf(tool.CodeToolConfig, "tool: %s names a tool with %d methods (%s); call the method you mean as a stage before the agent", td.Name.Name, len(callable), strings.Join(callable, ", "))
		}
		method = callable[0]
	}
	m, ok := tool.FindMethod(methods, method)
	if !ok {
		names := make([]string, len(methods))
		for i, x := range methods {
			names[i] = x.Name
		}
		sort.Strings(names)
		return prepared{}, tool.Errorf(tool.CodeUnknownMethod, "%s has no method %s (it has: %s)", td.Name.Name, method, strings.Join(names, ", "))
	}
	if raw != nil {
		return prepared{ot: ot, method: m, args: raw}, nil
	}
	if implicit && len(pos) == 1 && !takesValue(m, pos[0]) {
		pos = nil
	}
	args, err := tool.BindArgs(m, pos, named)
	if err != nil {
		return prepared{}, err
	}
	return prepared{ot: ot, method: m, args: args}, nil
}

// call runs a prepared call and returns its result as the provider gave it. progress, when
// not nil, receives the call's progress reports.
func (p prepared) call(ctx context.Context, progress func(tool.Progress)) (json.RawMessage, error) {
	return p.ot.p.Call(ctx, tool.Request{Method: p.method.Name, Args: p.args, Progress: progress})
}

// staticMethods describes td without running anything when that is possible: the methods its
// provider type declares this declaration offers (built-ins, http packages; a read-only
// Workspace has no write). ok is false when only the provider
// itself can say (MCP servers, module packages).
func (ts *toolSet) staticMethods(td *lang.ToolDecl) ([]tool.Method, bool) {
	if isStore(td) {
		return store.Methods(td.Provider.Name), true
	}
	d, err := ts.declaration(td)
	if err != nil {
		// Opening it will say what is wrong; here, what its arguments are known to be.
		args, named := td.StaticArgs()
		d = tool.Declaration{Name: td.Name.Name, Provider: td.Provider.Name, Args: args, Named: named}
	}
	return ts.r.cfg.Tools.DeclaredMethods(d)
}

// recordMethods keeps what td was described with in the run's recording, for a replay to
// offer the same; methods its provider type declares anyway (a writable Workspace's, Bash's)
// are not kept: a replay finds them there (staticMethods), and a record is not made larger by
// every schema of every run.
func (ts *toolSet) recordMethods(td *lang.ToolDecl, ms []tool.Method) {
	if ts.rec == nil {
		return
	}
	if static, ok := ts.staticMethods(td); ok && sameMethods(static, ms) {
		return
	}
	ts.rec.methods(td.Name.Name, ms)
}

// sameMethods reports whether a and b describe the same methods, in the same order.
func sameMethods(a, b []tool.Method) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Name != y.Name || x.Description != y.Description || x.Effect != y.Effect || x.PipelineOnly != y.PipelineOnly || !bytes.Equal(x.Params, y.Params) {
			return false
		}
	}
	return true
}

// describe lists td's methods, opening its provider.
func (ts *toolSet) describe(ctx context.Context, td *lang.ToolDecl) ([]tool.Method, error) {
	ot, err := ts.provider(ctx, td)
	if err != nil {
		return nil, err
	}
	ms, err := ot.list(ctx)
	if err == nil {
		ts.recordMethods(td, ms)
	}
	if err != nil {
		if errcode.Code(err) == "" {
			return nil, &tool.Error{Code: tool.CodeToolConfig, Message: fmt.Sprintf("tool %s cannot describe its methods: %v", td.Name.Name, err), Err: err}
		}
		return nil, fmt.Errorf("tool %s: list methods: %w", td.Name.Name, err)
	}
	return ms, nil
}

// close closes every provider the run opened, in the order they were opened.
func (ts *toolSet) close() {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	for _, name := range ts.order {
		if ot := ts.open[name]; ot.p != nil {
			ot.p.Close()
		}
	}
	ts.open = nil
	ts.order = nil
	if ts.ownStores != nil {
		ts.ownStores.Close()
		ts.ownStores = nil
	}
}

// takesValue reports whether m can take v as its single positional argument: an object
// when m's schema allows fields, any other value when m has a required parameter to fill.
func takesValue(m tool.Method, v any) bool {
	if _, ok := v.(map[string]any); ok {
		var s struct {
			Properties map[string]json.RawMessage `json:"properties"`
		}
		return len(m.Params) == 0 || json.Unmarshal(m.Params, &s) != nil || len(s.Properties) > 0
	}
	return tool.FirstRequired(m.Params) != ""
}
