package mcpserver

import (
	"encoding/json"
	"testing"
)

// BenchmarkDecodeArgs decodes a call's arguments into an any as the fast path does (decodeAny:
// the v2 JSON API) and as encoding/json does; the figures are in decodeAny's comment, beside a
// scanner of our own that was tried and dropped.
func BenchmarkDecodeArgs(b *testing.B) {
	raw := []byte(`{"path":"notes/groceries.md","content":"- milk\n- eggs\n- bread\n","limit":20,"recursive":true,"tags":["a","b","c"],"opts":{"mode":"fast","n":3.5}}`)
	b.Run("decodeAny-v2", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, ok := decodeAny(raw); !ok {
				b.Fatal("not decoded")
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			var v any
			if err := json.Unmarshal(raw, &v); err != nil {
				b.Fatal(err)
			}
		}
	})
}
