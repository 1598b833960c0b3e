package mcpserver

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"halolang.dev/halo/host/lang"
)

// maxTypeDepth bounds how deep a value is checked and a schema is written: schema types may
// refer to themselves (`schema Node { children: Array<Node> }`).
const maxTypeDepth = 32

// types maps Halo types to JSON Schema and checks values against them, for one program.
type types struct {
	prog *lang.Program
}

// inputSchema is the schema of pd's arguments: an object with one property per parameter,
// every one required, no other property allowed.
func (ts types) inputSchema(pd *lang.PipelineDecl) map[string]any {
	props := map[string]any{}
	var required []string
	for _, p := range pd.Params {
		props[p.Name.Name] = ts.schema(p.Type, nil)
		required = append(required, p.Name.Name)
	}
	s := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

// outputSchema is the schema of pd's result when it is a schema type (an object), else nil.
func (ts types) outputSchema(pd *lang.PipelineDecl) map[string]any {
	if pd.Result == nil || ts.prog.Schema(pd.Result.Name) == nil {
		return nil
	}
	return ts.schema(pd.Result, nil)
}

// schema writes t as JSON Schema. A schema type becomes an object with its fields, all
// required; one already being written (a type that contains itself) is a plain object.
func (ts types) schema(t *lang.TypeRef, stack []string) map[string]any {
	if t == nil {
		return map[string]any{}
	}
	arg := func() *lang.TypeRef {
		if len(t.Args) > 0 {
			return t.Args[0]
		}
		return nil
	}
	switch t.Name {
	case "String":
		return map[string]any{"type": "string"}
	case "Number":
		return map[string]any{"type": "number"}
	case "Integer":
		return map[string]any{"type": "integer"}
	case "Boolean":
		return map[string]any{"type": "boolean"}
	case "Array", "List":
		s := map[string]any{"type": "array"}
		if a := arg(); a != nil {
			s["items"] = ts.schema(a, stack)
		}
		return s
	case "Object", "Map":
		s := map[string]any{"type": "object"}
		if a := arg(); a != nil {
			s["additionalProperties"] = ts.schema(a, stack)
		}
		return s
	case "JSON", "Any", "Result":
		return map[string]any{}
	}
	sd := ts.prog.Schema(t.Name)
	if sd == nil {
		return map[string]any{}
	}
	for _, name := range stack {
		if name == t.Name || len(stack) >= maxTypeDepth {
			return map[string]any{"type": "object", "title": t.Name}
		}
	}
	stack = append(stack, t.Name)
	props := map[string]any{}
	var required []string
	for _, f := range sd.Fields {
		props[f.Name.Name] = ts.schema(f.Type, stack)
		required = append(required, f.Name.Name)
	}
	s := map[string]any{"type": "object", "title": t.Name, "properties": props}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

// checkArgs checks a tools/call's arguments against pd's parameters, as strictly as the
// input schema says: every parameter present and of its type, no other. The error names
// the parameter.
func (ts types) checkArgs(pd *lang.PipelineDecl, raw any) (map[string]any, error) {
	var args map[string]any
	switch a := raw.(type) {
	case nil:
		args = map[string]any{}
	case map[string]any:
		args = a
	default:
		return nil, fmt.Errorf("the arguments must be an object with the parameters (%s), not %s", paramList(pd), describe(raw))
	}
	known := map[string]bool{}
	var missing []string
	for _, p := range pd.Params {
		known[p.Name.Name] = true
		v, ok := args[p.Name.Name]
		if !ok {
			missing = append(missing, p.Name.Name+": "+typeName(p.Type))
			continue
		}
		if err := ts.check(p.Type, v, 0); err != nil {
			return nil, fmt.Errorf("parameter %s: %v", p.Name.Name, err)
		}
	}
	var unknown []string
	for k := range args {
		if !known[k] {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	switch {
	case len(unknown) == 1:
		return nil, fmt.Errorf("%s has no parameter %s (its parameters: %s)", pd.Name.Name, quoteName(unknown[0]), paramList(pd))
	case len(unknown) > 1:
		for i, u := range unknown {
			unknown[i] = quoteName(u)
		}
		return nil, fmt.Errorf("%s has no parameters %s (its parameters: %s)", pd.Name.Name, strings.Join(unknown, ", "), paramList(pd))
	case len(missing) == 1:
		return nil, fmt.Errorf("missing parameter %s", missing[0])
	case len(missing) > 1:
		return nil, fmt.Errorf("missing parameters %s", strings.Join(missing, ", "))
	}
	return args, nil
}

// check reports how v does not fit t, or nil.
func (ts types) check(t *lang.TypeRef, v any, depth int) error {
	if t == nil || depth > maxTypeDepth {
		return nil
	}
	want := func(what string) error {
		return fmt.Errorf("want %s (%s), got %s", what, t, describe(v))
	}
	var arg *lang.TypeRef
	if len(t.Args) > 0 {
		arg = t.Args[0]
	}
	switch t.Name {
	case "String":
		if _, ok := v.(string); !ok {
			return want("a string")
		}
	case "Number":
		if _, ok := v.(float64); !ok {
			return want("a number")
		}
	case "Integer":
		f, ok := v.(float64)
		if !ok || f != math.Trunc(f) {
			return want("a whole number")
		}
	case "Boolean":
		if _, ok := v.(bool); !ok {
			return want("true or false")
		}
	case "Array", "List":
		list, ok := v.([]any)
		if !ok {
			return want("a list")
		}
		for i, el := range list {
			if err := ts.check(arg, el, depth+1); err != nil {
				return fmt.Errorf("[%d]: %v", i, err)
			}
		}
	case "Object", "Map":
		obj, ok := v.(map[string]any)
		if !ok {
			return want("an object")
		}
		for _, k := range sortedKeys(obj) {
			if err := ts.check(arg, obj[k], depth+1); err != nil {
				return fmt.Errorf(".%s: %v", k, err)
			}
		}
	case "JSON", "Any", "Result":
	default:
		sd := ts.prog.Schema(t.Name)
		if sd == nil {
			return nil
		}
		obj, ok := v.(map[string]any)
		if !ok {
			return want("an object")
		}
		for _, f := range sd.Fields {
			fv, ok := obj[f.Name.Name]
			if !ok {
				return fmt.Errorf("missing field %s (%s)", f.Name.Name, typeName(f.Type))
			}
			if err := ts.check(f.Type, fv, depth+1); err != nil {
				return fmt.Errorf(".%s: %v", f.Name.Name, err)
			}
		}
	}
	return nil
}

func typeName(t *lang.TypeRef) string {
	if t == nil {
		return "Any"
	}
	return t.String()
}

func paramList(pd *lang.PipelineDecl) string {
	if len(pd.Params) == 0 {
		return "none"
	}
	parts := make([]string, len(pd.Params))
	for i, p := range pd.Params {
		parts[i] = p.Name.Name + ": " + typeName(p.Type)
	}
	return strings.Join(parts, ", ")
}

// quoteName quotes a name a client sent when it is not a plain identifier, so control
// characters or an empty name print visibly.
func quoteName(s string) string {
	for i, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return fmt.Sprintf("%q", truncate(s, 64))
		}
	}
	if s == "" {
		return `""`
	}
	return truncate(s, 64)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case float64:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	default:
		return fmt.Sprintf("a %T", x)
	}
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
