package model

import (
	"errors"
	"fmt"
	"time"

	"halolang.dev/halo/errcode"
)

// Stable error codes of model calls. Users match on them; never change or reuse one.
const (
	// CodeAuth: the provider refused the key (HTTP 401 or 403).
	CodeAuth = "MODEL_AUTH"
	// CodeRateLimit: the provider asked us to slow down (HTTP 429); retryable.
	CodeRateLimit = "MODEL_RATE_LIMIT"
	// CodeError: the provider answered with another failure (HTTP 400, 404, 5xx, a network
	// error); 408 and 5xx and network errors are retryable.
	CodeError = "MODEL_ERROR"
	// CodeBadResponse: the provider answered 2xx with a body we could not read.
	CodeBadResponse = "MODEL_BAD_RESPONSE"
	// CodeConfig: the model cannot be called as configured (unknown provider, a malformed
	// model reference, a missing API key).
	CodeConfig = "MODEL_CONFIG"
	// CodeTimeout: an attempt ran out of time; retryable. The code every timeout has, so
	// @retry and users see one code for every timeout.
	CodeTimeout = errcode.CodeTimeout
)

// An Error is a failed model call with a stable code. It is a type of its own, beside
// errcode.Error, because it carries what callers act on: whether a retry may pass and how long
// the provider asked to wait, the HTTP status and the attempts made.
type Error struct {
	// Code is one of the Code* constants.
	Code string
	// Provider is the adapter's name ("openai", "anthropic", ...).
	Provider string
	// Message says what went wrong, including what the provider said when it said something.
	Message string
	// Status is the HTTP status when the provider answered; 0 otherwise.
	Status int
	// Retryable failures may pass if tried again: 408, 429, 5xx, timeouts, network errors.
	Retryable bool
	// RetryAfter is the wait the provider asked for (Retry-After), zero when it asked none.
	RetryAfter time.Duration
	// Attempts is how many requests were made before giving up.
	Attempts int
	// KeyEnv, when the failure is an API key that is not set (CodeConfig), names the
	// environment variable the key is read from.
	KeyEnv string
	// Err is the underlying cause, if any.
	Err error
}

func (e *Error) Error() string {
	msg := e.Message
	if msg == "" && e.Err != nil {
		msg = e.Err.Error()
	}
	if e.Provider != "" {
		msg = e.Provider + ": " + msg
	}
	return msg
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// ErrorCode returns the stable code, for errcode.Code.
func (e *Error) ErrorCode() string { return e.Code }

// IsRetryable reports whether err is a model failure worth retrying (the runtime's @retry
// asks this after Complete has used up its own attempts).
func IsRetryable(err error) bool {
	var me *Error
	return errors.As(err, &me) && me.Retryable
}

// configError reports a model that cannot be called as configured.
func configError(provider, format string, args ...any) *Error {
	return &Error{Code: CodeConfig, Provider: provider, Message: fmt.Sprintf(format, args...)}
}

// missingKey reports an API key that is not set: env is the variable to set, alsoEnv one
// that is read too.
func missingKey(provider, env, alsoEnv string) *Error {
	e := configError(provider, "%s is not set", env)
	if alsoEnv != "" {
		e.Message = fmt.Sprintf("%s (or %s) is not set", env, alsoEnv)
	}
	e.KeyEnv = env
	return e
}

// statusError classifies an HTTP failure status.
func statusError(provider string, status int, detail string, retryAfter time.Duration) *Error {
	e := &Error{Provider: provider, Status: status, RetryAfter: retryAfter}
	switch {
	case status == 401 || status == 403:
		e.Code = CodeAuth
	case status == 429:
		e.Code, e.Retryable = CodeRateLimit, true
	case status == 408 || status >= 500:
		e.Code, e.Retryable = CodeError, true
	default:
		e.Code = CodeError
	}
	e.Message = fmt.Sprintf("HTTP %d", status)
	if detail != "" {
		e.Message += ": " + detail
	}
	return e
}

// badResponse reports a 2xx answer we could not read.
func badResponse(provider string, err error) *Error {
	return &Error{Code: CodeBadResponse, Provider: provider,
		Message: "unreadable response: " + err.Error(), Err: err}
}
