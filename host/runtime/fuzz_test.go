package runtime_test

import (
	"testing"

	"halolang.dev/halo/errcode"
	"halolang.dev/halo/host/runtime"
)

// FuzzParseMocks: any bytes give mocks or a MOCK error, never a panic.
func FuzzParseMocks(f *testing.F) {
	for _, s := range []string{`{}`, `{"A.t": "x"}`, `{"A.t": ["a", ["b"]], "T": {"k": 1}}`, `[1]`, `{"a": 1} x`, `{"": 1}`, `{"A.t": {"$answer": 1, "$cost": -1}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := runtime.ParseMocks(data)
		if err != nil {
			if errcode.Code(err) != runtime.CodeMock {
				t.Fatalf("error without code MOCK: %v", err)
			}
			return
		}
		m.Targets()
	})
}
