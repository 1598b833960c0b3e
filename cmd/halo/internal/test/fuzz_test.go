package test

import (
	"strings"
	"testing"
)

// FuzzCaseFile: any text given as a case file is read without a panic, and each problem
// names the file.
func FuzzCaseFile(f *testing.F) {
	f.Add([]byte(`{"name": "n", "pipeline": "P", "inputs": {"x": 1}, "mocks": {"A.b": "x"}, "expect": {"status": "failed", "output": [1, {"a": null}], "outputSchema": {"type": "object", "$defs": {"x": {"type": "string"}}, "properties": {"a": {"$ref": "#/$defs/x"}}}, "calls": ["A.b"], "violations": [{"rule": "Block"}], "error": "X"}}`))
	f.Add([]byte(`[{"inputs": {}}, {"expect": {"outputSchema": {"$ref": "https://example.com/s.json"}}}]`))
	f.Add([]byte(`{"expect": {"outputSchema": {"pattern": "(a+)+$", "type": "string"}}}`))
	f.Add([]byte(`[{"a": 1, "a": 2}]`))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		_, probs := parseCaseFile(dir, "f.test.json", data)
		for _, p := range probs {
			if p.File != "f.test.json" || p.Code == "" || !strings.Contains(p.String(), p.Message) {
				t.Fatalf("problem %+v", p)
			}
		}
	})
}
