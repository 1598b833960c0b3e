package sdk

import (
	"encoding/json"
	"strings"
	"testing"
)

type benchParams struct {
	Data string `json:"data"`
}

// BenchmarkDecodeArgs measures the argument decoding of every call beside its floor, one
// json.Unmarshal of the same bytes into the same struct (which checks nothing).
func BenchmarkDecodeArgs(b *testing.B) {
	_, ps := schemaOf[benchParams]()
	for _, size := range []struct {
		name string
		n    int
	}{{"1KB", 1 << 10}, {"16KB", 16 << 10}} {
		args := []byte(`{"data":"` + strings.Repeat("x", size.n-len(`{"data":""}`)) + `"}`)
		b.Run("decodeArgs/"+size.name, func(b *testing.B) {
			b.SetBytes(int64(len(args)))
			for b.Loop() {
				var p benchParams
				if err := decodeArgs(args, &p, ps); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("json.Unmarshal/"+size.name, func(b *testing.B) {
			b.SetBytes(int64(len(args)))
			for b.Loop() {
				var p benchParams
				if err := json.Unmarshal(args, &p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
