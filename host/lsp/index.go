package lsp

import (
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	protocol "github.com/tliron/glsp/protocol_3_16"

	"halolang.dev/halo/host/check"
	"halolang.dev/halo/host/lang"
	"halolang.dev/halo/host/policy"
)

// position converts a place in text to the protocol's: a 0-based line and a column counted
// in UTF-16 units.
func position(text []byte, idx *lang.LineIndex, loc lang.Location) protocol.Position {
	start := idx.LineStart(loc.Line)
	off := min(max(loc.Offset, start), len(text))
	units := 0
	for _, r := range string(text[start:off]) {
		units += utf16.RuneLen(r)
	}
	return protocol.Position{Line: protocol.UInteger(max(0, loc.Line-1)), Character: protocol.UInteger(units)}
}

// offsetOf converts a protocol position to a byte offset in text; a column past the line's
// end is its end.
func offsetOf(text []byte, idx *lang.LineIndex, p protocol.Position) int {
	line := int(p.Line) + 1
	if line > idx.Lines() {
		return len(text)
	}
	off, end := idx.LineStart(line), idx.LineEnd(text, line)
	for units := 0; off < end && units < int(p.Character); {
		r, size := utf8.DecodeRune(text[off:end])
		units += utf16.RuneLen(max(r, 0))
		off += size
	}
	return off
}

// An occKind is what a name is where it is written.
type occKind int

const (
	occDecl     occKind = iota // a declaration's name
	occRef                     // a use of a declared name
	occMethod                  // the method of a call on a tool or an agent
	occRule                    // a policy rule's name
	occProvider                // a tool declaration's provider
	occModel                   // an agent's provider/model id
	occLocal                   // a pipeline parameter or `as` name where it is given
	occLocalRef                // a use of one
)

// An occ is one name as written in a file.
type occ struct {
	kind occKind
	pos  lang.Pos
	// width is how many columns the name takes (a quoted name's backquotes included): add
	// adds the name's to what the caller gives.
	width int
	name  string
	// recv is the receiver of a method; scope the pipeline a local name belongs to.
	recv, scope string
	// decl is the declaration a name declares (occDecl).
	decl lang.Decl
}

// covers reports whether o is at line and column (1-based, in runes) of its file.
func (o occ) covers(file string, line, col int) bool {
	return o.pos.File == file && int(o.pos.Line) == line && col >= int(o.pos.Col) && col <= int(o.pos.Col)+o.width
}

// An index lists every name of a program where it is written.
type index struct {
	occs  []occ
	decls map[string]lang.Decl
}

func newIndex(prog *lang.Program) *index {
	x := &index{decls: map[string]lang.Decl{}}
	decls := prog.Decls()
	for _, d := range decls {
		if _, dup := x.decls[d.DeclName().Name]; !dup {
			x.decls[d.DeclName().Name] = d
		}
	}
	for _, d := range decls {
		x.decl(d)
	}
	return x
}

func (x *index) add(kind occKind, id *lang.Ident, o occ) {
	if id == nil || !id.Pos().IsValid() {
		return
	}
	o.kind, o.pos, o.name = kind, id.Pos(), id.Name
	o.width += utf8.RuneCountInString(id.Name) // on the backquotes' 2 the caller may give
	x.occs = append(x.occs, o)
}

func (x *index) decl(d lang.Decl) {
	x.add(occDecl, d.DeclName(), occ{decl: d})
	switch d := d.(type) {
	case *lang.PolicyDecl:
		for _, r := range d.Rules {
			x.add(occRule, r.Name, occ{})
			x.patterns(r)
		}
	case *lang.ToolDecl:
		x.add(occProvider, d.Provider, occ{})
	case *lang.AgentDecl:
		if d.Model != nil {
			x.add(occModel, lang.NewIdent(d.Model.Pos, d.Model.String()), occ{})
		}
		for _, s := range d.Settings {
			x.toolsValue(s)
		}
		for _, id := range d.Equips {
			x.add(occRef, id, occ{})
		}
		for _, id := range d.Requires {
			x.add(occRef, id, occ{})
		}
	case *lang.SchemaDecl:
		for _, f := range d.Fields {
			x.typ(f.Type)
		}
	case *lang.PipelineDecl:
		scope := d.Name.Name
		for _, p := range d.Params {
			x.add(occLocal, p.Name, occ{scope: scope})
			x.typ(p.Type)
		}
		x.typ(d.Result)
		if d.Start != nil {
			x.value(d.Start, scope)
		}
		lang.WalkStages(d.Stages, func(st *lang.Stage) bool {
			if st.Item != nil {
				x.add(occLocal, st.Item, occ{scope: scope})
			}
			if st.Call != nil {
				x.call(st.Call, scope)
			}
			for _, c := range st.Calls {
				x.call(c, scope)
			}
			if st.As != nil {
				x.add(occLocal, st.As, occ{scope: scope})
			}
			return true
		})
	}
}

// patterns indexes the tool named in each "Tool.method" pattern of a tool rule.
func (x *index) patterns(r *lang.Rule) {
	for _, a := range check.PatternArgs(r) {
		var text string
		pos := a.Value.Position()
		switch v := a.Value.(type) {
		case *lang.StringLit:
			text = v.Value
			pos.Col++ // after the quote
		case *lang.Ident:
			text = v.Name
		case *lang.Path:
			text = v.String()
		}
		toolPart, err := policy.ParsePattern(text)
		if err != nil || toolPart == "" || strings.Contains(toolPart, "*") {
			continue
		}
		x.add(occRef, lang.NewIdent(pos, toolPart), occ{})
	}
}

func (x *index) typ(t *lang.TypeRef) {
	if t == nil {
		return
	}
	x.add(occRef, lang.NewIdent(t.Pos, t.Name), occ{})
	for _, a := range t.Args {
		x.typ(a)
	}
}

// toolsValue indexes the tools a `tools: [A, B]` or `tool: T` setting names.
func (x *index) toolsValue(a *lang.Arg) {
	if a.Name == nil {
		return
	}
	switch a.Name.Name {
	case "tools":
		if l, ok := a.Value.(*lang.ListLit); ok {
			for _, e := range l.Elems {
				if id, ok := e.(*lang.Ident); ok {
					x.add(occRef, id, occ{})
				}
			}
		}
	case "tool":
		if id, ok := a.Value.(*lang.Ident); ok {
			x.add(occRef, id, occ{})
		}
	}
}

func (x *index) call(c *lang.Call, scope string) {
	if c.Recv != nil {
		x.add(occRef, c.Recv, occ{})
		o := occ{recv: c.Recv.Name}
		if c.Quoted {
			o.width = 2 // the backquotes
		}
		x.add(occMethod, c.Method, o)
	} else {
		switch c.Method.Name {
		case "loop":
			if pos := c.Positional(); len(pos) > 0 {
				if id, ok := pos[0].Value.(*lang.Ident); ok {
					x.add(occRef, id, occ{})
				}
			}
		case "yield", "listen":
		default:
			x.add(occRef, c.Method, occ{})
		}
	}
	for _, a := range c.Args {
		if a.Name != nil && (a.Name.Name == "tools" || a.Name.Name == "tool") {
			x.toolsValue(a)
			continue
		}
		if c.Recv == nil && c.Method.Name == "loop" && a.Name == nil {
			if _, ok := a.Value.(*lang.Ident); ok {
				continue // the agent, indexed above
			}
		}
		x.value(a.Value, scope)
	}
}

func (x *index) value(v lang.Expr, scope string) {
	switch v := v.(type) {
	case *lang.Ident:
		x.add(occLocalRef, v, occ{scope: scope})
	case *lang.Path:
		if !v.IsContext() && len(v.Parts) > 0 {
			x.add(occLocalRef, v.Parts[0], occ{scope: scope})
		}
	case *lang.ListLit:
		for _, e := range v.Elems {
			x.value(e, scope)
		}
	case *lang.ObjectLit:
		for _, f := range v.Fields {
			x.value(f.Value, scope)
		}
	case *lang.Call:
		x.call(v, scope)
	}
}

// at returns the name at line and column of file, if any.
func (x *index) at(file string, line, col int) (occ, bool) {
	for _, o := range x.occs {
		if o.covers(file, line, col) {
			return o, true
		}
	}
	return occ{}, false
}

// target returns the declaration o names or is, or nil.
func (x *index) target(o occ) lang.Decl {
	switch o.kind {
	case occDecl:
		return o.decl
	case occRef:
		return x.decls[o.name]
	}
	return nil
}

// local returns where a pipeline's parameter or `as` name that o uses (or is) is given: the
// last one of that name in o's pipeline before o.
func (x *index) local(o occ) (occ, bool) {
	var found occ
	ok := false
	for _, d := range x.occs {
		if d.kind == occLocal && d.scope == o.scope && d.name == o.name && d.pos.File == o.pos.File && !o.pos.Before(d.pos) {
			found, ok = d, true
		}
	}
	return found, ok
}
