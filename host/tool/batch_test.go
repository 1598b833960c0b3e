package tool_test

import (
	"errors"
	"testing"

	"halolang.dev/halo/host/tool"
)

// A Batch works a key out once for the declarations that share it, its error included; a
// nil Batch (a declaration opened alone) works it out every time.
func TestBatchDoesEachKeyOnce(t *testing.T) {
	calls := map[string]int{}
	work := func(key string, err error) func() (any, error) {
		return func() (any, error) { calls[key]++; return "v-" + key, err }
	}
	b := &tool.Batch{}
	broken := errors.New("broken")
	for range 3 {
		if v, err := b.Do("a", work("a", nil)); v != "v-a" || err != nil {
			t.Fatalf("a: %v %v", v, err)
		}
		if _, err := b.Do("e", work("e", broken)); err != broken {
			t.Fatalf("e: %v, want the first call's error", err)
		}
	}
	var none *tool.Batch
	for range 2 {
		none.Do("n", work("n", nil))
	}
	if calls["a"] != 1 || calls["e"] != 1 || calls["n"] != 2 {
		t.Errorf("calls %v, want a and e once, n (no batch) twice", calls)
	}
}
