package sdk

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/invopop/jsonschema"

	"github.com/halo-lang/halo/sdk/internal/wire"
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
			return fn(&Call{Context: info.Ctx, info: info}, p)
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
	if s.Properties != nil {
		for pair := s.Properties.Oldest(); pair != nil; pair = pair.Next() {
			ps.known[pair.Key] = true
		}
	}
	return b, ps
}

// decodeArgs decodes a JSON object into p, refusing unknown fields and missing required ones.
// null counts as an empty object.
// The object is read twice, once for its keys and once into p; a json.Decoder with
// DisallowUnknownFields would read it three times, which shows on large arguments.
func decodeArgs(args json.RawMessage, p any, ps params) error {
	var present map[string]json.RawMessage
	if err := json.Unmarshal(args, &present); err != nil {
		return fmt.Errorf("the arguments must be a JSON object: %v", strings.TrimPrefix(err.Error(), "json: "))
	}
	var missing, unknown []string
	for _, name := range ps.required {
		if _, ok := present[name]; !ok {
			missing = append(missing, name)
		}
	}
	for name := range present {
		if !ps.known[name] {
			unknown = append(unknown, strconv.Quote(name))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("missing required argument %s", strings.Join(missing, ", "))
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return fmt.Errorf("unknown argument %s", strings.Join(unknown, ", "))
	}
	if err := json.Unmarshal(args, p); err != nil {
		return fmt.Errorf("bad arguments: %v", strings.TrimPrefix(err.Error(), "json: "))
	}
	return nil
}
