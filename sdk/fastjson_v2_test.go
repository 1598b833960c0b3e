package sdk

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
)

type benchFields struct {
	Name  string  `json:"name"`
	Count int     `json:"count"`
	Loud  bool    `json:"loud,omitempty"`
	Ratio float64 `json:"ratio"`
	Note  string  `json:"note,omitempty"`
}

// BenchmarkFastJSONV2: the fast paths of fastjson.go beside the v2 JSON API
// (github.com/go-json-experiment/json, the implementation behind encoding/json/v2), which
// refuses unknown members itself (RejectUnknownMembers) and reads and writes in one pass,
// and beside encoding/json: decoding a call's arguments (a 1 KB and a 16 KB string, five
// plain fields) and encoding a result (a 16 KB string with an escape every ten bytes, one without, five fields). Whether the fast paths
// are still needed: see fastjson.go.
func BenchmarkFastJSONV2(b *testing.B) {
	text := strings.Repeat("A line of a file, \"quoted\" and tabbed\t.\n", 400)
	rejectUnknown := jsonv2.RejectUnknownMembers(true)
	decode := func(name string, args []byte, fast func() error, newP func() any) {
		for _, d := range []struct {
			name string
			run  func() error
		}{
			{"fastjson", fast},
			{"jsonv2", func() error { return jsonv2.Unmarshal(args, newP(), rejectUnknown) }},
			{"json.Unmarshal", func() error { return json.Unmarshal(args, newP()) }},
		} {
			if err := d.run(); err != nil {
				b.Fatalf("%s %s: %v", name, d.name, err)
			}
			b.Run("decode/"+name+"/"+d.name, func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(args)))
				for b.Loop() {
					if err := d.run(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
	_, ps := schemaOf[benchParams]()
	for _, n := range []int{1 << 10, 16 << 10} {
		args := []byte(`{"data":"` + strings.Repeat("x", n-len(`{"data":""}`)) + `"}`)
		decode(map[int]string{1 << 10: "1KB", 16 << 10: "16KB"}[n], args,
			func() error { var p benchParams; return decodeArgs(args, &p, ps) }, func() any { return new(benchParams) })
	}
	_, fps := schemaOf[benchFields]()
	fields := []byte(`{"name":"Ada Lovelace","count":1042,"loud":true,"ratio":0.125,"note":"the refund of order #1042"}`)
	decode("fields", fields, func() error { var p benchFields; return decodeArgs(fields, &p, fps) }, func() any { return new(benchFields) })

	for _, r := range []struct {
		name string
		v    any
	}{
		{"string-16KB", text},
		{"plain-string-16KB", strings.Repeat("A line of a file with no escapes in it, which is most. ", 300)},
		{"fields", benchFields{Name: "Ada Lovelace", Count: 1042, Loud: true, Ratio: 0.125, Note: text[:200]}},
	} {
		enc := encoderOf(reflect.TypeOf(r.v))
		want, _ := json.Marshal(r.v)
		if got, ok := enc(nil, reflect.ValueOf(r.v)); !ok || string(got) != string(want) {
			b.Fatalf("%s: fast path wrote %s, want %s", r.name, got, want)
		}
		for _, e := range []struct {
			name string
			run  func() ([]byte, error)
		}{
			{"fastjson", func() ([]byte, error) { out, _ := enc(nil, reflect.ValueOf(r.v)); return out, nil }},
			{"jsonv2", func() ([]byte, error) { return jsonv2.Marshal(r.v) }},
			{"json.Marshal", func() ([]byte, error) { return json.Marshal(r.v) }},
		} {
			b.Run("encode/"+r.name+"/"+e.name, func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(want)))
				for b.Loop() {
					if _, err := e.run(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
