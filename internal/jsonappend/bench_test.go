package jsonappend

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"
)

// BenchmarkValue: Value beside json.Marshal and the v2 JSON API
// (github.com/go-json-experiment/json, the implementation behind encoding/json/v2) on the
// values halo encodes with it: a tool call's arguments, a pipeline's structured output, a
// model's long answer. v2 runs with v1's options (the bytes json.Marshal gives, which the
// run store and halo mcp's answers keep), into a reused encoder and buffer as Value appends
// to one, and with its own defaults (map keys sorted, for the same output's order). Whether
// jsonappend is still needed: see the package comment.
func BenchmarkValue(b *testing.B) {
	answer := strings.Repeat("The refund of order #1042 was approved <today> & \"sent\".\n", 300)
	for _, c := range []struct {
		name string
		v    any
	}{
		{"arguments", map[string]any{"name": "Ada", "order": 1042.0, "urgent": true, "tags": []any{"refund", "vip"}}},
		{"output", map[string]any{"summary": "Refund approved", "amount": 129.95, "items": []any{
			map[string]any{"sku": "A-1", "qty": 2.0, "note": nil},
			map[string]any{"sku": "B-7", "qty": 1.0, "note": "gift wrap"},
		}, "customer": map[string]any{"id": "c_81", "email": "ada@example.com", "since": 2019.0}}},
		{"answer-17KB", answer},
	} {
		want, err := json.Marshal(c.v)
		if err != nil {
			b.Fatal(err)
		}
		if got, _ := Value(nil, c.v); !bytes.Equal(got, want) {
			b.Fatalf("Value wrote %s, want %s", got, want)
		}
		v1opts := jsonv1.DefaultOptionsV1()
		if got, _ := jsonv2.Marshal(c.v, v1opts); !bytes.Equal(got, want) {
			b.Fatalf("v2 with v1's options wrote %s, want %s", got, want)
		}
		var buf bytes.Buffer
		enc := jsontext.NewEncoder(&buf, v1opts)
		for _, e := range []struct {
			name string
			enc  func() error
		}{
			{"jsonappend", func() error { _, ok := Value(buf.Bytes()[:0], c.v); return bool2err(ok) }},
			{"json.Marshal", func() error { _, err := json.Marshal(c.v); return err }},
			{"jsonv2-v1options", func() error { _, err := jsonv2.Marshal(c.v, v1opts); return err }},
			{"jsonv2-v1options-reused", func() error {
				buf.Reset()
				enc.Reset(&buf, v1opts)
				return jsonv2.MarshalEncode(enc, c.v, v1opts)
			}},
			{"jsonv2-deterministic", func() error { _, err := jsonv2.Marshal(c.v, jsonv2.Deterministic(true)); return err }},
		} {
			buf.Grow(2 * len(want))
			b.Run(c.name+"/"+e.name, func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(want)))
				for b.Loop() {
					if err := e.enc(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

func bool2err(ok bool) error {
	if !ok {
		return errFailed
	}
	return nil
}

var errFailed = errors.New("jsonappend: Value failed")
