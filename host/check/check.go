// Package check owns name resolution and validation of a parsed Halo program: undeclared and
// duplicate names, agents' tool sets, policy rules and their arguments (regular expressions,
// effects, categories), providers, types, stages and directives. `halo validate` prints what
// it finds; the runtime refuses to run a program with errors.
//
// check knows no vocabulary of its own that another package owns: which tool providers exist
// and what their declarations take (host/tool's registry), which model providers exist
// (host/model), what policy rules take (host/policy) are functions and tables the caller
// passes in or the owner exports, in the manner of starlark-go's resolver. check never loads a
// provider.
package check

import (
	"fmt"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"halolang.dev/halo/host/lang"
	"halolang.dev/halo/host/policy"
	"halolang.dev/halo/host/tool"
)

// Config is what the checker needs to know from outside the program. Check may call its
// functions from several goroutines at once (a large program is checked in parts), so they
// must be safe for concurrent use.
type Config struct {
	// IsProvider reports whether a tool provider type exists: a built-in, MCP, an installed
	// package's provider (host/tool's registry: reg.Has). Nil accepts every provider name.
	IsProvider func(name string) bool
	// Providers lists the known package provider names, for "did you mean" suggestions.
	// Optional.
	Providers []string
	// CheckDeclaration, when not nil, checks a tool declaration's arguments the way its
	// provider reads them (every option of MCP(...), say), without opening anything. Values
	// are what can be known before a run (lang.StaticValue): literals as JSON-like Go values,
	// and nil for anything that needs the environment or a run's inputs (Env.NAME,
	// {{templates}}).
	CheckDeclaration func(provider string, args []any, named map[string]any) []DeclProblem
	// ChecksDeclaration, when not nil, reports whether CheckDeclaration checks anything of a
	// provider's declarations: the arguments of the others are not read out for it (most
	// provider types check nothing, and a large program declares many tools).
	ChecksDeclaration func(provider string) bool
	// ModelProvider resolves the provider part of an agent's model id ("google" stands for
	// "gemini"): the canonical name, and false when no provider goes by that name. host/model
	// owns the list (model.Canonical); nil accepts every provider name.
	ModelProvider func(name string) (canonical string, ok bool)
	// ModelProviders lists the accepted provider names, for "did you mean" suggestions
	// (model.Spellings).
	ModelProviders []string
	// CanCallTools reports whether a (canonical) model provider can offer tools to a model
	// (model.SupportsTools); nil means every provider can.
	CanCallTools func(provider string) bool
	// ToolMethods describes a provider type's methods without opening anything, when the
	// type declares them (built-ins, http packages): ok false when only an opened provider
	// can say. It lets the checker name the method an agent's tool: T calls, and check it
	// against the agent's tool policies. Nil means no type declares its methods.
	ToolMethods func(provider string) (methods []tool.Method, ok bool)
	// IsStore reports whether a provider type is a store (File, VectorStore): tools: auto
	// does not offer stores, which add to an agent's prompt instead. Nil means none is.
	IsStore func(provider string) bool
}

// A DeclProblem is one problem CheckDeclaration found: the option at fault ("url", "env",
// or "" for the first positional argument) and what is wrong.
type DeclProblem struct {
	Option  string
	Message string
	// Warning reports the problem as a warning, not an error.
	Warning bool
}

// Builtin names that declarations cannot take.
var reserved = set("System", "Env", "context", "loop", "yield", "listen", "auto", "none", "true", "false", "null")

// Built-in type names and how many type arguments each may take.
var builtinTypes = map[string][2]int{
	"String": {0, 0}, "Number": {0, 0}, "Integer": {0, 0}, "Boolean": {0, 0},
	"Array": {0, 1}, "List": {0, 1}, "Object": {0, 0}, "Map": {0, 1},
	"JSON": {0, 0}, "Any": {0, 0}, "Result": {0, 0},
}

// Agent bracket settings and call options.
var agentSettings = set("temp", "temperature", "max_steps", "tool_result_chars", "tools", "max_tokens")

// Directives a stage may carry.
var directives = set("retry", "timeout", "correct", "limit")

// Check validates prog and returns every problem found, sorted by position.
func Check(prog *lang.Program, cfg Config) lang.Diagnostics {
	var decls []lang.Decl
	if len(prog.Files) == 1 {
		// One file's declarations are read in place: checkInParts writes none of them, and
		// Decls would copy them (95 KB of the 1 MB benchmark program).
		decls = prog.Files[0].Decls
	} else {
		decls = prog.Decls()
	}
	parts := 1
	if len(decls) >= parallelDecls {
		parts = runtime.GOMAXPROCS(0)
	}
	return checkInParts(decls, cfg, parts)
}

// parallelDecls is the fewest declarations checked in parts on several cores.
const parallelDecls = 512

// chunksPerRun is how many chunks of the declarations each run at once has to take, on
// average (checkInParts).
const chunksPerRun = 8

// checkInParts is Check, checking the declarations in up to parts runs at once, one
// goroutine each, which take contiguous chunks of them in turn. A declaration's checks read
// the others but write only the checker's diagnostics and its caches of pure results, so
// each run gets a checker of its own over the shared table of declarations; the chunks'
// diagnostics, taken in chunk order, are those one checker would have written in the same
// order (TestCheckParallel compares).
func checkInParts(decls []lang.Decl, cfg Config, parts int) lang.Diagnostics {
	c := &checker{cfg: cfg, decls: make(map[string]lang.Decl, len(decls))}
	c.declare(decls)
	parts = max(1, min(parts, len(decls)))
	if parts == 1 {
		c.checkDecls(decls)
	} else {
		// The declarations are cut into chunks, several a run, which each run takes in
		// turn as it finishes the one before: a run that starts late, or goes slower on a
		// core something else is using, takes fewer. Each chunk's diagnostics are kept in
		// the chunk's place.
		chunks := min(len(decls), parts*chunksPerRun)
		found := make([]lang.Diagnostics, chunks)
		var next atomic.Int64
		work := func(r *checker) {
			for i := int(next.Add(1) - 1); i < chunks; i = int(next.Add(1) - 1) {
				r.diags = nil
				r.checkDecls(decls[len(decls)*i/chunks : len(decls)*(i+1)/chunks])
				found[i] = r.diags
			}
		}
		runs := make([]*checker, parts)
		for i := range runs {
			runs[i] = &checker{cfg: cfg, decls: c.decls}
		}
		// The other runs start before this goroutine takes its first chunk: started after
		// the first run, they began only once it had finished, and the runs took turns on
		// one core.
		var wg sync.WaitGroup
		for i := 1; i < parts; i++ {
			wg.Go(func() { work(runs[i]) })
		}
		func() {
			defer wg.Wait() // should the first run panic
			work(runs[0])
		}()
		for _, d := range found {
			c.diags = append(c.diags, d...)
		}
		for _, r := range runs {
			for name, p := range r.compiled {
				c.compiledPolicy(name, p) // the same policy, whichever run compiled it
			}
		}
	}
	c.checkPolicyHoles(decls, parts)
	c.diags.Sort()
	return c.diags
}

// checkDecls checks each of decls on its own.
func (c *checker) checkDecls(decls []lang.Decl) {
	for _, d := range decls {
		switch x := d.(type) {
		case *lang.PolicyDecl:
			c.checkPolicy(x)
		case *lang.ToolDecl:
			c.checkTool(x)
		case *lang.AgentDecl:
			c.checkAgent(x)
		case *lang.SchemaDecl:
			c.checkSchema(x)
		case *lang.PipelineDecl:
			c.checkPipeline(x)
		}
	}
}

type checker struct {
	cfg   Config
	decls map[string]lang.Decl
	// specs is the RuleSpecs list of the policy checkPolicy compiles, reused from policy to
	// policy.
	specs []policy.RuleSpec
	// byKind lists the declared names of each kind, sorted, for suggestions; it is built
	// when the first suggestion is looked for.
	byKind map[string][]string
	// shellFirst remembers, per provider type and method, whether a lone positional value
	// fills the method's shell command line (tool.Method.ShellFillsFirst reads its schema).
	shellFirst map[methodKey]bool
	// conds remembers each condition's compile result.
	conds map[string]compiledCond
	// compiled holds each policy as host/policy compiles it (nil when it has errors).
	compiled map[string]*policy.Policy
	diags    lang.Diagnostics
}

func (c *checker) errorf(pos lang.Pos, code, format string, args ...any) {
	c.report(pos, lang.Error, code, format, args...)
}

func (c *checker) warn(pos lang.Pos, code, format string, args ...any) {
	c.report(pos, lang.Warning, code, format, args...)
}

// declare records every declaration; a second one of a name is a DUPLICATE.
func (c *checker) declare(decls []lang.Decl) {
	for _, d := range decls {
		id := d.DeclName()
		if reserved[id.Name] {
			c.errorf(id.Pos(), CodeDuplicate, "%s is built in and cannot be declared", id.Name)
			continue
		}
		if prev, ok := c.decls[id.Name]; ok {
			c.errorf(id.Pos(), CodeDuplicate, "%s is already declared as %s at %s", id.Name, article(prev.Kind()), prev.DeclName().Pos())
			continue
		}
		c.decls[id.Name] = d
	}
}

// kindOf returns the keyword that declared name, or "".
func (c *checker) kindOf(name string) string {
	if d, ok := c.decls[name]; ok {
		return d.Kind()
	}
	return ""
}

// namesOf lists the declared names of one kind, for suggestions.
func (c *checker) namesOf(kind string) []string {
	if c.byKind == nil {
		c.byKind = map[string][]string{}
		for name, d := range c.decls {
			c.byKind[d.Kind()] = append(c.byKind[d.Kind()], name)
		}
		for _, names := range c.byKind {
			sort.Strings(names)
		}
	}
	return append([]string(nil), c.byKind[kind]...)
}

// undeclared reports a name that is not a declared kind, suggesting the nearest one.
func (c *checker) undeclared(pos lang.Pos, kind, name string) {
	c.undeclaredIn(pos, kind, name, false)
}

// undeclaredIn is undeclared for a name that is only part of the token at pos (the tool of
// a "Tool.method" pattern): the suggestion is then said, not offered as a replacement.
func (c *checker) undeclaredIn(pos lang.Pos, kind, name string, part bool) {
	if other := c.kindOf(name); other != "" {
		c.errorf(pos, CodeUndeclared, "%s is %s, not %s", name, article(other), article(kind))
		return
	}
	h := suggest(name, c.namesOf(kind))
	if part {
		h = h.textOnly()
	}
	c.errorf(pos, CodeUndeclared, "undeclared %s %s%s", kind, name, h)
}

func (c *checker) checkTool(d *lang.ToolDecl) {
	p := d.Provider.Name
	if c.cfg.IsProvider != nil && !c.cfg.IsProvider(p) {
		hint := suggest(p, c.cfg.Providers)
		if hint.help == "" {
			names := append([]string(nil), c.cfg.Providers...)
			sort.Strings(names)
			hint.help = "install a package that provides it (halo add)"
			if len(names) > 0 {
				hint.help += " or use one of " + strings.Join(names, ", ")
			}
		}
		c.errorf(d.Provider.Pos(), CodeUnknownProvider, "unknown provider %s%s", p, hint)
	}
	for _, a := range d.Args {
		c.checkStatic(a.Value, "a tool declaration")
	}
	if c.cfg.CheckDeclaration != nil && (c.cfg.ChecksDeclaration == nil || c.cfg.ChecksDeclaration(p)) {
		c.checkDeclaration(d)
	}
}

// checkDeclaration reports the problems Config.CheckDeclaration finds, each at the argument
// it names.
func (c *checker) checkDeclaration(d *lang.ToolDecl) {
	args, named := d.StaticArgs()
	for _, pr := range c.cfg.CheckDeclaration(d.Provider.Name, args, named) {
		at := d.Provider.Pos()
		if a := d.Named(pr.Option); a != nil {
			at = a.Position()
		} else if pos := d.Positional(); len(pos) > 0 && (pr.Option == "" || pr.Option == "command") {
			at = pos[0].Position()
		}
		if pr.Warning {
			c.warn(at, CodeToolConfig, "%s %s: %s", d.Provider.Name, d.Name.Name, pr.Message)
			continue
		}
		c.errorf(at, CodeToolConfig, "%s %s: %s", d.Provider.Name, d.Name.Name, pr.Message)
	}
}

// checkStatic checks a value outside a pipeline: no parameters or context to refer to.
func (c *checker) checkStatic(v lang.Expr, where string) {
	switch x := v.(type) {
	case *lang.Ident:
		c.errorf(x.Pos(), CodeUndeclared, "%s is not a value in %s; quote it if it is text", x.Name, where)
	case *lang.Path:
		c.errorf(x.Pos, CodeUndeclared, "%s is not a value in %s", x, where)
	case *lang.ListLit:
		for _, e := range x.Elems {
			c.checkStatic(e, where)
		}
	case *lang.ObjectLit:
		for _, f := range x.Fields {
			c.checkStatic(f.Value, where)
		}
	}
}

// noTools reports whether a's model provider cannot call tools.
func (c *checker) noTools(a *lang.AgentDecl) bool {
	if a.Model == nil || c.cfg.CanCallTools == nil {
		return false
	}
	p := a.Model.Provider
	if c.cfg.ModelProvider != nil {
		canon, ok := c.cfg.ModelProvider(p)
		if !ok {
			return false
		}
		p = canon
	}
	return !c.cfg.CanCallTools(p)
}

func (c *checker) checkAgent(d *lang.AgentDecl) {
	if m := d.Model; m != nil {
		known := true
		if c.cfg.ModelProvider != nil {
			_, known = c.cfg.ModelProvider(m.Provider)
		}
		switch {
		case !known:
			hint := suggestOr(m.Provider, c.cfg.ModelProviders)
			if hint.replacement != "" && m.Name != "" {
				hint.replacement += "/" + m.Name // the span is the whole id
			}
			c.errorf(m.Pos, CodeUnknownProvider, "unknown model provider %q in %s%s", m.Provider, m, hint)
		case m.Name == "":
			c.errorf(m.Pos, CodeArguments, "model id %q needs a model after the provider, such as %s/<model>", m, m.Provider)
		}
	}
	for _, s := range d.Settings {
		name := s.Name.Name
		if !agentSettings[name] {
			c.warn(s.Position(), CodeArguments, "unknown agent setting %s is ignored%s", name, suggest(name, keys(agentSettings)))
			continue
		}
		c.checkAgentOption(d, s)
	}
	seen := map[string]bool{}
	for _, id := range d.Equips {
		if seen[id.Name] {
			c.warn(id.Pos(), CodeDuplicate, "agent %s equips %s twice", d.Name.Name, id.Name)
		}
		seen[id.Name] = true
		if c.kindOf(id.Name) != "tool" {
			c.undeclared(id.Pos(), "tool", id.Name)
		}
	}
	seen = map[string]bool{}
	for _, id := range d.Requires {
		if seen[id.Name] {
			c.warn(id.Pos(), CodeDuplicate, "agent %s requires %s twice", d.Name.Name, id.Name)
		}
		seen[id.Name] = true
		if c.kindOf(id.Name) != "policy" {
			c.undeclared(id.Pos(), "policy", id.Name)
		}
	}
}

// checkAgentOption checks one agent setting, in the brackets or on a call.
func (c *checker) checkAgentOption(a *lang.AgentDecl, s *lang.Arg) {
	switch s.Name.Name {
	case "temp", "temperature":
		if n, ok := s.Value.(*lang.NumberLit); !ok || n.Value < 0 || n.Value > 2 {
			c.errorf(s.Value.Position(), CodeArguments, "%s must be a number from 0 to 2", s.Name.Name)
		}
	case "max_steps", "tool_result_chars", "max_tokens":
		if n, ok := s.Value.(*lang.NumberLit); !ok || n.Value < 1 || !n.IsInteger() {
			c.errorf(s.Value.Position(), CodeArguments, "%s must be a whole number, 1 or more", s.Name.Name)
		}
	case "tools":
		c.checkToolsOption(a, s)
	}
}

// checkToolsOption checks `tools: auto | none | [A, B]`: each tool declared and equipped,
// and no tools on a model that cannot call them.
func (c *checker) checkToolsOption(a *lang.AgentDecl, s *lang.Arg) {
	wantsTools := true
	switch v := s.Value.(type) {
	case *lang.Ident:
		switch v.Name {
		case "auto":
			if len(a.Equips) == 0 {
				c.warn(v.Pos(), CodeToolConfig, "tools: auto, but agent %s equips no tools", a.Name.Name)
			} else if c.equipsOnlyStores(a) {
				c.warn(v.Pos(), CodeToolConfig, "tools: auto offers agent %s nothing: it equips only stores, which add to its prompt; name one in tools: [%s] to offer its search", a.Name.Name, a.Equips[0].Name)
			}
		case "none":
			wantsTools = false
		default:
			c.errorf(v.Pos(), CodeToolConfig, "tools: is auto, none or a list such as [%s]", v.Name)
			return
		}
	case *lang.ListLit:
		wantsTools = len(v.Elems) > 0
		for _, e := range v.Elems {
			id, ok := e.(*lang.Ident)
			if !ok {
				c.errorf(e.Position(), CodeToolConfig, "tools: lists tool names, such as [Files, Tests]")
				continue
			}
			if c.kindOf(id.Name) != "tool" {
				c.undeclared(id.Pos(), "tool", id.Name)
				continue
			}
			if !equips(a, id.Name) {
				resolved, unresolved := c.equipsByResolution(a)
				if suggest(id.Name, unresolved).help != "" {
					// The agent equips a near name that did not resolve (equips Doc, tools:
					// [Docs]): that name's error is the one to fix, and this would cite it.
					continue
				}
				c.errorf(id.Pos(), CodeToolConfig, "agent %s does not equip %s%s", a.Name.Name, id.Name, suggestOr2(id.Name, resolved, "add it to the agent's equips"))
			}
		}
	default:
		c.errorf(s.Value.Position(), CodeToolConfig, "tools: is auto, none or a list of tool names")
		return
	}
	if wantsTools && c.noTools(a) {
		c.errorf(s.Position(), CodeToolConfig, "agent %s runs on %s, which cannot call tools; remove tools:", a.Name.Name, providerTitle(a.Model.Provider))
	}
}

// equipsOnlyStores reports whether every tool a equips is a store.
func (c *checker) equipsOnlyStores(a *lang.AgentDecl) bool {
	if c.cfg.IsStore == nil {
		return false
	}
	for _, id := range a.Equips {
		td, ok := c.decls[id.Name].(*lang.ToolDecl)
		if !ok || !c.cfg.IsStore(td.Provider.Name) {
			return false
		}
	}
	return true
}

// providerTitle is a model provider's name as a sentence writes it.
func providerTitle(p string) string {
	if p == "" {
		return p
	}
	return strings.ToUpper(p[:1]) + p[1:]
}

// equipsByResolution splits the names agent a equips into declared tools and the others.
func (c *checker) equipsByResolution(a *lang.AgentDecl) (resolved, unresolved []string) {
	for _, id := range a.Equips {
		if c.kindOf(id.Name) == "tool" {
			resolved = append(resolved, id.Name)
		} else {
			unresolved = append(unresolved, id.Name)
		}
	}
	return resolved, unresolved
}

// suggestOr2 is suggest, or otherwise (help without a replacement) when nothing is near.
func suggestOr2(name string, candidates []string, otherwise string) hint {
	if s := suggest(name, candidates); s.help != "" {
		return s
	}
	return hint{help: otherwise}
}

func equips(a *lang.AgentDecl, tool string) bool {
	for _, id := range a.Equips {
		if id.Name == tool {
			return true
		}
	}
	return false
}

func (c *checker) checkSchema(d *lang.SchemaDecl) {
	seen := map[string]bool{}
	for _, f := range d.Fields {
		if seen[f.Name.Name] {
			c.errorf(f.Name.Pos(), CodeDuplicate, "schema %s has two fields named %s", d.Name.Name, f.Name.Name)
		}
		seen[f.Name.Name] = true
		c.checkType(f.Type)
	}
}

func (c *checker) checkType(t *lang.TypeRef) {
	if t == nil {
		return
	}
	if arity, ok := builtinTypes[t.Name]; ok {
		if len(t.Args) < arity[0] || len(t.Args) > arity[1] {
			if arity[1] == 0 {
				c.errorf(t.Pos, CodeBadType, "%s takes no type arguments", t.Name)
			} else {
				c.errorf(t.Pos, CodeBadType, "%s takes one type argument, as in %s<String>", t.Name, t.Name)
			}
		}
		for _, a := range t.Args {
			c.checkType(a)
		}
		return
	}
	if c.kindOf(t.Name) == "schema" {
		if len(t.Args) > 0 {
			c.errorf(t.Pos, CodeBadType, "schema %s takes no type arguments", t.Name)
		}
		return
	}
	names := append(c.namesOf("schema"), "String", "Number", "Integer", "Boolean", "Array", "List", "Object", "Map", "JSON", "Any", "Result")
	c.errorf(t.Pos, CodeBadType, "unknown type %s%s", t.Name, suggest(t.Name, names))
}

// suggest returns the hint `did you mean X?` for the candidate nearest to name, replacing
// name with X, or no hint when none is near.
func suggest(name string, candidates []string) hint {
	best, bestDist := "", 0
	limit := max(1, len(name)/4)
	lower := strings.ToLower(name)
	for _, cand := range candidates {
		if cand == name || len(cand) > len(name)+limit || len(cand) < len(name)-limit {
			continue // too long or short to be near: skip the distance
		}
		d := distance(lower, strings.ToLower(cand))
		if d <= limit && (best == "" || d < bestDist || d == bestDist && cand < best) {
			best, bestDist = cand, d
		}
	}
	if best == "" {
		return hint{}
	}
	return hint{help: fmt.Sprintf("did you mean %s?", best), replacement: best}
}

// suggestOr is suggest, or the whole list when nothing is near.
func suggestOr(name string, candidates []string) hint {
	if s := suggest(name, candidates); s.help != "" {
		return s
	}
	if len(candidates) == 0 {
		return hint{}
	}
	return hint{help: "known: " + strings.Join(candidates, ", ")}
}

// distance is the optimal-string-alignment distance between a and b, in bytes (names are
// ASCII): insertions, deletions, substitutions and swaps of neighbours each cost one, so
// "Flies" is one step from "Files".
func distance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		if a == b {
			return 0
		}
		return 64
	}
	rows := make([][]int, len(a)+1)
	for i := range rows {
		rows[i] = make([]int, len(b)+1)
		rows[i][0] = i
	}
	for j := range rows[0] {
		rows[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d := min(rows[i-1][j]+1, rows[i][j-1]+1, rows[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d = min(d, rows[i-2][j-2]+1)
			}
			rows[i][j] = d
		}
	}
	return rows[len(a)][len(b)]
}

// article puts "a" or "an" before a declaration kind.
func article(kind string) string {
	if strings.HasPrefix(kind, "a") {
		return "an " + kind
	}
	return "a " + kind
}
