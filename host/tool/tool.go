// Package tool owns the contract every tool provider meets inside the host: the Provider
// interface (describe methods, call one with JSON arguments, close), method descriptions with
// their effects, coded tool errors, and the Registry that maps provider names written in
// `tool X : Name(...)` declarations to the factories that open them.
//
// Built-in plugins (Workspace, Bash), module packages, MCP servers and http packages all
// reach the runtime and the agent loop through this one interface.
package tool

import (
	"context"
	"encoding/json"
	"fmt"
)

// An Effect says what calling a method can change. It is written by whoever made the
// provider; Halo does not measure it. A method without a declared effect is External.
type Effect string

const (
	// Read methods change nothing.
	Read Effect = "read"
	// Write methods change local or stored state (a file, a key, a row).
	Write Effect = "write"
	// External methods act outside this machine or cannot be taken back.
	External Effect = "external"
)

// ParseEffect returns the effect named by s, or an error for anything but the three names.
func ParseEffect(s string) (Effect, error) {
	switch Effect(s) {
	case Read, Write, External:
		return Effect(s), nil
	}
	return "", fmt.Errorf("unknown effect %q: want read, write or external", s)
}

// Valid reports whether e is one of the three effects.
func (e Effect) Valid() bool { return e == Read || e == Write || e == External }

// A Method is one callable operation of a provider.
type Method struct {
	// Name is the method name as written after the dot (`Files.read`); MCP names may hold '-'.
	Name string `json:"name"`
	// Description is what a model reads to decide whether to call the method.
	Description string `json:"description"`
	// Params is the JSON Schema of the arguments object. Nil means an object with any fields.
	Params json.RawMessage `json:"params,omitempty"`
	// Effect classifies the method for policies; empty means External.
	Effect Effect `json:"effect"`
	// PipelineOnly methods may be called from a pipeline but are never offered to agents
	// (an MCP tool's list_tools, for example).
	PipelineOnly bool `json:"pipelineOnly,omitempty"`
	// Shell names the argument that is a shell command line (Bash's run: command): a
	// {{template}} a pipeline writes into it goes in quoted as one shell word (see
	// host/lang/shell). Empty for every other method.
	Shell string `json:"-"`
}

// ShellFillsFirst reports whether a single positional value of a call fills m's shell
// command line (it is the first required parameter, see BindArgs).
func (m Method) ShellFillsFirst() bool {
	return m.Shell != "" && FirstRequired(m.Params) == m.Shell
}

// CalledMethod returns the method a call names: the one called name, or, when name is ""
// (`Tests()`), the only method an agent can call.
func CalledMethod(methods []Method, name string) (Method, bool) {
	if name != "" {
		return FindMethod(methods, name)
	}
	var found Method
	n := 0
	for _, m := range methods {
		if !m.PipelineOnly {
			found, n = m, n+1
		}
	}
	return found, n == 1
}

// EffectOrDefault returns the method's effect, External when none was declared.
func (m Method) EffectOrDefault() Effect {
	if m.Effect.Valid() {
		return m.Effect
	}
	return External
}

// Progress is a report from a long-running call: Filled of Total units done, with a message.
type Progress struct {
	Filled  float64 `json:"filled"`
	Total   float64 `json:"total"`
	Message string  `json:"message,omitempty"`
}

// A Request is one call of one method.
type Request struct {
	// Method is the method name.
	Method string
	// Args is a JSON object of named arguments (see BindArgs for positional ones).
	Args json.RawMessage
	// Progress, when not nil, receives progress reports while the call runs.
	Progress func(Progress)
}

// A Provider is one configured tool: the result of opening one `tool X : Name(...)`
// declaration. Implementations must be safe for concurrent calls.
type Provider interface {
	// Methods describes what the provider offers. It may start a server or a process
	// (MCP, plugins), so it takes a context and can fail.
	Methods(ctx context.Context) ([]Method, error)
	// Call runs one method and returns its result as JSON. A failure is an error; errors the
	// caller should treat specially are *Error values (see Error).
	Call(ctx context.Context, req Request) (json.RawMessage, error)
	// Close releases the provider's processes and connections. It is safe to call twice.
	Close() error
}

// FindMethod returns the method called name, or false.
func FindMethod(methods []Method, name string) (Method, bool) {
	for _, m := range methods {
		if m.Name == name {
			return m, true
		}
	}
	return Method{}, false
}
