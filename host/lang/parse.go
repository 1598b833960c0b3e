package lang

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"halolang.dev/halo/internal/safefile"
)

// Parse parses one .halo file. It always returns a File; declarations that did not parse
// are left out and reported in the diagnostics, one or more per broken declaration, so every
// problem in a file is reported at once.
func Parse(filename string, src []byte) (*File, Diagnostics) {
	return parse(filename, src, nil, nil)
}

// parse is Parse, also handing each declaration's tokens to each (the formatter keeps them)
// and each comment to comment, when they are not nil.
func parse(filename string, src []byte, each func([]token), comment func(pos Pos, start, end int)) (*File, Diagnostics) {
	if each == nil && comment == nil {
		procs := runtime.GOMAXPROCS(0)
		if f, diags, ok := parseParallel(filename, src, procs, procs*partsPerProc, parallelMin); ok {
			return f, diags
		}
	}
	return parseSerial(filename, src, each, comment)
}

// parseSerial is parse in one pass.
func parseSerial(filename string, src []byte, each func([]token), comment func(pos Pos, start, end int)) (*File, Diagnostics) {
	var diags Diagnostics
	f := &File{Name: filename, Src: src}
	f.Decls, _ = parseChunk(filename, src, 1, each, comment, &diags)
	diags.Sort()
	if len(diags) > maxDiags {
		diags = diags[:maxDiags]
		diags.errorf(diags[maxDiags-1].Pos, CodeSyntax, "too many errors in %s; fix these and run again", filename)
	}
	return f, diags
}

// parseChunk scans and parses src, a whole file or the part of one that starts a line
// (line, 1-based) and a declaration, with a scanner, a parser and an arena of its own. It
// returns the declarations and the bracket depth the scanner ended at.
func parseChunk(filename string, src []byte, line int, each func([]token), comment func(pos Pos, start, end int), diags *Diagnostics) ([]Decl, int) {
	// About one declaration in 128 bytes, as in the 1 MB benchmark program (one in 123): a
	// large file's list is then not copied again and again as it grows, each copy left to a
	// collector that halo validate keeps off.
	decls := make([]Decl, 0, len(src)/128)
	ar := &arena{file: &filename}
	p := &parser{} // one for every declaration: each starts it again
	s := &scanner{file: filename, src: src, line: line, col: 1, bol: true, diags: diags, comment: comment}
	s.flush = func(toks []token) {
		if each != nil {
			each(toks)
		}
		p.init(filename, toks, diags)
		p.arena = ar
		if d := p.parseDecl(); d != nil {
			if pd, ok := d.(*PipelineDecl); ok {
				pd.Doc = s.doc
			}
			decls = append(decls, d)
		}
	}
	s.run()
	if len(decls) == 0 {
		decls = nil // as the tree of a file with no declarations has always had them
	}
	return decls, s.depth
}

// parallelMin is the smallest file parsed in parts on several cores; below it one part.
const parallelMin = 256 << 10

// partsPerProc is how many parts of a file each goroutine parsing it takes in turn, on
// average (parseParallel). With one part each, the parse finished only when the slower
// part did: in a fresh halo validate process the second goroutine often began 1.3 to 1.7 ms
// after the first (the runtime's trace: its thread was woken that late), and the two parts
// of the 1 MB benchmark program took 3.7 to 5.7 ms each. Four a goroutine: halo validate of
// that program 6% less wall time (farm-bench, 100 pairs in each order), processor time the
// same, in a fast half hour of the 2-core machine; nothing the pairs tell in a slow one.
// Eight gained no more, and each part's arena, half-filled blocks included, costs 150 KB.
const partsPerProc = 4

// parseParallel parses src in up to parts parts, procs goroutines at once taking them in
// turn, when it is at least minLen bytes long, and reports whether it did. A part starts at
// a line a declaration keyword and a name start in column 1 (which begins a declaration
// whatever came before), or at the column-1 comments right above that line (a pipeline's
// doc comment), so each part scans as it would in one pass: no token spans a line, and
// each diagnostic is inside its part, so the parts' diagnostics in part order, sorted, are
// the serial ones. When a part ends inside brackets (the next would not start at depth 0)
// or the parts have maxDiags problems or more (the serial scanner would have stopped
// reporting some), it reports false and the caller parses the file in one pass: the
// diagnostics, their order and the tree are always those of the serial parse
// (TestParseParallel compares).
func parseParallel(filename string, src []byte, procs, parts, minLen int) (*File, Diagnostics, bool) {
	if procs < 2 || parts < 2 || len(src) < minLen || len(src) < 2 || bytes.IndexByte(src, '\r') >= 0 {
		return nil, nil, false
	}
	cuts := splitDecls(src, parts)
	if len(cuts) == 0 {
		return nil, nil, false
	}
	type part struct {
		decls []Decl
		depth int
		diags Diagnostics
	}
	found := make([]part, len(cuts)+1)
	parse := func(i int) {
		start, line, end := 0, 1, len(src)
		if i > 0 {
			start, line = cuts[i-1].off, cuts[i-1].line
		}
		if i < len(cuts) {
			end = cuts[i].off
		}
		pt := &found[i]
		pt.decls, pt.depth = parseChunk(filename, src[start:end], line, nil, nil, &pt.diags)
	}
	var next atomic.Int64
	work := func() {
		for i := int(next.Add(1) - 1); i < len(found); i = int(next.Add(1) - 1) {
			parse(i)
		}
	}
	// The other goroutines start before this one takes its first part, so that a part
	// is not left for one that starts late.
	var wg sync.WaitGroup
	for range min(procs, len(found)) - 1 {
		wg.Go(work)
	}
	func() {
		defer wg.Wait() // should a part parsed here panic
		work()
	}()
	n, nd := 0, 0
	for i, pt := range found {
		if pt.depth != 0 && i < len(found)-1 {
			return nil, nil, false
		}
		n += len(pt.decls)
		nd += len(pt.diags)
	}
	if nd >= maxDiags {
		return nil, nil, false
	}
	f := &File{Name: filename, Src: src}
	if n > 0 {
		f.Decls = make([]Decl, 0, n) // nil when none, as the serial parse leaves it
	}
	var diags Diagnostics
	for _, pt := range found {
		f.Decls = append(f.Decls, pt.decls...)
		diags = append(diags, pt.diags...)
	}
	diags.Sort()
	return f, diags, true
}

// A cut is where a part of a file starts: its byte offset and 1-based line.
type cut struct{ off, line int }

// splitDecls returns up to n-1 places to cut src (which holds no '\r') into parts of about
// equal size, each starting a declaration (see parseParallel), in order.
func splitDecls(src []byte, n int) []cut {
	var cuts []cut
	target := len(src) / n
	line, off := 1, 0
	inComments := false // the line before is a comment in column 1
	var run cut         // where the comments before this line start
	for off < len(src) && len(cuts) < n-1 {
		c := src[off]
		switch {
		case c == '#' || c == '/' && off+1 < len(src) && src[off+1] == '/':
			if !inComments {
				run = cut{off, line}
			}
			inComments = true
		default:
			if off >= target && startsDeclLine(src[off:]) {
				at := cut{off, line}
				if inComments {
					at = run
				}
				if at.off > 0 {
					cuts = append(cuts, at)
					target = len(src) * (len(cuts) + 1) / n
				}
			}
			inComments = false
		}
		nl := bytes.IndexByte(src[off:], '\n')
		if nl < 0 {
			break
		}
		off += nl + 1
		line++
	}
	return cuts
}

// startsDeclLine reports whether b, a line onwards, starts with a declaration keyword and a
// name: what startsDecl always takes for the start of a declaration.
func startsDeclLine(b []byte) bool {
	for _, kw := range [...]string{"policy", "tool", "agent", "schema", "pipeline"} {
		if len(b) > len(kw) && string(b[:len(kw)]) == kw {
			i := len(kw)
			for i < len(b) && (b[i] == ' ' || b[i] == '\t') {
				i++
			}
			return i > len(kw) && i < len(b) && isIdentStart(b[i])
		}
	}
	return false
}

// A Source is one named file's contents.
type Source struct {
	Name string
	Src  []byte
}

// ParseFiles parses several files into one Program.
func ParseFiles(srcs []Source) (*Program, Diagnostics) {
	prog := &Program{}
	var all Diagnostics
	for _, s := range srcs {
		f, diags := Parse(s.Name, s.Src)
		prog.Files = append(prog.Files, f)
		all = append(all, diags...)
	}
	return prog, all
}

// Load reads and parses the .halo files that paths name: a file is read as given, a folder
// contributes its *.halo files (not those of subfolders), in name order. Relative paths are
// read from dir but keep the name they were given in positions. A path that cannot be read
// is an IO diagnostic, so one missing file does not hide the problems of the others.
func Load(dir string, paths []string) (*Program, Diagnostics) {
	var srcs []Source
	var diags Diagnostics
	seen := map[string]bool{}
	for _, p := range paths {
		files, err := Expand(dir, p)
		if err != nil {
			diags.errorf(Pos{File: p}, CodeIO, "%v", err)
			continue
		}
		for _, name := range files {
			full := filepath.Clean(Resolve(dir, name))
			if seen[full] {
				continue // named twice (a file and its folder): read it once
			}
			seen[full] = true
			b, err := safefile.Read(full, MaxSourceBytes)
			if err != nil {
				diags.errorf(Pos{File: name}, CodeIO, "%v", unwrapPathError(err))
				continue
			}
			srcs = append(srcs, Source{Name: name, Src: b})
		}
	}
	prog, more := ParseFiles(srcs)
	return prog, append(diags, more...)
}

// MaxSourceBytes is the largest .halo file Load reads: a file of a repository may be
// anything (a named pipe, which is refused too, is read without waiting).
const MaxSourceBytes = 16 << 20

// Resolve is p read from dir: p itself when dir is "" or p is absolute.
func Resolve(dir, p string) string {
	if dir == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(dir, p)
}

// Expand lists the .halo files path p names, as Load reads them: p itself, or the *.halo
// files of the folder p (not of its subfolders), in name order, each as p joined with its
// name. Relative paths are read from dir.
func Expand(dir, p string) ([]string, error) {
	st, err := os.Stat(Resolve(dir, p))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", p, unwrapPathError(err))
	}
	if !st.IsDir() {
		return []string{p}, nil
	}
	entries, err := os.ReadDir(Resolve(dir, p))
	if err != nil {
		return nil, fmt.Errorf("read folder %s: %w", p, unwrapPathError(err))
	}
	var out []string
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".halo") {
			out = append(out, filepath.Join(p, e.Name()))
		}
	}
	sort.Strings(out)
	return out, nil
}

func unwrapPathError(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// maxNesting bounds bracket nesting so deep garbage cannot exhaust the stack.
const maxNesting = 64

// A parser reads one declaration's tokens.
type parser struct {
	file string
	// toks are the declaration's tokens and, at end, a tEOF token after its last one, so
	// that the current token is always toks[i] (i <= end).
	toks  []token
	i     int
	end   int
	diags *Diagnostics
	nest  int
	arena *arena
}

// init makes p the parser of one declaration's tokens (never empty). It appends the tEOF
// token to them (in the scanner's buffer, past its tokens, when there is room) and keeps no
// reference to toks after parseDecl returns: the scanner reuses the slice.
func (p *parser) init(file string, toks []token, diags *Diagnostics) {
	last := &toks[len(toks)-1]
	eof := token{kind: tEOF, line: last.eline, col: last.ecol, eline: last.eline, ecol: last.ecol, bol: true}
	*p = parser{file: file, toks: append(toks, eof), end: len(toks), diags: diags}
}

// at returns where t starts.
func (p *parser) at(t *token) Pos { return Pos{File: p.file, Line: t.line, Col: t.col} }

// bailout unwinds the parser of one declaration after its first syntax error.
type bailout struct{}

// tok returns the current token, not a copy: a token is 48 bytes, and the parser looks at
// most tokens several times.
func (p *parser) tok() *token { return &p.toks[p.i] }

func (p *parser) peekKind(n int) tokKind {
	if p.i+n < p.end {
		return p.toks[p.i+n].kind
	}
	return tEOF
}

func (p *parser) next() *token {
	t := &p.toks[p.i]
	if p.i < p.end {
		p.i++
	}
	return t
}

func (p *parser) failf(pos Pos, format string, args ...any) {
	p.diags.errorf(pos, CodeSyntax, format, args...)
	panic(bailout{})
}

func describe(t *token) string {
	switch t.kind {
	case tIdent:
		return strconv.Quote(t.text)
	case tQuoted:
		return "quoted name `" + t.text + "`"
	case tString:
		return "string " + strconv.Quote(t.text)
	case tNumber, tModel:
		return t.text
	}
	return t.kind.String()
}

func (p *parser) expect(k tokKind, context string) *token {
	t := p.tok()
	if t.kind != k {
		p.failf(p.at(t), "unexpected %s %s; expected %s", describe(t), context, k)
	}
	return p.next()
}

func (p *parser) ident(what string) *Ident {
	t := p.tok()
	if t.kind != tIdent {
		p.failf(p.at(t), "unexpected %s; expected %s", describe(t), what)
	}
	p.next()
	return p.arena.ident(p.at(t), t.text)
}

func (p *parser) got(k tokKind) bool {
	if p.tok().kind == k {
		p.next()
		return true
	}
	return false
}

func (p *parser) isWord(w string) bool {
	t := p.tok()
	return t.kind == tIdent && t.text == w
}

// parseDecl parses the whole chunk; it returns nil after reporting a syntax error.
func (p *parser) parseDecl() (d Decl) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(bailout); !ok {
				panic(r)
			}
			p.arena.reset()
			d = nil
		}
	}()
	t := p.tok()
	if t.kind != tIdent || !isDeclKeyword(t.text) {
		p.failf(p.at(t), "unexpected %s; expected a declaration (policy, tool, agent, schema or pipeline); indent lines that continue one", describe(t))
	}
	switch t.text {
	case "policy":
		d = p.parsePolicy()
	case "tool":
		d = p.parseTool()
	case "agent":
		d = p.parseAgent()
	case "schema":
		d = p.parseSchema()
	default:
		d = p.parsePipeline()
	}
	if end := p.tok(); end.kind != tEOF {
		p.failf(p.at(end), "unexpected %s after the %s declaration", describe(end), t.text)
	}
	return d
}

func (p *parser) parsePolicy() *PolicyDecl {
	a := p.arena
	d := alloc(&a.policies, PolicyDecl{Pos: p.at(p.next())})
	d.Name = p.ident("the policy's name")
	p.expect(tColon, "after the policy name")
	m := a.ruleList.mark()
	for {
		a.ruleList.push(p.parseRule())
		if !p.got(tAmp) {
			d.Rules = a.ruleList.take(m)
			return d
		}
	}
}

func (p *parser) parseRule() *Rule {
	name := p.ident("a rule, such as Block(PII)")
	r := alloc(&p.arena.rules, Rule{Pos: name.Pos(), Name: name})
	if p.tok().kind == tLParen {
		r.Parens = true
		r.Args = p.parseArgs(tLParen, tRParen, "rule arguments")
	}
	return r
}

func (p *parser) parseTool() *ToolDecl {
	d := alloc(&p.arena.tools, ToolDecl{Pos: p.at(p.next())})
	d.Name = p.ident("the tool's name")
	p.expect(tColon, "after the tool name")
	d.Provider = p.ident("a provider, such as Workspace(...)")
	if p.tok().kind == tLParen {
		d.Args = p.parseArgs(tLParen, tRParen, "provider arguments")
	}
	return d
}

func (p *parser) parseAgent() *AgentDecl {
	a := p.arena
	d := alloc(&a.agents, AgentDecl{Pos: p.at(p.next())})
	d.Name = p.ident("the agent's name")
	open := p.expect(tLBrack, "after the agent name (write agent Name [provider/model])")
	switch t := p.tok(); t.kind {
	case tModel, tString:
		p.next()
		d.Model = p.parseModel(t)
	default:
		p.failf(p.at(t), "unexpected %s; expected a provider/model id, such as openai/gpt-4o", describe(t))
	}
	m := a.argList.mark()
	for p.got(tComma) {
		if p.tok().kind == tRBrack {
			break
		}
		name := p.ident("a setting, such as temp: 0.2")
		p.expect(tColon, "after the setting name")
		a.argList.push(a.arg(name, p.parseValue()))
	}
	d.Settings = a.argList.take(m)
	if p.tok().kind != tRBrack {
		p.failf(p.at(p.tok()), "unexpected %s; expected ',' or ']' to close the brackets opened at %d:%d", describe(p.tok()), p.at(open).Line, p.at(open).Col)
	}
	p.next()
	for {
		switch {
		case p.isWord("system"):
			kw := p.next()
			if d.System != nil {
				p.failf(p.at(kw), "agent %s has two system prompts; join them into one string (\\n starts a new line)", d.Name.Name)
			}
			t := p.expect(tString, "after system")
			d.System = a.str(p.at(t), t.text)
		case p.isWord("equips"):
			p.next()
			if l := p.identList("a tool name"); d.Equips == nil {
				d.Equips = l
			} else {
				d.Equips = append(d.Equips, l...)
			}
		case p.isWord("requires"):
			p.next()
			if l := p.identList("a policy name"); d.Requires == nil {
				d.Requires = l
			} else {
				d.Requires = append(d.Requires, l...)
			}
		case p.tok().kind == tEOF:
			return d
		default:
			p.failf(p.at(p.tok()), "unexpected %s in agent %s; expected system, equips or requires", describe(p.tok()), d.Name.Name)
		}
	}
}

func (p *parser) parseModel(t *token) *Model {
	m := alloc(&p.arena.models, Model{Pos: p.at(t)})
	m.Provider, m.Name, _ = strings.Cut(t.text, "/")
	return m
}

func (p *parser) identList(what string) []*Ident {
	l := &p.arena.identList
	m := l.mark()
	l.push(p.ident(what))
	for p.got(tComma) {
		l.push(p.ident(what))
	}
	return l.take(m)
}

func (p *parser) parseSchema() *SchemaDecl {
	a := p.arena
	d := alloc(&a.schemas, SchemaDecl{Pos: p.at(p.next())})
	d.Name = p.ident("the schema's name")
	p.expect(tLBrace, "after the schema name (write schema Name { field: Type })")
	m := a.fieldList.mark()
	for p.tok().kind != tRBrace {
		name := p.ident("a field name or '}'")
		p.expect(tColon, "after the field name")
		a.fieldList.push(alloc(&a.fields, Field{Name: name, Type: p.parseType()}))
		if !p.got(tComma) && p.tok().kind != tRBrace && !p.tok().bol {
			p.failf(p.at(p.tok()), "unexpected %s; expected ',' or '}' in schema %s", describe(p.tok()), d.Name.Name)
		}
	}
	d.Fields = a.fieldList.take(m)
	p.next()
	return d
}

func (p *parser) parseType() *TypeRef {
	name := p.ident("a type, such as String or Array<String>")
	a := p.arena
	t := alloc(&a.types, TypeRef{Pos: name.Pos(), Name: name.Name})
	if p.got(tLess) {
		p.enter(t.Pos)
		m := a.typeList.mark()
		for {
			a.typeList.push(p.parseType())
			if !p.got(tComma) {
				break
			}
		}
		t.Args = a.typeList.take(m)
		p.expect(tGreater, "to close the type arguments")
		p.nest--
	}
	return t
}

func (p *parser) parsePipeline() *PipelineDecl {
	a := p.arena
	d := alloc(&a.pipelines, PipelineDecl{Pos: p.at(p.next())})
	d.Name = p.ident("the pipeline's name")
	p.expect(tLParen, "after the pipeline name (write pipeline Name(param: Type) -> Type:)")
	m := a.paramList.mark()
	for p.tok().kind != tRParen {
		name := p.ident("a parameter name or ')'")
		p.expect(tColon, "after the parameter name")
		a.paramList.push(alloc(&a.params, Param{Name: name, Type: p.parseType()}))
		if !p.got(tComma) && p.tok().kind != tRParen {
			p.failf(p.at(p.tok()), "unexpected %s; expected ',' or ')' in the parameters", describe(p.tok()))
		}
	}
	d.Params = a.paramList.take(m)
	p.next()
	if p.got(tArrow) {
		d.Result = p.parseType()
	}
	p.expect(tColon, "before the pipeline body")
	if p.tok().kind == tEOF {
		p.failf(d.Name.Pos(), "pipeline %s has no body: write its start value and stages on the indented lines below", d.Name.Name)
	}
	if p.tok().kind.isStageOp() {
		p.failf(p.at(p.tok()), "pipeline %s needs a start value before its first stage, such as a parameter name", d.Name.Name)
	}
	d.Start = p.parseValueOrCall()
	m = a.stageList.mark()
	for p.tok().kind.isStageOp() {
		a.stageList.push(p.parseStage())
	}
	d.Stages = a.stageList.take(m)
	if t := p.tok(); t.kind != tEOF {
		p.failf(p.at(t), "unexpected %s; expected a stage (|>, |<>, |?, |*, |! or ~>)", describe(t))
	}
	return d
}

func (p *parser) parseStage() *Stage {
	op := p.next()
	a := p.arena
	st := alloc(&a.stages, Stage{Pos: p.at(op)})
	switch op.kind {
	case tThen:
		st.Op = OpThen
		if p.isWord("branch") && p.peekKind(1) == tLBrace {
			p.next()
			st.Op = OpBranch
			p.parseArms(st)
			return p.parseStageTail(st)
		}
	case tLoop:
		st.Op = OpLoop
	case tFallback:
		st.Op = OpFallback
	case tFanOut:
		st.Op = OpFanOut
		if p.isWord("each") {
			p.next()
			st.Op = OpEach
			if p.tok().kind == tIdent && p.peekKind(1) == tColon {
				st.Item = p.ident("")
				p.next()
			}
			if p.tok().kind == tLBrace {
				p.failf(p.at(p.tok()), "|* each takes one call, as in |* each Agent.task(...); |* { A(), B() } runs several calls on one value")
			}
		} else if p.tok().kind != tLBrace {
			p.failf(p.at(p.tok()), "unexpected %s after |*; expected '{' (|* { A.x(), B.y() }) or each (|* each A.x())", describe(p.tok()))
		}
	case tYield:
		st.Op = OpYield
	case tListen:
		st.Op = OpListen
	}
	if st.Op == OpFanOut {
		open := p.expect(tLBrace, "after |* (write |* { A.x(), B.y() })")
		p.enter(p.at(open))
		m := a.callList.mark()
		for p.tok().kind != tRBrace {
			a.callList.push(p.parseCall())
			if !p.got(tComma) && p.tok().kind != tRBrace && !p.tok().bol {
				p.failf(p.at(p.tok()), "unexpected %s; expected ',' or '}' in the fan-out", describe(p.tok()))
			}
		}
		st.Calls = a.callList.take(m)
		p.next()
		p.nest--
	} else {
		st.Call = p.parseCall()
	}
	return p.parseStageTail(st)
}

// parseStageTail parses what may follow a stage's call: `as name` and directives, in any
// order.
func (p *parser) parseStageTail(st *Stage) *Stage {
	a := p.arena
	m := a.dirList.mark()
	for {
		switch {
		case p.isWord("as"):
			as := p.next()
			if st.As != nil {
				p.failf(p.at(as), "a stage has one name; %q was already given", st.As.Name)
			}
			st.As = p.ident("a name after as")
		case p.tok().kind == tAt:
			at := p.next()
			dir := alloc(&a.directives, Directive{Pos: p.at(at), Name: p.ident("a directive name, such as retry")})
			if p.tok().kind == tLParen {
				dir.Args = p.parseArgs(tLParen, tRParen, "directive arguments")
			}
			a.dirList.push(dir)
		default:
			st.Directives = a.dirList.take(m)
			return st
		}
	}
}

// parseArms parses a branch's `{ "condition": stages, ..., else: stages }`. Arms are
// separated by commas or line breaks; an arm's first stage may leave out its operator.
func (p *parser) parseArms(st *Stage) {
	open := p.expect(tLBrace, "after branch")
	p.enter(p.at(open))
	var sawElse *Arm
	for p.tok().kind != tRBrace {
		k := p.tok()
		arm := &Arm{Pos: p.at(k)}
		switch {
		case k.kind == tString:
			arm.Cond = p.arena.str(p.at(k), k.text)
		case k.kind == tIdent && k.text == "else":
		default:
			p.failf(p.at(k), "unexpected %s in branch; expected a condition string, else, or '}' (opened at %d:%d)", describe(k), p.at(open).Line, p.at(open).Col)
		}
		if sawElse != nil {
			p.failf(p.at(k), "an arm after else (at %d:%d) is never taken; else is the last arm", sawElse.Pos.Line, sawElse.Pos.Col)
		}
		if arm.Cond == nil {
			sawElse = arm
		}
		p.next()
		p.expect(tColon, "after the arm's condition (write \"condition\": Call(...))")
		if p.tok().kind.isStageOp() {
			arm.Stages = append(arm.Stages, p.parseStage())
		} else {
			first := &Stage{Pos: p.at(p.tok()), Op: OpThen}
			first.Call = p.parseCall()
			arm.Stages = append(arm.Stages, p.parseStageTail(first))
		}
		for p.tok().kind.isStageOp() {
			arm.Stages = append(arm.Stages, p.parseStage())
		}
		st.Arms = append(st.Arms, arm)
		if !p.got(tComma) && p.tok().kind != tRBrace && !p.tok().bol {
			p.failf(p.at(p.tok()), "unexpected %s; expected a stage, ',' or '}' in the branch", describe(p.tok()))
		}
	}
	p.next()
	p.nest--
}

// parseCall parses `Recv.method(args)` or `name(args)`.
func (p *parser) parseCall() *Call {
	first := p.ident("a call, such as Agent.task(...)")
	c := alloc(&p.arena.calls, Call{Method: first})
	if p.got(tDot) {
		c.Recv = first
		if t := p.tok(); t.kind == tQuoted {
			p.next()
			c.Method = p.arena.ident(p.at(t), t.text)
			c.Quoted = true
		} else {
			c.Method = p.ident("a method name after '.'")
		}
		if p.tok().kind == tDot {
			p.failf(p.at(p.tok()), "unexpected '.'; a call is Target.method(...)")
		}
	}
	if p.tok().kind != tLParen {
		p.failf(p.at(p.tok()), "unexpected %s; expected '(' after %s (a call needs parentheses, even when empty)", describe(p.tok()), c.Target())
	}
	c.Args = p.parseArgs(tLParen, tRParen, "call arguments")
	return c
}

func (p *parser) enter(pos Pos) {
	p.nest++
	if p.nest > maxNesting {
		p.failf(pos, "brackets nested more than %d deep", maxNesting)
	}
}

// parseArgs parses `(a, name: b, ...)`; a trailing comma is allowed.
func (p *parser) parseArgs(open, close tokKind, what string) []*Arg {
	o := p.expect(open, "")
	p.enter(p.at(o))
	ar := p.arena
	m := ar.argList.mark()
	for p.tok().kind != close {
		var a *Arg
		if p.tok().kind == tIdent && p.peekKind(1) == tColon {
			name := p.ident("")
			p.next()
			a = ar.arg(name, p.parseValue())
		} else {
			v := p.parseValue()
			a = ar.arg(nil, v)
		}
		ar.argList.push(a)
		if !p.got(tComma) && p.tok().kind != close {
			p.failf(p.at(p.tok()), "unexpected %s in %s; expected ',' or %s (opened at %d:%d)", describe(p.tok()), what, close, p.at(o).Line, p.at(o).Col)
		}
	}
	p.next()
	p.nest--
	return ar.argList.take(m)
}

// smallInt is strconv.ParseFloat of s when s is 1 to 15 decimal digits (max_steps: 40,
// timeout_ms: 120000), which it reads exactly and without ParseFloat's general work; ok is
// false for any other number.
func smallInt(s string) (float64, bool) {
	if len(s) == 0 || len(s) > 15 {
		return 0, false
	}
	n := int64(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return float64(n), true
}

func (p *parser) parseValueOrCall() Expr {
	if p.tok().kind == tIdent && (p.peekKind(1) == tLParen || p.peekKind(1) == tDot && (p.peekKind(2) == tIdent || p.peekKind(2) == tQuoted) && p.peekKind(3) == tLParen) && p.tok().text != "Env" {
		return p.parseCall()
	}
	return p.parseValue()
}

// parseValue parses an argument value.
func (p *parser) parseValue() Expr {
	a := p.arena
	t := p.tok()
	switch t.kind {
	case tString:
		p.next()
		return a.str(p.at(t), t.text)
	case tNumber:
		p.next()
		v, ok := smallInt(t.text)
		if !ok {
			var err error
			if v, err = strconv.ParseFloat(t.text, 64); err != nil {
				p.failf(p.at(t), "bad number %s", t.text)
			}
		}
		return alloc(&a.nums, NumberLit{Pos: p.at(t), Raw: t.text, Value: v})
	case tIdent:
		p.next()
		switch t.text {
		case "true", "false":
			return alloc(&a.bools, BoolLit{Pos: p.at(t), Value: t.text == "true"})
		case "null":
			return &NullLit{Pos: p.at(t)}
		}
		first := a.ident(p.at(t), t.text)
		if p.tok().kind != tDot {
			if p.tok().kind == tLParen {
				p.failf(p.at(p.tok()), "a call is not a value here; give %s's result a name with `as` and use context.data.<name>", t.text)
			}
			return first
		}
		m := a.identList.mark()
		a.identList.push(first)
		for p.got(tDot) {
			a.identList.push(p.ident("a name after '.'"))
		}
		parts := a.identList.take(m)
		if p.tok().kind == tLParen {
			p.failf(p.at(p.tok()), "a call is not a value here; give its result a name with `as` and use context.data.<name>")
		}
		if first.Name == "Env" {
			if len(parts) != 2 {
				p.failf(p.at(t), "Env.NAME takes one variable name")
			}
			return alloc(&a.envs, EnvRef{Pos: p.at(t), Name: parts[1]})
		}
		return alloc(&a.paths, Path{Pos: p.at(t), Parts: parts})
	case tLBrack:
		p.next()
		p.enter(p.at(t))
		l := alloc(&a.lists, ListLit{Pos: p.at(t)})
		m := a.exprList.mark()
		for p.tok().kind != tRBrack {
			a.exprList.push(p.parseValue())
			if !p.got(tComma) && p.tok().kind != tRBrack {
				p.failf(p.at(p.tok()), "unexpected %s in a list; expected ',' or ']' (opened at %d:%d)", describe(p.tok()), p.at(t).Line, p.at(t).Col)
			}
		}
		l.Elems = a.exprList.take(m)
		p.next()
		p.nest--
		return l
	case tLBrace:
		p.next()
		p.enter(p.at(t))
		o := alloc(&a.objects, ObjectLit{Pos: p.at(t)})
		m := a.objFieldList.mark()
		for p.tok().kind != tRBrace {
			k := p.tok()
			if k.kind != tIdent && k.kind != tString {
				p.failf(p.at(k), "unexpected %s; expected a key (a name or a string) or '}'", describe(k))
			}
			p.next()
			p.expect(tColon, "after the key")
			a.objFieldList.push(alloc(&a.objFields, ObjectField{Pos: p.at(k), Key: k.text, Quoted: k.kind == tString, Value: p.parseValue()}))
			if !p.got(tComma) && p.tok().kind != tRBrace {
				p.failf(p.at(p.tok()), "unexpected %s in an object; expected ',' or '}' (opened at %d:%d)", describe(p.tok()), p.at(t).Line, p.at(t).Col)
			}
		}
		o.Fields = a.objFieldList.take(m)
		p.next()
		p.nest--
		return o
	}
	p.failf(p.at(t), "unexpected %s; expected a value (a string, number, name, list or object)", describe(t))
	return nil
}
