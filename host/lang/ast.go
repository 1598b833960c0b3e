package lang

import (
	"strconv"
	"strings"
)

// A Pos is a place in a source file: the file name as given to Parse, a 1-based line and a
// 1-based column counted in runes (a tab is one column, as is a multi-byte character).
// The zero Pos means "no position". Line and Col are 32-bit (a file is at most 16 MiB) so
// that a Pos, in every node and name of the tree, is 24 bytes rather than 32.
type Pos struct {
	File string `json:"file"`
	Line int32  `json:"line"`
	Col  int32  `json:"column"`
}

// IsValid reports whether p names a place.
func (p Pos) IsValid() bool { return p.Line > 0 }

// String formats p as file:line:col, the form diagnostics start with.
func (p Pos) String() string {
	if !p.IsValid() {
		if p.File == "" {
			return "-"
		}
		return p.File
	}
	// Appended rather than fmt.Sprintf: every stage of every run names where it is written.
	return string(p.Append(make([]byte, 0, len(p.File)+12)))
}

// Append appends p.String() to b: a caller that spells many positions (host/check, those of
// a policy's rules) can carve them from one buffer.
func (p Pos) Append(b []byte) []byte {
	if !p.IsValid() {
		if p.File == "" {
			return append(b, '-')
		}
		return append(b, p.File...)
	}
	b = append(b, p.File...)
	b = append(b, ':')
	b = strconv.AppendInt(b, int64(p.Line), 10)
	b = append(b, ':')
	return strconv.AppendInt(b, int64(p.Col), 10)
}

// Before reports whether p comes before q in the same file (files compare by name).
func (p Pos) Before(q Pos) bool {
	if p.File != q.File {
		return p.File < q.File
	}
	if p.Line != q.Line {
		return p.Line < q.Line
	}
	return p.Col < q.Col
}

// A Node is any element of the syntax tree.
type Node interface {
	// Position is where the node starts.
	Position() Pos
}

// A Program is a set of parsed files that together make one project: names declared in one
// file may be used in another.
type Program struct {
	Files []*File
}

// Decls returns every declaration of every file, in file order then source order.
func (p *Program) Decls() []Decl {
	var out []Decl
	for _, f := range p.Files {
		out = append(out, f.Decls...)
	}
	return out
}

// declNamed returns the first declaration of type D called name (nameOf says a
// declaration's name), or the zero D. It walks the files' declarations in place: a run looks
// its pipeline and agents up on every call, and Decls makes a list of them all.
func declNamed[D Decl](p *Program, name string, nameOf func(D) string) D {
	for _, f := range p.Files {
		for _, d := range f.Decls {
			if x, ok := d.(D); ok && nameOf(x) == name {
				return x
			}
		}
	}
	var zero D
	return zero
}

// Pipeline returns the pipeline called name, or nil.
func (p *Program) Pipeline(name string) *PipelineDecl {
	return declNamed(p, name, func(d *PipelineDecl) string { return d.Name.Name })
}

// Tool returns the tool declaration called name, or nil.
func (p *Program) Tool(name string) *ToolDecl {
	return declNamed(p, name, func(d *ToolDecl) string { return d.Name.Name })
}

// Agent returns the agent called name, or nil.
func (p *Program) Agent(name string) *AgentDecl {
	return declNamed(p, name, func(d *AgentDecl) string { return d.Name.Name })
}

// Policy returns the policy called name, or nil.
func (p *Program) Policy(name string) *PolicyDecl {
	return declNamed(p, name, func(d *PolicyDecl) string { return d.Name.Name })
}

// Schema returns the schema called name, or nil.
func (p *Program) Schema(name string) *SchemaDecl {
	return declNamed(p, name, func(d *SchemaDecl) string { return d.Name.Name })
}

// A File is one parsed .halo file.
type File struct {
	// Name is the file name as given to Parse; every Pos in the file carries it.
	Name string
	// Decls are the top-level declarations in source order. A declaration with a syntax
	// error is left out (its diagnostics say why).
	Decls []Decl
	// Src is the text the file was parsed from, which diagnostics quote.
	Src []byte
}

// Source returns the text of the file called name, for Diagnostics.Locate.
func (p *Program) Source(name string) ([]byte, bool) {
	for _, f := range p.Files {
		if f.Name == name {
			return f.Src, true
		}
	}
	return nil, false
}

// A Decl is a top-level declaration: *PolicyDecl, *ToolDecl, *AgentDecl, *SchemaDecl or
// *PipelineDecl.
type Decl interface {
	Node
	// DeclName is the declared name.
	DeclName() *Ident
	// Kind is the keyword: "policy", "tool", "agent", "schema" or "pipeline".
	Kind() string
}

// An Ident is a name as written, with its place (Pos).
type Ident struct {
	Name string
	place
}

// A place is where a node starts, held in 16 bytes where a Pos is 24: file is the name of
// the file, one string that every node of a parse points to. Idents and StringLits, the
// nodes a program has most of (71,500 names in the 1 MB benchmark program), hold one.
type place struct {
	file      *string
	line, col int32
}

func placeOf(file *string, pos Pos) place { return place{file: file, line: pos.Line, col: pos.Col} }

// Pos is where the node starts.
func (p place) Pos() Pos {
	if p.file == nil {
		return Pos{Line: p.line, Col: p.col}
	}
	return Pos{File: *p.file, Line: p.line, Col: p.col}
}

// NewIdent returns the Ident called name at pos.
func NewIdent(pos Pos, name string) *Ident {
	return &Ident{Name: name, place: placeOf(&pos.File, pos)}
}

// A PolicyDecl is `policy Name : Rule(args) & Rule(args) ...`. Rules may continue on
// following lines that begin with `&`.
type PolicyDecl struct {
	Pos   Pos // of the keyword
	Name  *Ident
	Rules []*Rule
}

// A Rule is one policy rule, `Block(PII, APIKey)` or `MaxSpend(0.50)`. Its arguments are
// strings, numbers and bare identifiers (categories, effects, formats).
type Rule struct {
	Pos  Pos // of the rule name
	Name *Ident
	Args []*Arg
	// Parens reports whether the rule was written with parentheses (`LogViolation()`); a
	// bare `LogViolation` is accepted too.
	Parens bool
}

// A ToolDecl is `tool Name : Provider(positional, named: value, ...)`.
type ToolDecl struct {
	Pos      Pos // of the keyword
	Name     *Ident
	Provider *Ident
	Args     []*Arg
}

// An AgentDecl is
//
//	agent Name [provider/model, temp: 0.0, max_steps: 40, tools: auto]
//	  system "..."
//	  equips A, B
//	  requires P, Q
//
// Settings holds the named entries of the brackets in source order. The body lines may come
// in any order and more than once: equips and requires lists are concatenated, and a second
// system line is a syntax error.
type AgentDecl struct {
	Pos      Pos // of the keyword
	Name     *Ident
	Model    *Model
	Settings []*Arg
	System   *StringLit // nil when not given
	Equips   []*Ident
	Requires []*Ident
}

// Setting returns the bracket setting called name, or nil.
func (a *AgentDecl) Setting(name string) *Arg {
	for _, s := range a.Settings {
		if s.Name != nil && s.Name.Name == name {
			return s
		}
	}
	return nil
}

// A Model is the `provider/model` id at the start of an agent's brackets. The model part may
// hold '/', '.', ':' and '-' (`openrouter/qwen/qwen3-coder`, `ollama/llama3.1:8b`).
type Model struct {
	Pos Pos
	// Provider is the text before the first '/': openai, anthropic, gemini, ollama, ...
	Provider string
	// Name is the text after the first '/'; empty when no '/' was written.
	Name string
}

// String returns the id as written.
func (m *Model) String() string {
	if m.Name == "" {
		return m.Provider
	}
	return m.Provider + "/" + m.Name
}

// A SchemaDecl is `schema Name { field: Type, ... }`. Its name may be used as a type.
type SchemaDecl struct {
	Pos    Pos // of the keyword
	Name   *Ident
	Fields []*Field
}

// A Field is one `name: Type` of a schema.
type Field struct {
	Name *Ident
	Type *TypeRef
}

// A TypeRef names a type: String, Number, Integer, Boolean, List, Object, Map, JSON, Any,
// Result, a schema name, or a generic such as Array<String>.
type TypeRef struct {
	Pos  Pos
	Name string
	// Args are the type arguments of a generic (`Array<T>` has one).
	Args []*TypeRef
}

// String returns the type as written, without spaces.
func (t *TypeRef) String() string {
	if t == nil {
		return ""
	}
	if len(t.Args) == 0 {
		return t.Name
	}
	parts := make([]string, len(t.Args))
	for i, a := range t.Args {
		parts[i] = a.String()
	}
	return t.Name + "<" + strings.Join(parts, ", ") + ">"
}

// A PipelineDecl is
//
//	pipeline Name(p: Type, ...) -> Type:
//	  start
//	    |> Stage(...) as name
//	    ...
//
// The body may also be one line after the colon's line, or on the colon's own line.
type PipelineDecl struct {
	Pos    Pos // of the keyword
	Name   *Ident
	Params []*Param
	// Result is the declared result type; nil when no `-> Type` was written.
	Result *TypeRef
	// Start is the value that flows into the first stage: usually a parameter name.
	Start Expr
	// Stages run in order.
	Stages []*Stage
	// Doc is the comment written right above the declaration (`#` or `//` lines starting in
	// column 1), without the markers; MCP clients show it as the tool's description.
	Doc string
}

// A Param is one pipeline parameter, `name: Type`.
type Param struct {
	Name *Ident
	Type *TypeRef
}

// A StageOp is the operator that introduces a stage.
type StageOp string

// The stage operators.
const (
	// OpThen `|>` runs a call on the flowing value.
	OpThen StageOp = "|>"
	// OpLoop `|<> loop(Agent, "condition", max: n)` sends the run back to Agent's stage while
	// condition holds, at most n times.
	OpLoop StageOp = "|<>"
	// OpFallback `|? Call(...)` runs only when the stage before it failed; its result
	// replaces the failure.
	OpFallback StageOp = "|?"
	// OpFanOut `|* { Call(...), Call(...) }` runs the calls concurrently on the flowing value;
	// the result is the list of their results in order.
	OpFanOut StageOp = "|*"
	// OpYield `|! yield("question")` pauses the run for a person's answer.
	OpYield StageOp = "|!"
	// OpListen `~> listen("channel")` pauses the run until a signal arrives on the named
	// channel; the signal's payload is the stage's value.
	OpListen StageOp = "~>"
	// OpEach `|* each Call(...)` runs the call once per item of the flowing list,
	// concurrently, each item as the call's flowing value and as a name (`item`, or the
	// name written as `|* each url: Call(...)`); the result is the list of the results in
	// the items' order.
	OpEach StageOp = "|* each"
	// OpBranch `|> branch { "condition": stages, ..., else: stages }` runs the first arm
	// whose condition holds (else when none does); its value is that arm's value, and with
	// no arm taken the flowing value passes through.
	OpBranch StageOp = "|> branch"
)

// DefaultItemName is the name a |* each call reads its item by when the stage names none.
const DefaultItemName = "item"

// A Stage is one step of a pipeline.
type Stage struct {
	Pos Pos // of the operator
	Op  StageOp
	// Call is the stage's call; nil for OpFanOut and OpBranch. For OpEach it is the call
	// made once per item.
	Call *Call
	// Calls are a fan-out's branches; nil for the other operators.
	Calls []*Call
	// Item is the name an OpEach stage gives its item (`|* each url: ...`); nil when the
	// stage names none and the item is DefaultItemName.
	Item *Ident
	// Arms are an OpBranch stage's arms in source order; an else arm, if any, is last.
	Arms []*Arm
	// As is the name given with `as name`; nil when none. The stage's result is then also
	// kept in context.data.<name>.
	As *Ident
	// Directives are the `@name(args)` written after the call, in source order.
	Directives []*Directive
}

// Directive returns the stage's directive called name (without '@'), or nil.
func (s *Stage) Directive(name string) *Directive {
	for _, d := range s.Directives {
		if d.Name.Name == name {
			return d
		}
	}
	return nil
}

// Target names what the stage calls: "Agent.task", "Tool.method", a pipeline's name, a
// fan-out's targets joined with ", ", or its operator ("branch", "|!") when it calls nothing
// of its own.
func (s *Stage) Target() string {
	switch {
	case s.Call != nil:
		return s.Call.Target()
	case len(s.Calls) > 0:
		names := make([]string, len(s.Calls))
		for i, c := range s.Calls {
			names[i] = c.Target()
		}
		return strings.Join(names, ", ")
	}
	return strings.TrimPrefix(string(s.Op), "|> ")
}

// WalkStages calls fn for each stage of stages in source order, and for the stages of a
// branch's arms right after the branch itself unless fn returns false for it. Tools that
// look at every call a pipeline makes (plan, mock keys) walk with it, so that the calls in
// branch arms are not missed.
func WalkStages(stages []*Stage, fn func(*Stage) bool) {
	for _, st := range stages {
		if fn(st) {
			for _, arm := range st.Arms {
				WalkStages(arm.Stages, fn)
			}
		}
	}
}

// Calls returns every call the stages make, arms included, in source order: a fan-out's
// branches, an each's call (made once per item), loop(...), yield(...) and listen(...).
func Calls(stages []*Stage) []*Call {
	var out []*Call
	WalkStages(stages, func(st *Stage) bool {
		if st.Call != nil {
			out = append(out, st.Call)
		}
		out = append(out, st.Calls...)
		return true
	})
	return out
}

// Calls returns every call the pipeline makes, in source order: its start, when it is a call,
// then its stages' (see Calls). Every tool that asks which agents, tools and pipelines a
// pipeline reaches walks it so.
func (d *PipelineDecl) Calls() []*Call {
	var out []*Call
	if c, ok := d.Start.(*Call); ok {
		out = append(out, c)
	}
	return append(out, Calls(d.Stages)...)
}

// ItemName returns the name an OpEach stage's call reads its item by.
func (s *Stage) ItemName() string {
	if s.Item != nil {
		return s.Item.Name
	}
	return DefaultItemName
}

// An Arm is one way a branch stage can take: `"condition": stages` or `else: stages`.
// Its first stage may be written without an operator, and is then a `|>` stage.
type Arm struct {
	Pos Pos // of the condition or of else
	// Cond is the condition, an expression in the same language as loop's; nil for else.
	Cond *StringLit
	// Stages run in order on the branch's flowing value when the arm is taken.
	Stages []*Stage
}

// Label is the arm's condition as written, or "else".
func (a *Arm) Label() string {
	if a.Cond == nil {
		return "else"
	}
	return a.Cond.Value
}

// A Directive is `@retry(2)`, `@timeout(20000)`, `@correct(1)` or `@limit(4)` after a
// stage's call.
type Directive struct {
	Pos  Pos // of the '@'
	Name *Ident
	Args []*Arg
}

// A Call is `Target.method(args)` or `name(args)`.
//
//   - `Agent.task("prompt", value, tools: [A, B], tool: T)` calls an agent;
//   - `Tool.method(arg: v)` calls a tool; the method may hold '-' (`Ev.get-sum`), and a
//     method name that is not a name (an MCP tool called `files.read`) is written quoted:
//     F.`files.read`(path: "a");
//   - `System.Value(x)`, `System.Fail("...")` call built-ins;
//   - `loop(Agent, "cond", max: 3)`, `yield("question")` and `listen("channel")` have no
//     receiver;
//   - `Other(x)` with no receiver calls another pipeline.
type Call struct {
	// Recv is the name before the dot; nil for a call without one.
	Recv *Ident
	// Method is the name after the dot, or the whole name when Recv is nil.
	Method *Ident
	Args   []*Arg
	// Quoted reports whether Method was written between backquotes (F.`files.read`); its
	// Name is then what is between them. (The Call holds it, not the Ident: an Ident is the
	// node a program has most of, and a bool would make each 8 bytes larger.)
	Quoted bool
}

// Pos is where the call starts: at its first name. (It is that name's, not a copy: a call
// of the 1 MB benchmark program is 48 bytes rather than 72.)
func (c *Call) Pos() Pos {
	if c.Recv != nil {
		return c.Recv.Pos()
	}
	return c.Method.Pos()
}

// Target returns "Recv.Method" or "Method".
func (c *Call) Target() string {
	if c.Recv == nil {
		return c.Method.Name
	}
	return c.Recv.Name + "." + c.Method.Name
}

// Named returns the named argument called name, or nil.
func (c *Call) Named(name string) *Arg { return namedArg(c.Args, name) }

// Positional returns the positional arguments in order.
func (c *Call) Positional() []*Arg { return positional(c.Args) }

// An Arg is one argument: positional when Name is nil, else `name: value`.
type Arg struct {
	Name  *Ident // nil when positional
	Value Expr
}

// An Expr is a value in an argument, a setting or a pipeline's start: *StringLit,
// *NumberLit, *BoolLit, *NullLit, *Ident (a bare name: a parameter, a tool, `auto`, `write`),
// *EnvRef, *Path, *ListLit, *ObjectLit, or *Call (only as a pipeline's start value).
type Expr interface {
	Node
	exprNode()
}

// A StringLit is a double-quoted string. Value has the escapes decoded; {{param}} templates
// are kept as written (see Templates).
type StringLit struct {
	Value string
	place // where the string starts, at its opening quote
}

// Templates lists the distinct {{name}} template names in the string, in order of first use.
func (s *StringLit) Templates() []string { return Templates(s.Value) }

// A NumberLit is a number as written (`0.50`, `120000`, `-1`). Value is its float64 value.
type NumberLit struct {
	Pos   Pos
	Raw   string
	Value float64
}

// IsInteger reports whether the number has no fractional part.
func (n *NumberLit) IsInteger() bool { return n.Value == float64(int64(n.Value)) }

// A BoolLit is `true` or `false`.
type BoolLit struct {
	Pos   Pos
	Value bool
}

// A NullLit is `null`.
type NullLit struct {
	Pos Pos
}

// An EnvRef is `Env.NAME`: a variable of the environment the host was given, read when the
// declaration is opened.
type EnvRef struct {
	Pos  Pos // of `Env`
	Name *Ident
}

// A Path is a dotted reference `a.b.c`: a context path (`context.data.report`,
// `context.meta.cost`) or a field of a parameter. Parts has at least two names; a single
// name is an *Ident.
type Path struct {
	Pos   Pos
	Parts []*Ident
}

// String returns the path as written.
func (p *Path) String() string {
	names := make([]string, len(p.Parts))
	for i, id := range p.Parts {
		names[i] = id.Name
	}
	return strings.Join(names, ".")
}

// IsContext reports whether the path starts with `context`.
func (p *Path) IsContext() bool { return len(p.Parts) > 0 && p.Parts[0].Name == "context" }

// A ListLit is `[a, b, c]`.
type ListLit struct {
	Pos   Pos
	Elems []Expr
}

// An ObjectLit is `{ key: value, "quoted-key": value }`.
type ObjectLit struct {
	Pos    Pos
	Fields []*ObjectField
}

// An ObjectField is one `key: value` of an object literal.
type ObjectField struct {
	Pos Pos // of the key
	Key string
	// Quoted reports whether the key was written as a string.
	Quoted bool
	Value  Expr
}

func (*StringLit) exprNode() {}
func (*NumberLit) exprNode() {}
func (*BoolLit) exprNode()   {}
func (*NullLit) exprNode()   {}
func (*Ident) exprNode()     {}
func (*EnvRef) exprNode()    {}
func (*Path) exprNode()      {}
func (*ListLit) exprNode()   {}
func (*ObjectLit) exprNode() {}
func (*Call) exprNode()      {}

// Position methods.

func (n *Ident) Position() Pos        { return n.Pos() }
func (n *PolicyDecl) Position() Pos   { return n.Pos }
func (n *Rule) Position() Pos         { return n.Pos }
func (n *ToolDecl) Position() Pos     { return n.Pos }
func (n *AgentDecl) Position() Pos    { return n.Pos }
func (n *Model) Position() Pos        { return n.Pos }
func (n *SchemaDecl) Position() Pos   { return n.Pos }
func (n *Field) Position() Pos        { return n.Name.Pos() }
func (n *TypeRef) Position() Pos      { return n.Pos }
func (n *PipelineDecl) Position() Pos { return n.Pos }
func (n *Param) Position() Pos        { return n.Name.Pos() }
func (n *Stage) Position() Pos        { return n.Pos }
func (n *Directive) Position() Pos    { return n.Pos }
func (n *Arm) Position() Pos          { return n.Pos }
func (n *Call) Position() Pos         { return n.Pos() }
func (n *Arg) Position() Pos          { return n.pos() }
func (n *StringLit) Position() Pos    { return n.Pos() }
func (n *NumberLit) Position() Pos    { return n.Pos }
func (n *BoolLit) Position() Pos      { return n.Pos }
func (n *NullLit) Position() Pos      { return n.Pos }
func (n *EnvRef) Position() Pos       { return n.Pos }
func (n *Path) Position() Pos         { return n.Pos }
func (n *ListLit) Position() Pos      { return n.Pos }
func (n *ObjectLit) Position() Pos    { return n.Pos }
func (n *ObjectField) Position() Pos  { return n.Pos }

// Decl methods.

func (d *PolicyDecl) DeclName() *Ident   { return d.Name }
func (d *ToolDecl) DeclName() *Ident     { return d.Name }
func (d *AgentDecl) DeclName() *Ident    { return d.Name }
func (d *SchemaDecl) DeclName() *Ident   { return d.Name }
func (d *PipelineDecl) DeclName() *Ident { return d.Name }

func (*PolicyDecl) Kind() string   { return "policy" }
func (*ToolDecl) Kind() string     { return "tool" }
func (*AgentDecl) Kind() string    { return "agent" }
func (*SchemaDecl) Kind() string   { return "schema" }
func (*PipelineDecl) Kind() string { return "pipeline" }

// Named returns the named argument of r called name, or nil.
func (r *Rule) Named(name string) *Arg { return namedArg(r.Args, name) }

// Named returns the named argument of t called name, or nil.
func (t *ToolDecl) Named(name string) *Arg { return namedArg(t.Args, name) }

// Positional returns the positional arguments of t in order.
func (t *ToolDecl) Positional() []*Arg { return positional(t.Args) }

func namedArg(args []*Arg, name string) *Arg {
	for _, a := range args {
		if a.Name != nil && a.Name.Name == name {
			return a
		}
	}
	return nil
}

func positional(args []*Arg) []*Arg {
	var out []*Arg
	for _, a := range args {
		if a.Name == nil {
			out = append(out, a)
		}
	}
	return out
}

// TemplateName reads what is between a template's braces: the name, spaces around it
// trimmed, and whether it is written {{raw name}} (in a Bash command, the value goes in
// unquoted; see host/lang/shell).
func TemplateName(inner string) (name string, raw bool) {
	name = strings.TrimSpace(inner)
	if rest, ok := strings.CutPrefix(name, "raw"); ok && rest != "" && (rest[0] == ' ' || rest[0] == '\t') {
		if n := strings.TrimSpace(rest); n != "" {
			return n, true
		}
	}
	return name, false
}

// Templates lists the distinct {{name}} template names in s, in order of first use.
// Spaces inside the braces are allowed (`{{ name }}`), and {{raw name}} names name; an
// unclosed `{{` is not a template.
func Templates(s string) []string {
	var out []string
	seen := map[string]bool{}
	for {
		i := strings.Index(s, "{{")
		if i < 0 {
			return out
		}
		rest := s[i+2:]
		j := strings.Index(rest, "}}")
		if j < 0 {
			return out
		}
		name, _ := TemplateName(rest[:j])
		if name != "" && !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
		s = rest[j+2:]
	}
}

// pos is where an argument is written: at its name, or at its value when positional. (An
// argument holds no position of its own: its name's or its value's is it, and the arguments
// are most of a program's nodes after its names.)
func (n *Arg) pos() Pos {
	switch {
	case n.Name != nil:
		return n.Name.Pos()
	case n.Value != nil:
		return n.Value.Position()
	}
	return Pos{}
}
