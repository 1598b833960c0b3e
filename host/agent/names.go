package agent

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"strings"

	"halolang.dev/halo/host/tool"
)

// maxName is the longest function name every provider accepts (OpenAI: 64 characters of
// a-z, A-Z, 0-9, _ and -).
const maxName = 64

// A Method is one method of one tool, as Offer takes it.
type Method struct {
	// Tool is the declared tool's name ("Code"); Method the method's ("edit").
	Tool   string
	Method tool.Method
}

// Offer names each method as the function the model sees: "Tool__method", with characters
// that function names cannot hold replaced by '_' and names longer than providers accept
// shortened with a hash, each name unique.
func Offer(methods []Method) []Tool {
	out := make([]Tool, 0, len(methods))
	taken := make(map[string]bool, len(methods))
	for _, m := range methods {
		target := m.Tool + "." + m.Method.Name
		name := FunctionName(m.Tool, m.Method.Name)
		for k := 2; taken[name]; k++ {
			suffix := fmt.Sprintf("_%d", k)
			base := FunctionName(m.Tool, m.Method.Name)
			if len(base)+len(suffix) > maxName {
				base = base[:maxName-len(suffix)]
			}
			name = base + suffix
		}
		taken[name] = true
		params := m.Method.Params
		if len(params) == 0 || string(params) == "null" {
			params = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		out = append(out, Tool{Target: target, Name: name, Description: m.Method.Description, Params: params, Effect: m.Method.EffectOrDefault()})
	}
	return out
}

// FunctionName is the function name of tool's method: "Code__edit".
func FunctionName(toolName, method string) string {
	var b strings.Builder
	b.Grow(len(toolName) + 2 + len(method))
	clean := func(s string) {
		for _, r := range s {
			switch {
			case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
				b.WriteRune(r)
			default:
				b.WriteByte('_')
			}
		}
	}
	clean(toolName)
	b.WriteString("__")
	clean(method)
	name := b.String()
	if len(name) <= maxName {
		return name
	}
	h := fnv.New32a()
	h.Write([]byte(toolName + "." + method))
	return fmt.Sprintf("%s_%08x", name[:maxName-9], h.Sum32())
}
