package tool

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"halolang.dev/halo/errcode"
)

// Stable error codes of tool calls. Users match on them; never change or reuse one.
const (
	// CodeToolError: the tool ran and failed.
	CodeToolError = "TOOL_ERROR"
	// CodeToolConfig: a declaration or an agent's tool set is wrong (unknown provider,
	// bad option, no method allowed).
	CodeToolConfig = "TOOL_CONFIG"
	// CodeToolArgument: arguments do not fit the method (a missing path parameter, a bad type).
	CodeToolArgument = "TOOL_ARGUMENT"
	// CodeUnknownMethod: the provider has no method of that name.
	CodeUnknownMethod = "TOOL_UNKNOWN_METHOD"
	// CodeHTTPError: an HTTP service answered with a non-2xx status.
	CodeHTTPError = "HTTP_ERROR"
	// CodeToolCrashed: the process serving the tool died during the call.
	CodeToolCrashed = "TOOL_CRASHED"
	// CodeTimeout: the call ran out of time; the code every timeout has.
	CodeTimeout = errcode.CodeTimeout
	// CodeLimit: the tool's reply went over a limit: its size (max_result_bytes:) or its
	// nesting depth (MaxDepth).
	CodeLimit = "TOOL_LIMIT"
)

// An Error is a tool failure with a stable code. It is a type of its own, beside
// errcode.Error, because it carries what callers act on: whether a retry may pass and how
// long to wait, the HTTP status, and the detail a model reads. Domain failures (a result the
// model should read, like {"error": "no such file; try list"}) carry that result in Detail.
type Error struct {
	// Code is one of the Code* constants.
	Code string
	// Message says what went wrong, for people and models.
	Message string
	// Detail is the JSON value a model reads for a domain failure; nil otherwise.
	Detail json.RawMessage
	// Retryable failures may succeed if tried again (HTTP 408/429/5xx, timeouts); @retry
	// retries only these.
	Retryable bool
	// RetryAfter, when not zero, is how long the callee asked the caller to wait.
	RetryAfter time.Duration
	// Status is the HTTP status for CodeHTTPError.
	Status int
	// Err is the underlying cause, if any.
	Err error
}

func (e *Error) Error() string {
	msg := e.Message
	if msg == "" && e.Err != nil {
		msg = e.Err.Error()
	}
	return msg
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// ErrorCode returns the stable code, for errcode.Code.
func (e *Error) ErrorCode() string { return e.Code }

// Errorf makes an *Error with a code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Code returns errcode.Code(err).
//
// Deprecated: use errcode.Code, the one way to read a code; Code remains only until the
// branches that still call it are merged.
func Code(err error) string { return errcode.Code(err) }

// IsRetryable reports whether err is a tool failure worth retrying.
func IsRetryable(err error) bool {
	var te *Error
	return errors.As(err, &te) && te.Retryable
}
