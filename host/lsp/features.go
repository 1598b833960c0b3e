package lsp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	protocol "github.com/tliron/glsp/protocol_3_16"

	"halolang.dev/halo/host/lang"
	"halolang.dev/halo/host/model"
	"halolang.dev/halo/host/policy"
	"halolang.dev/halo/host/tool"
)

// A view is what a request about one document reads: the program of its folder as the editor
// has it, and where the request points.
type view struct {
	res  *result
	doc  *document
	text []byte
	idx  *lang.LineIndex
	x    *index
}

// viewOf loads uri's folder without checking it; nil when uri is not open.
func (s *server) viewOf(uri protocol.DocumentUri) *view {
	s.mu.Lock()
	d := s.docs[uri]
	s.mu.Unlock()
	if d == nil {
		return nil
	}
	res := s.load(d.folder())
	res.reg, _ = s.project(d.folder())
	text := res.texts[d.name()]
	return &view{res: res, doc: d, text: text, idx: lang.NewLineIndex(text), x: newIndex(res.prog)}
}

// at returns the name at a protocol position of the document.
func (v *view) at(p protocol.Position) (occ, bool) {
	loc := v.idx.Location(v.text, offsetOf(v.text, v.idx, p))
	return v.x.at(v.doc.name(), loc.Line, loc.Column)
}

// location is where a name is written, as the protocol says it.
func (v *view) location(o occ) protocol.Location {
	text := v.res.texts[o.pos.File]
	idx := v.idx
	if o.pos.File != v.doc.name() {
		idx = lang.NewLineIndex(text)
	}
	return protocol.Location{URI: v.res.uri(o.pos.File), Range: spanRange(text, idx, o.pos, o.width)}
}

func spanRange(text []byte, idx *lang.LineIndex, pos lang.Pos, width int) protocol.Range {
	start := idx.Location(text, idx.Offset(text, int(pos.Line), int(pos.Col)))
	end := idx.Location(text, idx.Offset(text, int(pos.Line), int(pos.Col)+width))
	return protocol.Range{Start: position(text, idx, start), End: position(text, idx, end)}
}

// uri is the URI of a file of the program.
func (r *result) uri(name string) protocol.DocumentUri {
	if d, ok := r.docs[name]; ok {
		return d.uri
	}
	return PathURI(name)
}

// nameAt is the view of uri and the name at p in it.
func (s *server) nameAt(uri protocol.DocumentUri, p protocol.Position) (*view, occ, bool) {
	v := s.viewOf(uri)
	if v == nil {
		return nil, occ{}, false
	}
	o, ok := v.at(p)
	return v, o, ok
}

func (s *server) definition(uri protocol.DocumentUri, p protocol.Position) *protocol.Location {
	v, o, ok := s.nameAt(uri, p)
	if !ok {
		return nil
	}
	if o.kind == occLocal || o.kind == occLocalRef {
		if d, ok := v.x.local(o); ok {
			loc := v.location(d)
			return &loc
		}
		return nil
	}
	d := v.x.target(o)
	if d == nil {
		return nil
	}
	loc := v.location(v.declOcc(d))
	return &loc
}

// declOcc is the name a declaration declares, as an occ.
func (v *view) declOcc(d lang.Decl) occ {
	for _, o := range v.x.occs {
		if o.kind == occDecl && o.decl == d {
			return o
		}
	}
	return occ{}
}

func (s *server) references(uri protocol.DocumentUri, p protocol.Position, withDecl bool) []protocol.Location {
	out := []protocol.Location{}
	v, o, ok := s.nameAt(uri, p)
	if !ok {
		return out
	}
	if o.kind == occLocal || o.kind == occLocalRef {
		def, ok := v.x.local(o)
		if !ok {
			return out
		}
		for _, u := range v.x.occs {
			if u.kind == occLocalRef && u.scope == def.scope && u.name == def.name && u.pos.File == def.pos.File {
				if d, ok := v.x.local(u); ok && d.pos == def.pos {
					out = append(out, v.location(u))
				}
			}
			if withDecl && u.kind == occLocal && u.pos == def.pos {
				out = append(out, v.location(u))
			}
		}
		return out
	}
	d := v.x.target(o)
	if d == nil {
		return out
	}
	for _, u := range v.x.occs {
		if u.kind == occRef && v.x.decls[u.name] == d || withDecl && u.kind == occDecl && u.decl == d {
			out = append(out, v.location(u))
		}
	}
	return out
}

func (s *server) symbols(uri protocol.DocumentUri) []protocol.DocumentSymbol {
	out := []protocol.DocumentSymbol{}
	s.mu.Lock()
	d := s.docs[uri]
	var text []byte
	if d != nil {
		text = d.text
	}
	s.mu.Unlock()
	if d == nil {
		return out
	}
	f, _ := lang.Parse(d.name(), text)
	idx := lang.NewLineIndex(text)
	for i, decl := range f.Decls {
		endLine := idx.Lines()
		if i+1 < len(f.Decls) {
			endLine = int(f.Decls[i+1].Position().Line) - 1
		}
		for endLine > int(decl.Position().Line) && isBlankOrComment(text, idx, endLine) {
			endLine--
		}
		end := idx.Location(text, idx.LineEnd(text, endLine))
		start := idx.Location(text, idx.Offset(text, int(decl.Position().Line), int(decl.Position().Col)))
		name := decl.DeclName()
		sym := protocol.DocumentSymbol{
			Name:           name.Name,
			Detail:         strp(decl.Kind()),
			Kind:           symbolKind(decl),
			Range:          protocol.Range{Start: position(text, idx, start), End: position(text, idx, end)},
			SelectionRange: spanRange(text, idx, name.Pos(), len([]rune(name.Name))),
		}
		switch x := decl.(type) {
		case *lang.SchemaDecl:
			for _, fld := range x.Fields {
				r := spanRange(text, idx, fld.Name.Pos(), len([]rune(fld.Name.Name)))
				sym.Children = append(sym.Children, protocol.DocumentSymbol{Name: fld.Name.Name, Detail: strp(fld.Type.String()), Kind: protocol.SymbolKindField, Range: r, SelectionRange: r})
			}
		case *lang.PipelineDecl:
			for _, p := range x.Params {
				r := spanRange(text, idx, p.Name.Pos(), len([]rune(p.Name.Name)))
				sym.Children = append(sym.Children, protocol.DocumentSymbol{Name: p.Name.Name, Detail: strp(p.Type.String()), Kind: protocol.SymbolKindVariable, Range: r, SelectionRange: r})
			}
		}
		out = append(out, sym)
	}
	return out
}

func isBlankOrComment(text []byte, idx *lang.LineIndex, line int) bool {
	l := bytes.TrimSpace(text[idx.LineStart(line):idx.LineEnd(text, line)])
	return len(l) == 0 || l[0] == '#' || bytes.HasPrefix(l, []byte("//"))
}

func strp(s string) *string { return &s }

func symbolKind(d lang.Decl) protocol.SymbolKind {
	switch d.(type) {
	case *lang.PolicyDecl:
		return protocol.SymbolKindNamespace
	case *lang.ToolDecl:
		return protocol.SymbolKindObject
	case *lang.AgentDecl:
		return protocol.SymbolKindClass
	case *lang.SchemaDecl:
		return protocol.SymbolKindStruct
	}
	return protocol.SymbolKindFunction
}

func (s *server) format(uri protocol.DocumentUri) ([]protocol.TextEdit, error) {
	s.mu.Lock()
	d := s.docs[uri]
	var text []byte
	if d != nil {
		text = d.text
	}
	s.mu.Unlock()
	if d == nil {
		return nil, nil
	}
	out, diags := lang.Format(d.name(), text)
	if diags != nil {
		return nil, fmt.Errorf("not formatted: %s", diags[0].Text())
	}
	if bytes.Equal(out, text) {
		return []protocol.TextEdit{}, nil
	}
	idx := lang.NewLineIndex(text)
	end := position(text, idx, idx.Location(text, len(text)))
	return []protocol.TextEdit{{Range: protocol.Range{End: end}, NewText: string(out)}}, nil
}

// codeActions offers each suggestion of a diagnostic of the document that touches rng.
func (s *server) codeActions(uri protocol.DocumentUri, rng protocol.Range) []protocol.CodeAction {
	out := []protocol.CodeAction{}
	s.mu.Lock()
	d := s.docs[uri]
	s.mu.Unlock()
	if d == nil {
		return out
	}
	res := s.check(d.folder())
	text := res.texts[d.name()]
	idx := lang.NewLineIndex(text)
	kind := protocol.CodeActionKindQuickFix
	for _, diag := range res.diags {
		if diag.File != d.name() || len(diag.Suggestions) == 0 {
			continue
		}
		pd := toLSP(diag, text, idx)
		if before(pd.Range.End, rng.Start) || before(rng.End, pd.Range.Start) {
			continue
		}
		for _, sg := range diag.Suggestions {
			if sg.Start == nil || sg.End == nil {
				continue
			}
			edit := protocol.TextEdit{Range: protocol.Range{Start: position(text, idx, *sg.Start), End: position(text, idx, *sg.End)}, NewText: sg.Replacement}
			out = append(out, protocol.CodeAction{
				Title:       fmt.Sprintf("Replace with %s", sg.Replacement),
				Kind:        &kind,
				Diagnostics: []protocol.Diagnostic{pd},
				IsPreferred: boolp(len(diag.Suggestions) == 1),
				Edit:        &protocol.WorkspaceEdit{Changes: map[protocol.DocumentUri][]protocol.TextEdit{uri: {edit}}},
			})
		}
	}
	return out
}

func before(a, b protocol.Position) bool {
	return a.Line < b.Line || a.Line == b.Line && a.Character < b.Character
}

// hover says what the name under the pointer is.
func (s *server) hover(uri protocol.DocumentUri, p protocol.Position) *protocol.Hover {
	v, o, ok := s.nameAt(uri, p)
	if !ok {
		return nil
	}
	text := v.describe(o)
	if text == "" {
		return nil
	}
	r := spanRange(v.text, v.idx, o.pos, o.width)
	return &protocol.Hover{Contents: protocol.MarkupContent{Kind: protocol.MarkupKindMarkdown, Value: text}, Range: &r}
}

func (v *view) describe(o occ) string {
	switch o.kind {
	case occMethod:
		return v.describeMethod(o.recv, o.name)
	case occRule:
		return fmt.Sprintf("**rule %s**\n\n%s", o.name, policy.RuleDoc(o.name))
	case occProvider:
		return describeProvider(v.res.reg, o.name)
	case occModel:
		return describeModel(o.name)
	case occLocal, occLocalRef:
		return v.describeLocal(o)
	}
	if d := v.x.target(o); d != nil {
		return v.describeDecl(d)
	}
	if o.name == "System" {
		return "**System**: the built-in calls `System.Value(x)` (its value is x) and `System.Fail(\"why\")` (the run fails)."
	}
	return ""
}

func (v *view) describeDecl(d lang.Decl) string {
	var b strings.Builder
	switch d := d.(type) {
	case *lang.AgentDecl:
		fmt.Fprintf(&b, "**agent %s**\n\n", d.Name.Name)
		if d.Model != nil {
			fmt.Fprintf(&b, "- model: `%s`\n", d.Model)
		}
		for _, s := range d.Settings {
			fmt.Fprintf(&b, "- %s: `%s`\n", s.Name.Name, exprText(s.Value))
		}
		if len(d.Equips) > 0 {
			fmt.Fprintf(&b, "- equips: %s\n", identList(d.Equips))
		}
		if len(d.Requires) > 0 {
			fmt.Fprintf(&b, "- requires: %s\n", identList(d.Requires))
		}
		if d.System != nil {
			fmt.Fprintf(&b, "\nsystem: %s\n", d.System.Value)
		}
	case *lang.ToolDecl:
		fmt.Fprintf(&b, "**tool %s** : `%s(%s)`\n\n", d.Name.Name, d.Provider.Name, argsText(d.Args))
		b.WriteString(describeProvider(v.res.reg, d.Provider.Name))
	case *lang.PolicyDecl:
		fmt.Fprintf(&b, "**policy %s**\n\n", d.Name.Name)
		for _, r := range d.Rules {
			fmt.Fprintf(&b, "- `%s(%s)`: %s\n", r.Name.Name, argsText(r.Args), policy.RuleDoc(r.Name.Name))
		}
	case *lang.SchemaDecl:
		fmt.Fprintf(&b, "**schema %s**\n\n", d.Name.Name)
		for _, f := range d.Fields {
			fmt.Fprintf(&b, "- %s: `%s`\n", f.Name.Name, f.Type)
		}
	case *lang.PipelineDecl:
		params := make([]string, len(d.Params))
		for i, p := range d.Params {
			params[i] = p.Name.Name + ": " + p.Type.String()
		}
		fmt.Fprintf(&b, "**pipeline** `%s(%s)`", d.Name.Name, strings.Join(params, ", "))
		if d.Result != nil {
			fmt.Fprintf(&b, " `-> %s`", d.Result)
		}
		if d.Doc != "" {
			b.WriteString("\n\n" + d.Doc)
		}
	}
	return b.String()
}

// describeMethod says what Recv.method is: a tool's method as its provider describes it, an
// agent's task, or a built-in.
func (v *view) describeMethod(recv, method string) string {
	switch d := v.x.decls[recv].(type) {
	case *lang.ToolDecl:
		t, ok := lookup(v.res.reg, d.Provider.Name)
		if !ok || t.Methods == nil {
			return fmt.Sprintf("**%s.%s**\n\ntool %s is %s(...): its methods are known when a run opens it (halo tools lists them).", recv, method, recv, d.Provider.Name)
		}
		for _, m := range t.Methods {
			if m.Name == method {
				return methodText(recv, m)
			}
		}
		return fmt.Sprintf("**%s.%s**\n\n%s has no method %s; it has %s.", recv, method, d.Provider.Name, method, methodNames(t.Methods))
	case *lang.AgentDecl:
		return fmt.Sprintf("**%s.%s**: a task for agent %s\n\n", recv, method, recv) + v.describeDecl(d)
	}
	switch recv + "." + method {
	case "System.Value":
		return "**System.Value(x)**: the stage's value is x."
	case "System.Fail":
		return "**System.Fail(\"why\")**: the run fails with PIPELINE_FAILED and the message."
	}
	return ""
}

func lookup(reg *tool.Registry, provider string) (tool.Type, bool) {
	if reg == nil {
		return tool.Type{}, false
	}
	return reg.Lookup(provider)
}

func methodNames(ms []tool.Method) string {
	names := make([]string, len(ms))
	for i, m := range ms {
		names[i] = m.Name
	}
	return strings.Join(names, ", ")
}

// methodText describes a method: its effect, description and arguments (from its JSON
// Schema).
func methodText(recv string, m tool.Method) string {
	var b strings.Builder
	fmt.Fprintf(&b, "**%s.%s** · effect: `%s`", recv, m.Name, m.EffectOrDefault())
	if m.PipelineOnly {
		b.WriteString(" · called from pipelines only")
	}
	if m.Description != "" {
		b.WriteString("\n\n" + m.Description)
	}
	var schema struct {
		Properties map[string]struct {
			Type        any    `json:"type"`
			Description string `json:"description"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if len(m.Params) > 0 && json.Unmarshal(m.Params, &schema) == nil && len(schema.Properties) > 0 {
		b.WriteString("\n\nArguments:\n")
		names := make([]string, 0, len(schema.Properties))
		for n := range schema.Properties {
			names = append(names, n)
		}
		sort.Strings(names)
		required := map[string]bool{}
		for _, n := range schema.Required {
			required[n] = true
		}
		for _, n := range names {
			p := schema.Properties[n]
			fmt.Fprintf(&b, "- `%s`", n)
			var tags []string
			if p.Type != nil {
				tags = append(tags, fmt.Sprint(p.Type))
			}
			if required[n] {
				tags = append(tags, "required")
			}
			if len(tags) > 0 {
				fmt.Fprintf(&b, " (%s)", strings.Join(tags, ", "))
			}
			if p.Description != "" {
				b.WriteString(": " + p.Description)
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

func describeProvider(reg *tool.Registry, name string) string {
	t, ok := lookup(reg, name)
	if !ok {
		return fmt.Sprintf("provider %s is not known here: install a package that provides it (halo add)", name)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "provider **%s** (%s)", t.Name, t.Kind)
	if t.Description != "" {
		b.WriteString(": " + t.Description)
	}
	if t.Methods == nil {
		b.WriteString("\n\nIts methods are known when a run opens it.")
		return b.String()
	}
	b.WriteString("\n\nMethods:\n")
	for _, m := range t.Methods {
		desc, _, _ := strings.Cut(m.Description, "\n")
		fmt.Fprintf(&b, "- `%s` (%s)", m.Name, m.EffectOrDefault())
		if desc != "" {
			b.WriteString(": " + desc)
		}
		b.WriteString("\n")
	}
	return b.String()
}

func describeModel(id string) string {
	provider, name, _ := strings.Cut(id, "/")
	text := fmt.Sprintf("model **%s** of provider %s", name, provider)
	if p, ok := model.DefaultPrices().Lookup(provider, name); ok {
		text += fmt.Sprintf("\n\nprice: $%g per million input tokens, $%g per million output tokens", p.Input, p.Output)
		if p.MaxOutput > 0 {
			text += fmt.Sprintf("; at most %d output tokens a reply", p.MaxOutput)
		}
	}
	return text
}

func (v *view) describeLocal(o occ) string {
	def, ok := v.x.local(o)
	if !ok {
		return ""
	}
	if pd, ok := v.x.decls[def.scope].(*lang.PipelineDecl); ok {
		for _, p := range pd.Params {
			if p.Name.Pos() == def.pos {
				return fmt.Sprintf("parameter **%s**: `%s` of pipeline %s", p.Name.Name, p.Type, pd.Name.Name)
			}
		}
	}
	return fmt.Sprintf("**%s**: an earlier stage's result (`as %s`), also context.data.%s", def.name, def.name, def.name)
}

func identList(ids []*lang.Ident) string {
	names := make([]string, len(ids))
	for i, id := range ids {
		names[i] = id.Name
	}
	return strings.Join(names, ", ")
}

func argsText(args []*lang.Arg) string {
	parts := make([]string, len(args))
	for i, a := range args {
		parts[i] = exprText(a.Value)
		if a.Name != nil {
			parts[i] = a.Name.Name + ": " + parts[i]
		}
	}
	return strings.Join(parts, ", ")
}

// exprText writes a value as the language writes it.
func exprText(e lang.Expr) string {
	switch x := e.(type) {
	case *lang.StringLit:
		return strconv.Quote(x.Value)
	case *lang.NumberLit:
		return x.Raw
	case *lang.BoolLit:
		return strconv.FormatBool(x.Value)
	case *lang.NullLit:
		return "null"
	case *lang.Ident:
		return x.Name
	case *lang.EnvRef:
		return "Env." + x.Name.Name
	case *lang.Path:
		return x.String()
	case *lang.ListLit:
		parts := make([]string, len(x.Elems))
		for i, el := range x.Elems {
			parts[i] = exprText(el)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case *lang.ObjectLit:
		parts := make([]string, len(x.Fields))
		for i, f := range x.Fields {
			k := f.Key
			if f.Quoted {
				k = strconv.Quote(k)
			}
			parts[i] = k + ": " + exprText(f.Value)
		}
		return "{ " + strings.Join(parts, ", ") + " }"
	case *lang.Call:
		return x.Target() + "(" + argsText(x.Args) + ")"
	}
	return ""
}

// Completion contexts, read from the text before the cursor on its line.
var (
	afterDot      = regexp.MustCompile(`([A-Za-z_][A-Za-z0-9_]*)\.([A-Za-z0-9_-]*)$`)
	afterProvider = regexp.MustCompile(`^tool\s+[A-Za-z_][A-Za-z0-9_]*\s*:\s*([A-Za-z0-9_]*)$`)
	afterModel    = regexp.MustCompile(`^agent\s+[A-Za-z_][A-Za-z0-9_]*\s*\[\s*([A-Za-z0-9_./:-]*)$`)
	ruleStart     = regexp.MustCompile(`(^policy\s+[A-Za-z_][A-Za-z0-9_]*\s*:|&)\s*([A-Za-z]*)$`)
	effectArg     = regexp.MustCompile(`(AllowEffects|ApproveEffects)\(([^()]*,)?\s*([a-z]*)$`)
	equipsList    = regexp.MustCompile(`^\s*(equips|requires)\s+([A-Za-z0-9_]+\s*,\s*)*([A-Za-z0-9_]*)$`)
	toolsList     = regexp.MustCompile(`tools:\s*\[([A-Za-z0-9_]+\s*,\s*)*([A-Za-z0-9_]*)$`)
	stageCall     = regexp.MustCompile(`(\|>|\|\?|\|\*|\|<>|\|\*\s*each(\s+[A-Za-z_][A-Za-z0-9_]*:)?|\{|,)\s*([A-Za-z0-9_]*)$`)
)

func (s *server) complete(uri protocol.DocumentUri, p protocol.Position) protocol.CompletionList {
	list := protocol.CompletionList{Items: []protocol.CompletionItem{}}
	v := s.viewOf(uri)
	if v == nil {
		return list
	}
	off := offsetOf(v.text, v.idx, p)
	line := string(v.text[v.idx.LineStart(int(p.Line)+1):off])
	declKind := v.declKindAt(int(p.Line) + 1)
	add := func(kind protocol.CompletionItemKind, detail string, labels ...string) {
		for _, l := range labels {
			k := kind
			list.Items = append(list.Items, protocol.CompletionItem{Label: l, Kind: &k, Detail: strp(detail)})
		}
	}
	switch {
	case afterDot.MatchString(line):
		recv := afterDot.FindStringSubmatch(line)[1]
		if recv == "System" {
			add(protocol.CompletionItemKindMethod, "built-in", "Value", "Fail")
			break
		}
		if td, ok := v.x.decls[recv].(*lang.ToolDecl); ok {
			if t, ok := lookup(v.res.reg, td.Provider.Name); ok {
				for _, m := range t.Methods {
					k := protocol.CompletionItemKindMethod
					item := protocol.CompletionItem{Label: m.Name, Kind: &k, Detail: strp(string(m.EffectOrDefault()))}
					if m.Description != "" {
						item.Documentation = protocol.MarkupContent{Kind: protocol.MarkupKindMarkdown, Value: methodText(recv, m)}
					}
					list.Items = append(list.Items, item)
				}
			}
		}
	case afterProvider.MatchString(line):
		if v.res.reg != nil {
			for _, t := range v.res.reg.Types() {
				add(protocol.CompletionItemKindClass, string(t.Kind)+" provider", t.Name)
			}
		}
	case afterModel.MatchString(line):
		ids := make([]string, 0, 64)
		for id := range model.DefaultPrices() {
			if !strings.HasSuffix(id, "/*") {
				ids = append(ids, id)
			}
		}
		sort.Strings(ids)
		add(protocol.CompletionItemKindValue, "model", ids...)
	case declKind == "policy" && effectArg.MatchString(line):
		add(protocol.CompletionItemKindEnumMember, "effect", string(tool.Read), string(tool.Write), string(tool.External))
	case declKind == "policy" && ruleStart.MatchString(line):
		for _, name := range policy.RuleNames() {
			k := protocol.CompletionItemKindFunction
			list.Items = append(list.Items, protocol.CompletionItem{Label: name, Kind: &k, Detail: strp("rule"), Documentation: policy.RuleDoc(name)})
		}
	case declKind == "agent" && equipsList.MatchString(line):
		want := "tool"
		if equipsList.FindStringSubmatch(line)[1] == "requires" {
			want = "policy"
		}
		add(protocol.CompletionItemKindReference, want, v.namesOf(want)...)
	case toolsList.MatchString(line):
		add(protocol.CompletionItemKindReference, "tool", v.namesOf("tool")...)
	case declKind == "pipeline" && stageCall.MatchString(line):
		add(protocol.CompletionItemKindClass, "agent", v.namesOf("agent")...)
		add(protocol.CompletionItemKindVariable, "tool", v.namesOf("tool")...)
		add(protocol.CompletionItemKindFunction, "pipeline", v.namesOf("pipeline")...)
		add(protocol.CompletionItemKindModule, "built-in", "System")
	case strings.TrimSpace(line) == "" || !strings.ContainsAny(line, " \t"):
		if strings.HasPrefix(line, " ") || strings.HasPrefix(line, "\t") {
			switch declKind {
			case "agent":
				add(protocol.CompletionItemKindKeyword, "keyword", "system", "equips", "requires")
			case "pipeline":
				add(protocol.CompletionItemKindOperator, "stage", "|>", "|?", "|*", "|<>", "|!", "~>")
			}
			break
		}
		add(protocol.CompletionItemKindKeyword, "keyword", "policy", "tool", "agent", "schema", "pipeline")
	}
	return list
}

// declKindAt is the keyword of the declaration that line is in, read from the text (the
// declaration may not parse while it is being written): the nearest line at or above it
// that starts with a keyword in column 1.
func (v *view) declKindAt(line int) string {
	for l := line; l >= 1; l-- {
		text := v.text[v.idx.LineStart(l):v.idx.LineEnd(v.text, l)]
		for _, kw := range []string{"policy", "tool", "agent", "schema", "pipeline"} {
			if bytes.HasPrefix(text, []byte(kw)) && (len(text) == len(kw) || text[len(kw)] == ' ' || text[len(kw)] == '\t') {
				return kw
			}
		}
	}
	return ""
}

// namesOf lists the program's declared names of one kind, sorted.
func (v *view) namesOf(kind string) []string {
	var out []string
	for name, d := range v.x.decls {
		if d.Kind() == kind {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}
