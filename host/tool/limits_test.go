package tool

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestDepthExceeds(t *testing.T) {
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	tests := []struct {
		in   string
		max  int
		want bool
	}{
		{`{}`, 0, true},
		{`{}`, 1, false},
		{`"[[[["`, 1, false},
		{`{"a": "]]]]{{{{"}`, 1, false},
		{`{"a": "\"[[[["}`, 1, false},
		{`{"a": "\\", "b": [[1]]}`, 2, true},
		{`{"a": "\\", "b": [[1]]}`, 3, false},
		{deep(64), 64, false},
		{deep(65), 64, true},
		{`[{"a": [{"b": {}}]}]`, 5, false},
		{`[{"a": [{"b": {}}]}]`, 4, true},
		{`"unterminated [[[`, 1, false},
	}
	for _, tt := range tests {
		if got := DepthExceeds([]byte(tt.in), tt.max); got != tt.want {
			t.Errorf("DepthExceeds(%.40q, %d) = %v, want %v", tt.in, tt.max, got, tt.want)
		}
	}
}

// depthOf is the nesting depth of a decoded JSON value.
func depthOf(v any) int {
	d := 0
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			d = max(d, depthOf(e))
		}
		return d + 1
	case []any:
		for _, e := range x {
			d = max(d, depthOf(e))
		}
		return d + 1
	}
	return 0
}

// For valid JSON, DepthExceeds agrees with the depth of the decoded value, whatever the
// strings hold.
func FuzzDepthExceeds(f *testing.F) {
	for _, s := range []string{`{}`, `[[["]"]]]`, `{"a":"\\\"","b":[{"c":"["}]}`, `1`, `"x"`, `[{},[[]],{"k":[1,2,{"z":null}]}]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var v any
		if json.Unmarshal([]byte(s), &v) != nil {
			return
		}
		d := depthOf(v)
		for _, m := range []int{0, 1, 2, d - 1, d, d + 1} {
			if m < 0 {
				continue
			}
			if got := DepthExceeds([]byte(s), m); got != (d > m) {
				t.Fatalf("DepthExceeds(%q, %d) = %v; depth is %d", s, m, got, d)
			}
		}
		if id, ok := TopLevelField([]byte(s), "id"); ok {
			obj, isObj := v.(map[string]any)
			if !isObj {
				t.Fatalf("TopLevelField found id in %q, which is not an object", s)
			}
			var got any
			if err := json.Unmarshal(id, &got); err != nil {
				t.Fatalf("TopLevelField(%q) = %q, not a JSON value: %v", s, id, err)
			}
			want, _ := json.Marshal(obj["id"])
			gotJSON, _ := json.Marshal(got)
			if string(want) != string(gotJSON) && !strings.Contains(s, `\`) {
				t.Fatalf("TopLevelField(%q) = %s, want %s", s, gotJSON, want)
			}
		}
	})
}

func TestTopLevelField(t *testing.T) {
	deep := strings.Repeat(`{"a":`, 20000) + `1` + strings.Repeat(`}`, 20000)
	tests := []struct {
		in, want string
		ok       bool
	}{
		{`{"jsonrpc":"2.0","id":"halo-7","result":{}}`, `"halo-7"`, true},
		{`{"jsonrpc":"2.0","result":` + deep + `,"id":12}`, `12`, true},
		{` { "result" : [ "}" , { "id" : 1 } ] , "id" : 3 } `, `3`, true},
		{`{"result":"no id"}`, ``, false},
		{`{"result":[[[[`, ``, false},
		{`[1, 2]`, ``, false},
		{`{"id":7`, `7`, true}, // the id is readable though the rest is cut off
	}
	for _, tt := range tests {
		got, ok := TopLevelField([]byte(tt.in), "id")
		if ok != tt.ok || string(got) != tt.want {
			t.Errorf("TopLevelField(%.50q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestMaxResultBytesOf(t *testing.T) {
	if n, err := MaxResultBytesOf(nil); n != DefaultMaxResultBytes || err != nil {
		t.Errorf("default: %d, %v", n, err)
	}
	if n, err := MaxResultBytesOf(map[string]any{MaxResultOption: float64(1 << 20)}); n != 1<<20 || err != nil {
		t.Errorf("1 MiB: %d, %v", n, err)
	}
	for _, bad := range []any{"16M", float64(0), float64(-1), 1.5} {
		if _, err := MaxResultBytesOf(map[string]any{MaxResultOption: bad}); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

func TestCheckReply(t *testing.T) {
	if err := CheckReply("T", []byte(`{"a":[1]}`), 100); err != nil {
		t.Error(err)
	}
	if err := CheckReply("T", []byte(`"`+strings.Repeat("x", 200)+`"`), 100); Code(err) != CodeLimit || !strings.Contains(err.Error(), "max_result_bytes") {
		t.Errorf("size: %v", err)
	}
	if err := CheckReply("T", []byte(strings.Repeat("[", 65)+strings.Repeat("]", 65)), 0); Code(err) != CodeLimit || IsRetryable(err) {
		t.Errorf("depth: %v", err)
	}
}
