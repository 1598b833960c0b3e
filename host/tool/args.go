package tool

import (
	"encoding/json"
	"fmt"
)

// BindArgs turns a call's positional and named arguments into the JSON arguments object a
// provider receives. The rule is the same for every provider:
//
//   - named arguments are passed by name;
//   - a single positional object is the arguments (named ones are merged over it);
//   - a single positional value of any other type fills the method's first required
//     parameter, as its JSON Schema lists them;
//   - more positional values than that are a TOOL_ARGUMENT error.
func BindArgs(m Method, positional []any, named map[string]any) (json.RawMessage, error) {
	args := map[string]any{}
	switch len(positional) {
	case 0:
	case 1:
		if obj, ok := positional[0].(map[string]any); ok {
			for k, v := range obj {
				args[k] = v
			}
			break
		}
		first := FirstRequired(m.Params)
		if first == "" {
			return nil, Errorf(CodeToolArgument, "%s takes no positional argument; pass arguments by name", m.Name)
		}
		args[first] = positional[0]
	default:
		return nil, Errorf(CodeToolArgument, "%s takes at most one positional argument, got %d; pass the rest by name", m.Name, len(positional))
	}
	for k, v := range named {
		args[k] = v
	}
	b, err := json.Marshal(args)
	if err != nil {
		return nil, fmt.Errorf("encode arguments of %s: %w", m.Name, err)
	}
	return b, nil
}

// FirstRequired returns the first name in a JSON Schema's "required" list, or "".
func FirstRequired(schema json.RawMessage) string {
	if len(schema) == 0 {
		return ""
	}
	var s struct {
		Required []string `json:"required"`
	}
	if json.Unmarshal(schema, &s) != nil || len(s.Required) == 0 {
		return ""
	}
	return s.Required[0]
}
