package runtime

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"

	"halolang.dev/halo/host/lang"
)

// convertInput fits v to parameter p's type. Strings (from --input k=v) are parsed for
// numbers, booleans and structured types; other values are checked, not converted.
func convertInput(p *lang.Param, v any) (any, error) {
	typ := "Any"
	if p.Type != nil {
		typ = p.Type.Name
	}
	bad := func(want string) error {
		return errorf(CodeInput, "input %s: want %s for type %s, got %s", p.Name.Name, want, p.Type, describe(v))
	}
	s, isString := v.(string)
	switch typ {
	case "String":
		if !isString {
			return nil, bad("a string")
		}
		return s, nil
	case "Number", "Integer":
		f, ok := v.(float64)
		if isString {
			var err error
			f, err = strconv.ParseFloat(strings.TrimSpace(s), 64)
			ok = err == nil
		}
		if !ok || math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, bad("a number")
		}
		if typ == "Integer" && f != math.Trunc(f) {
			return nil, bad("a whole number")
		}
		return f, nil
	case "Boolean":
		if isString {
			b, err := strconv.ParseBool(strings.TrimSpace(s))
			if err != nil {
				return nil, bad("true or false")
			}
			return b, nil
		}
		if _, ok := v.(bool); !ok {
			return nil, bad("true or false")
		}
		return v, nil
	case "Any", "JSON", "Result":
		if isString {
			var x any
			if json.Unmarshal([]byte(s), &x) == nil {
				if _, str := x.(string); !str {
					return x, nil
				}
			}
		}
		return v, nil
	case "Array", "List":
		if isString {
			var x []any
			if json.Unmarshal([]byte(s), &x) != nil {
				return nil, bad("a JSON list")
			}
			return x, nil
		}
		if _, ok := v.([]any); !ok {
			return nil, bad("a list")
		}
		return v, nil
	default: // Object, Map, schemas
		if isString {
			var x map[string]any
			if json.Unmarshal([]byte(s), &x) != nil {
				return nil, bad("a JSON object")
			}
			return x, nil
		}
		if _, ok := v.(map[string]any); !ok {
			return nil, bad("an object")
		}
		return v, nil
	}
}

func describe(v any) string {
	switch v.(type) {
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
	}
	return "a value"
}
