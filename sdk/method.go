package sdk

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/invopop/jsonschema"

	"halolang.dev/halo/sdk/internal/wire"
)

// An Effect says what calling a method can change. Policies select methods by effect
// (AllowEffects(read)), so declare the strongest effect a call can have.
type Effect string

const (
	// Read methods change nothing.
	Read Effect = "read"
	// Write methods change local or stored state: a file, a key, a row.
	Write Effect = "write"
	// External methods act outside this machine or cannot be taken back. A method whose
	// effect is not one of the three is treated as External.
	External Effect = "external"
)

// A Method is one callable operation of a provider. Make one with NewMethod; the fields can
// be adjusted afterwards (a hand-written Schema, PipelineOnly).
type Method struct {
	// Name is what pipelines write after the dot (`Clock.now`): lowercase snake_case.
	Name string
	// Description is what a model reads to decide whether to call the method: say what it
	// does, what it changes, and when to use it.
	Description string
	// Effect classifies the method for policies.
	Effect Effect
	// Schema is the JSON Schema of the arguments object, derived by NewMethod from the
	// parameter struct.
	Schema json.RawMessage
	// PipelineOnly methods may be called by pipelines but are never offered to agents.
	PipelineOnly bool

	run func(c *wire.CallInfo, args json.RawMessage) (any, error)
}

// NewMethod makes a typed method. P is the parameter struct: its JSON Schema is derived from
// its fields and tags, and the call's arguments are decoded into it before fn runs.
//
//   - the `json` tag names a parameter; a field is required unless its tag says omitempty;
//   - `jsonschema:"description=...,enum=a,enum=b,minimum=0"` (invopop/jsonschema's tags) adds
//     to the schema what a model should know;
//   - an argument that is missing, unknown or of the wrong type is answered with a
//     TOOL_ARGUMENT error before fn runs.
//
// R is the result: anything encoding/json can marshal. Return Fail for a failure the model
// should read and act on, Retry for a passing one, any other error for a fatal one.
func NewMethod[P, R any](name, description string, effect Effect, fn func(c *Call, params P) (R, error)) Method {
	schema, fields := schemaOf[P]()
	enc := encoderOf(reflect.TypeFor[R]())
	return Method{
		Name:        name,
		Description: description,
		Effect:      effect,
		Schema:      schema,
		run: func(info *wire.CallInfo, args json.RawMessage) (any, error) {
			var p P
			if err := decodeArgs(args, &p, fields); err != nil {
				return nil, &wire.CodedError{Code: wire.CodeToolArgument, Message: fmt.Sprintf("%s: %v", name, err)}
			}
			r, err := fn(&Call{Context: info.Ctx, info: info}, p)
			if err != nil || enc == nil {
				return r, err
			}
			if b, ok := enc(info.Scratch[:0], reflect.ValueOf(r)); ok {
				info.Scratch = b
				return wire.Encoded(b), nil
			}
			return r, nil
		},
	}
}

func (m Method) toWire() wire.Method {
	return wire.Method{Name: m.Name, Description: m.Description, Schema: m.Schema, Effect: string(m.Effect), PipelineOnly: m.PipelineOnly, Run: m.run}
}

// params lists the parameters a struct's schema declares, for checking arguments.
type params struct {
	required []string
	known    map[string]bool
	// fast, when not nil, decodes arguments into the struct without encoding/json.
	fast fastFields
}

// schemaOf derives the JSON Schema of P, inlined (no $ref, no $schema), and its parameters.
func schemaOf[P any]() (json.RawMessage, params) {
	t := reflect.TypeFor[P]()
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		panic(fmt.Sprintf("sdk.NewMethod: the parameters must be a struct, not %s", t))
	}
	r := &jsonschema.Reflector{DoNotReference: true, ExpandedStruct: true, Anonymous: true}
	s := r.ReflectFromType(t)
	s.Version = ""
	s.ID = ""
	b, err := json.Marshal(s)
	if err != nil {
		panic(fmt.Sprintf("sdk.NewMethod: schema of %s: %v", t, err))
	}
	ps := params{required: s.Required, known: map[string]bool{}}
	if reflect.TypeFor[P]().Kind() == reflect.Struct {
		ps.fast = fieldsOf(t)
	}
	if s.Properties != nil {
		for pair := s.Properties.Oldest(); pair != nil; pair = pair.Next() {
			ps.known[pair.Key] = true
		}
	}
	return b, ps
}

// decodeArgs decodes a JSON object into p, refusing unknown fields and missing required ones.
// null counts as an empty object.
//
// encoding/json reads the object twice (once to validate it, once to decode it into p), and
// its per-byte state machine is most of a large call's time in the plugin. The keys are then
// read from the input, known to be valid by then, with a plain byte scan: a third pass of
// encoding/json (a map of the keys, or a json.Decoder with DisallowUnknownFields) would cost
// as much as the decoding itself.
func decodeArgs(args json.RawMessage, p any, ps params) error {
	if ps.fast != nil {
		if v := reflect.ValueOf(p).Elem(); v.Kind() == reflect.Struct {
			if keys, ok := ps.fast.decode(args, v, make([]string, 0, len(ps.fast))); ok {
				return missingArgs(ps, keys)
			}
			// Something the fast path does not handle: encoding/json decides, from scratch.
			v.SetZero()
		}
	}
	err := json.Unmarshal(args, p)
	var syntax *json.SyntaxError
	if errors.As(err, &syntax) {
		return fmt.Errorf("the arguments must be a JSON object: %v", strings.TrimPrefix(err.Error(), "json: "))
	}
	start := skipSpace(args, 0)
	if start == len(args) {
		// Unmarshal refuses empty input; this is for safety only.
		return errors.New("the arguments must be a JSON object")
	}
	switch c := args[start]; c {
	case '{':
	case 'n': // null: no arguments
		if len(ps.required) > 0 {
			return fmt.Errorf("missing required argument %s", strings.Join(ps.required, ", "))
		}
		return nil
	default:
		return fmt.Errorf("the arguments must be a JSON object, not %s", jsonKind(c))
	}
	keys := objectKeys(args, start)
	var unknown []string
	for _, name := range keys {
		if !ps.known[name] {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) > 0 {
		// Before the missing ones: a misspelt argument is what the caller got wrong.
		return unknownArgs(ps, unknown)
	}
	if err := missingArgs(ps, keys); err != nil {
		return err
	}
	if err != nil {
		return fmt.Errorf("bad arguments: %v", strings.TrimPrefix(err.Error(), "json: "))
	}
	return nil
}

// unknownArgs reports the arguments a method does not take, each with the parameter it is
// nearest to: "unknown argument nam; did you mean name?".
func unknownArgs(ps params, unknown []string) error {
	sort.Strings(unknown)
	unknown = slices.Compact(unknown)
	known := make([]string, 0, len(ps.known))
	for k := range ps.known {
		known = append(known, k)
	}
	sort.Strings(known)
	names := make([]string, len(unknown))
	var hints []string
	for i, u := range unknown {
		names[i] = argName(u)
		if near := nearestParam(u, known); near != "" {
			hints = append(hints, near+" for "+names[i])
		}
	}
	msg := "unknown argument " + names[0]
	if len(names) > 1 {
		msg = "unknown arguments " + strings.Join(names, ", ")
	}
	switch {
	case len(hints) == 1 && len(names) == 1:
		msg += "; did you mean " + strings.TrimSuffix(hints[0], " for "+names[0]) + "?"
	case len(hints) > 0:
		msg += "; did you mean " + strings.Join(hints, ", ") + "?"
	}
	return errors.New(msg)
}

// argName shows an argument's name as it is when it is a plain name, else quoted (it is
// whatever the caller sent).
func argName(s string) string {
	if s == "" || len(s) > 64 {
		return strconv.Quote(s)
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return strconv.Quote(s)
		}
	}
	return s
}

// nearestParam returns the parameter closest to name by edit distance (at most a third of
// its length, or one edit), or "".
func nearestParam(name string, known []string) string {
	if len(name) > 64 {
		return ""
	}
	best, bestD := "", max(1, len(name)/3)+1
	for _, k := range known {
		if d := editDistance(strings.ToLower(name), strings.ToLower(k)); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

// editDistance counts the edits from a to b, in bytes: insertions, deletions, substitutions
// and swaps of two neighbours ("nmae" is one edit from "name").
func editDistance(a, b string) int {
	before := make([]int, len(b)+1) // the row before prev, for swaps
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], before[j-2]+1)
			}
		}
		before, prev, cur = prev, cur, before
	}
	return prev[len(b)]
}

// missingArgs reports the required parameters that keys lacks.
func missingArgs(ps params, keys []string) error {
	var missing []string
	for _, name := range ps.required {
		if !slices.Contains(keys, name) {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("missing required argument %s", strings.Join(missing, ", "))
	}
	return nil
}

func jsonKind(c byte) string {
	switch c {
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	}
	return "a number"
}

// objectKeys returns the keys of the JSON object that starts at b[i], in order. b must be
// valid JSON (json.Unmarshal accepted it): values are skipped, not checked.
func objectKeys(b []byte, i int) []string {
	var keys []string
	i = skipSpace(b, i+1) // past '{'
	for i < len(b) && b[i] == '"' {
		end := skipString(b, i)
		key := b[i:end]
		if bytes.IndexByte(key, '\\') >= 0 || !utf8.Valid(key) {
			// Unescaped, and invalid UTF-8 replaced, the way encoding/json matches keys.
			var k string
			_ = json.Unmarshal(key, &k) // valid JSON: Unmarshal accepted the whole input
			keys = append(keys, k)
		} else {
			keys = append(keys, string(key[1:len(key)-1]))
		}
		i = skipSpace(b, end)
		i = skipSpace(b, i+1) // past ':'
		i = skipValue(b, i)
		i = skipSpace(b, i)
		if i < len(b) && b[i] == ',' {
			i = skipSpace(b, i+1)
		}
	}
	return keys
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index just past the string that starts at b[i] (a '"').
func skipString(b []byte, i int) int {
	// Two IndexByte calls, which are vectorised, beat one IndexAny, which is not. q is the
	// next '"' found, kept until an escape passes it, so that text full of escapes (\n in
	// every line of a file) is read once, not once per escape.
	i++
	q := -1
	for i < len(b) {
		if q < i {
			j := bytes.IndexByte(b[i:], '"')
			if j < 0 {
				return len(b)
			}
			q = i + j
		}
		k := bytes.IndexByte(b[i:q], '\\')
		if k < 0 {
			return q + 1
		}
		i += k + 2 // a backslash and the character it escapes
	}
	return len(b)
}

// skipValue returns the index just past the value that starts at b[i].
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = skipString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	}
	for i < len(b) && !strings.ContainsRune(",}] \t\r\n", rune(b[i])) {
		i++
	}
	return i
}
