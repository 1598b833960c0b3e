package errcode_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"halolang.dev/halo/errcode"
)

// otherCoded stands for a package's own coded type (host/tool's, an SDK's from another module).
type otherCoded struct{ code string }

func (e otherCoded) Error() string     { return "other" }
func (e otherCoded) ErrorCode() string { return e.code }

func TestCode(t *testing.T) {
	inner := errcode.New("INNER", "inner %d", 1)
	for _, tt := range []struct {
		name string
		err  error
		want string
	}{
		{"nil", nil, ""},
		{"uncoded", errors.New("x"), ""},
		{"context", context.Canceled, ""},
		{"coded", inner, "INNER"},
		{"wrapped by fmt", fmt.Errorf("doing it: %w", inner), "INNER"},
		{"the outermost code wins", errcode.Wrap("OUTER", inner, "outer"), "OUTER"},
		{"another package's type", fmt.Errorf("x: %w", otherCoded{"TOOL_ERROR"}), "TOOL_ERROR"},
		{"joined", errors.Join(errors.New("a"), otherCoded{"B"}), "B"},
	} {
		if got := errcode.Code(tt.err); got != tt.want {
			t.Errorf("%s: Code = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestErrorMessage(t *testing.T) {
	cause := errors.New("cause")
	if got := errcode.Wrap("C", cause, "what failed").Error(); got != "what failed" {
		t.Errorf("Message set: %q", got)
	}
	if got := (&errcode.Error{Code: "C", Err: cause}).Error(); got != "cause" {
		t.Errorf("no Message: %q", got)
	}
	if e := errcode.Wrap("C", cause, "x"); !errors.Is(e, cause) {
		t.Error("Wrap does not unwrap to its cause")
	}
}
