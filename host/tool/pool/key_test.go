package pool_test

import (
	"strings"
	"testing"
	"time"

	"halolang.dev/halo/host/tool/pool"
)

// A Keyer's key is equal for equal parts (maps in any order) and differs when any part does,
// including parts that would run together if they were not tagged and counted ("ab" + "c"
// against "a" + "bc", a list against its items); an environment value goes into the digest
// only.
func TestKeyerTellsPartsApart(t *testing.T) {
	env := map[string]string{"TOKEN": "s3cret-value", "EMPTY": ""}
	getenv := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	key := func(f func(k *pool.Keyer)) string {
		t.Helper()
		k := pool.NewKeyer("bash")
		f(k)
		s, err := k.Key()
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	base := func(k *pool.Keyer) {
		k.String("ab").String("c").Value(map[string]any{"root": "/p", "write": true, "n": 2.0, "list": []any{"x", nil}})
		k.Env([]string{"TOKEN", "EMPTY", "UNSET"}, getenv).Duration(time.Second).Bool(false)
	}
	first := key(base)
	if !strings.HasPrefix(first, "bash:") || strings.Contains(first, "s3cret") {
		t.Fatalf("key %q: want bash:<digest>, no value in clear", first)
	}
	if again := key(func(k *pool.Keyer) {
		k.String("ab").String("c").Value(map[string]any{"list": []any{"x", nil}, "n": 2.0, "write": true, "root": "/p"})
		k.Env([]string{"TOKEN", "EMPTY", "UNSET"}, getenv).Duration(time.Second).Bool(false)
	}); again != first {
		t.Errorf("equal parts, map written in another order: %s, want %s", again, first)
	}
	others := map[string]func(k *pool.Keyer){
		"strings split elsewhere": func(k *pool.Keyer) {
			k.String("a").String("bc").Value(map[string]any{"root": "/p", "write": true, "n": 2.0, "list": []any{"x", nil}})
			k.Env([]string{"TOKEN", "EMPTY", "UNSET"}, getenv).Duration(time.Second).Bool(false)
		},
		"a value changed": func(k *pool.Keyer) {
			k.String("ab").String("c").Value(map[string]any{"root": "/p", "write": false, "n": 2.0, "list": []any{"x", nil}})
			k.Env([]string{"TOKEN", "EMPTY", "UNSET"}, getenv).Duration(time.Second).Bool(false)
		},
		"a list's items as parts": func(k *pool.Keyer) {
			k.String("ab").String("c").Value(map[string]any{"root": "/p", "write": true, "n": 2.0, "list": "x"})
			k.Env([]string{"TOKEN", "EMPTY", "UNSET"}, getenv).Duration(time.Second).Bool(false)
		},
		"a set variable's value changed": func(k *pool.Keyer) {
			k.String("ab").String("c").Value(map[string]any{"root": "/p", "write": true, "n": 2.0, "list": []any{"x", nil}})
			k.Env([]string{"TOKEN", "EMPTY", "UNSET"}, func(n string) (string, bool) {
				if n == "TOKEN" {
					return "other", true
				}
				return getenv(n)
			}).Duration(time.Second).Bool(false)
		},
		"an empty variable unset": func(k *pool.Keyer) {
			k.String("ab").String("c").Value(map[string]any{"root": "/p", "write": true, "n": 2.0, "list": []any{"x", nil}})
			k.Env([]string{"TOKEN", "EMPTY", "UNSET"}, func(n string) (string, bool) {
				if n == "EMPTY" {
					return "", false
				}
				return getenv(n)
			}).Duration(time.Second).Bool(false)
		},
	}
	for what, f := range others {
		if k := key(f); k == first {
			t.Errorf("%s: the same key %s", what, k)
		}
	}
}
