package sdk

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"testing"
)

type fuzzParams struct {
	Path  string         `json:"path"`
	Limit int            `json:"limit,omitempty"`
	Tags  []string       `json:"tags,omitempty"`
	Extra map[string]any `json:"extra,omitempty"`
}

var fuzzSeeds = []string{
	`{}`, `{"path":"a"}`, `{"path":"a","limit":3,"tags":["x"]}`, `{"path":1}`, `[]`, `null`,
	`{"path":"a","nope":1}`, `{"path":"a"} {"path":"b"}`, ` { "path" : "a\"}" , "extra" : {"k":[1,{"x":"]}"}]} } `,
	`{"pa\u0074h":"a"}`, `{"path":"a","path":"b"}`, `{"PATH":"a"}`, `{"path":"a","limit":-1.5e3,"extra":null}`,
	`"path"`, `3`, `true`, ``, `{"path":"a",}`,
	`{"path":"l1\nl2\n\"q\"\\\\","tags":["\"]\\"", "}{"],"extra":{"\"":"\\"}}`,
}

// FuzzDecodeArgs feeds arbitrary bytes to the argument decoder a model's tool call goes
// through: it must never panic, it must accept and refuse exactly what the plain two-pass
// decoder (decodeArgsReference) does, and decode the same value.
func FuzzDecodeArgs(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	_, ps := schemaOf[fuzzParams]()
	f.Fuzz(func(t *testing.T, b []byte) {
		var got, want fuzzParams
		err := decodeArgs(b, &got, ps)
		wantErr := decodeArgsReference(b, &want, ps)
		if (err == nil) != (wantErr == nil) {
			t.Fatalf("decodeArgs(%q) = %v, the two-pass decoder says %v", b, err, wantErr)
		}
		if err == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("decodeArgs(%q) decoded %+v, want %+v", b, got, want)
		}
	})
}

// FuzzObjectKeys checks the key scan against encoding/json on every valid JSON object.
func FuzzObjectKeys(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var m map[string]json.RawMessage
		if json.Unmarshal(b, &m) != nil || m == nil {
			return
		}
		keys := objectKeys(b, skipSpace(b, 0))
		var want []string
		for k := range m {
			want = append(want, k)
		}
		slices.Sort(want)
		slices.Sort(keys)
		if keys = slices.Compact(keys); !slices.Equal(keys, want) {
			t.Fatalf("objectKeys(%q) = %q, want %q", b, keys, want)
		}
	})
}

// decodeArgsReference is the obvious decoder decodeArgs must agree with: the keys from a map,
// then the struct, each a full pass of encoding/json.
func decodeArgsReference(args json.RawMessage, p any, ps params) error {
	var present map[string]json.RawMessage
	if err := json.Unmarshal(args, &present); err != nil {
		return err
	}
	for _, name := range ps.required {
		if _, ok := present[name]; !ok {
			return errMissing
		}
	}
	for name := range present {
		if !ps.known[name] {
			return errUnknown
		}
	}
	return json.Unmarshal(args, p)
}

var (
	errMissing = errors.New("missing")
	errUnknown = errors.New("unknown")
)
