package mcp

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"

	"halolang.dev/halo/internal/linediff"

	"halolang.dev/halo/host/tool"
	"halolang.dev/halo/pkgmgr"
)

// CodeToolsChanged: a server tool is new, or its definition changed, since halo.lock pinned
// the declaration's tools; it is neither offered nor callable until `halo lock --update`.
const CodeToolsChanged = "MCP_TOOLS_CHANGED"

// A PinStore keeps each declaration's pinned tool definitions: halo.lock's "mcp" section
// (pkgmgr.PinFile).
type PinStore interface {
	Pinned(decl string) (map[string]*pkgmgr.MCPTool, bool, error)
	Pin(decl string, tools map[string]*pkgmgr.MCPTool) error
}

// Pinned returns t with every provider it opens held to the tools store pins for the
// declaration (trust on first use, like SSH's known_hosts): the first listing pins every
// tool; later, a tool that is new or whose definition changed is left out of the methods
// (so no agent is offered it) and a call to it fails with MCP_TOOLS_CHANGED and a diff. MCP
// declarations and mcp packages alike.
func Pinned(t tool.Type, store PinStore) tool.Type {
	open := t.Open
	t.Open = func(ctx context.Context, d tool.Declaration) (tool.Provider, error) {
		p, err := open(ctx, d)
		if err != nil {
			return nil, err
		}
		return &PinnedProvider{inner: p, decl: d.Name, store: store}, nil
	}
	return t
}

// A PinnedProvider is an MCP provider held to its pins.
type PinnedProvider struct {
	inner tool.Provider
	decl  string
	store PinStore

	mu     sync.Mutex
	listed bool
	status PinStatus
}

// PinStatus is what the last listing found.
type PinStatus struct {
	// Pinned lists the tools pinned by this listing (the declaration's first).
	Pinned []string
	// Changed are the tools not offered: new, or changed since they were pinned.
	Changed []ToolChange
	// Gone lists pinned tools the server no longer offers.
	Gone []string
}

// A ToolChange is a tool held back, with what changed.
type ToolChange struct {
	Name string
	// New is set for a tool that was not pinned; otherwise Diff shows the change.
	New  bool
	Diff string
}

var _ tool.Provider = (*PinnedProvider)(nil)

// Status returns what the last listing found (list with Methods first).
func (p *PinnedProvider) Status() PinStatus {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.status
}

// Inner is the provider held to the pins.
func (p *PinnedProvider) Inner() tool.Provider { return p.inner }

// Methods lists Halo's built-in methods and the server's tools; those that do not match
// their pins are PipelineOnly, so agents are never offered them (and Call refuses them).
func (p *PinnedProvider) Methods(ctx context.Context) ([]tool.Method, error) {
	cur, err := p.check(ctx)
	if err != nil {
		return nil, err
	}
	ms, err := p.inner.Methods(ctx)
	if err != nil {
		return nil, err
	}
	for i, m := range ms {
		if IsBuiltin(m.Name) {
			continue
		}
		// A tool held back stays a method, so a pipeline that calls it gets
		// MCP_TOOLS_CHANGED with the diff rather than "no such method", but only for
		// pipelines: no agent is offered it. The listing the methods were built from must be
		// the one just checked: a server that changes a tool in between is not offered either.
		t, ok := cur[m.Name]
		if !ok || !p.approved(m.Name) || !sameAsMethod(t, m) {
			ms[i].PipelineOnly = true
		}
	}
	return ms, nil
}

// Call refuses a server tool that is not pinned as it is now.
func (p *PinnedProvider) Call(ctx context.Context, req tool.Request) (json.RawMessage, error) {
	if !IsBuiltin(req.Method) {
		p.mu.Lock()
		listed := p.listed
		p.mu.Unlock()
		if !listed {
			if _, err := p.check(ctx); err != nil {
				return nil, err
			}
		}
		if err := p.refusal(req.Method); err != nil {
			return nil, err
		}
	}
	return p.inner.Call(ctx, req)
}

// Close closes the provider.
func (p *PinnedProvider) Close() error { return p.inner.Close() }

func (p *PinnedProvider) approved(name string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.status.Changed {
		if c.Name == name {
			return false
		}
	}
	return true
}

func (p *PinnedProvider) refusal(name string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.status.Changed {
		if c.Name != name {
			continue
		}
		if c.New {
			return tool.Errorf(CodeToolsChanged, "MCP tool %s: the server offers a new tool %s that halo.lock does not pin; it is not offered or callable until you accept it with: halo lock --update %s", p.decl, name, p.decl)
		}
		return tool.Errorf(CodeToolsChanged, "MCP tool %s: the definition of %s changed since halo.lock pinned it; it is not offered or callable until you accept it with: halo lock --update %s\n%s", p.decl, name, p.decl, c.Diff)
	}
	return nil
}

// check lists the server's tools, pins them when the declaration has no pins yet, and
// records which differ from their pins. It returns the tools by name.
func (p *PinnedProvider) check(ctx context.Context) (map[string]*pkgmgr.MCPTool, error) {
	cur, err := ListDefinitions(ctx, p.inner)
	if err != nil {
		return nil, err
	}
	pins, have, err := p.store.Pinned(p.decl)
	if err != nil {
		return nil, err
	}
	st := PinStatus{}
	if !have {
		if err := p.store.Pin(p.decl, cur); err != nil {
			return nil, fmt.Errorf("MCP tool %s: pin its tools in halo.lock: %w", p.decl, err)
		}
		st.Pinned = sortedNames(cur)
	} else {
		st = Compare(pins, cur)
	}
	p.mu.Lock()
	p.listed, p.status = true, st
	p.mu.Unlock()
	return cur, nil
}

// Compare says which of the tools now offered differ from pins, and which pinned tools are
// gone.
func Compare(pins, cur map[string]*pkgmgr.MCPTool) PinStatus {
	var st PinStatus
	for _, name := range sortedNames(cur) {
		old, ok := pins[name]
		switch {
		case !ok:
			st.Changed = append(st.Changed, ToolChange{Name: name, New: true})
		case old.SHA256 != cur[name].SHA256:
			st.Changed = append(st.Changed, ToolChange{Name: name, Diff: Diff(old, cur[name])})
		}
	}
	for _, name := range sortedNames(pins) {
		if _, ok := cur[name]; !ok {
			st.Gone = append(st.Gone, name)
		}
	}
	return st
}

// ListDefinitions lists an MCP provider's server tools (through its list_tools method) as
// pkgmgr.MCPTools with their canonical sha256. Tools named like Halo's built-in methods are
// left out: they can never be called.
func ListDefinitions(ctx context.Context, p tool.Provider) (map[string]*pkgmgr.MCPTool, error) {
	out, err := p.Call(ctx, tool.Request{Method: ListTools, Args: json.RawMessage(`{}`)})
	if err != nil {
		return nil, err
	}
	var tools []rawTool
	if err := json.Unmarshal(out, &tools); err != nil {
		return nil, fmt.Errorf("the server's tools are not valid: %w", err)
	}
	defs := map[string]*pkgmgr.MCPTool{}
	for _, t := range tools {
		if IsBuiltin(t.Name) {
			continue
		}
		d := &pkgmgr.MCPTool{Title: t.Title, Description: t.Description, InputSchema: canonical(t.InputSchema), Annotations: canonical(t.Annotations)}
		d.SHA256 = Hash(t.Name, d)
		defs[t.Name] = d
	}
	return defs, nil
}

// Hash is the sha256 of a tool's canonical definition: its name, title, description,
// input schema and annotations, as JSON with object keys sorted.
func Hash(name string, d *pkgmgr.MCPTool) string {
	b, _ := json.Marshal(struct {
		Name        string          `json:"name"`
		Title       string          `json:"title"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"inputSchema"`
		Annotations json.RawMessage `json:"annotations"`
	}{name, d.Title, d.Description, orNull(canonical(d.InputSchema)), orNull(canonical(d.Annotations))})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func orNull(b json.RawMessage) json.RawMessage {
	if len(b) == 0 {
		return json.RawMessage("null")
	}
	return b
}

// canonical re-encodes JSON with object keys sorted and no insignificant space; "" and
// null stay empty.
func canonical(b json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(b)) == 0 || string(bytes.TrimSpace(b)) == "null" {
		return nil
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return b
	}
	out, err := json.Marshal(v)
	if err != nil {
		return b
	}
	return out
}

// sameAsMethod reports whether a method built from a listing matches the definition m was
// checked as.
func sameAsMethod(d *pkgmgr.MCPTool, m tool.Method) bool {
	desc := d.Description
	if desc == "" {
		desc = d.Title
	}
	if m.Description != desc {
		return false
	}
	if len(d.InputSchema) == 0 {
		return true
	}
	return bytes.Equal(canonical(m.Params), d.InputSchema)
}

// Diff shows how a tool's definition changed: the description and the input schema, line by
// line ("- " was pinned, "+ " is offered now), and whether title or annotations changed.
func Diff(old, cur *pkgmgr.MCPTool) string {
	var b strings.Builder
	if old.Title != cur.Title {
		fmt.Fprintf(&b, "title:\n- %s\n+ %s\n", old.Title, cur.Title)
	}
	if old.Description != cur.Description {
		b.WriteString("description:\n")
		b.WriteString(lineDiff(old.Description, cur.Description))
	}
	if !bytes.Equal(canonical(old.InputSchema), canonical(cur.InputSchema)) {
		b.WriteString("inputSchema:\n")
		b.WriteString(lineDiff(indented(old.InputSchema), indented(cur.InputSchema)))
	}
	if !bytes.Equal(canonical(old.Annotations), canonical(cur.Annotations)) {
		b.WriteString("annotations:\n")
		b.WriteString(lineDiff(indented(old.Annotations), indented(cur.Annotations)))
	}
	return strings.TrimRight(b.String(), "\n")
}

func indented(b json.RawMessage) string {
	c := canonical(b)
	if c == nil {
		return ""
	}
	var out bytes.Buffer
	json.Indent(&out, c, "", "  ")
	return out.String()
}

// maxDiffLines bounds the lines diffed by longest common subsequence; longer texts are
// shown whole, old then new.
const maxDiffLines = 400

// lineDiff shows a and b line by line: common lines with two spaces, removed with "- ",
// added with "+ ".
func lineDiff(a, b string) string {
	return linediff.Diff(strings.Split(a, "\n"), strings.Split(b, "\n"), maxDiffLines)
}

func sortedNames(m map[string]*pkgmgr.MCPTool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
