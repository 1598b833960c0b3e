// Package errcode owns what makes a Halo error coded: the Error type for a failure with a
// stable code, and Code, the one way to read the code of any error. It sits below every other
// package of the host (host/*, pkgmgr, cmd/halo), so each package keeps its code constants
// beside its own errors and every caller reads them the same way.
//
// A code is an UPPER_SNAKE string users match on (PACKAGE_UNTRUSTED, TOOL_CONFIG); once
// released it never changes and is never reused. docs/errors.md lists every code.
//
// Failures that carry nothing but a code and a message are *Error values. A package whose
// failures carry more for the caller to act on (host/tool's retry hints and the detail a model
// reads, host/model's HTTP status, pkgmgr's list of problems) has its own type with an
// ErrorCode method: Code reads those too, as it reads a plugin SDK's errors, which live in
// another Go module and cannot import this one.
package errcode

import (
	"errors"
	"fmt"
)

// Coded is what makes an error coded: its stable code.
type Coded interface {
	error
	ErrorCode() string
}

// An Error is a failure with a stable code.
type Error struct {
	// Code is the stable code: a constant of the package that made the error.
	Code string
	// Message says what went wrong; when empty, Err's message is used.
	Message string
	// Err is the cause, if any. Its message is not repeated after Message: Message says
	// everything the user reads.
	Err error
}

func (e *Error) Error() string {
	if e.Message == "" && e.Err != nil {
		return e.Err.Error()
	}
	return e.Message
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// ErrorCode returns the stable code.
func (e *Error) ErrorCode() string { return e.Code }

// New returns an *Error with a code and a formatted message.
func New(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Wrap returns an *Error with a code and a formatted message, caused by err. Use %v of err in
// the message when the user should read the cause.
func Wrap(code string, err error, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...), Err: err}
}

// Code returns the stable code of err: the code of the outermost error in its chain that has
// one (an ErrorCode method), or "" when none does. The outermost wins, so a package that
// wraps another's failure in a code of its own decides what users read.
func Code(err error) string {
	var c Coded
	if errors.As(err, &c) {
		return c.ErrorCode()
	}
	return ""
}

// Shared codes: failures that several packages report and that users match on as one, whose
// owners cannot import each other (host/tool and host/model).
const (
	// CodeTimeout: an attempt ran out of time (a tool call, a model request, a stage's
	// @timeout); @retry may run it again.
	CodeTimeout = "TIMEOUT"
)
