package tool

import (
	"context"
	"fmt"
	"sort"
	"sync"
)

// Kind says where a provider type comes from.
type Kind string

const (
	KindBuiltin Kind = "builtin" // ships with the halo binary
	KindMCP     Kind = "mcp"     // an MCP server (MCP(...) or an mcp package)
	KindHTTP    Kind = "http"    // an http package, built from its manifest
	KindModule  Kind = "module"  // a module package: a plugin executable
)

// A Declaration is one `tool Name : Provider(args...)` after evaluation: Env.NAME read,
// {{templates}} filled from the run's inputs. Values are what encoding/json produces
// (string, float64, bool, nil, []any, map[string]any).
type Declaration struct {
	// Name is the declared tool name (`Files`).
	Name string
	// Provider is the provider type (`Workspace`).
	Provider string
	// Args are the positional arguments.
	Args []any
	// Named are the named arguments.
	Named map[string]any
	// Getenv reads the environment the CLI handed in (for options such as env: ["TOKEN"]).
	// It is never the process environment read directly.
	Getenv func(string) (string, bool)
	// Dir is the project folder relative paths are resolved against.
	Dir string
	// Batch, when not nil, is shared by the declarations opened together with this one:
	// what their openings have in common is worked out there once. Nil: nothing is shared.
	Batch *Batch
}

// A Batch is what declarations opened together share (the tools one agent call of a run
// offers, opened one after the other, each with the same Batch in Declaration.Batch): a
// provider type keeps there what every opening would otherwise work out again, such as the
// project folder with its links resolved. Whoever makes a batch uses it for that one
// opening and drops it, so whatever it holds was read from the file system during that
// opening, as each declaration's own reading would have been: a link changed between two
// runs, or between two agent calls of one run, is seen by the later one.
type Batch struct {
	mu   sync.Mutex
	done map[any]batchResult
}

type batchResult struct {
	v   any
	err error
}

// Do returns what f returned the first time this batch was asked for key, calling f then;
// a nil Batch calls f every time. f must be a function of key alone (and of the file
// system, read now), and must not call Do.
func (b *Batch) Do(key any, f func() (any, error)) (any, error) {
	if b == nil {
		return f()
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if r, ok := b.done[key]; ok {
		return r.v, r.err
	}
	v, err := f()
	if b.done == nil {
		b.done = map[any]batchResult{}
	}
	b.done[key] = batchResult{v, err}
	return v, err
}

// Arg returns the i-th positional argument, or nil when there is none.
func (d Declaration) Arg(i int) any {
	if i < len(d.Args) {
		return d.Args[i]
	}
	return nil
}

// A Type is a provider type that declarations can name.
type Type struct {
	// Name is what declarations write after the colon: `Workspace`, `MCP`, `Stripe`.
	Name string
	// Description is one line for `halo tools`.
	Description string
	// Kind says where the type comes from.
	Kind Kind
	// Package names the installed package that provides it, for package types.
	Package string
	// Methods, when not nil, describes the methods without opening anything (built-ins and
	// http packages); types whose methods come from a server leave it nil.
	Methods []Method
	// MethodsOf, when not nil, narrows Methods to those one declaration offers, as far as
	// its arguments tell before anything opens (a Workspace without write: true has no
	// write, edit or delete). A value not known before a run is nil in d.Named or d.Args;
	// when what d says decides nothing, it returns Methods.
	MethodsOf func(d Declaration) []Method
	// Open configures a provider for one declaration.
	Open func(ctx context.Context, d Declaration) (Provider, error)
	// Check, when not nil, reports problems with a declaration's arguments without opening
	// anything; `halo validate` calls it. Values it cannot know before a run are nil.
	Check func(d Declaration) []Problem
}

// A Problem is one thing wrong with a declaration: the option at fault ("url", "env", or
// "command" for the first positional argument) and what is wrong.
type Problem struct {
	Option  string
	Message string
	// Warning marks a problem that does not stop the program from running (a store's
	// pattern that matches no file yet).
	Warning bool
}

func (p Problem) String() string { return p.Option + ": " + p.Message }

// ErrorCode returns TOOL_CONFIG: every declaration problem carries it.
func (p Problem) ErrorCode() string { return CodeToolConfig }

// CheckDeclaration runs the Check of d's provider type, if it has one.
func (r *Registry) CheckDeclaration(d Declaration) []Problem {
	if t, ok := r.types[d.Provider]; ok && t.Check != nil {
		return t.Check(d)
	}
	return nil
}

// A Registry maps provider type names to types. It is built per command, never global.
type Registry struct {
	types map[string]Type
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{types: map[string]Type{}} }

// Add registers t. A name may be registered once: a package cannot take a built-in's name or
// another package's.
func (r *Registry) Add(t Type) error {
	if t.Name == "" {
		return fmt.Errorf("provider type without a name")
	}
	if old, ok := r.types[t.Name]; ok {
		return Errorf(CodeToolConfig, "provider %s is already defined (%s); a provider cannot take another's name", t.Name, describeOrigin(old))
	}
	r.types[t.Name] = t
	return nil
}

func describeOrigin(t Type) string {
	if t.Package != "" {
		return "by package " + t.Package
	}
	return string(t.Kind)
}

// Lookup returns the type called name.
func (r *Registry) Lookup(name string) (Type, bool) {
	t, ok := r.types[name]
	return t, ok
}

// Has reports whether name is a registered type; host/check takes it as its lookup function.
func (r *Registry) Has(name string) bool {
	_, ok := r.types[name]
	return ok
}

// DeclaredMethods describes the methods declaration d offers without opening anything: its
// type's MethodsOf(d), else the type's Methods. ok is false when the type does not know its
// methods before it opens (an MCP server's) or is not registered.
func (r *Registry) DeclaredMethods(d Declaration) (ms []Method, ok bool) {
	t, found := r.types[d.Provider]
	if !found || t.Methods == nil {
		return nil, false
	}
	if t.MethodsOf != nil {
		return t.MethodsOf(d), true
	}
	return t.Methods, true
}

// Types returns every registered type, sorted by name.
func (r *Registry) Types() []Type {
	out := make([]Type, 0, len(r.types))
	for _, t := range r.types {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Open opens the provider for declaration d.
func (r *Registry) Open(ctx context.Context, d Declaration) (Provider, error) {
	t, ok := r.types[d.Provider]
	if !ok {
		return nil, Errorf(CodeToolConfig, "tool %s: unknown provider %s", d.Name, d.Provider)
	}
	p, err := t.Open(ctx, d)
	if err != nil {
		return nil, fmt.Errorf("tool %s: %w", d.Name, err)
	}
	return p, nil
}
