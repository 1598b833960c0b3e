package sdk

import (
	"encoding/json"
	"testing"
)

type fuzzParams struct {
	Path  string         `json:"path"`
	Limit int            `json:"limit,omitempty"`
	Tags  []string       `json:"tags,omitempty"`
	Extra map[string]any `json:"extra,omitempty"`
}

// FuzzDecodeArgs feeds arbitrary bytes to the argument decoder a model's tool call goes
// through: it must never panic, and what it accepts must have every required field.
func FuzzDecodeArgs(f *testing.F) {
	for _, s := range []string{`{}`, `{"path":"a"}`, `{"path":"a","limit":3,"tags":["x"]}`, `{"path":1}`, `[]`, `null`, `{"path":"a","nope":1}`, `{"path":"a"} {"path":"b"}`} {
		f.Add([]byte(s))
	}
	_, ps := schemaOf[fuzzParams]()
	f.Fuzz(func(t *testing.T, b []byte) {
		var p fuzzParams
		if err := decodeArgs(b, &p, ps); err != nil {
			return
		}
		var present map[string]json.RawMessage
		if err := json.Unmarshal(b, &present); err != nil {
			t.Fatalf("accepted %q, which is not a JSON object", b)
		}
		if _, ok := present["path"]; !ok {
			t.Fatalf("accepted %q without the required path", b)
		}
	})
}
