package runtime

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"

	"halolang.dev/halo/host/lang"
	"halolang.dev/halo/host/model"
	"halolang.dev/halo/host/tool"
)

// A MockRequest is what a mock function is asked.
type MockRequest struct {
	// Target is "Agent.task", "Tool.method", "Tool" for an agent call's tool: T when its
	// method is not known, or "Tool.method?" for an approval.
	Target string
	// Agent and Task are set for agent calls (Agent also for the tool calls an agent makes).
	Agent, Task string
	// System and Prompt are the request an agent call would send (after input policies).
	System, Prompt string
	// Input is the flowing value.
	Input any
	// Args are a tool call's arguments.
	Args map[string]any
	// Attempt counts from 1; a @correct or @retry asks again with the next number.
	Attempt int
	// Tools are the "Tool.method" targets offered to an agent with tools; Messages the
	// conversation so far; Step the request's number in it, from 1. A mock calls tools by
	// returning UseTool(...) or a list of them.
	Tools    []string
	Messages []model.Message
	Step     int
}

// A ToolUse is a mocked model's request for one tool call (see UseTool).
type ToolUse struct {
	// Target is "Tool.method".
	Target string
	// Args are the call's arguments.
	Args map[string]any
}

// UseTool is a mocked agent's answer that asks for a tool call instead of answering; a
// []ToolUse asks for several in one reply. In a mocks file the same is written
// {"$useTool": "Files.read", "args": {...}}, or a list of such objects as one scripted step.
func UseTool(target string, args map[string]any) ToolUse { return ToolUse{Target: target, Args: args} }

// A MockFunc answers a request; its result is the target's answer.
type MockFunc func(MockRequest) (any, error)

// A mockEntry is never changed once made (Set makes a new one): the runs forked from a
// Mocks share them, and keep how far they are in a script in Mocks.next.
type mockEntry struct {
	fixed any
	list  []any
	isFn  bool
	fn    MockFunc
}

// Mocks answers targets instead of models and tools. Keys are "Agent.task", "Tool.method",
// "Tool" (every method of the tool) and "approval". A value is the answer every time; a
// list is a script, consumed one element per request (to answer with a list, wrap it in
// another list), and a request after the last element fails with code MOCK. Each run starts
// every script from its first element (a resumed run goes on where it paused), so runs that
// share a runtime, as halo serve's do, do not use up each other's answers. Safe for
// concurrent use.
type Mocks struct {
	mu      sync.Mutex
	entries map[string]*mockEntry
	// shared says a fork holds entries too: the next Set copies the map before changing
	// it (copy on write), so a run forked before goes on answering as it started.
	shared bool
	// next is how many elements of each script this set has answered; made by the first.
	next map[string]int
}

// NewMocks returns an empty set of mocks.
func NewMocks() *Mocks { return &Mocks{entries: map[string]*mockEntry{}} }

// ParseMocks reads a mocks file: one JSON object whose keys are targets.
func ParseMocks(data []byte) (*Mocks, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var raw map[string]any
	if err := dec.Decode(&raw); err != nil {
		return nil, &Error{Code: CodeMock, Message: "mocks: want one JSON object of target: answer: " + err.Error(), Err: err}
	}
	if dec.More() {
		return nil, errorf(CodeMock, "mocks: text after the JSON object")
	}
	m := NewMocks()
	for k, v := range raw {
		if k == "" {
			return nil, errorf(CodeMock, "mocks: an empty target name")
		}
		m.Set(k, numbers(v))
	}
	return m, nil
}

// numbers turns json.Number values back into float64 (UseNumber only kept big integers
// from being decoded lossily on the way).
func numbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		f, _ := x.Float64()
		return f
	case []any:
		for i := range x {
			x[i] = numbers(x[i])
		}
	case map[string]any:
		for k := range x {
			x[k] = numbers(x[k])
		}
	}
	return v
}

// fork returns the mocks one run answers from: the same answers, with every script at its
// start. The fork shares m's entries, which m copies before it next changes them (a run
// changes no mock: this saves copying the table for every run). A nil m forks to nil.
func (m *Mocks) fork() *Mocks { return m.forkInto(&Mocks{}) }

// forkInto is fork made in dst (a run makes its parts together), which it returns; nil
// when m is nil.
func (m *Mocks) forkInto(dst *Mocks) *Mocks {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.shared = true
	dst.entries, dst.shared = m.entries, true
	return dst
}

// Set makes target answer v: a list is consumed one element per request.
func (m *Mocks) Set(target string, v any) {
	if l, ok := v.([]any); ok {
		m.set(target, &mockEntry{list: l})
		return
	}
	m.set(target, &mockEntry{fixed: v})
}

// SetFunc makes target answer whatever fn returns.
func (m *Mocks) SetFunc(target string, fn MockFunc) { m.set(target, &mockEntry{isFn: true, fn: fn}) }

func (m *Mocks) set(target string, e *mockEntry) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.shared {
		own := make(map[string]*mockEntry, len(m.entries)+1)
		for k, e := range m.entries {
			own[k] = e
		}
		m.entries, m.shared = own, false
	}
	m.entries[target] = e
	// A new answer starts from its first element.
	delete(m.next, target)
}

// Has reports whether any of the targets is mocked.
func (m *Mocks) Has(targets ...string) bool {
	if m == nil {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, t := range targets {
		if _, ok := m.entries[t]; ok {
			return true
		}
	}
	return false
}

// hasTool reports whether the tool or any of its methods is mocked.
func (m *Mocks) hasTool(name string) bool {
	if m == nil {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for k := range m.entries {
		if k == name || strings.HasPrefix(k, name+".") && !strings.HasSuffix(k, "?") {
			return true
		}
	}
	return false
}

// Targets lists the mocked targets, sorted.
func (m *Mocks) Targets() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]string, 0, len(m.entries))
	for k := range m.entries {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// answer returns the answer of the first of targets that is mocked; ok is false when none
// is. The more specific target comes first ("Files.read" before "Files").
func (m *Mocks) answer(req MockRequest, targets ...string) (v any, ok bool, err error) {
	if m == nil {
		return nil, false, nil
	}
	m.mu.Lock()
	var e *mockEntry
	var name string
	for _, t := range targets {
		if e = m.entries[t]; e != nil {
			name = t
			break
		}
	}
	if e == nil {
		m.mu.Unlock()
		return nil, false, nil
	}
	switch {
	case e.isFn:
		fn := e.fn
		m.mu.Unlock()
		// The function runs without the lock: it may be slow, and fan-out branches call
		// their mocks concurrently.
		v, err := fn(req)
		return v, true, err
	case e.list != nil:
		defer m.mu.Unlock()
		n := m.next[name]
		if n >= len(e.list) {
			return nil, true, errorf(CodeMock, "mock %s: all %d scripted answers are used up", name, len(e.list))
		}
		if m.next == nil {
			m.next = map[string]int{}
		}
		m.next[name] = n + 1
		return e.list[n], true, nil
	default:
		defer m.mu.Unlock()
		return e.fixed, true, nil
	}
}

// cursors reports how many list answers each target has used, for a run record: a resumed
// run goes on from there.
func (m *Mocks) cursors() map[string]int {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.next) == 0 {
		// Saved as an empty map is (omitted), without making one.
		return nil
	}
	out := make(map[string]int, len(m.next))
	for k, n := range m.next {
		if e := m.entries[k]; e != nil && e.list != nil && n > 0 {
			out[k] = n
		}
	}
	return out
}

// seek restores the list positions cursors reported.
func (m *Mocks) seek(c map[string]int) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, n := range c {
		if e := m.entries[k]; e != nil && e.list != nil && n <= len(e.list) {
			if m.next == nil {
				m.next = map[string]int{}
			}
			m.next[k] = n
		}
	}
}

// An llmMock is a mocked agent answer that also says what the call would have used, so
// MaxSpend and context.meta.cost can be scripted: {"$answer": ..., "$usage":
// {"inputTokens": n, "outputTokens": n}, "$cost": usd}.
type llmMock struct {
	answer any
	usage  *usage
	cost   float64
}

type usage struct {
	InputTokens  int `json:"inputTokens"`
	OutputTokens int `json:"outputTokens"`
}

func parseLLMMock(v any) (llmMock, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return llmMock{answer: v}, nil
	}
	a, has := obj["$answer"]
	if !has {
		return llmMock{answer: v}, nil
	}
	out := llmMock{answer: a}
	for k, x := range obj {
		switch k {
		case "$answer":
		case "$cost":
			f, ok := x.(float64)
			if !ok || f < 0 {
				return out, errorf(CodeMock, "mock $cost: want a number of dollars, 0 or more")
			}
			out.cost = f
		case "$usage":
			b, _ := json.Marshal(x)
			var u usage
			if err := json.Unmarshal(b, &u); err != nil {
				return out, errorf(CodeMock, "mock $usage: want {\"inputTokens\": n, \"outputTokens\": n}")
			}
			out.usage = &u
		default:
			return out, errorf(CodeMock, "mock answer: unknown key %s beside $answer (known: $usage, $cost)", k)
		}
	}
	return out, nil
}

// text is how an answer reads as model output: a string as is, anything else as JSON.
func text(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// CheckMocks reports the first mock key that names nothing in the program, or in
// Config.MockScope: not an agent call written in a pipeline ("Agent.task"), a declared tool
// ("Tool"), a method of one ("Tool.method", checked against the methods its provider type
// declares when it declares them), an approval of such a method ("Tool.method?") or
// "approval". A typo would otherwise fall through to the real model or tool. Run and Resume
// call it.
func (r *Runtime) CheckMocks() error {
	r.mocksChecked.Do(func() { r.mocksErr = r.checkMocks() })
	return r.mocksErr
}

func (r *Runtime) checkMocks() error {
	if r.cfg.Mocks == nil {
		return nil
	}
	// The program first: where a name is declared in both, the program's declaration is
	// the one its runs use.
	progs := []*lang.Program{r.prog}
	where := "this file"
	if r.cfg.MockScope != nil {
		progs = append(progs, r.cfg.MockScope)
		where = "this file or the .halo files beside the mocks file"
	}
	agentCalls := map[string]bool{}
	var known []string
	for _, p := range progs {
		for _, d := range p.Decls() {
			switch x := d.(type) {
			case *lang.PipelineDecl:
				for _, c := range x.Calls() {
					if c.Recv != nil && p.Agent(c.Recv.Name) != nil && !agentCalls[c.Target()] {
						agentCalls[c.Target()] = true
						known = append(known, c.Target())
					}
				}
			case *lang.ToolDecl:
				known = append(known, x.Name.Name)
			}
		}
	}
	toolDecl := func(name string) *lang.ToolDecl {
		for _, p := range progs {
			if td := p.Tool(name); td != nil {
				return td
			}
		}
		return nil
	}
	for _, key := range r.cfg.Mocks.Targets() {
		if key == "approval" || agentCalls[key] {
			continue
		}
		name, method, hasMethod := strings.Cut(strings.TrimSuffix(key, "?"), ".")
		td := toolDecl(name)
		isAgent := false
		for _, p := range progs {
			isAgent = isAgent || p.Agent(name) != nil
		}
		switch {
		case td == nil && isAgent:
			return errorf(CodeMock, "mocks: %s names no call of agent %s in %s%s", key, name, where, nearest(key, known))
		case td == nil:
			return errorf(CodeMock, "mocks: %s names no agent call, tool or method declared in %s%s", key, where, nearest(key, known))
		case !hasMethod && strings.HasSuffix(key, "?"):
			return errorf(CodeMock, "mocks: %s: an approval mock names a method, as in %s.write?", key, name)
		case hasMethod:
			if t, ok := r.cfg.Tools.Lookup(td.Provider.Name); ok && t.Methods != nil {
				if _, found := tool.FindMethod(t.Methods, method); !found {
					names := make([]string, len(t.Methods))
					for i, m := range t.Methods {
						names[i] = name + "." + m.Name
					}
					return errorf(CodeMock, "mocks: %s: tool %s (%s) has no method %s%s", key, name, td.Provider.Name, method, nearest(name+"."+method, names))
				}
			}
		}
	}
	return nil
}

// nearest returns "; did you mean X?" for the candidate closest to key, or "".
func nearest(key string, candidates []string) string {
	best, bestD := "", len(key)/3+1
	for _, c := range candidates {
		if d := editDistance(strings.ToLower(key), strings.ToLower(c)); d < bestD || d == bestD && best != "" && c < best {
			best, bestD = c, d
		}
	}
	if best == "" {
		return ""
	}
	return "; did you mean " + best + "?"
}

func editDistance(a, b string) int {
	if len(a) > 100 || len(b) > 100 {
		if a == b {
			return 0
		}
		return 100
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
