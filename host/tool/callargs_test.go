package tool

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"halolang.dev/halo/errcode"
)

func TestParseArgs(t *testing.T) {
	tests := []struct {
		raw, want, code, msg string
	}{
		{raw: ``, want: `{}`},
		{raw: ` null `, want: `{}`},
		{raw: ` {"path": "a.go", "n": 12345678901234567890} `, want: `{"path": "a.go", "n": 12345678901234567890}`},
		{raw: `"{\"path\": \"a.go\"}"`, want: `{"path": "a.go"}`},
		{raw: `{"a": {"b": [1, {"c": null}]}, "A2": 1, "a2x": 2}`, want: `{"a": {"b": [1, {"c": null}]}, "A2": 1, "a2x": 2}`},
		{raw: `{"path":`, code: CodeToolArgument, msg: `are not valid JSON ("{\"path\":")`},
		{raw: `"not json"`, code: CodeToolArgument, msg: `are not valid JSON ("not json")`},
		{raw: `[1]`, code: CodeToolArgument, msg: `are an array, not a JSON object`},
		{raw: `12`, code: CodeToolArgument, msg: `are a number, not a JSON object`},

		// What a hostile model sends: the second value hides the first from a reader that
		// keeps the last one (policies did), while a reader that keeps the first (the tool's
		// decoder into a struct, where null changes nothing) runs it.
		{raw: `{"command":"touch PWN","command":null}`, code: CodeDuplicateKey, msg: `give the key "command" twice`},
		{raw: `{"command":"touch PWN","\u0063ommand":"ls"}`, code: CodeDuplicateKey, msg: `give the key "command" twice`},
		{raw: `"{\"command\":\"touch PWN\",\"command\":null}"`, code: CodeDuplicateKey, msg: `give the key "command" twice`},
		{raw: `{"edits":[{"path":"ok.go"},{"path":"a.test.ts","path":"b.go"}]}`, code: CodeDuplicateKey, msg: `give the key "path" twice in "edits"[1]`},
		{raw: `{"opts":{"mode":{"x":1,"x":2}}}`, code: CodeDuplicateKey, msg: `give the key "x" twice in "opts"."mode"`},
		// encoding/json puts "COMMAND" (and "ſ" for "s", the Kelvin sign for "k") into a
		// field named command: one value a policy on "command" never reads.
		{raw: `{"command":"ls","COMMAND":"touch PWN"}`, code: CodeDuplicateKey, msg: `give the keys "command" and "COMMAND", which differ only in letter case`},
		{raw: `{"path":"x","paſh":"y","ſort":1,"sort":2}`, code: CodeDuplicateKey, msg: `give the keys "ſort" and "sort", which differ only in letter case`},
		{raw: `{"kind":1,"\u212aind":2}`, code: CodeDuplicateKey, msg: "give the keys \"kind\" and \"\u212aind\", which differ only in letter case"},
		// Invalid UTF-8 decodes to U+FFFD: two such keys are one key to every Go reader.
		{raw: "{\"\xff\":1,\"\xfe\":2}", code: CodeDuplicateKey, msg: "give the key \"\ufffd\" twice"},
	}
	for _, tt := range tests {
		got, err := ParseArgs(json.RawMessage(tt.raw))
		if tt.code != "" {
			if err == nil || errcode.Code(err) != tt.code || err.Error() != tt.msg {
				t.Errorf("ParseArgs(%s) = %s, %v (%s); want %s: %s", tt.raw, got.Raw, err, errcode.Code(err), tt.code, tt.msg)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseArgs(%s): %v", tt.raw, err)
			continue
		}
		if string(got.Raw) != tt.want {
			t.Errorf("ParseArgs(%s).Raw = %s, want %s", tt.raw, got.Raw, tt.want)
		}
		if want := decodeStd(t, got.Raw); !reflect.DeepEqual(got.Value, want) {
			t.Errorf("ParseArgs(%s).Value = %#v, want %#v", tt.raw, got.Value, want)
		}
	}
}

func decodeStd(t testing.TB, raw []byte) map[string]any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	return m
}

// FuzzParseArgs: whatever a model sends, ParseArgs returns one JSON object that every reader
// decodes alike (encoding/json gives the same value, keeping first or last of a key makes no
// difference since none repeats), or a coded error, and never more bytes than it was given.
func FuzzParseArgs(f *testing.F) {
	for _, s := range []string{`{}`, `null`, ``, `"{}"`, `"x"`, `[]`, `1`, `{"a":`, " \t{\"a\":1} ",
		`{"a":1,"a":2}`, `{"a":{"b":1,"B":2}}`, `{"a":[{"k":1,"\u212a":2}]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, err := ParseArgs(raw)
		if err != nil {
			if c := errcode.Code(err); c != CodeToolArgument && c != CodeDuplicateKey {
				t.Fatalf("ParseArgs(%q): code %q: %v", raw, c, err)
			}
			if strings.TrimSpace(err.Error()) == "" {
				t.Fatalf("ParseArgs(%q): an error with no message", raw)
			}
			return
		}
		if len(got.Raw) > len(raw)+2 {
			t.Fatalf("ParseArgs grew %d bytes to %d", len(raw), len(got.Raw))
		}
		if want := decodeStd(t, got.Raw); !reflect.DeepEqual(got.Value, want) {
			t.Fatalf("ParseArgs(%q).Value = %#v, encoding/json reads %#v", raw, got.Value, want)
		}
	})
}
