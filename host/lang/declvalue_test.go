package lang

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// declArgs parses `tool T : P(args)` and returns its arguments' values.
func declArgs(t *testing.T, args string) []Expr {
	t.Helper()
	f, diags := Parse("d.halo", []byte("tool T : P("+args+")\n"))
	if diags.HasErrors() {
		t.Fatalf("%s: %v", args, diags)
	}
	var out []Expr
	for _, a := range f.Decls[0].(*ToolDecl).Args {
		out = append(out, a.Value)
	}
	return out
}

// A declaration's values are read one way: DeclValue, with what its caller can know.
func TestDeclValue(t *testing.T) {
	getenv := func(k string) (string, bool) {
		if k == "TOKEN" {
			return "t0k", true
		}
		return "", false
	}
	fill := func(s string) (string, error) { return strings.ReplaceAll(s, "{{dir}}", "/w"), nil }
	run := DeclEnv{Getenv: getenv, Fill: fill}
	for _, tt := range []struct {
		args   string
		env    DeclEnv
		want   []any
		err    string // a part of the error, for the first argument that fails
		static []any
	}{
		{args: `"a", 2, true, null`, env: run, want: []any{"a", 2.0, true, nil}, static: []any{"a", 2.0, true, nil}},
		{args: `"{{dir}}/x", Env.TOKEN, Env.NOPE`, env: run, want: []any{"/w/x", "t0k", ""}, static: []any{nil, nil, nil}},
		{args: `env: {A: Env.TOKEN, B: "{{dir}}"}, list: [1, Env.TOKEN]`, env: run, want: []any{map[string]any{"A": "t0k", "B": "/w"}, []any{1.0, "t0k"}}, static: []any{map[string]any{"A": nil, "B": nil}, []any{1.0, nil}}},
		{args: `Env.NOPE`, env: DeclEnv{Getenv: getenv, RequireEnv: true}, err: "Env.NOPE is not set", static: []any{nil}},
		{args: `"{{dir}}"`, env: DeclEnv{Getenv: getenv}, err: "{{dir}} is known only when a pipeline runs", static: []any{nil}},
		{args: `Env.TOKEN`, env: DeclEnv{}, err: "Env.TOKEN is known only when a pipeline runs", static: []any{nil}},
		{args: `write`, env: run, err: "a tool declaration's values are literals", static: []any{nil}},
		{args: `[a.b]`, env: run, err: "a tool declaration's values are literals", static: []any{[]any{nil}}},
	} {
		exprs := declArgs(t, tt.args)
		var got, static []any
		var err error
		for _, e := range exprs {
			static = append(static, StaticValue(e))
			var v any
			if v, err = DeclValue(e, tt.env); err != nil {
				break
			}
			got = append(got, v)
		}
		switch {
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err) || !strings.HasPrefix(err.Error(), "d.halo:1:")):
			t.Errorf("%s: err %v, want %q with a position", tt.args, err, tt.err)
		case tt.err == "" && (err != nil || !reflect.DeepEqual(got, tt.want)):
			t.Errorf("%s: %#v, %v; want %#v", tt.args, got, err, tt.want)
		}
		if !reflect.DeepEqual(static, tt.static) {
			t.Errorf("%s: StaticValue %#v, want %#v", tt.args, static, tt.static)
		}
		if strings.Contains(tt.err, "known only") && !errors.Is(err, ErrUnknown) {
			t.Errorf("%s: %v does not wrap ErrUnknown", tt.args, err)
		}
	}
}
