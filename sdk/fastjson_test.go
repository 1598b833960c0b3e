package sdk

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"runtime/debug"
	"strings"
	"testing"
)

// plainParams has a field of every kind the fast paths handle.
type plainParams struct {
	S   string  `json:"s"`
	B   bool    `json:"b,omitempty"`
	I   int     `json:"i,omitempty"`
	I8  int8    `json:"i8,omitempty"`
	U16 uint16  `json:"u16,omitempty"`
	U   uint64  `json:"u,omitempty"`
	F32 float32 `json:"f32,omitempty"`
	F   float64 `json:"f,omitempty"`
	T   string  `json:"text,omitempty"`
	Raw string  // no tag: the field name
}

func TestFieldsOf(t *testing.T) {
	if fieldsOf(reflect.TypeFor[plainParams]()) == nil {
		t.Error("plainParams has no plan")
	}
	type withNumber struct {
		When json.Number `json:"when"` // a string type with its own meaning to encoding/json
	}
	type withSlice struct {
		L []string `json:"l"`
	}
	type withString struct {
		N int `json:"n,string"`
	}
	type embedded struct{ plainParams }
	for _, typ := range []reflect.Type{reflect.TypeFor[withNumber](), reflect.TypeFor[withSlice](), reflect.TypeFor[withString](), reflect.TypeFor[embedded](), reflect.TypeFor[map[string]any]()} {
		if fieldsOf(typ) != nil {
			t.Errorf("%s: the fast paths took a type they do not handle", typ)
		}
	}
}

func TestFastDecode(t *testing.T) {
	fs := fieldsOf(reflect.TypeFor[plainParams]())
	tests := []struct {
		in string
		ok bool
	}{
		{`{"s":"plain"}`, true},
		{` { "s" : "a\nb\t\"q\" \u003cx\u003e \ud83d\ude00 \ud800 end" , "b": true, "i": -12, "u": 18446744073709551615, "f": 1.5e3, "f32": 0.1, "Raw": null } `, true},
		{`{}`, true},
		{`{"s":"x",}`, false},
		{`{"s":"x"} trailing`, false},
		{`{"S":"case"}`, false},          // encoding/json would match it; left to it
		{`{"other":"x"}`, false},         // unknown: encoding/json and the key check decide
		{`{"i":1.0}`, false},             // a float for an int: encoding/json's error
		{`{"i8":300}`, false},            // out of range
		{`{"s":"\xff"}`, false},          // invalid UTF-8: encoding/json replaces it
		{"{\"s\":\"tab\there\"}", false}, // a raw control character: invalid JSON
		{`{"s":"\x"}`, false},
		{`{"s":1}`, false},
		{`null`, false},
		{`{"b":tru}`, false},
		{`{"i":01}`, false},
		{`{"f":1.}`, false},
	}
	for _, tt := range tests {
		var got plainParams
		_, ok := fs.decode([]byte(tt.in), reflect.ValueOf(&got).Elem(), nil)
		if ok != tt.ok {
			t.Errorf("decode(%s) ok = %v, want %v", tt.in, ok, tt.ok)
			continue
		}
		if !ok {
			continue
		}
		var want plainParams
		if err := json.Unmarshal([]byte(tt.in), &want); err != nil || got != want {
			t.Errorf("decode(%s) = %+v; encoding/json: %+v, %v", tt.in, got, want, err)
		}
	}
}

// Whatever the fast decoder accepts, encoding/json decodes to the same struct and keys.
func FuzzFastDecode(f *testing.F) {
	for _, s := range []string{`{"s":"plain","b":true,"i":-3,"u":7,"f":0.25}`, `{"s":"\u00e9\ud83d\ude00\\n","text":"<&>"}`, `{"i8":-128,"u16":65535,"f32":3.4e38}`, `{"s":null,"Raw":"x"}`, `{}`} {
		f.Add([]byte(s))
	}
	fs := fieldsOf(reflect.TypeFor[plainParams]())
	f.Fuzz(func(t *testing.T, in []byte) {
		var got plainParams
		keys, ok := fs.decode(in, reflect.ValueOf(&got).Elem(), nil)
		if !ok {
			return
		}
		var want plainParams
		if err := json.Unmarshal(in, &want); err != nil {
			t.Fatalf("fast decode took %q, which encoding/json refuses: %v", in, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: fast %+v, encoding/json %+v", in, got, want)
		}
		if wantKeys := objectKeys(in, skipSpace(in, 0)); !reflect.DeepEqual(keys, wantKeys) && !(len(keys) == 0 && len(wantKeys) == 0) {
			t.Fatalf("%q: keys %q, want %q", in, keys, wantKeys)
		}
	})
}

// The fast encoder writes exactly what encoding/json writes.
func FuzzFastEncode(f *testing.F) {
	f.Add("plain", true, int64(-3), uint64(7), 0.5)
	f.Add("<a href=\"x\">&\u2028\u2029\x00\x1f\x7f\xff\xc3\xa9\t\n\r\b\f\\", false, int64(math.MinInt64), uint64(math.MaxUint64), math.Inf(1))
	enc := encoderOf(reflect.TypeFor[plainParams]())
	str := encoderOf(reflect.TypeFor[string]())
	f.Fuzz(func(t *testing.T, s string, b bool, i int64, u uint64, fl float64) {
		v := plainParams{S: s, B: b, I: int(i), I8: int8(i), U16: uint16(u), U: u, F32: float32(fl), F: fl, T: strings.ToUpper(s), Raw: s + s}
		want, werr := json.Marshal(v)
		got, ok := enc(nil, reflect.ValueOf(v))
		if werr != nil {
			if ok {
				t.Fatalf("%+v: fast encode gave %s where encoding/json fails: %v", v, got, werr)
			}
			return
		}
		if !ok || !bytes.Equal(got, want) {
			t.Fatalf("%+v:\nfast          %s (%v)\nencoding/json %s", v, got, ok, want)
		}
		want, _ = json.Marshal(s)
		if got, _ := str(nil, reflect.ValueOf(s)); !bytes.Equal(got, want) {
			t.Fatalf("%q: fast %s, encoding/json %s", s, got, want)
		}
	})
}

func TestEncoderOf(t *testing.T) {
	for _, typ := range []reflect.Type{reflect.TypeFor[json.Number](), reflect.TypeFor[json.RawMessage](), reflect.TypeFor[[]string](), reflect.TypeFor[any](), reflect.TypeFor[map[string]string]()} {
		if encoderOf(typ) != nil {
			t.Errorf("%s: the fast encoder took a type it does not handle", typ)
		}
	}
	type zone string
	if encoderOf(reflect.TypeFor[zone]()) == nil {
		t.Errorf("a named string type has no fast encoder")
	}
}

func TestTuneGC(t *testing.T) {
	old := debug.SetGCPercent(100)
	defer debug.SetGCPercent(old)
	tuneGC(func(string) (string, bool) { return "", false })
	if p := debug.SetGCPercent(100); p != pluginGCPercent {
		t.Errorf("GC percent %d, want %d", p, pluginGCPercent)
	}
	tuneGC(func(k string) (string, bool) { return "50", k == "GOGC" })
	if p := debug.SetGCPercent(100); p != 100 {
		t.Errorf("GOGC in the environment was overridden: %d", p)
	}
}
